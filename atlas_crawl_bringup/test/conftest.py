"""The graph tests run on two pytest-xdist workers (setup.cfg): each is one process holding the GIL, so one worker
leaves the second core idle. Each worker gets ROS domains of its own, for tests that do not build a Stack too."""
import os


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from atlas_crawl_bringup.stack import isolate_ros_domain
        isolate_ros_domain()
