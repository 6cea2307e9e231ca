from glob import glob

from setuptools import setup

package_name = 'atlas_crawl_bringup'

setup(
    name=package_name,
    version='0.1.0',
    packages=[package_name],
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/requirements', glob('requirements/*.txt')),
        ('share/' + package_name + '/scripts', glob('scripts/*.sh') + glob('scripts/*.py')),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml') + glob('config/*.rviz') + glob('config/*.json')),
    ],
    install_requires=['setuptools'],
    zip_safe=True,
    maintainer='atlas_crawl team',
    maintainer_email='team@atlas-crawl.dev',
    description='Entry points of the atlas_crawl stack: set-up/test scripts, pinned '
                'requirements, the embedded demo dispatcher.',
    license='Apache-2.0',
    tests_require=['pytest'],
    entry_points={
        'console_scripts': [
            'demo = atlas_crawl_bringup.demo:main',
            'embedded = atlas_crawl_bringup.embedded:main',
            'send_goal = atlas_crawl_bringup.send_goal:main',
            'reliability = atlas_crawl_bringup.reliability:main',
        ],
    },
)
