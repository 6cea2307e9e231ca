"""ros2_control with mock hardware (no physics): controller_manager + our crawl controller plugin.

    ros2 launch atlas_crawl_bringup mock_control.launch.py
    ros2 control list_controllers
    ros2 topic echo /crawl_controller/status

robot_state_publisher (atlas_description, sim:=none → mock_components/GenericSystem, joints start at the MuJoCo
start pose), ros2_control_node with config/controllers.yaml, spawners for joint_state_broadcaster and
crawl_controller.  Used to exercise the plugin where no simulator is available (the mock hardware mirrors the
position commands into the position states; no pelvis pose is published, the controller uses identity).
"""
import os

import launch
import launch_ros.actions
from ament_index_python.packages import get_package_share_directory


def generate_launch_description():
    import atlas_description
    from atlas_crawl_bringup.gazebo_start import start_state, write_initial_positions

    share = get_package_share_directory("atlas_crawl_bringup")
    controllers = os.path.join(share, "config", "controllers.yaml")
    joints, _, _ = start_state("crawl_forward")
    urdf = atlas_description.urdf_string(ros2_control=True, sim="none",
                                         initial_positions_file=write_initial_positions(joints))
    rsp = launch_ros.actions.Node(package="robot_state_publisher", executable="robot_state_publisher",
                                  output="screen", parameters=[{"robot_description": urdf}])
    cm = launch_ros.actions.Node(package="controller_manager", executable="ros2_control_node", output="screen",
                                 parameters=[controllers])
    spawners = [launch_ros.actions.Node(package="controller_manager", executable="spawner", output="screen",
                                        arguments=[name, "--controller-manager-timeout", "60"])
                for name in ("joint_state_broadcaster", "crawl_controller")]
    return launch.LaunchDescription([rsp, cm, *spawners])
