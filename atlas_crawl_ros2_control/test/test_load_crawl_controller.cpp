// Copyright 2026 atlas_crawl team. Apache-2.0.
// ros2_controllers-style load test: controller_manager with our robot on mock_components/GenericSystem loads the
// plugin through pluginlib, configures it (starts the embedded interpreter, imports the Python core) and exposes
// the 28 position commands / 84 states.  Built only where ros2_control is installed (CMakeLists.txt).
#include <gmock/gmock.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "controller_manager/controller_manager.hpp"
#include "rclcpp/executors/single_threaded_executor.hpp"
#include "rclcpp/utilities.hpp"

namespace
{
std::string read_file(const std::string & path)
{
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}
}  // namespace

TEST(TestLoadCrawlController, load_and_configure_with_mock_hardware)
{
  rclcpp::init(0, nullptr);
  auto executor = std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
  const std::string urdf = read_file(ATLAS_MOCK_URDF);
  ASSERT_NE(urdf.find("mock_components/GenericSystem"), std::string::npos);
  auto cm_ptr = std::make_unique<controller_manager::ControllerManager>(
    executor, urdf, true, "test_controller_manager");
  auto & cm = *cm_ptr;

  auto ctrl = cm.load_controller("crawl_controller", "atlas_crawl_ros2_control/CrawlController");
  ASSERT_NE(ctrl, nullptr);
  ASSERT_EQ(cm.configure_controller("crawl_controller"), controller_interface::return_type::OK);
  const auto cmd = ctrl->command_interface_configuration();
  const auto st = ctrl->state_interface_configuration();
  ASSERT_EQ(cmd.names.size(), 28u);
  ASSERT_EQ(st.names.size(), 84u);
  EXPECT_EQ(cmd.names.front(), "back_lbz/position");
  EXPECT_EQ(cmd.names.back(), "r_arm_mwx/position");
  EXPECT_EQ(st.names[1], "back_lbz/velocity");
  // the core's parameters were declared from atlas_crawl_controller's YAML, with its defaults
  EXPECT_DOUBLE_EQ(ctrl->get_node()->get_parameter("watchdog_timeout_s").as_double(), 2.0);
  EXPECT_EQ(ctrl->get_node()->get_parameter("pelvis_pose_topic").as_string(), "/atlas/pelvis_pose");
  // a value the core rejects (cross-parameter check only Python knows) is refused with the core's reason
  auto r = ctrl->get_node()->set_parameter(rclcpp::Parameter("iik_rate_hz", 1000.0));
  EXPECT_FALSE(r.successful);
  EXPECT_THAT(r.reason, ::testing::HasSubstr("iik_rate_hz"));
  EXPECT_TRUE(ctrl->get_node()->set_parameter(rclcpp::Parameter("watchdog_timeout_s", 3.0)).successful);
  EXPECT_DOUBLE_EQ(ctrl->get_node()->get_parameter("watchdog_timeout_s").as_double(), 3.0);
  ctrl.reset();
  cm_ptr.reset();  // before rclcpp::shutdown(): the manager's teardown needs a valid context
  rclcpp::shutdown();
}
