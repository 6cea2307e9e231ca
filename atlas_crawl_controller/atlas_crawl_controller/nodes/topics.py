"""Names of every topic, service and action of the atlas_crawl graph (one place; launch files and tests use these).

Ground truth from the physics (published by mujoco_sim_node here; by the gz-sim pelvis plugin + gz_ros2_control in
the Gazebo variant, same names and types):

* ``/clock``                        rosgraph_msgs/Clock — sim time (monotonic across /sim/reset)
* ``/joint_states``                 sensor_msgs/JointState — position [rad], velocity [rad/s], effort [N m], team order
* ``/atlas/pelvis_pose``            geometry_msgs/PoseStamped — pelvis pose, frame ``world``
* ``/atlas/pelvis_odom``            nav_msgs/Odometry — pose in ``world``, twist in the ``pelvis`` frame (REP 105)
* ``/atlas/contacts_ground_truth``  atlas_crawl_msgs/SupportState — simulator contacts (METHOD_GROUND_TRUTH), frame
  ``world``: a limb is in contact when it touched the ground in any physics step since the previous message (the
  contacts chatter at the millisecond scale; a snapshot would alias it). Gazebo: contacts only (no polygon/margin)
* ``/atlas/imu``                     sensor_msgs/Imu — pelvis IMU (rate gyro + accelerometer, frame ``pelvis``, no
  orientation), with the noise and bias model of the sim node's ``imu.*`` parameters (MuJoCo variant)
* ``/sim/reset``                    std_srvs/Trigger — fresh trial: back to the initial pose (MuJoCo variant)
* ``/atlas/fall_ground_truth``      std_msgs/String, JSON ``{"fallen", "reason", "posture", "onset_t",
  "flagged_t", "events"}``, transient local, on every change — the FallDetector on the simulator's ground truth
  (MuJoCo variant; evaluation only)

Controller (hosted by mujoco_sim_node each control period, or by the ros2_control plugin):

* ``/crawl_controller/reference``   atlas_crawl_msgs/ControllerReference (in)
* ``/crawl_controller/status``      atlas_crawl_msgs/ControllerStatus (out; on every change + at status_rate_hz)
* ``/crawl_controller/commands``    std_msgs/Float64MultiArray — joint position commands, team order (at
  joint_state_rate_hz, for logging)

State estimator (state_estimator node, issue 14 §1; IMU + leg kinematics, no ground truth):

* ``/odom``                         nav_msgs/Odometry — pelvis pose in ``odom`` with covariances, twist in ``pelvis``
* ``/state_estimator/pelvis_pose``  geometry_msgs/PoseStamped — the same pose; consumers remapped from
  ``/atlas/pelvis_pose`` read it when ``pose_source`` is ``estimate``
* ``/state_estimator/reset``        std_srvs/Trigger — re-initialise (after ``/sim/reset``)
* ``/tf``                           ``odom`` → ``pelvis`` (with tf2_msgs)

Contact inference and sequencer:

* ``/support_state``                atlas_crawl_msgs/SupportState — estimated contacts (frame ``world``)
* ``/crawl``, ``/turn``, ``/roll``  atlas_crawl_msgs/action/{Crawl,Turn,Roll}
* ``/recover``                      atlas_crawl_msgs/action/Recover — from wherever it lies back to the crawl stance
* ``/crawl_to``                     atlas_crawl_msgs/action/CrawlTo — crawl to a pose (x, y, yaw) with tolerances
* ``/cmd_vel``                      geometry_msgs/TwistStamped (parameter ``cmd_vel.stamped``; false: Twist) —
  continuous crawling (body frame: linear.x forward, linear.y left, angular.z); stale after 0.5 s → four-point stance
* ``/gait_sequencer/goal_rejections`` std_msgs/String, JSON ``{"action", "goal_id", "reason"}``, transient local
  (depth 50) — why a goal was rejected (rclpy's goal callback can only answer ACCEPT/REJECT)

Visualisation (support_markers_node, optional; RViz config atlas_crawl_bringup/config/atlas_crawl.rviz):

* ``/support_markers``              visualization_msgs/MarkerArray — support polygon, CoM projection, contacts,
  margin text, frame ``world``
* ``/tf``                           tf2_msgs/TFMessage — ``world`` → ``pelvis`` from the ground-truth pelvis pose
"""
CLOCK = "/clock"
JOINT_STATES = "/joint_states"
PELVIS_POSE = "/atlas/pelvis_pose"
HEIGHT_MAP = "/atlas/height_map"   # atlas_crawl_msgs/HeightMap around the robot (simulator ground truth)
PELVIS_ODOM = "/atlas/pelvis_odom"
CONTACTS_GT = "/atlas/contacts_ground_truth"
SIM_RESET = "/sim/reset"
IMU = "/atlas/imu"
ODOM = "/odom"
POSE_ESTIMATE = "/state_estimator/pelvis_pose"
ESTIMATOR_RESET = "/state_estimator/reset"
ODOM_FRAME = "odom"
FALL_GT = "/atlas/fall_ground_truth"
REFERENCE = "/crawl_controller/reference"
STATUS = "/crawl_controller/status"
COMMANDS = "/crawl_controller/commands"
SUPPORT_STATE = "/support_state"
CRAWL = "/crawl"
TURN = "/turn"
ROLL = "/roll"
RECOVER = "/recover"
CRAWL_TO = "/crawl_to"
CMD_VEL = "/cmd_vel"
GOAL_REJECTIONS = "/gait_sequencer/goal_rejections"
SUPPORT_MARKERS = "/support_markers"
TF = "/tf"
WORLD_FRAME = "world"
PELVIS_FRAME = "pelvis"

#: Topics recorded into the MCAP bag of the embedded demo.
RECORDED = (JOINT_STATES, PELVIS_POSE, PELVIS_ODOM, IMU, ODOM, CONTACTS_GT, REFERENCE, STATUS, SUPPORT_STATE, COMMANDS,
            GOAL_REJECTIONS)
