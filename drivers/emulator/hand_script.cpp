#include "drivers/emulator/hand_script.hpp"

#include <cmath>
#include <numbers>

#include <Eigen/Geometry>

namespace sonoflow::drivers::emulator {
namespace {

constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

// Right-hand joint positions in the palm frame (mm): +X towards the little finger, +Y the back
// of the hand, fingers along -Z. OpenXR joint order, then the elbow. Left hands mirror X.
constexpr float kSkeletonMm[kHandJointCount][3] = {
    {0, 0, 0},          {0, 0, 45},                                         // palm, wrist
    {-25, -5, 30},      {-45, -8, 5},    {-58, -10, -20}, {-66, -10, -40},  // thumb
    {-22, 0, 35},       {-25, 0, -40},   {-27, 0, -80},   {-28, 0, -105}, {-29, 0, -125},
    {-7, 0, 35},        {-8, 0, -45},    {-8, 0, -90},    {-8, 0, -117},  {-8, 0, -138},
    {8, 0, 35},         {9, 0, -40},     {10, 0, -82},    {11, 0, -107},  {12, 0, -126},
    {22, 0, 35},        {25, 0, -32},    {28, 0, -62},    {30, 0, -80},   {31, 0, -96},
    {0, 20, 300},                                                           // elbow
};
// Capsule radius of the bone ending at each joint (mm).
constexpr float kRadiusMm[kHandJointCount] = {
    20, 25, 12, 11, 10, 9, 11, 10, 9, 8, 7, 11, 10, 9, 8, 7, 10, 9, 8, 7, 6, 9, 8, 7, 6, 5, 30};

// Palm frame -> array frame for the scripts' pose: palm facing the array (-Y_palm = -z_A),
// fingers pointing +y_A (-Z_palm = +y_A), so X_palm = +x_A.
Eigen::Matrix3f palm_rotation() {
  Eigen::Matrix3f r;
  r.col(0) = Eigen::Vector3f::UnitX();
  r.col(1) = Eigen::Vector3f::UnitZ();
  r.col(2) = -Eigen::Vector3f::UnitY();
  return r;
}

struct Mount {
  Eigen::Matrix3f r;     // tracker -> array
  Eigen::Vector3f t_mm;  // p_A = r p_T + t
};

Mount to_mount(const TrackerCalibration& c) {
  Mount m;
  m.r << c.rotation[0], c.rotation[1], c.rotation[2], c.rotation[3], c.rotation[4],
      c.rotation[5], c.rotation[6], c.rotation[7], c.rotation[8];
  m.t_mm << c.translation_mm[0], c.translation_mm[1], c.translation_mm[2];
  return m;
}

Eigen::Vector3f joint_local_mm(int joint, Chirality chirality) {
  Eigen::Vector3f p(kSkeletonMm[joint][0], kSkeletonMm[joint][1], kSkeletonMm[joint][2]);
  if (chirality == Chirality::Left) p.x() = -p.x();
  return p;
}

void store(float dst[3], const Eigen::Vector3f& v) {
  dst[0] = v.x();
  dst[1] = v.y();
  dst[2] = v.z();
}
void store_quat(float dst[4], const Eigen::Quaternionf& q) {
  dst[0] = q.x();
  dst[1] = q.y();
  dst[2] = q.z();
  dst[3] = q.w();
}

}  // namespace

ScriptedHands::ScriptedHands(HandScriptConfig config, const TrackerCalibration& mount)
    : config_(config), mount_(mount) {}

int ScriptedHands::visible_hands(double t_s) const {
  if (config_.motion == HandMotion::TwoHands) return 2;
  if (config_.motion == HandMotion::LeaveView && t_s >= config_.leave_after_s &&
      (config_.return_after_s < 0 || t_s < config_.return_after_s))
    return 0;
  return 1;
}

bool ScriptedHands::palm_in_array(double t_s, int index, Vec3f& position_m) const {
  if (index < 0 || index >= visible_hands(t_s)) return false;
  const float t = static_cast<float>(t_s);
  const float phase = kTwoPi * t / config_.period_s;
  const float a = config_.amplitude_m;
  Vec3f p = config_.center;
  switch (config_.motion) {
    case HandMotion::Hover:
    case HandMotion::LeaveView:
      p.x += 0.002f * std::sin(kTwoPi * 0.5f * t);
      break;
    case HandMotion::PressDown:
      p.z -= a * 0.5f * (1.0f - std::cos(phase));
      break;
    case HandMotion::StirCircle:
      p.x += a * std::cos(phase);
      p.y += a * std::sin(phase);
      break;
    case HandMotion::Sweep: {
      const float u = t / config_.period_s - std::floor(t / config_.period_s);  // 0..1
      p.x += a * (u < 0.5f ? 4.0f * u - 1.0f : 3.0f - 4.0f * u);               // triangle
      break;
    }
    case HandMotion::TwoHands:
      p.x += index == 0 ? -a : a;
      break;
  }
  position_m = p;
  return true;
}

bool ScriptedHands::joint_in_array(double t_s, int index, HandJoint joint, Vec3f& position_m) const {
  Vec3f palm;
  if (!palm_in_array(t_s, index, palm)) return false;
  const Chirality side = config_.motion == HandMotion::TwoHands
                             ? (index == 0 ? Chirality::Left : Chirality::Right)
                             : config_.chirality;
  const Eigen::Vector3f p = Eigen::Vector3f(palm.x, palm.y, palm.z) +
                            palm_rotation() * joint_local_mm(static_cast<int>(joint), side) * 1e-3f;
  position_m = {p.x(), p.y(), p.z()};
  return true;
}

void ScriptedHands::hands_at(double t_s, HandSnapshot& out) {
  const Mount mount = to_mount(mount_);
  const Eigen::Matrix3f to_tracker = mount.r.transpose();
  const Eigen::Matrix3f hand_in_tracker = to_tracker * palm_rotation();
  const Eigen::Quaternionf q(hand_in_tracker);
  out.count = visible_hands(t_s);
  for (int h = 0; h < out.count; ++h) {
    WireHand& w = out.hands[static_cast<std::size_t>(h)];
    const Chirality side = config_.motion == HandMotion::TwoHands
                               ? (h == 0 ? Chirality::Left : Chirality::Right)
                               : config_.chirality;
    w.hand_id = static_cast<std::uint32_t>(h + 1);
    w.chirality = static_cast<std::uint8_t>(side);
    w.flags = 0x4;  // forearm valid
    w.confidence = 0.95f;
    Vec3f palm, palm_later;
    palm_in_array(t_s, h, palm);
    constexpr double kDt = 1e-3;
    if (!palm_in_array(t_s + kDt, h, palm_later)) palm_later = palm;
    const Eigen::Vector3f palm_a(palm.x, palm.y, palm.z);
    const Eigen::Vector3f vel_a =
        (Eigen::Vector3f(palm_later.x, palm_later.y, palm_later.z) - palm_a) / float(kDt);
    const auto to_tracker_mm = [&](const Eigen::Vector3f& p_a_m) {
      return Eigen::Vector3f(to_tracker * (p_a_m * 1e3f - mount.t_mm));
    };
    store(w.palm_pos_mm, to_tracker_mm(palm_a));
    store(w.palm_vel_mm_s, to_tracker * vel_a * 1e3f);
    store(w.palm_normal, hand_in_tracker * -Eigen::Vector3f::UnitY());
    store(w.palm_direction, hand_in_tracker * -Eigen::Vector3f::UnitZ());
    w.palm_width_mm = 85;
    store_quat(w.palm_rot, q);
    w.pinch_strength = 0;
    w.grab_strength = 0;
    w.pinch_distance_mm = 60;
    w.grab_angle_rad = 0.2f;
    for (int j = 0; j < kHandJointCount; ++j) {
      WireJoint& joint = w.joints[static_cast<std::size_t>(j)];
      const Eigen::Vector3f p_a = palm_a + palm_rotation() * joint_local_mm(j, side) * 1e-3f;
      store(joint.pos_mm, to_tracker_mm(p_a));
      store_quat(joint.rot, q);
      joint.radius_10um = static_cast<std::uint16_t>(kRadiusMm[j] * 100.0f);
      joint.flags = kJointPosValid | kJointRotValid | kJointTracked;
    }
  }
}

}  // namespace sonoflow::drivers::emulator
