// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// atlas_crawl_gz_plugins::PelvisPosePublisher — gz-sim 8 system plugin: the ground-truth pelvis pose of the thesis'
// "Atlas Pelvis Plugin" (§3.4.1, 1 kHz), published on the SAME ROS topics and types as the MuJoCo node
// (atlas_crawl_controller/nodes/topics.py):
//   <topic>       geometry_msgs/PoseStamped  frame "world"                (default /atlas/pelvis_pose)
//   <odom_topic>  nav_msgs/Odometry          pose in "world", twist in the pelvis frame (REP 105)
//                                                                          (default /atlas/pelvis_odom, "" = off)
// Parameters (SDF children of <plugin>): <link_name> (pelvis), <update_rate_hz> (1000; 0 = every step),
// <model_name> (only when loaded from the world SDF: the model to look in, default "atlas"), <topic>,
// <odom_topic>, <frame_id> (world), <child_frame_id> (pelvis).
// Published directly with rclcpp from PostUpdate (see README.md for why not gz-transport + ros_gz_bridge).
#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include <gz/math/Pose3.hh>
#include <gz/math/Vector3.hh>
#include <gz/plugin/Register.hh>
#include <gz/sim/Link.hh>
#include <gz/sim/Model.hh>
#include <gz/sim/System.hh>
#include <gz/sim/Util.hh>
#include <gz/sim/World.hh>

#include <geometry_msgs/msg/pose_stamped.hpp>
#include <nav_msgs/msg/odometry.hpp>
#include <rclcpp/rclcpp.hpp>

#include "plugin_common.hpp"

namespace atlas_crawl_gz_plugins
{

class PelvisPosePublisher
  : public gz::sim::System,
  public gz::sim::ISystemConfigure,
  public gz::sim::ISystemPreUpdate,
  public gz::sim::ISystemPostUpdate
{
public:
  void Configure(
    const gz::sim::Entity & entity, const std::shared_ptr<const sdf::Element> & sdf,
    gz::sim::EntityComponentManager & ecm, gz::sim::EventManager &) override
  {
    link_name_ = sdf->Get<std::string>("link_name", link_name_).first;
    model_name_ = sdf->Get<std::string>("model_name", model_name_).first;
    rate_hz_ = sdf->Get<double>("update_rate_hz", rate_hz_).first;
    topic_ = sdf->Get<std::string>("topic", topic_).first;
    odom_topic_ = sdf->Get<std::string>("odom_topic", odom_topic_).first;
    frame_id_ = sdf->Get<std::string>("frame_id", frame_id_).first;
    child_frame_id_ = sdf->Get<std::string>("child_frame_id", child_frame_id_).first;
    if (rate_hz_ < 0.0) {rate_hz_ = 0.0;}
    rate_.set_rate_hz(rate_hz_);

    gz::sim::Model model(entity);
    if (model.Valid(ecm)) {
      model_entity_ = entity;        // loaded from the model (URDF <gazebo> tag → model plugin)
    } else {
      world_entity_ = entity;        // loaded from the world SDF: find the model by name (may be spawned later)
    }

    node_ = ros_.start("atlas_pelvis_pose_publisher");
    pose_pub_ = node_->create_publisher<geometry_msgs::msg::PoseStamped>(topic_, rclcpp::SystemDefaultsQoS());
    if (!odom_topic_.empty()) {
      odom_pub_ = node_->create_publisher<nav_msgs::msg::Odometry>(odom_topic_, rclcpp::SystemDefaultsQoS());
    }
    resolve(ecm);
    RCLCPP_INFO(
      node_->get_logger(), "pelvis ground truth: link '%s' -> %s%s%s at %s", link_name_.c_str(),
      topic_.c_str(), odom_topic_.empty() ? "" : " + ", odom_topic_.c_str(),
      rate_hz_ > 0.0 ? (std::to_string(rate_hz_) + " Hz").c_str() : "every step");
  }

  void PreUpdate(const gz::sim::UpdateInfo &, gz::sim::EntityComponentManager & ecm) override
  {
    if (link_ == gz::sim::kNullEntity) {resolve(ecm);}
  }

  void PostUpdate(const gz::sim::UpdateInfo & info, const gz::sim::EntityComponentManager & ecm) override
  {
    if (info.paused || link_ == gz::sim::kNullEntity || !node_) {return;}
    const int64_t t_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(info.simTime).count();
    if (!rate_.due(t_ns)) {return;}

    const gz::math::Pose3d pose = gz::sim::worldPose(link_, ecm);   // the link frame in the world
    builtin_interfaces::msg::Time stamp;
    stamp.sec = static_cast<int32_t>(t_ns / 1000000000LL);
    stamp.nanosec = static_cast<uint32_t>(t_ns % 1000000000LL);

    geometry_msgs::msg::PoseStamped ps;
    ps.header.stamp = stamp;
    ps.header.frame_id = frame_id_;
    ps.pose.position.x = pose.Pos().X();
    ps.pose.position.y = pose.Pos().Y();
    ps.pose.position.z = pose.Pos().Z();
    ps.pose.orientation.x = pose.Rot().X();
    ps.pose.orientation.y = pose.Rot().Y();
    ps.pose.orientation.z = pose.Rot().Z();
    ps.pose.orientation.w = pose.Rot().W();
    pose_pub_->publish(ps);

    if (odom_pub_) {
      nav_msgs::msg::Odometry od;
      od.header = ps.header;
      od.child_frame_id = child_frame_id_;
      od.pose.pose = ps.pose;
      gz::sim::Link link(link_);
      const auto v_w = link.WorldLinearVelocity(ecm);
      const auto w_w = link.WorldAngularVelocity(ecm);
      if (v_w && w_w) {
        // REP 105: the odometry twist is expressed in the child (pelvis) frame, as the MuJoCo node does
        const gz::math::Vector3d v_b = pose.Rot().RotateVectorReverse(*v_w);
        const gz::math::Vector3d w_b = pose.Rot().RotateVectorReverse(*w_w);
        od.twist.twist.linear.x = v_b.X();
        od.twist.twist.linear.y = v_b.Y();
        od.twist.twist.linear.z = v_b.Z();
        od.twist.twist.angular.x = w_b.X();
        od.twist.twist.angular.y = w_b.Y();
        od.twist.twist.angular.z = w_b.Z();
      }
      odom_pub_->publish(od);
    }
    ++published_;
    if (published_ == 1) {
      RCLCPP_INFO(
        node_->get_logger(), "first pelvis pose at sim time %.3f s: (%.3f, %.3f, %.3f)", t_ns * 1e-9,
        pose.Pos().X(), pose.Pos().Y(), pose.Pos().Z());
    }
  }

private:
  void resolve(gz::sim::EntityComponentManager & ecm)
  {
    if (model_entity_ == gz::sim::kNullEntity && world_entity_ != gz::sim::kNullEntity) {
      model_entity_ = gz::sim::World(world_entity_).ModelByName(ecm, model_name_);
    }
    if (model_entity_ == gz::sim::kNullEntity) {return;}
    const gz::sim::Entity link = gz::sim::Model(model_entity_).LinkByName(ecm, link_name_);
    if (link == gz::sim::kNullEntity) {
      if (!warned_) {
        RCLCPP_WARN(node_->get_logger(), "link '%s' not found (yet) in the model", link_name_.c_str());
        warned_ = true;
      }
      return;
    }
    gz::sim::Link(link).EnableVelocityChecks(ecm, true);  // physics then fills the world velocity components
    link_ = link;
    RCLCPP_INFO(node_->get_logger(), "tracking link '%s' (entity %lu)", link_name_.c_str(),
      static_cast<unsigned long>(link_));
  }

  std::string link_name_{"pelvis"};
  std::string model_name_{"atlas"};
  std::string topic_{"/atlas/pelvis_pose"};
  std::string odom_topic_{"/atlas/pelvis_odom"};
  std::string frame_id_{"world"};
  std::string child_frame_id_{"pelvis"};
  double rate_hz_{1000.0};
  SimRate rate_;
  uint64_t published_{0};
  bool warned_{false};
  gz::sim::Entity model_entity_{gz::sim::kNullEntity};
  gz::sim::Entity world_entity_{gz::sim::kNullEntity};
  gz::sim::Entity link_{gz::sim::kNullEntity};
  rclcpp::Node::SharedPtr node_;
  rclcpp::Publisher<geometry_msgs::msg::PoseStamped>::SharedPtr pose_pub_;
  rclcpp::Publisher<nav_msgs::msg::Odometry>::SharedPtr odom_pub_;
  RosSpinner ros_;   // declared last: destroyed (executor stopped, thread joined) first
};

}  // namespace atlas_crawl_gz_plugins

GZ_ADD_PLUGIN(
  atlas_crawl_gz_plugins::PelvisPosePublisher, gz::sim::System,
  atlas_crawl_gz_plugins::PelvisPosePublisher::ISystemConfigure,
  atlas_crawl_gz_plugins::PelvisPosePublisher::ISystemPreUpdate,
  atlas_crawl_gz_plugins::PelvisPosePublisher::ISystemPostUpdate)
