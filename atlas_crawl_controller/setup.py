from glob import glob

from setuptools import find_packages, setup

package_name = "atlas_crawl_controller"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    package_data={package_name: ["gaits/*.yaml"]},
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
        ("share/" + package_name + "/gaits", glob(package_name + "/gaits/*.yaml")),
    ],
    install_requires=["setuptools", "numpy", "pyyaml"],
    zip_safe=False,
    maintainer="atlas_crawl team",
    maintainer_email="team@atlas-crawl.dev",
    description="Crawl controller core: SmoothMove, key-frame scripts and player, gait library",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "gait_sequencer_node = atlas_crawl_controller.nodes.gait_sequencer_node:main",
            "contact_inference_node = atlas_crawl_controller.nodes.contact_inference_node:main",
            "state_estimator_node = atlas_crawl_controller.nodes.state_estimator_node:main",
            "support_markers_node = atlas_crawl_controller.nodes.support_markers_node:main",
        ],
    },
)
