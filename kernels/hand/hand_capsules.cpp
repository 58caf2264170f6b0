#include "kernels/hand/hand_capsules.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::hand {

namespace {

using J = HandJoint;
constexpr std::array<Bone, kBoneCount> kBones = {{
    {J::ThumbMetacarpal, J::ThumbProximal, false},   {J::ThumbProximal, J::ThumbDistal, false},
    {J::ThumbDistal, J::ThumbTip, false},            {J::IndexMetacarpal, J::IndexProximal, false},
    {J::IndexProximal, J::IndexIntermediate, false}, {J::IndexIntermediate, J::IndexDistal, false},
    {J::IndexDistal, J::IndexTip, false},            {J::MiddleMetacarpal, J::MiddleProximal, false},
    {J::MiddleProximal, J::MiddleIntermediate, false},
    {J::MiddleIntermediate, J::MiddleDistal, false}, {J::MiddleDistal, J::MiddleTip, false},
    {J::RingMetacarpal, J::RingProximal, false},     {J::RingProximal, J::RingIntermediate, false},
    {J::RingIntermediate, J::RingDistal, false},     {J::RingDistal, J::RingTip, false},
    {J::LittleMetacarpal, J::LittleProximal, false}, {J::LittleProximal, J::LittleIntermediate, false},
    {J::LittleIntermediate, J::LittleDistal, false}, {J::LittleDistal, J::LittleTip, false},
    {J::Wrist, J::ThumbMetacarpal, false},
    {J::IndexProximal, J::LittleProximal, true},     // knuckle line across the palm
    {J::IndexMetacarpal, J::LittleMetacarpal, true}, // heel of the palm
    {J::Wrist, J::Elbow, false},                     // forearm
}};

}  // namespace

const std::array<Bone, kBoneCount>& bones() { return kBones; }

void hand_capsules(const HandPose& hand, HandCapsules& out) {
  for (int k = 0; k < kBoneCount; ++k) {
    const Bone& bone = kBones[static_cast<std::size_t>(k)];
    Capsule& c = out[static_cast<std::size_t>(k)];
    c = Capsule{};
    const JointPose& ja = hand.joint(bone.base);
    const JointPose& jb = hand.joint(bone.tip);
    if (!ja.valid || !jb.valid) continue;
    c.a = to_eigen(ja.position);
    c.b = to_eigen(jb.position);
    c.radius = bone.mean_radius ? 0.5f * (ja.radius + jb.radius) : jb.radius;
    if (!(c.radius > 0) || !std::isfinite(c.radius)) c.radius = kDefaultRadius;
    c.valid = c.a.allFinite() && c.b.allFinite();
  }
}

float axis_distance(const Eigen::Vector3f& p, const Capsule& c) {
  const Eigen::Vector3f ab = c.b - c.a;
  const float l2 = ab.squaredNorm();
  const float t = l2 > 1e-12f ? std::clamp((p - c.a).dot(ab) / l2, 0.0f, 1.0f) : 0.0f;
  return (p - (c.a + t * ab)).norm();
}

Eigen::Quaternionf joint_rotation(const JointPose& j) {
  Eigen::Quaternionf q = to_eigen(j.orientation);
  const float n = q.norm();
  if (!(n > 1e-6f) || !std::isfinite(n)) return Eigen::Quaternionf::Identity();
  q.coeffs() /= n;
  return q;
}

}  // namespace sonoflow::hand
