// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// The rclcpp side shared by the atlas_crawl gz-sim system plugins: one node per plugin, spun on its own thread
// (parameter / introspection services only; the plugins publish from PostUpdate).
#ifndef ATLAS_CRAWL_GZ_PLUGINS__ROS_SPINNER_HPP_
#define ATLAS_CRAWL_GZ_PLUGINS__ROS_SPINNER_HPP_

#include <memory>
#include <string>
#include <thread>

#include <rclcpp/rclcpp.hpp>

namespace atlas_crawl_gz_plugins
{

class RosSpinner
{
public:
  ~RosSpinner()
  {
    if (executor_) {executor_->cancel();}
    if (thread_.joinable()) {thread_.join();}
  }

  /// Create the node (initialising rclcpp inside gz if nobody did, without its signal handlers) and spin it.
  rclcpp::Node::SharedPtr start(const std::string & node_name)
  {
    if (!rclcpp::ok()) {
      rclcpp::init(0, nullptr, rclcpp::InitOptions(), rclcpp::SignalHandlerOptions::None);
    }
    node_ = std::make_shared<rclcpp::Node>(node_name);
    executor_ = std::make_shared<rclcpp::executors::SingleThreadedExecutor>();
    executor_->add_node(node_);
    thread_ = std::thread([this]() {executor_->spin();});
    return node_;
  }

private:
  rclcpp::Node::SharedPtr node_;
  rclcpp::executors::SingleThreadedExecutor::SharedPtr executor_;
  std::thread thread_;
};

}  // namespace atlas_crawl_gz_plugins

#endif  // ATLAS_CRAWL_GZ_PLUGINS__ROS_SPINNER_HPP_
