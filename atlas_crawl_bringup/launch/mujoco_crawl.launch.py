"""Full ROS 2 install: the MuJoCo variant of the atlas_crawl graph as separate processes.

    ros2 launch atlas_crawl_bringup mujoco_crawl.launch.py [real_time_factor:=1.0] [contact_method:=height] [rviz:=true]
        [pose_source:=ground_truth]
    ros2 action send_goal /crawl atlas_crawl_msgs/action/Crawl "{cycles: 4}" --feedback
    ros2 param set /contact_inference method velocity

Starts ``mujoco_sim`` (physics + the crawl controller core, publishes /clock) and the two lifecycle nodes
``contact_inference`` and ``gait_sequencer``, which this launch file configures and then activates (the role of a
lifecycle manager), and robot_state_publisher (+ rviz2 and support_markers with rviz:=true) for RViz.  Parameters:
defaults from atlas_crawl_controller/config/*_parameters.yaml, overrides from
atlas_crawl_bringup/config/atlas_crawl_mujoco.yaml (the same file the embedded default reads), then the launch
arguments.  Needs launch/launch_ros (a full ROS install); the embedded default has no launch and runs the same
nodes in one process (``python -m atlas_crawl_bringup.embedded``).
"""
import os

import launch
import launch.actions
import launch_ros.actions
from ament_index_python.packages import get_package_share_directory
from atlas_crawl_bringup.launch_common import crawl_lifecycle_nodes, visualisation_nodes
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    import atlas_description

    share = get_package_share_directory("atlas_crawl_bringup")
    overrides = os.path.join(share, "config", "atlas_crawl_mujoco.yaml")
    rtf = LaunchConfiguration("real_time_factor")
    method = LaunchConfiguration("contact_method")
    pose_source = LaunchConfiguration("pose_source")
    sim = launch_ros.actions.Node(
        package="atlas_crawl_mujoco", executable="mujoco_sim_node", name="mujoco_sim", output="screen",
        parameters=[overrides, {"real_time_factor": rtf, "pose_source": pose_source}])
    return launch.LaunchDescription([
        launch.actions.DeclareLaunchArgument("real_time_factor", default_value="1.0",
                                             description="physics pacing: 0 = as fast as possible, 1 = real time"),
        launch.actions.DeclareLaunchArgument("contact_method", default_value="fusion",
                                             description="contact inference: height | velocity | effort"),
        launch.actions.DeclareLaunchArgument("rviz", default_value="false"),
        launch.actions.DeclareLaunchArgument(
            "pose_source", default_value="estimate",
            description="pelvis pose the controller, sequencer and contact inference read: estimate (the state "
                        "estimator the sim node hosts: IMU + leg kinematics, /odom) | ground_truth (for comparison)"),
        sim,
        *crawl_lifecycle_nodes(overrides, method, pose_source),
        *visualisation_nodes(share, atlas_description.urdf_string(), LaunchConfiguration("rviz")),
    ])
