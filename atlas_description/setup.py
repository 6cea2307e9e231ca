"""atlas_description (ament_python): installs the python module, urdf/** and config/** into
share/atlas_description, the ament index marker and package.xml."""
import os
from glob import glob

from setuptools import setup

package_name = "atlas_description"


def tree(src):
    """(share-dir, [files]) pairs for every directory under src, keeping the layout."""
    out = []
    for dirpath, _dirs, files in os.walk(src):
        paths = [os.path.join(dirpath, f) for f in sorted(files) if not f.endswith((".pyc", "~"))]
        if paths:
            out.append((os.path.join("share", package_name, dirpath), paths))
    return out


setup(
    name=package_name,
    version="0.1.0",
    packages=[package_name],
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml", "README.md"]),
        *tree("urdf"),
        *tree("config"),
    ],
    install_requires=["setuptools", "xacro", "PyYAML"],
    zip_safe=True,
    maintainer="atlas_crawl team",
    maintainer_email="team@atlas-crawl.dev",
    description="Our xacro/URDF of the 28-joint DRC Atlas with contact frames and ros2_control/sim tags.",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "atlas-description-urdf = atlas_description:main",
        ],
    },
)
