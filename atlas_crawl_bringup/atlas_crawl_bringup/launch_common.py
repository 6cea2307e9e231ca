"""Launch pieces shared by the full-ROS launch files (mujoco_crawl, gazebo): the two lifecycle nodes of the graph,
configured and then activated by the launch file itself (the role of a lifecycle manager), and the RViz side
(support-polygon / CoM markers, robot_state_publisher, rviz2).

Imported by the launch files only (needs launch / launch_ros, which the embedded default does not have).
"""
import launch.actions
import launch.events
import launch_ros.actions
import launch_ros.event_handlers
import launch_ros.events.lifecycle
import lifecycle_msgs.msg


def pose_remappings(pose_source) -> list:
    """``/atlas/pelvis_pose`` → the state estimator's pose when ``pose_source`` (a launch substitution or string)
    is ``estimate`` (the ground truth stays published for evaluation)."""
    from launch.substitutions import PythonExpression
    return [("/atlas/pelvis_pose", PythonExpression(
        ["'/state_estimator/pelvis_pose' if '", pose_source, "' == 'estimate' else '/atlas/pelvis_pose'"]))]


def lifecycle_node(name: str, params: list, remappings=None) -> launch_ros.actions.LifecycleNode:
    """``<name>_node`` of atlas_crawl_controller as a LifecycleNode named ``name``."""
    return launch_ros.actions.LifecycleNode(
        package="atlas_crawl_controller", executable=f"{name}_node", name=name, namespace="",
        output="screen", parameters=params, remappings=remappings or [])


def configure_then_activate(node: launch_ros.actions.LifecycleNode) -> list:
    """Emit CONFIGURE at launch, and ACTIVATE once the node reports configuring → inactive."""
    configure = launch.actions.EmitEvent(event=launch_ros.events.lifecycle.ChangeState(
        lifecycle_node_matcher=launch.events.matches_action(node),
        transition_id=lifecycle_msgs.msg.Transition.TRANSITION_CONFIGURE))
    activate_on_inactive = launch.actions.RegisterEventHandler(launch_ros.event_handlers.OnStateTransition(
        target_lifecycle_node=node, start_state="configuring", goal_state="inactive",
        entities=[launch.actions.EmitEvent(event=launch_ros.events.lifecycle.ChangeState(
            lifecycle_node_matcher=launch.events.matches_action(node),
            transition_id=lifecycle_msgs.msg.Transition.TRANSITION_ACTIVATE))]))
    return [activate_on_inactive, configure]


def crawl_lifecycle_nodes(overrides_file: str, contact_method, pose_source="ground_truth") -> list:
    """contact_inference and gait_sequencer on sim time, with the run-time overrides file, each configured then
    activated. ``contact_method`` and ``pose_source`` may be launch substitutions."""
    remap = pose_remappings(pose_source)
    contact = lifecycle_node("contact_inference", [overrides_file, {"method": contact_method, "use_sim_time": True}],
                             remap)
    sequencer = lifecycle_node("gait_sequencer", [overrides_file, {"use_sim_time": True}], remap)
    return [contact, sequencer, *configure_then_activate(contact), *configure_then_activate(sequencer)]


def visualisation_nodes(share_dir: str, urdf: str, rviz) -> list:
    """robot_state_publisher (pelvis → links) and, if ``rviz`` (a launch substitution / "true"), rviz2 with
    config/atlas_crawl.rviz and support_markers_node (/support_markers + world → pelvis on /tf from the ground-truth
    pose; only with RViz: on 2 cores every extra Python subscriber of the pose costs the closed loop)."""
    import os

    from launch.conditions import IfCondition
    rsp = launch_ros.actions.Node(
        package="robot_state_publisher", executable="robot_state_publisher", output="screen",
        parameters=[{"robot_description": urdf, "use_sim_time": True}])
    markers = launch_ros.actions.Node(
        package="atlas_crawl_controller", executable="support_markers_node", name="support_markers",
        output="screen", parameters=[{"use_sim_time": True}], condition=IfCondition(rviz))
    rviz2 = launch_ros.actions.Node(
        package="rviz2", executable="rviz2", output="screen", condition=IfCondition(rviz),
        arguments=["-d", os.path.join(share_dir, "config", "atlas_crawl.rviz")], parameters=[{"use_sim_time": True}])
    return [rsp, markers, rviz2]
