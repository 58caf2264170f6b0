#pragma once
// Test inputs: a flat hand held palm-down above the array, and contact fields on it built from
// analytic pressure functions (sums of Gaussians), with every sample anchored to a joint.
#include <cmath>
#include <functional>
#include <memory>

#include <Eigen/Geometry>

#include "kernels/types/contact_field.hpp"
#include "kernels/types/eigen_bridge.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics::test {

// A palm-down hand at height z: joints laid out in the plane z, fingers along +y, every joint
// frame rotated by `rotation` about the palm and shifted by `shift`.
inline HandFrame flat_hand(float z, const Eigen::Quaternionf& rotation = Eigen::Quaternionf::Identity(),
                           const Eigen::Vector3f& shift = Eigen::Vector3f::Zero()) {
  HandFrame frame;
  frame.frame_id = 1;
  frame.hand_count = 1;
  HandPose& hand = frame.hands[0];
  const Eigen::Vector3f palm(0, 0, z);
  auto place = [&](int j, const Eigen::Vector3f& local) {
    JointPose& joint = hand.joints[std::size_t(j)];
    joint.position = to_vec3f(palm + rotation * local + shift);
    joint.orientation = to_quatf(rotation);
    joint.valid = true;
    joint.radius = 0.008f;
  };
  place(int(HandJoint::Palm), {0, 0, 0});
  place(int(HandJoint::Wrist), {0, -0.05f, 0});
  // Five fingers: metacarpal at the palm's far edge, then 4 joints 25 mm apart along +y.
  const float finger_x[5] = {-0.045f, -0.022f, 0.0f, 0.02f, 0.038f};
  const int first_joint[5] = {int(HandJoint::ThumbMetacarpal), int(HandJoint::IndexMetacarpal),
                              int(HandJoint::MiddleMetacarpal), int(HandJoint::RingMetacarpal),
                              int(HandJoint::LittleMetacarpal)};
  for (int f = 0; f < 5; ++f) {
    const int joints = f == 0 ? 4 : 5;
    for (int k = 0; k < joints; ++k) {
      place(first_joint[f] + k, {finger_x[f], 0.02f + 0.025f * float(k), 0});
    }
  }
  place(int(HandJoint::Elbow), {0, -0.3f, 0});
  return frame;
}

// Samples on a grid over [x0, x1] x [y0, y1] at height z, normals facing the array (-z),
// pressure p(x, y), anchored to the palm joint of `frame`.
inline std::unique_ptr<ContactField> planar_field(
    const HandFrame& frame, float x0, float x1, float y0, float y1, float spacing,
    const std::function<float(float, float)>& pressure, std::uint64_t sequence = 1) {
  auto field = std::make_unique<ContactField>();
  field->sequence = sequence;
  field->hand_frame_id = frame.frame_id;
  field->hand_count = 1;
  field->hand_ids[0] = frame.hands[0].hand_id;
  const JointPose& palm = frame.hands[0].joint(HandJoint::Palm);
  const Eigen::Vector3f origin = to_eigen(palm.position);
  const Eigen::Quaternionf q = to_eigen(palm.orientation);
  const float z = origin.z();
  for (float y = y0; y <= y1 + 1e-6f; y += spacing) {
    for (float x = x0; x <= x1 + 1e-6f; x += spacing) {
      if (field->count >= kMaxContactSamples) return field;
      ContactSample& s = field->samples[field->count++];
      const Eigen::Vector3f p(x, y, z);
      s.position = to_vec3f(p);
      s.normal = {0, 0, -1};
      s.pressure = pressure(x, y);
      s.weight = 1;
      s.joint = std::uint8_t(HandJoint::Palm);
      s.hand = 0;
      s.offset = to_vec3f(q.conjugate() * (p - origin));
    }
  }
  return field;
}

inline float gaussian(float x, float y, float cx, float cy, float sigma) {
  return std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (2 * sigma * sigma));
}

}  // namespace sonoflow::haptics::test
