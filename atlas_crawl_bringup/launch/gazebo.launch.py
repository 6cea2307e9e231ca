"""Full stack: the atlas_crawl graph on Gazebo Harmonic + ros2_control (issue 6 §3).

    ros2 launch atlas_crawl_bringup gazebo.launch.py [headless:=true] [rviz:=false] [initial_pose:=crawl_forward]
        [pose_source:=ground_truth | pose_source:=estimate]
        [scene:=flat | scene:=slope:angle_deg=5,direction_deg=90 | scene:=my_scene.yaml | world:=my_world.sdf]
    ros2 action send_goal /crawl atlas_crawl_msgs/action/Crawl "{cycles: 10}" --feedback
    ros2 param set /crawl_controller watchdog_timeout_s 3.0

Starts
* ``robot_state_publisher`` with atlas_description's URDF (``sim:=gazebo``: gz_ros2_control with
  config/controllers.yaml, the pelvis ground-truth plugin of atlas_crawl_gz_plugins, contact surfaces, initial
  joint positions = the start pose the MuJoCo node uses, see atlas_crawl_bringup.gazebo_start),
* ``gz sim`` (``-s`` headless by default, ``-r`` running) on the SDF world of ``scene`` (the MuJoCo node's scene
  specs and files, written by atlas_crawl_bringup.gazebo_world: the same ground in both simulators), or on a
  user's ``world`` file; ``ros_gz_sim create`` (robot from /robot_description at the MuJoCo start height and
  orientation on that scene), ``ros_gz_bridge`` for /clock and the pelvis IMU (a gz imu sensor with the MuJoCo
  node's noise model and, with ``imu_output:=mean`` (default), its mean-over-the-period output: ``/atlas/imu``),
* with ``pose_source:=estimate``: the crawl controller plugin hosts the state estimator (the gz IMU through
  gz_ros2_control's sensor interfaces + the joint states, every update, as the MuJoCo node hosts it; initialised at
  the first ground-truth pose, the spawn pose) and publishes ``/odom`` and ``/state_estimator/pelvis_pose``, which
  the controller, the sequencer and the contact inference then read instead of the ground truth,
* on a ``scene`` (not a user's ``world``): ``scene_height_map`` (atlas_crawl_mujoco), the scene's ground-truth
  ``/atlas/height_map`` around the ground-truth pelvis, the map the MuJoCo node publishes on the same scene,
* after the spawn: the ``joint_state_broadcaster`` and ``crawl_controller`` spawners (controller_manager inside gz),
* the lifecycle nodes ``contact_inference`` and ``gait_sequencer`` (configured, then activated),
* with ``rviz:=true``: RViz (config/atlas_crawl.rviz, fixed frame world) and ``support_markers`` (support polygon,
  CoM projection, contacts and margin on /support_markers, world → pelvis on /tf from the ground-truth pose).

Rates: the pelvis plugin publishes at ``pelvis_pose_rate_hz`` (default 100 Hz, as the MuJoCo node) and the
joint_state_broadcaster at 100 Hz (config/controllers_gazebo.yaml); /clock comes from gz at every 1 ms step.

Parameters: the same files as the embedded default — atlas_crawl_controller/config/*_parameters.yaml (defaults,
via the nodes and the plugin's generated parameters) and config/atlas_crawl_mujoco.yaml (run-time overrides of
contact_inference and gait_sequencer) — plus config/controllers.yaml for controller_manager and
config/controllers_gazebo.yaml (use_sim_time for the controller_manager inside gz, read after it).
"""
import math
import os

import launch
import launch.actions
import launch_ros.actions
from ament_index_python.packages import get_package_share_directory
from atlas_crawl_bringup.launch_common import crawl_lifecycle_nodes, visualisation_nodes
from launch.event_handlers import OnProcessExit
from launch.substitutions import LaunchConfiguration


def _gz_plugin_path():
    """GZ_SIM_SYSTEM_PLUGIN_PATH: every <prefix>/lib of the ROS environment (gz_ros2_control, our pelvis plugin)."""
    dirs = [os.path.join(p, "lib") for p in os.environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep) if p]
    old = os.environ.get("GZ_SIM_SYSTEM_PLUGIN_PATH", "")
    return os.pathsep.join([d for d in dirs if os.path.isdir(d)] + ([old] if old else []))


def _setup(context):
    import atlas_description
    from atlas_crawl_controller.nodes import topics
    from atlas_crawl_bringup.gazebo_start import (quat_wxyz_to_rpy, start_state, write_controller_overrides,
                                                  write_imu_file, write_initial_positions)
    from atlas_crawl_bringup.gazebo_world import scene_world

    share = get_package_share_directory("atlas_crawl_bringup")
    controllers = os.path.join(share, "config", "controllers.yaml")
    pose_source = LaunchConfiguration("pose_source").perform(context)
    scene = LaunchConfiguration("scene").perform(context)
    controllers_gazebo = write_controller_overrides(      # use_sim_time (+ the hosted estimator), read after
        os.path.join(share, "config", "controllers_gazebo.yaml"), pose_source,
        scene="" if LaunchConfiguration("world").perform(context) else scene,
        estimator_overrides=tuple(LaunchConfiguration("estimator_overrides").perform(context).split()),
        estimator_record_path=LaunchConfiguration("estimator_record_path").perform(context))
    overrides = os.path.join(share, "config", "atlas_crawl_mujoco.yaml")
    world = LaunchConfiguration("world").perform(context) or scene_world(scene).path
    headless = LaunchConfiguration("headless").perform(context).lower() in ("1", "true", "yes")
    verbosity = LaunchConfiguration("gz_verbosity").perform(context)
    joints, quat, z = start_state(LaunchConfiguration("initial_pose").perform(context), scene=scene)
    roll, pitch, yaw = quat_wxyz_to_rpy(quat)
    imu_output = LaunchConfiguration("imu_output").perform(context)
    pub = LaunchConfiguration("imu_publish_rate_hz").perform(context).strip()
    try:
        imu_publish_rate_hz = float(pub) if pub else None
    except ValueError:
        raise RuntimeError(f"imu_publish_rate_hz: not a number: {pub!r}") from None
    urdf = atlas_description.urdf_string(
        ros2_control=True, sim="gazebo", controllers_file=controllers,
        controllers_overrides_file=controllers_gazebo,
        initial_positions_file=write_initial_positions(joints), pelvis_plugin=True,
        imu_file=write_imu_file({"imu.output": imu_output}, publish_rate_hz=imu_publish_rate_hz),
        pelvis_pose_rate_hz=LaunchConfiguration("pelvis_pose_rate_hz").perform(context))

    gz = launch.actions.ExecuteProcess(
        cmd=["gz", "sim", "-r", "-v", verbosity] + (["-s"] if headless else []) + [world],
        output="screen", additional_env={"GZ_SIM_SYSTEM_PLUGIN_PATH": _gz_plugin_path()})
    spawn = launch_ros.actions.Node(
        package="ros_gz_sim", executable="create", output="screen",
        arguments=["-topic", "robot_description", "-name", "atlas", "-x", "0", "-y", "0", "-z", f"{z:.4f}",
                   "-R", f"{roll:.6f}", "-P", f"{pitch:.6f}", "-Y", f"{yaw:.6f}"])
    # the IMU's ROS publisher keeps 4 s of samples (default 10 = 40 ms): a Python subscriber that stalls for 0.2-0.3 s
    # on this 2-core machine otherwise loses whole bursts (measured: gaps up to 0.32 s reached the state estimator,
    # whose estimate then ended 45 % of the path off; gz itself published every 4 ms)
    clock_bridge = launch_ros.actions.Node(
        package="ros_gz_bridge", executable="parameter_bridge", output="screen",
        arguments=["/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock", f"{topics.IMU}@sensor_msgs/msg/Imu[gz.msgs.IMU"],
        parameters=[{f"qos_overrides.{topics.IMU}.publisher.depth": 1000}])
    # the scene's ground-truth height map, as the MuJoCo node publishes it (not for a user's own world file)
    height_map = [] if LaunchConfiguration("world").perform(context) else [launch_ros.actions.Node(
        package="atlas_crawl_mujoco", executable="scene_height_map_node", name="scene_height_map",
        output="screen", parameters=[{"scene": scene, "use_sim_time": True}])]

    def spawner(name):
        return launch_ros.actions.Node(
            package="controller_manager", executable="spawner", output="screen",
            arguments=[name, "--controller-manager", "/controller_manager", "--controller-manager-timeout", "120"])
    jsb, crawl = spawner("joint_state_broadcaster"), spawner("crawl_controller")

    method = LaunchConfiguration("contact_method")
    return [
        launch.actions.LogInfo(msg=f"atlas_crawl gazebo: scene {scene}, world {world}, start z={z:.3f} m "
                                   f"rpy=({math.degrees(roll):.1f}, {math.degrees(pitch):.1f}, "
                                   f"{math.degrees(yaw):.1f}) deg"),
        gz, clock_bridge, spawn, *height_map,
        launch.actions.RegisterEventHandler(OnProcessExit(target_action=spawn, on_exit=[jsb])),
        launch.actions.RegisterEventHandler(OnProcessExit(target_action=jsb, on_exit=[crawl])),
        *crawl_lifecycle_nodes(overrides, method, pose_source),
        *visualisation_nodes(share, urdf, LaunchConfiguration("rviz")),
    ]


def generate_launch_description():
    return launch.LaunchDescription([
        launch.actions.DeclareLaunchArgument(
            "scene", default_value="flat",
            description="terrain scene, as mujoco_sim's physics.scene (atlas_crawl_mujoco/config/scenes/README.md)"),
        launch.actions.DeclareLaunchArgument(
            "world", default_value="",
            description="a user's SDF world file instead of the scene's (the robot still starts as on 'scene')"),
        launch.actions.DeclareLaunchArgument("headless", default_value="true",
                                             description="true: gz server only (-s); false: with the gz GUI"),
        launch.actions.DeclareLaunchArgument("rviz", default_value="false"),
        launch.actions.DeclareLaunchArgument("initial_pose", default_value="crawl_forward",
                                             description="start pose (as mujoco_sim's initial_pose)"),
        launch.actions.DeclareLaunchArgument("contact_method", default_value="fusion",
                                             description="contact inference: height | velocity | effort"),
        launch.actions.DeclareLaunchArgument("gz_verbosity", default_value="2"),
        launch.actions.DeclareLaunchArgument(
            "pose_source", default_value="ground_truth",
            description="pelvis pose the controller, sequencer and contact inference read: ground_truth (the gz "
                        "pelvis plugin) | estimate (the state estimator hosted by the crawl controller plugin: the gz "
                        "IMU through gz_ros2_control + leg kinematics, every update; /odom)"),
        launch.actions.DeclareLaunchArgument(
            "estimator_overrides", default_value="",
            description="pose_source:=estimate: space-separated name=value state estimator parameters for the plugin's "
                        "hosted estimator (config/state_estimator_parameters.yaml), e.g. "
                        "'leg.accel_noise_m_per_s2_sqrt_hz=2.0'"),
        launch.actions.DeclareLaunchArgument(
            "estimator_record_path", default_value="",
            description="pose_source:=estimate, debugging: a .npz file recording what the plugin's hosted estimator is "
                        "fed (replay: lab/replay_estimator_record.py)"),
        launch.actions.DeclareLaunchArgument(
            "imu_output", default_value="mean", choices=["mean", "sample"],
            description="what one pelvis IMU sample holds (the MuJoCo node's imu.output): mean = the mean motion over "
                        "the sample period (gz_plugins ImuMean); sample = gz-sim's per-step value (DART's acceleration "
                        "without the contact impulses)"),
        launch.actions.DeclareLaunchArgument(
            "imu_publish_rate_hz", default_value="",
            description="imu_output:=mean: how often gz publishes the IMU's mean over its last sample period "
                        "(1/imu.rate_hz, 4 ms); above imu.rate_hz (e.g. 1000) the mean slides, so the controller's "
                        "read, asynchronous to gz's message, never repeats or skips a period (at 250 Hz, the rate of "
                        "both, 6.5 % of the reads did; at 1000 none, but the estimate's error did not change in 5 "
                        "runs, README); empty (default) = imu.rate_hz"),
        launch.actions.DeclareLaunchArgument(
            "pelvis_pose_rate_hz", default_value="100",
            description="ground-truth pelvis pose rate [Hz, sim time]; 100 = the MuJoCo node's pelvis_pose_rate_hz "
                        "(Python subscribers); 1000 = the thesis' pelvis plugin"),
        launch.actions.OpaqueFunction(function=_setup),
    ])
