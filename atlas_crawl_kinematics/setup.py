from glob import glob

from setuptools import find_packages, setup

package_name = "atlas_crawl_kinematics"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools", "numpy", "scipy"],
    zip_safe=True,
    maintainer="atlas_crawl team",
    maintainer_email="team@atlas-crawl.dev",
    description="Pure-numpy kinematics core for the crawling DRC Atlas",
    license="Apache-2.0",
    tests_require=["pytest"],
)
