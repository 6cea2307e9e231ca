// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// atlas_crawl_gz_plugins::LimbContactPublisher — gz-sim 8 system plugin: the simulator's own contacts of the four
// crawling limbs, published as the MuJoCo node's ground truth (atlas_crawl_controller/nodes/topics.py):
//   <topic>  atlas_crawl_msgs/SupportState  frame "world"   (default /atlas/contacts_ground_truth)
// per limb (LW, RW, LK, RK): in_contact = a collision of the limb's links touched something outside the robot
// model in any physics step since the previous message, method METHOD_GROUND_TRUTH, confidence 1, position = the
// mean of those contact points (NaN without contact). Contacts only: support_polygon is empty, com_projection and
// stability_margin_m are NaN (Gazebo does not give the whole-body CoM; the MuJoCo node computes them from its model),
// statically_stable is false.
// Parameters (SDF children of <plugin>): <update_rate_hz> (100 = the MuJoCo node's contacts rate; 0 = every step),
// <topic>, <frame_id> (world), and one <limb name="l_wrist_contact">l_hand l_farm</limb> per limb, in the order
// LW, RW, LK, RK (atlas_description writes them from LIMB_LINKS / CONTACT_FRAMES).
// Contact reporting is switched on by giving each limb collision a ContactSensorData component, as gz-sim's
// TouchPlugin does; the Physics system then fills it every step.
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <gz/msgs/contacts.pb.h>
// the library's second plugin translation unit: GzPluginHook is defined once (Register.hh, pelvis_pose_publisher.cpp)
#include <gz/plugin/RegisterMore.hh>
#include <gz/sim/Link.hh>
#include <gz/sim/Model.hh>
#include <gz/sim/System.hh>
#include <gz/sim/Util.hh>
#include <gz/sim/components/ContactSensorData.hh>

#include <atlas_crawl_msgs/msg/contact_state.hpp>
#include <atlas_crawl_msgs/msg/support_state.hpp>
#include <rclcpp/rclcpp.hpp>

#include "plugin_common.hpp"

namespace atlas_crawl_gz_plugins
{

class LimbContactPublisher
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
    rate_hz_ = sdf->Get<double>("update_rate_hz", rate_hz_).first;
    topic_ = sdf->Get<std::string>("topic", topic_).first;
    frame_id_ = sdf->Get<std::string>("frame_id", frame_id_).first;
    if (rate_hz_ < 0.0) {rate_hz_ = 0.0;}
    rate_.set_rate_hz(rate_hz_);
    for (auto e = sdf->FindElement("limb"); e; e = e->GetNextElement("limb")) {
      Limb limb;
      limb.frame = e->Get<std::string>("name");
      std::istringstream links(e->Get<std::string>());
      for (std::string l; links >> l; ) {limb.links.push_back(l);}
      limbs_.push_back(limb);
    }
    model_entity_ = entity;

    node_ = ros_.start("atlas_limb_contact_publisher");
    pub_ = node_->create_publisher<atlas_crawl_msgs::msg::SupportState>(topic_, rclcpp::SystemDefaultsQoS());
    if (limbs_.size() != 4 || !gz::sim::Model(entity).Valid(ecm)) {
      RCLCPP_ERROR(
        node_->get_logger(), "needs 4 <limb> elements (LW, RW, LK, RK) and to be loaded from the robot model; "
        "got %zu limbs: not publishing", limbs_.size());
      limbs_.clear();
    }
  }

  void PreUpdate(const gz::sim::UpdateInfo &, gz::sim::EntityComponentManager & ecm) override
  {
    if (resolved_ || limbs_.empty()) {return;}
    gz::sim::Model model(model_entity_);
    for (auto & limb : limbs_) {
      limb.collisions.clear();
      for (const auto & name : limb.links) {
        const auto link = model.LinkByName(ecm, name);
        if (link == gz::sim::kNullEntity) {return;}       // not spawned yet: try again next step
        for (const auto col : gz::sim::Link(link).Collisions(ecm)) {
          if (!ecm.EntityHasComponentType(col, gz::sim::components::ContactSensorData::typeId)) {
            ecm.CreateComponent(col, gz::sim::components::ContactSensorData());
          }
          limb.collisions.push_back(col);
        }
      }
    }
    resolved_ = true;
    for (const auto & limb : limbs_) {
      RCLCPP_INFO(
        node_->get_logger(), "%s: %zu collisions reporting contacts", limb.frame.c_str(), limb.collisions.size());
    }
  }

  void PostUpdate(const gz::sim::UpdateInfo & info, const gz::sim::EntityComponentManager & ecm) override
  {
    if (info.paused || !resolved_ || !node_) {return;}
    // every step: accumulate each limb's ground contacts (they chatter at the millisecond scale; a snapshot at the
    // publishing rate would alias them, as in the MuJoCo node's AtlasSim.touch_period)
    for (auto & limb : limbs_) {
      for (const auto col : limb.collisions) {
        const auto * data = ecm.Component<gz::sim::components::ContactSensorData>(col);
        if (data == nullptr) {continue;}
        for (const auto & c : data->Data().contact()) {
          // the other collision: outside the robot model = ground or scenery (self-contacts do not count)
          const gz::sim::Entity other = c.collision2().id() == col ? c.collision1().id() : c.collision2().id();
          if (gz::sim::topLevelModel(other, ecm) == model_entity_) {continue;}
          for (const auto & p : c.position()) {
            limb.sum[0] += p.x(); limb.sum[1] += p.y(); limb.sum[2] += p.z(); ++limb.n;
          }
        }
      }
    }
    const int64_t t_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(info.simTime).count();
    if (!rate_.due(t_ns)) {return;}

    const double nan = std::numeric_limits<double>::quiet_NaN();
    atlas_crawl_msgs::msg::SupportState msg;
    msg.header.stamp.sec = static_cast<int32_t>(t_ns / 1000000000LL);
    msg.header.stamp.nanosec = static_cast<uint32_t>(t_ns % 1000000000LL);
    msg.header.frame_id = frame_id_;
    for (size_t i = 0; i < limbs_.size(); ++i) {
      auto & limb = limbs_[i];
      auto & cs = msg.contacts[i];
      cs.name = limb.frame;
      cs.in_contact = limb.n > 0;
      cs.method = atlas_crawl_msgs::msg::ContactState::METHOD_GROUND_TRUTH;
      cs.confidence = 1.0;
      cs.position.x = limb.n > 0 ? limb.sum[0] / limb.n : nan;
      cs.position.y = limb.n > 0 ? limb.sum[1] / limb.n : nan;
      cs.position.z = limb.n > 0 ? limb.sum[2] / limb.n : nan;
      limb.sum[0] = limb.sum[1] = limb.sum[2] = 0.0;
      limb.n = 0;
    }
    msg.com_projection.x = msg.com_projection.y = msg.com_projection.z = nan;
    msg.stability_margin_m = nan;
    msg.statically_stable = false;
    pub_->publish(msg);
  }

private:
  struct Limb
  {
    std::string frame;
    std::vector<std::string> links;
    std::vector<gz::sim::Entity> collisions;
    double sum[3]{0.0, 0.0, 0.0};   // contact points since the last message
    int64_t n{0};
  };

  std::vector<Limb> limbs_;
  std::string topic_{"/atlas/contacts_ground_truth"};
  std::string frame_id_{"world"};
  double rate_hz_{100.0};
  SimRate rate_;
  bool resolved_{false};
  gz::sim::Entity model_entity_{gz::sim::kNullEntity};
  rclcpp::Node::SharedPtr node_;
  rclcpp::Publisher<atlas_crawl_msgs::msg::SupportState>::SharedPtr pub_;
  RosSpinner ros_;   // declared last: destroyed (executor stopped, thread joined) first
};

}  // namespace atlas_crawl_gz_plugins

GZ_ADD_PLUGIN(
  atlas_crawl_gz_plugins::LimbContactPublisher, gz::sim::System,
  atlas_crawl_gz_plugins::LimbContactPublisher::ISystemConfigure,
  atlas_crawl_gz_plugins::LimbContactPublisher::ISystemPreUpdate,
  atlas_crawl_gz_plugins::LimbContactPublisher::ISystemPostUpdate)
