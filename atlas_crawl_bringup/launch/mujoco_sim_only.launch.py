"""Full ROS 2 install: only the MuJoCo simulation node (physics + controller core), e.g. to drive the controller
reference topic by hand or to run the lifecycle nodes from another launch file.

    ros2 launch atlas_crawl_bringup mujoco_sim_only.launch.py [real_time_factor:=1.0]
"""
import os

import launch
import launch_ros.actions
from ament_index_python.packages import get_package_share_directory
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    overrides = os.path.join(get_package_share_directory("atlas_crawl_bringup"), "config", "atlas_crawl_mujoco.yaml")
    return launch.LaunchDescription([
        launch.actions.DeclareLaunchArgument("real_time_factor", default_value="1.0"),
        launch_ros.actions.Node(package="atlas_crawl_mujoco", executable="mujoco_sim_node", name="mujoco_sim",
                                output="screen",
                                parameters=[overrides, {"real_time_factor": LaunchConfiguration("real_time_factor")}]),
    ])
