from glob import glob

from setuptools import find_packages, setup

package_name = "atlas_crawl_eval"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
    ],
    install_requires=["setuptools", "numpy", "scipy", "matplotlib", "imageio", "pyyaml"],
    zip_safe=True,
    maintainer="atlas_crawl team",
    maintainer_email="team@atlas-crawl.dev",
    description="Evaluation harness (thesis §4.1.2-4.1.3) for the crawling DRC Atlas",
    license="Apache-2.0",
    tests_require=["pytest"],
    entry_points={
        "console_scripts": [
            "evaluate = atlas_crawl_eval.evaluate:main",
            "graph_trial = atlas_crawl_eval.graph_trial:main",
            "contact_inference_eval = atlas_crawl_eval.contact_inference_eval:main",
        ],
    },
)
