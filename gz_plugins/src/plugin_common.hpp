// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// What the atlas_crawl gz-sim system plugins share: the rclcpp side (one node per plugin, spun on its own thread for
// parameter / introspection services; the plugins publish from PostUpdate) and the sim-time publishing rate.
#ifndef ATLAS_CRAWL_GZ_PLUGINS__PLUGIN_COMMON_HPP_
#define ATLAS_CRAWL_GZ_PLUGINS__PLUGIN_COMMON_HPP_

#include <cstdint>
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

/// Publishing instants at a rate in sim time: every period, catching up at most one period (0 Hz: every step).
class SimRate
{
public:
  void set_rate_hz(double hz) {period_ns_ = hz > 0.0 ? static_cast<int64_t>(1e9 / hz) : 0;}
  bool due(int64_t t_ns)
  {
    if (period_ns_ > 0 && t_ns < next_ns_) {return false;}
    next_ns_ = (period_ns_ > 0 && t_ns - next_ns_ < period_ns_) ? next_ns_ + period_ns_ : t_ns + period_ns_;
    return true;
  }

private:
  int64_t period_ns_{0};
  int64_t next_ns_{0};
};

}  // namespace atlas_crawl_gz_plugins

#endif  // ATLAS_CRAWL_GZ_PLUGINS__PLUGIN_COMMON_HPP_
