// Copyright 2026 atlas_crawl team. Apache-2.0.
//
// atlas_crawl_gz_plugins::ImuMean — gz-sim 8 system plugin: the pelvis IMU reads the MEAN motion over its sample
// period, as the MuJoCo node's IMU does (atlas_crawl_mujoco sim node parameter imu.output: mean).
//
// gz-sim's imu system hands gz-sensors the IMU entity's LinearAcceleration / AngularVelocity components, which the
// physics system fills every step from DART's link acceleration: the unconstrained forward-dynamics acceleration of
// that step, without the contact impulses that then change the velocity. In a crawl it reads 30-160 m/s^2 spikes
// while the pelvis accelerates by 1-3 m/s^2, and integrating it ran the state estimate 0.8 m off in 2 s (issue 14;
// the DRC's Atlas IMU in Gazebo had the same fault, osrf/drcsim#85, and was filtered in AtlasPlugin, drcsim#161).
// A MEMS IMU low-pass filters and decimates its internal samples; a navigation IMU such as Atlas's outputs delta
// velocities. So, every physics step after the physics system (Update, priority > 0), this plugin overwrites the
// IMU entity's components with
//   linear acceleration (IMU frame) = R_now^T (v(t) - v(t - T)) / T   (v: the link's world velocity: the mean
//                                                                      acceleration over the last T, impulses included)
//   angular velocity    (IMU frame) = the mean of the last T's world angular velocities, rotated by R_now^T
// with T = <window_s> (the IMU's sample period; shorter while the history is shorter). gz-sensors then adds its noise
// and gravity as before. The IMU must sit at the link origin (atlas_description's xacro puts it there).
// SDF parameters: <link_name> (pelvis), <sensor_name> (imu), <window_s> (0.004; not finite and > 0: an error, and
// the plugin does nothing).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <string>

#include <gz/math/Pose3.hh>
#include <gz/math/Vector3.hh>
// a further plugin translation unit: GzPluginHook is defined once (Register.hh, pelvis_pose_publisher.cpp)
#include <gz/plugin/RegisterMore.hh>
#include <gz/sim/Link.hh>
#include <gz/sim/Model.hh>
#include <gz/sim/System.hh>
#include <gz/sim/Util.hh>
#include <gz/sim/components/AngularVelocity.hh>
#include <gz/sim/components/Imu.hh>
#include <gz/sim/components/LinearAcceleration.hh>
#include <gz/sim/components/Name.hh>
#include <gz/sim/components/ParentEntity.hh>

namespace atlas_crawl_gz_plugins
{

class ImuMean
  : public gz::sim::System,
  public gz::sim::ISystemConfigurePriority,
  public gz::sim::ISystemConfigure,
  public gz::sim::ISystemUpdate
{
public:
  /// After the physics system (priority 0) in every step, before the imu system reads the components in PostUpdate.
  gz::sim::System::PriorityType ConfigurePriority() override {return 100;}

  void Configure(
    const gz::sim::Entity & entity, const std::shared_ptr<const sdf::Element> & sdf,
    gz::sim::EntityComponentManager &, gz::sim::EventManager &) override
  {
    link_name_ = sdf->Get<std::string>("link_name", link_name_).first;
    sensor_name_ = sdf->Get<std::string>("sensor_name", sensor_name_).first;
    window_s_ = sdf->Get<double>("window_s", window_s_).first;
    model_ = gz::sim::Model(entity);
    if (!(window_s_ > 0.0) || !std::isfinite(window_s_)) {
      gzerr << "[ImuMean] window_s must be finite and > 0 (got " << window_s_
            << "): disabled, the IMU keeps gz-sim's values\n";
      disabled_ = true;
    }
  }

  void Update(const gz::sim::UpdateInfo & info, gz::sim::EntityComponentManager & ecm) override
  {
    if (info.paused || disabled_) {return;}
    if (sensor_ == gz::sim::kNullEntity && !resolve(ecm)) {return;}
    const double t = std::chrono::duration<double>(info.simTime).count();
    gz::sim::Link link(link_);
    const auto v = link.WorldLinearVelocity(ecm);
    const auto w = link.WorldAngularVelocity(ecm);
    if (!v || !w) {return;}                        // velocity components appear one step after they are enabled
    if (!hist_.empty() && t <= hist_.back().t) {hist_.clear();}   // a reset or a jump back in time
    hist_.push_back({t, *v, *w});
    while (hist_.size() > 2 && hist_[1].t <= t - window_s_ + 1e-9) {hist_.pop_front();}
    if (hist_.size() < 2) {return;}                 // the first step: physics' own values stand
    const Sample & old = hist_.front();
    const double dt = t - old.t;
    gz::math::Vector3d w_mean = gz::math::Vector3d::Zero;
    for (size_t i = 1; i < hist_.size(); ++i) {w_mean += hist_[i].w;}   // the steps inside (old.t, t]
    w_mean /= static_cast<double>(hist_.size() - 1);
    const gz::math::Pose3d pose = gz::sim::worldPose(sensor_, ecm);
    const gz::math::Vector3d a_body = pose.Rot().RotateVectorReverse((*v - old.v) / dt);
    const gz::math::Vector3d w_body = pose.Rot().RotateVectorReverse(w_mean);
    ecm.SetComponentData<gz::sim::components::LinearAcceleration>(sensor_, a_body);
    ecm.SetComponentData<gz::sim::components::AngularVelocity>(sensor_, w_body);
    ++updates_;
    if (updates_ == 1) {
      gzmsg << "[ImuMean] IMU '" << sensor_name_ << "' on link '" << link_name_ << "' reads the mean over "
            << window_s_ << " s\n";
    }
  }

private:
  struct Sample
  {
    double t;
    gz::math::Vector3d v;
    gz::math::Vector3d w;
  };

  bool resolve(gz::sim::EntityComponentManager & ecm)
  {
    if (!model_.Valid(ecm)) {
      if (!warned_) {gzerr << "[ImuMean] must be loaded from a model (the robot's <gazebo> tag)\n";}
      warned_ = true;
      return false;
    }
    link_ = model_.LinkByName(ecm, link_name_);
    if (link_ == gz::sim::kNullEntity) {return false;}
    gz::sim::Link(link_).EnableVelocityChecks(ecm, true);
    ecm.Each<gz::sim::components::Imu, gz::sim::components::ParentEntity, gz::sim::components::Name>(
      [&](const gz::sim::Entity & e, const gz::sim::components::Imu *,
      const gz::sim::components::ParentEntity * parent, const gz::sim::components::Name * name) -> bool
      {
        if (parent->Data() == link_ && name->Data() == sensor_name_) {
          sensor_ = e;
          return false;
        }
        return true;
      });
    if (sensor_ == gz::sim::kNullEntity) {
      if (!warned_) {
        gzwarn << "[ImuMean] no imu sensor '" << sensor_name_ << "' on link '" << link_name_ << "' (yet)\n";
      }
      warned_ = true;
      return false;
    }
    return true;
  }

  std::string link_name_{"pelvis"};
  std::string sensor_name_{"imu"};
  double window_s_{0.004};
  gz::sim::Model model_{gz::sim::kNullEntity};
  gz::sim::Entity link_{gz::sim::kNullEntity};
  gz::sim::Entity sensor_{gz::sim::kNullEntity};
  std::deque<Sample> hist_;
  uint64_t updates_{0};
  bool warned_{false};
  bool disabled_{false};
};

}  // namespace atlas_crawl_gz_plugins

GZ_ADD_PLUGIN(
  atlas_crawl_gz_plugins::ImuMean, gz::sim::System,
  atlas_crawl_gz_plugins::ImuMean::ISystemConfigurePriority,
  atlas_crawl_gz_plugins::ImuMean::ISystemConfigure,
  atlas_crawl_gz_plugins::ImuMean::ISystemUpdate)
