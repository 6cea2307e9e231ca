// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// See crawl_controller.hpp and README.md.  Precedent for embedding CPython in a ros2_control controller:
// ICube-Robotics/pytroller.  Everything numerical happens in Python (atlas_crawl_controller.controller_core).
#include "atlas_crawl_ros2_control/crawl_controller.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>
#include <type_traits>
#include <utility>

// pybind11 after the ROS headers (its macros must not leak into them)
#include <pybind11/embed.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "pluginlib/class_list_macros.hpp"

namespace py = pybind11;

namespace atlas_crawl_ros2_control
{

namespace
{
constexpr const char * kBridgeModule = "atlas_crawl_controller.ros2_control_bridge";
constexpr const char * kBridgeClass = "Ros2ControlBridge";
// Return-code bits of Ros2ControlBridge.update (ros2_control_bridge.RC_*); checked against the module at configure.
constexpr int kRcCommand = 1;
constexpr int kRcStatusChanged = 2;
constexpr int kRcException = 4;
constexpr int kRcNonfinite = 8;
// Layout of Ros2ControlBridge.status (ros2_control_bridge.STATUS_FIELDS); checked at configure.
const std::vector<std::string> kStatusFields = {
  "sequence_id", "accepted", "reached", "state", "task_error_m", "iterations", "stability_margin_m",
  "tracking_error_rad", "nonfinite_inputs", "clamped_commands"};
constexpr std::size_t kNumJoints = 28;
// Size of Ros2ControlBridge.odom (estimation.hosted.ODOM_SIZE: pose 7, twist 6, two 6x6 covariances); checked.
constexpr std::size_t kOdomSize = 85;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::once_flag g_python_once;
std::string g_python_init_error;

// Start the embedded interpreter once per process (never finalised: numpy does not support re-initialisation).
// Runs on whichever thread configures the first controller; that thread releases the GIL right after.
void init_python_once()
{
  try {
    // Host executables (ros2_control_node, gz sim) do not link libpython; pluginlib dlopen()s us RTLD_LOCAL, so
    // extension modules (numpy's C core) would not see the interpreter's symbols.  Promote libpython to GLOBAL.
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&Py_IsInitialized), &info) != 0 && info.dli_fname != nullptr) {
      dlopen(info.dli_fname, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    }
    if (!Py_IsInitialized()) {
      // The PyPI ROS 2 wheels (embedded default / scratch builds) install a .pth hook that re-exec()s the
      // interpreter once to fix LD_LIBRARY_PATH; inside a host process that would replace controller_manager / gz
      // with a bare python. The host already has its libraries loaded: mark the bootstrap as done. (No effect on a
      // stock /opt/ros install, which has no such hook.)
      setenv("_ROS_WHEELS_BOOTSTRAP_COMPLETE", "1", 0);
      py::initialize_interpreter(false /* leave SIGINT to the host */);
      PyEval_SaveThread();  // release the GIL taken by initialisation; every user acquires it explicitly
    }
  } catch (const std::exception & e) {
    g_python_init_error = e.what();
  }
}

// RAII GIL holder on top of PyGILState (works on threads Python never saw; pybind11's gil_scoped_acquire is the
// same mechanism).
class Gil
{
public:
  Gil() : state_(PyGILState_Ensure()) {}
  ~Gil() { PyGILState_Release(state_); }
  Gil(const Gil &) = delete;
  Gil & operator=(const Gil &) = delete;

private:
  PyGILState_STATE state_;
};

py::object parameter_to_python(const rclcpp::Parameter & p)
{
  switch (p.get_type()) {
    case rclcpp::ParameterType::PARAMETER_BOOL: return py::bool_(p.as_bool());
    case rclcpp::ParameterType::PARAMETER_INTEGER: return py::int_(p.as_int());
    case rclcpp::ParameterType::PARAMETER_DOUBLE: return py::float_(p.as_double());
    case rclcpp::ParameterType::PARAMETER_STRING: return py::str(p.as_string());
    case rclcpp::ParameterType::PARAMETER_BOOL_ARRAY: return py::cast(p.as_bool_array());
    case rclcpp::ParameterType::PARAMETER_INTEGER_ARRAY: return py::cast(p.as_integer_array());
    case rclcpp::ParameterType::PARAMETER_DOUBLE_ARRAY: return py::cast(p.as_double_array());
    case rclcpp::ParameterType::PARAMETER_STRING_ARRAY: return py::cast(p.as_string_array());
    default: return py::none();
  }
}

// LoanedCommandInterface::set_value returns bool ([[nodiscard]]) in current Jazzy and void in early Jazzy releases.
template<typename Iface>
bool write_command(Iface & iface, double value)
{
  if constexpr (std::is_void_v<decltype(iface.set_value(value))>) {
    iface.set_value(value);
    return true;
  } else {
    return iface.set_value(value);
  }
}

template<typename T>
T * buffer_pointer(const py::object & bridge, const char * name, std::size_t expected)
{
  py::object obj = bridge.attr(name);
  auto arr = obj.cast<py::array_t<double, py::array::c_style>>();
  if (arr.ptr() != obj.ptr()) {  // a converted copy would not be the buffer the bridge reads/writes
    throw std::runtime_error(std::string("bridge buffer '") + name + "' is not a C-contiguous float64 array");
  }
  if (static_cast<std::size_t>(arr.size()) != expected) {
    throw std::runtime_error(
      std::string("bridge buffer '") + name + "' has " + std::to_string(arr.size()) + " elements, expected " +
      std::to_string(expected));
  }
  // The bridge's buffers are allocated once and never rebound (ros2_control_bridge docstring; tested), and the
  // bridge is kept alive by py_ — so the pointer stays valid until release_python().
  return arr.mutable_data();
}
}  // namespace

// ------------------------------------------------------------------------------------------------ statistics
void UpdateStats::add(double us, double python_us)
{
  ++count;
  sum_us += us;
  max_us = std::max(max_us, us);
  max_python_us = std::max(max_python_us, python_us);
  std::size_t bin = us <= 0.0 ? 0 : static_cast<std::size_t>(us / kBinUs);
  hist[std::min(bin, kBins)]++;
}

void UpdateStats::merge(const UpdateStats & o)
{
  count += o.count;
  sum_us += o.sum_us;
  max_us = std::max(max_us, o.max_us);
  max_python_us = std::max(max_python_us, o.max_python_us);
  overruns += o.overruns;
  python_errors += o.python_errors;
  nonfinite += o.nonfinite;
  skipped += o.skipped;
  write_failures += o.write_failures;
  for (std::size_t i = 0; i < hist.size(); ++i) {hist[i] += o.hist[i];}
}

double UpdateStats::percentile(double p) const
{
  if (count == 0) {return 0.0;}
  const auto want = static_cast<uint64_t>(std::ceil(p * static_cast<double>(count)));
  uint64_t acc = 0;
  for (std::size_t i = 0; i < hist.size(); ++i) {
    acc += hist[i];
    if (acc >= want) {return (static_cast<double>(i) + 1.0) * kBinUs;}  // upper edge of the bin
  }
  return max_us;
}

const std::array<const char *, 6> CrawlController::kImuInterfaces = {
  "angular_velocity.x", "angular_velocity.y", "angular_velocity.z",
  "linear_acceleration.x", "linear_acceleration.y", "linear_acceleration.z"};

// ------------------------------------------------------------------------------------------------ python state
struct CrawlController::Python
{
  py::object bridge;
  py::object update_fn;
  py::object set_reference_fn;
  py::object set_params_fn;
};

CrawlController::CrawlController() = default;

CrawlController::~CrawlController()
{
  release_python();
}

void CrawlController::release_python()
{
  position_ = velocity_ = effort_ = pelvis_ = imu_ = nullptr;
  command_ = status_ = odom_ = nullptr;
  if (py_ && Py_IsInitialized()) {
    Gil gil;
    py_.reset();  // drops the references with the GIL held
  }
  py_.reset();
}

// ------------------------------------------------------------------------------------------------ lifecycle
controller_interface::CallbackReturn CrawlController::on_init()
{
  try {
    // Core parameters: generated from atlas_crawl_controller/config/crawl_controller_parameters.yaml.
    core_param_listener_ = std::make_shared<crawl_controller::ParamListener>(get_node());
    plugin_param_listener_ = std::make_shared<crawl_controller_plugin::ParamListener>(get_node());
    plugin_params_ = plugin_param_listener_->get_params();
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "parameter declaration failed: %s", e.what());
    return controller_interface::CallbackReturn::ERROR;
  }
  return controller_interface::CallbackReturn::SUCCESS;
}

controller_interface::InterfaceConfiguration CrawlController::command_interface_configuration() const
{
  controller_interface::InterfaceConfiguration cfg;
  cfg.type = controller_interface::interface_configuration_type::INDIVIDUAL;
  for (const auto & j : joint_names_) {cfg.names.push_back(j + "/position");}
  return cfg;
}

controller_interface::InterfaceConfiguration CrawlController::state_interface_configuration() const
{
  controller_interface::InterfaceConfiguration cfg;
  cfg.type = controller_interface::interface_configuration_type::INDIVIDUAL;
  for (const auto & j : joint_names_) {  // joint-major: index 3*j + {0: position, 1: velocity, 2: effort}
    cfg.names.push_back(j + "/position");
    cfg.names.push_back(j + "/velocity");
    cfg.names.push_back(j + "/effort");
  }
  if (estimating()) {  // then the IMU sensor's, index 3*N + k in bridge.imu order
    for (const char * n : kImuInterfaces) {cfg.names.push_back(plugin_params_.imu_sensor_name + "/" + n);}
  }
  return cfg;
}

controller_interface::CallbackReturn CrawlController::on_configure(const rclcpp_lifecycle::State &)
{
  auto logger = get_node()->get_logger();
  plugin_params_ = plugin_param_listener_->get_params();

  std::call_once(g_python_once, init_python_once);
  if (!g_python_init_error.empty() || !Py_IsInitialized()) {
    RCLCPP_ERROR(logger, "embedded Python could not start: %s", g_python_init_error.c_str());
    return controller_interface::CallbackReturn::ERROR;
  }

  // Core parameter names come from the Python side (the YAML it loads) — the C++ never lists them.
  release_python();
  try {
    Gil gil;
    py::module_ sys = py::module_::import("sys");
    py::list path = sys.attr("path");
    // $VIRTUAL_ENV (the scratch/embedded layouts) and user paths; a stock install needs neither.
    py::exec(R"(
import os, site, sys
_v = os.environ.get("VIRTUAL_ENV")
if _v:
    _sp = os.path.join(_v, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    if os.path.isdir(_sp) and _sp not in sys.path:
        site.addsitedir(_sp)
)");
    for (auto it = plugin_params_.python_paths.rbegin(); it != plugin_params_.python_paths.rend(); ++it) {
      path.attr("insert")(0, *it);
    }
    py::module_ mod = py::module_::import(kBridgeModule);
    // contract checks: the C++ constants must match the module's
    if (mod.attr("RC_COMMAND").cast<int>() != kRcCommand ||
      mod.attr("RC_STATUS_CHANGED").cast<int>() != kRcStatusChanged ||
      mod.attr("RC_EXCEPTION").cast<int>() != kRcException ||
      mod.attr("RC_NONFINITE").cast<int>() != kRcNonfinite ||
      mod.attr("STATUS_FIELDS").cast<std::vector<std::string>>() != kStatusFields)
    {
      RCLCPP_ERROR(logger, "%s does not match this plugin (RC_* / STATUS_FIELDS differ): rebuild", kBridgeModule);
      return controller_interface::CallbackReturn::ERROR;
    }
    // core parameters by name from the ROS node (declared by the generated listener, so they exist)
    py::object pset = py::module_::import("atlas_crawl_controller.controller_core").attr("parameter_set")();
    core_parameter_names_ = py::list(pset.attr("specs").attr("keys")()).cast<std::vector<std::string>>();
    core_parameter_values_ = get_node()->get_parameters(core_parameter_names_);
    py::dict params;
    for (const auto & p : core_parameter_values_) {params[py::str(p.get_name())] = parameter_to_python(p);}

    auto py = std::make_unique<Python>();
    py->bridge = mod.attr(kBridgeClass)(   // core.configure() and the estimator's parameters: validated
      params, plugin_params_.cartesian, plugin_params_.pose_source, plugin_params_.estimator_overrides,
      plugin_params_.estimator_record_path);
    py->update_fn = py->bridge.attr("update");
    py->set_reference_fn = py->bridge.attr("set_reference");
    py->set_params_fn = py->bridge.attr("set_params");
    joint_names_ = py->bridge.attr("joint_names").cast<std::vector<std::string>>();
    if (joint_names_.size() != kNumJoints) {
      RCLCPP_ERROR(logger, "bridge reports %zu joints, expected %zu", joint_names_.size(), kNumJoints);
      return controller_interface::CallbackReturn::ERROR;
    }
    position_ = buffer_pointer<double>(py->bridge, "position", kNumJoints);
    velocity_ = buffer_pointer<double>(py->bridge, "velocity", kNumJoints);
    effort_ = buffer_pointer<double>(py->bridge, "effort", kNumJoints);
    pelvis_ = buffer_pointer<double>(py->bridge, "pelvis", 7);
    command_ = buffer_pointer<double>(py->bridge, "command", kNumJoints);
    status_ = buffer_pointer<double>(py->bridge, "status", kStatusFields.size());
    if (estimating()) {
      if (mod.attr("ODOM_SIZE").cast<std::size_t>() != kOdomSize) {
        RCLCPP_ERROR(logger, "%s.ODOM_SIZE does not match this plugin: rebuild", kBridgeModule);
        return controller_interface::CallbackReturn::ERROR;
      }
      imu_ = buffer_pointer<double>(py->bridge, "imu", kImuInterfaces.size());
      odom_ = buffer_pointer<double>(py->bridge, "odom", kOdomSize);
      odom_topic_ = py->bridge.attr("odom_topic").cast<std::string>();
      estimate_pose_topic_ = py->bridge.attr("pose_topic").cast<std::string>();
      odom_frame_ = py->bridge.attr("odom_frame").cast<std::string>();
      base_frame_ = py->bridge.attr("base_frame").cast<std::string>();
      pose_frame_ = py->bridge.attr("pose_frame").cast<std::string>();
    }
    if (plugin_params_.cartesian && !py->bridge.attr("cartesian_enabled").cast<bool>()) {
      RCLCPP_WARN(logger, "atlas_crawl_kinematics IIK not available: Cartesian references will be rejected");
    }
    reason_ = py->bridge.attr("reason").cast<std::string>();
    py_ = std::move(py);
  } catch (const py::error_already_set & e) {
    RCLCPP_ERROR(logger, "configuring the Python core failed: %s", e.what());
    return controller_interface::CallbackReturn::ERROR;
  } catch (const std::exception & e) {
    RCLCPP_ERROR(logger, "configuring the Python core failed: %s", e.what());
    return controller_interface::CallbackReturn::ERROR;
  }
  safe_command_.assign(kNumJoints, 0.0);
  reason_.reserve(1024);
  last_error_.reserve(1024);

  // Runtime parameter changes: validated AND applied by the core (it also checks cross-parameter constraints,
  // e.g. iik_rate_hz <= update_rate_hz); a rejection reaches `ros2 param set` with the core's reason.
  param_cb_handle_ = get_node()->add_on_set_parameters_callback(
    [this](const std::vector<rclcpp::Parameter> & ps) {return on_set_parameters(ps);});

  // References: subscription (non-RT) → RealtimeBuffer → update() (RT).
  reference_sub_ = get_node()->create_subscription<ReferenceMsg>(
    "~/reference", rclcpp::QoS(50).reliable(),
    [this](const std::shared_ptr<ReferenceMsg> msg) {reference_buffer_.writeFromNonRT(msg);});
  pelvis_sub_ = get_node()->create_subscription<geometry_msgs::msg::PoseStamped>(
    plugin_params_.pelvis_pose_topic, rclcpp::SystemDefaultsQoS(),
    [this](const std::shared_ptr<geometry_msgs::msg::PoseStamped> msg) {
      PelvisSample s;
      s.pose = {msg->pose.position.x, msg->pose.position.y, msg->pose.position.z,
        msg->pose.orientation.x, msg->pose.orientation.y, msg->pose.orientation.z, msg->pose.orientation.w};
      s.valid = true;
      pelvis_buffer_.writeFromNonRT(s);
      pelvis_seen_.store(true, std::memory_order_relaxed);
    });

  status_pub_raw_ = get_node()->create_publisher<StatusMsg>("~/status", rclcpp::QoS(50).reliable());
  status_pub_ = std::make_unique<realtime_tools::RealtimePublisher<StatusMsg>>(status_pub_raw_);
  status_pub_->lock();
  status_pub_->msg_.reason.reserve(1024);
  status_pub_->unlock();
  commands_pub_raw_ = get_node()->create_publisher<std_msgs::msg::Float64MultiArray>(
    "~/commands", rclcpp::SystemDefaultsQoS());
  commands_pub_ = std::make_unique<realtime_tools::RealtimePublisher<std_msgs::msg::Float64MultiArray>>(
    commands_pub_raw_);
  commands_pub_->lock();
  commands_pub_->msg_.data.assign(kNumJoints, 0.0);
  commands_pub_->unlock();

  if (estimating()) {
    odom_pub_raw_ = get_node()->create_publisher<nav_msgs::msg::Odometry>(odom_topic_, rclcpp::SystemDefaultsQoS());
    odom_pub_ = std::make_unique<realtime_tools::RealtimePublisher<nav_msgs::msg::Odometry>>(odom_pub_raw_);
    odom_pub_->lock();
    odom_pub_->msg_.header.frame_id = odom_frame_;
    odom_pub_->msg_.child_frame_id = base_frame_;
    odom_pub_->unlock();
    estimate_pose_pub_raw_ = get_node()->create_publisher<geometry_msgs::msg::PoseStamped>(
      estimate_pose_topic_, rclcpp::SystemDefaultsQoS());
    estimate_pose_pub_ = std::make_unique<realtime_tools::RealtimePublisher<geometry_msgs::msg::PoseStamped>>(
      estimate_pose_pub_raw_);
    estimate_pose_pub_->lock();
    estimate_pose_pub_->msg_.header.frame_id = pose_frame_;
    estimate_pose_pub_->unlock();
  }

  const double rate = get_update_rate() > 0 ? static_cast<double>(get_update_rate()) : 250.0;
  budget_us_ = plugin_params_.update_budget_ms > 0.0 ? plugin_params_.update_budget_ms * 1e3 : 1e6 / rate;
  stats_timer_ = get_node()->create_wall_timer(
    std::chrono::duration<double>(plugin_params_.statistics_period_s), [this]() {log_statistics();});

  const std::string source = estimating() ?
    "estimate (IMU '" + plugin_params_.imu_sensor_name + "', " + odom_topic_ + ")" : plugin_params_.pose_source;
  RCLCPP_INFO(
    logger, "configured: Python core %s.%s, %zu joints, %zu core parameters, update budget %.0f us, pelvis '%s', "
    "pose source %s", kBridgeModule, kBridgeClass, joint_names_.size(), core_parameter_names_.size(), budget_us_,
    plugin_params_.pelvis_pose_topic.c_str(), source.c_str());
  return controller_interface::CallbackReturn::SUCCESS;
}

controller_interface::CallbackReturn CrawlController::on_activate(const rclcpp_lifecycle::State &)
{
  if (!py_ || state_interfaces_.size() != num_state_interfaces() || command_interfaces_.size() != kNumJoints) {
    RCLCPP_ERROR(get_node()->get_logger(), "activate: not configured or wrong interfaces");
    return controller_interface::CallbackReturn::ERROR;
  }
  std::lock_guard<std::mutex> lk(core_mutex_);
  for (std::size_t j = 0; j < kNumJoints; ++j) {
    position_[j] = state_interfaces_[3 * j].get_optional().value_or(kNaN);
  }
  try {
    Gil gil;
    py_->bridge.attr("activate")();
    reason_ = py_->bridge.attr("reason").cast<std::string>();
  } catch (const std::exception & e) {
    RCLCPP_ERROR(get_node()->get_logger(), "activate: the Python core failed: %s", e.what());
    return controller_interface::CallbackReturn::ERROR;
  }
  std::copy(command_, command_ + kNumJoints, safe_command_.begin());
  for (std::size_t j = 0; j < kNumJoints; ++j) {
    static_cast<void>(write_command(command_interfaces_[j], safe_command_[j]));
  }
  reference_buffer_.writeFromNonRT(std::shared_ptr<ReferenceMsg>());
  last_reference_.reset();
  next_status_ns_ = next_commands_ns_ = next_estimate_ns_ = 0;
  skipped_period_ns_ = 0;
  error_active_ = false;
  RCLCPP_INFO(get_node()->get_logger(), "active: holding the measured pose");
  return controller_interface::CallbackReturn::SUCCESS;
}

controller_interface::CallbackReturn CrawlController::on_deactivate(const rclcpp_lifecycle::State &)
{
  std::lock_guard<std::mutex> lk(core_mutex_);
  if (py_) {
    try {
      Gil gil;
      py_->bridge.attr("deactivate")();
    } catch (const std::exception & e) {
      RCLCPP_ERROR(get_node()->get_logger(), "deactivate: %s", e.what());
    }
  }
  return controller_interface::CallbackReturn::SUCCESS;
}

controller_interface::CallbackReturn CrawlController::on_cleanup(const rclcpp_lifecycle::State &)
{
  {
    std::lock_guard<std::mutex> lk(core_mutex_);
    param_cb_handle_.reset();
    reference_sub_.reset();
    pelvis_sub_.reset();
    stats_timer_.reset();
    status_pub_.reset();
    commands_pub_.reset();
    odom_pub_.reset();
    estimate_pose_pub_.reset();
    status_pub_raw_.reset();
    commands_pub_raw_.reset();
    odom_pub_raw_.reset();
    estimate_pose_pub_raw_.reset();
    release_python();
  }
  joint_names_.clear();
  return controller_interface::CallbackReturn::SUCCESS;
}

controller_interface::CallbackReturn CrawlController::on_error(const rclcpp_lifecycle::State & s)
{
  return on_cleanup(s);
}

// ------------------------------------------------------------------------------------------------ parameters
rcl_interfaces::msg::SetParametersResult CrawlController::on_set_parameters(
  const std::vector<rclcpp::Parameter> & parameters)
{
  rcl_interfaces::msg::SetParametersResult result;
  result.successful = true;
  std::vector<rclcpp::Parameter> proposed = core_parameter_values_;
  bool touches_core = false;
  for (const auto & p : parameters) {
    for (auto & q : proposed) {
      if (q.get_name() == p.get_name()) {q = p; touches_core = true;}
    }
  }
  if (!touches_core || !py_) {return result;}
  std::lock_guard<std::mutex> lk(core_mutex_);   // the RT thread skips (holds) while we are in the core
  try {
    Gil gil;
    py::dict d;
    for (const auto & p : proposed) {d[py::str(p.get_name())] = parameter_to_python(p);}
    std::string reason = py_->set_params_fn(d).cast<std::string>();
    if (!reason.empty()) {
      result.successful = false;
      result.reason = reason;
      return result;
    }
  } catch (const std::exception & e) {
    result.successful = false;
    result.reason = std::string("core rejected the parameters: ") + e.what();
    return result;
  }
  core_parameter_values_ = proposed;
  RCLCPP_INFO(get_node()->get_logger(), "core parameters applied (%zu changed)", parameters.size());
  return result;
}

// ------------------------------------------------------------------------------------------------ update (RT)
controller_interface::return_type CrawlController::update(
  const rclcpp::Time & time, const rclcpp::Duration & period)
{
  const auto t0 = std::chrono::steady_clock::now();
  double python_us = 0.0;
  bool have_command = false;
  bool error = false;
  bool status_changed = false;
  bool rejected = false;
  uint32_t rejected_sequence_id = 0;
  const std::string * error_text = nullptr;

  // 1. state interfaces → the bridge's numpy buffers (plain memory; Python only reads it inside our call)
  for (std::size_t j = 0; j < kNumJoints; ++j) {
    position_[j] = state_interfaces_[3 * j].get_optional().value_or(kNaN);
    velocity_[j] = state_interfaces_[3 * j + 1].get_optional().value_or(kNaN);
    effort_[j] = state_interfaces_[3 * j + 2].get_optional().value_or(kNaN);
  }
  if (imu_ != nullptr) {
    for (std::size_t k = 0; k < kImuInterfaces.size(); ++k) {
      imu_[k] = state_interfaces_[3 * kNumJoints + k].get_optional().value_or(kNaN);
    }
  }
  const PelvisSample * pelvis = pelvis_buffer_.readFromRT();
  if (pelvis != nullptr && pelvis->valid) {std::copy(pelvis->pose.begin(), pelvis->pose.end(), pelvis_);}
  std::shared_ptr<ReferenceMsg> * ref_slot = reference_buffer_.readFromRT();
  const bool new_reference = ref_slot != nullptr && *ref_slot && *ref_slot != last_reference_;

  std::unique_lock<std::mutex> core_lock(core_mutex_, std::try_to_lock);
  if (!core_lock.owns_lock()) {
    // a parameter change is inside the core right now: hold, and give the core the lost time next period
    skipped_period_ns_ += period.nanoseconds();
    rt_stats_.skipped++;
  } else {
    // First update on this thread: keep a Python thread state for it, so later GIL acquisitions allocate nothing.
    if (pinned_thread_ != std::this_thread::get_id()) {
      PyGILState_Ensure();   // intentionally never released: keeps this thread's PyThreadState alive
      PyEval_SaveThread();   // ...but drop the GIL again
      pinned_thread_ = std::this_thread::get_id();
    }
    const double dt = static_cast<double>(period.nanoseconds() + skipped_period_ns_) * 1e-9;
    skipped_period_ns_ = 0;
    const auto tp0 = std::chrono::steady_clock::now();
    int rc = 0;
    {
      Gil gil;  // 2. the only GIL section of the period
      try {
        if (new_reference) {
          // Converting the message allocates Python objects, but only on the period a new reference arrives.
          const ReferenceMsg & m = **ref_slot;
          std::vector<double> targets;
          targets.reserve(3 * m.contact_targets.size());
          for (const auto & p : m.contact_targets) {targets.insert(targets.end(), {p.x, p.y, p.z});}
          const bool ok = py_->set_reference_fn(
            m.mode, m.sequence_id, m.joint_names, m.joint_positions_rad, m.duration_s, targets,
            std::vector<bool>(m.stance.begin(), m.stance.end()), m.com_modulation, m.sender, m.queue,
            std::vector<double>(m.swing_lift_m.begin(), m.swing_lift_m.end()),
            std::vector<bool>(m.com_support.begin(), m.com_support.end()),
            std::vector<double>(m.heading_rad.begin(), m.heading_rad.end()),
            std::vector<double>(m.drift_correction_max_m.begin(), m.drift_correction_max_m.end())).cast<bool>();
          if (!ok) {
            rejected = true;
            rejected_sequence_id = m.sequence_id;
            rejected_sender_ = m.sender;
            rejected_reason_ = py_->bridge.attr("rejected_reason").cast<std::string>();
          }
        }
        rc = py_->update_fn(time.seconds(), dt).cast<int>();
        if (rc & kRcStatusChanged) {
          reason_ = py_->bridge.attr("reason").cast<std::string>();
          sender_ = py_->bridge.attr("sender").cast<std::string>();
        }
        if (rc & (kRcException | kRcNonfinite)) {
          last_error_ = py_->bridge.attr("last_error").cast<std::string>();
        }
      } catch (const py::error_already_set & e) {
        rc = kRcException;
        last_error_ = e.what();
      } catch (const std::exception & e) {
        rc = kRcException;
        last_error_ = e.what();
      }
    }
    if (new_reference) {last_reference_ = *ref_slot;}
    python_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - tp0).count();
    status_changed = (rc & kRcStatusChanged) != 0 || rejected;
    if (rc & (kRcException | kRcNonfinite)) {
      error = true;
      if (rc & kRcException) {rt_stats_.python_errors++;} else {rt_stats_.nonfinite++;}
    } else if (rc & kRcCommand) {
      have_command = true;
      for (std::size_t j = 0; j < kNumJoints; ++j) {
        if (!std::isfinite(command_[j])) {have_command = false; error = true; rt_stats_.nonfinite++; break;}
      }
    }
  }

  // 3. budget: a late command is dropped (the last safe one is held), and reported
  const double elapsed_us =
    std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
  bool overrun = elapsed_us > budget_us_;
  if (overrun) {
    rt_stats_.overruns++;
    have_command = false;
  }
  if (have_command) {std::copy(command_, command_ + kNumJoints, safe_command_.begin());}

  // 4. commands out — always the last safe command, never NaN
  for (std::size_t j = 0; j < kNumJoints; ++j) {
    if (!write_command(command_interfaces_[j], safe_command_[j])) {rt_stats_.write_failures++;}
  }

  // 5. status / commands topics, errors
  if (error) {
    error_text = &last_error_;
    RCLCPP_ERROR_THROTTLE(
      get_node()->get_logger(), *get_node()->get_clock(), 1000,
      "Python core failed (holding the last safe command): %s", last_error_.c_str());
  } else if (overrun) {
    RCLCPP_WARN_THROTTLE(
      get_node()->get_logger(), *get_node()->get_clock(), 1000,
      "update overrun: %.0f us > budget %.0f us (holding the last safe command)", elapsed_us, budget_us_);
  }
  const bool error_edge = error != error_active_;
  error_active_ = error;
  const int64_t now_ns = time.nanoseconds();
  if (status_changed || error_edge || now_ns >= next_status_ns_) {
    publish_status(time, error, error_text, rejected ? &rejected_sequence_id : nullptr);
    next_status_ns_ = now_ns + static_cast<int64_t>(1e9 / plugin_params_.status_rate_hz);
  }
  if (odom_ != nullptr && now_ns >= next_estimate_ns_ && std::isfinite(odom_[0])) {
    publish_estimate(time);
    next_estimate_ns_ = now_ns + static_cast<int64_t>(1e9 / plugin_params_.estimate_publish_rate_hz);
  }
  if (plugin_params_.commands_rate_hz > 0.0 && now_ns >= next_commands_ns_ && commands_pub_->trylock()) {
    std::copy(safe_command_.begin(), safe_command_.end(), commands_pub_->msg_.data.begin());
    commands_pub_->unlockAndPublish();
    next_commands_ns_ = now_ns + static_cast<int64_t>(1e9 / plugin_params_.commands_rate_hz);
  }

  // 6. statistics (handed to the logging timer without blocking)
  rt_stats_.add(elapsed_us, python_us);
  if (stats_mutex_.try_lock()) {
    shared_stats_.merge(rt_stats_);
    stats_mutex_.unlock();
    rt_stats_.reset();
  }
  return controller_interface::return_type::OK;
}

void CrawlController::publish_status(
  const rclcpp::Time & time, bool error, const std::string * error_text, const uint32_t * rejected_sequence_id)
{
  if (!status_pub_ || status_ == nullptr || !status_pub_->trylock()) {return;}
  StatusMsg & m = status_pub_->msg_;
  m.header.stamp = time;
  m.sequence_id = static_cast<uint32_t>(status_[0]);
  m.accepted = status_[1] != 0.0;
  m.reached = status_[2] != 0.0;
  m.state = static_cast<uint8_t>(status_[3]);
  m.task_error_m = status_[4];
  m.iterations = static_cast<int32_t>(status_[5]);
  m.stability_margin_m = status_[6];
  if (rejected_sequence_id != nullptr) {  // the rejection answers THAT reference (as the MuJoCo node does)
    m.sequence_id = *rejected_sequence_id;
    m.sender = rejected_sender_;
    m.accepted = false;
    m.reached = false;
  } else {
    m.sender = sender_;
  }
  if (error && error_text != nullptr) {
    m.state = StatusMsg::STATE_ERROR;
    m.reason.assign("python core error (last safe command held): ");
    m.reason.append(*error_text);
  } else if (rejected_sequence_id != nullptr) {
    m.reason.assign(rejected_reason_);   // the rejection's reason, never the running motion's
  } else {
    m.reason.assign(reason_);
  }
  status_pub_->unlockAndPublish();
}

void CrawlController::publish_estimate(const rclcpp::Time & time)
{
  // odom_ (bridge.odom, written by the Python call of this period): pose [x y z qx qy qz qw], twist [v w] in the
  // pelvis frame, pose and twist covariances (6x6 row-major) — the layout of estimation.hosted.ODOM_LAYOUT
  geometry_msgs::msg::Pose pose;
  pose.position.x = odom_[0];
  pose.position.y = odom_[1];
  pose.position.z = odom_[2];
  pose.orientation.x = odom_[3];
  pose.orientation.y = odom_[4];
  pose.orientation.z = odom_[5];
  pose.orientation.w = odom_[6];
  if (odom_pub_ && odom_pub_->trylock()) {
    nav_msgs::msg::Odometry & m = odom_pub_->msg_;
    m.header.stamp = time;
    m.pose.pose = pose;
    m.twist.twist.linear.x = odom_[7];
    m.twist.twist.linear.y = odom_[8];
    m.twist.twist.linear.z = odom_[9];
    m.twist.twist.angular.x = odom_[10];
    m.twist.twist.angular.y = odom_[11];
    m.twist.twist.angular.z = odom_[12];
    std::copy(odom_ + 13, odom_ + 49, m.pose.covariance.begin());
    std::copy(odom_ + 49, odom_ + 85, m.twist.covariance.begin());
    odom_pub_->unlockAndPublish();
  }
  if (estimate_pose_pub_ && estimate_pose_pub_->trylock()) {
    estimate_pose_pub_->msg_.header.stamp = time;
    estimate_pose_pub_->msg_.pose = pose;
    estimate_pose_pub_->unlockAndPublish();
  }
}

void CrawlController::log_statistics()
{
  UpdateStats s;
  {
    std::lock_guard<std::mutex> lk(stats_mutex_);
    s = shared_stats_;
    shared_stats_.reset();
  }
  if (s.count == 0) {return;}
  RCLCPP_INFO(
    get_node()->get_logger(),
    "update time over %lu periods: mean %.1f us, p99 <= %.0f us, max %.1f us (Python call max %.1f us), "
    "budget %.0f us, overruns %lu, Python errors %lu, non-finite %lu, skipped %lu, write failures %lu, "
    "pelvis pose %s",
    static_cast<unsigned long>(s.count), s.sum_us / static_cast<double>(s.count), s.percentile(0.99), s.max_us,
    s.max_python_us, budget_us_, static_cast<unsigned long>(s.overruns),
    static_cast<unsigned long>(s.python_errors), static_cast<unsigned long>(s.nonfinite),
    static_cast<unsigned long>(s.skipped), static_cast<unsigned long>(s.write_failures),
    pelvis_seen_.load() ? "received" : "NOT received (identity used)");
}

}  // namespace atlas_crawl_ros2_control

PLUGINLIB_EXPORT_CLASS(atlas_crawl_ros2_control::CrawlController, controller_interface::ControllerInterface)
