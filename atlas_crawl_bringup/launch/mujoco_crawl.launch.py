"""Full ROS 2 install: the MuJoCo variant of the atlas_crawl graph as separate processes.

    ros2 launch atlas_crawl_bringup mujoco_crawl.launch.py [real_time_factor:=1.0] [contact_method:=height]
    ros2 action send_goal /crawl atlas_crawl_msgs/action/Crawl "{cycles: 4}" --feedback
    ros2 param set /contact_inference method velocity

Starts ``mujoco_sim`` (physics + the crawl controller core, publishes /clock) and the two lifecycle nodes
``contact_inference`` and ``gait_sequencer``, which this launch file configures and then activates (the role of a
lifecycle manager).  Parameters: defaults from atlas_crawl_controller/config/*_parameters.yaml, overrides from
atlas_crawl_bringup/config/atlas_crawl_mujoco.yaml (the same file the embedded default reads), then the launch
arguments.  Written for launch/launch_ros (Jazzy); not runnable in the embedded default, which has no launch.
"""
import os

import launch
import launch.actions
import launch.events
import launch_ros.actions
import launch_ros.event_handlers
import launch_ros.events.lifecycle
import lifecycle_msgs.msg
from ament_index_python.packages import get_package_share_directory
from launch.substitutions import LaunchConfiguration


def _lifecycle_node(name, params):
    return launch_ros.actions.LifecycleNode(
        package="atlas_crawl_controller", executable=f"{name}_node", name=name, namespace="",
        output="screen", parameters=params)


def _configure_then_activate(node):
    configure = launch.actions.EmitEvent(event=launch_ros.events.lifecycle.ChangeState(
        lifecycle_node_matcher=launch.events.matches_action(node),
        transition_id=lifecycle_msgs.msg.Transition.TRANSITION_CONFIGURE))
    activate_on_inactive = launch.actions.RegisterEventHandler(launch_ros.event_handlers.OnStateTransition(
        target_lifecycle_node=node, start_state="configuring", goal_state="inactive",
        entities=[launch.actions.EmitEvent(event=launch_ros.events.lifecycle.ChangeState(
            lifecycle_node_matcher=launch.events.matches_action(node),
            transition_id=lifecycle_msgs.msg.Transition.TRANSITION_ACTIVATE))]))
    return [activate_on_inactive, configure]


def generate_launch_description():
    share = get_package_share_directory("atlas_crawl_bringup")
    overrides = os.path.join(share, "config", "atlas_crawl_mujoco.yaml")
    rtf = LaunchConfiguration("real_time_factor")
    method = LaunchConfiguration("contact_method")
    sim = launch_ros.actions.Node(
        package="atlas_crawl_controller", executable="mujoco_sim_node", name="mujoco_sim", output="screen",
        parameters=[overrides, {"real_time_factor": rtf}])
    contact = _lifecycle_node("contact_inference", [overrides, {"method": method, "use_sim_time": True}])
    sequencer = _lifecycle_node("gait_sequencer", [overrides, {"use_sim_time": True}])
    return launch.LaunchDescription([
        launch.actions.DeclareLaunchArgument("real_time_factor", default_value="1.0",
                                             description="physics pacing: 0 = as fast as possible, 1 = real time"),
        launch.actions.DeclareLaunchArgument("contact_method", default_value="height",
                                             description="contact inference: height | velocity | effort"),
        sim, contact, sequencer,
        *_configure_then_activate(contact),
        *_configure_then_activate(sequencer),
    ])
