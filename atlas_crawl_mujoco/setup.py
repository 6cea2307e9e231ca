from glob import glob

from setuptools import find_packages, setup

package_name = "atlas_crawl_mujoco"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
        ("share/" + package_name + "/config/scenes", glob("config/scenes/*")),
    ],
    install_requires=["setuptools", "numpy", "pyyaml", "mujoco"],
    zip_safe=True,
    maintainer="atlas_crawl team",
    maintainer_email="team@atlas-crawl.dev",
    description="MuJoCo physics backend for the crawling DRC Atlas",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "run_gait = atlas_crawl_mujoco.run_gait:main",
            "mujoco_sim_node = atlas_crawl_mujoco.sim_node:main",
            "scene_height_map_node = atlas_crawl_mujoco.scene_height_map_node:main",
            "check_gaits = atlas_crawl_mujoco.check_gaits:main",
            "kinematics_benchmark = atlas_crawl_mujoco.kinematics_benchmark:main",
        ],
    },
)
