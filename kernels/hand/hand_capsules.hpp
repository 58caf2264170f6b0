#pragma once
// The tracked hand as capsules, the one geometric hand model every solver uses: the particle
// fluid samples their surfaces as ghost particles (kernels/fluid/hand), the grid smoke solver
// rasterises them as a moving obstacle (kernels/smoke).
//
// One capsule per bone between two of the 27 joints: the finger bones, the metacarpals, two
// palm cross pieces (knuckle line and heel of the palm) and the forearm. Its radius is the
// radius of the joint the bone ends at (the cross pieces take the mean of both joints). A
// capsule belongs to its base joint (`Bone::base`): samples on it are anchored to that joint.
#include <array>

#include <Eigen/Geometry>

#include "kernels/types/hand_pose.hpp"

namespace sonoflow::hand {

struct Bone {
  HandJoint base, tip;
  bool mean_radius;  // cross pieces use the mean of both joints' radii
};

inline constexpr int kBoneCount = 23;
inline constexpr float kDefaultRadius = 0.008f;  // m, when the tracker gives none

// The bones of one hand, base joint first.
const std::array<Bone, kBoneCount>& bones();

struct Capsule {
  Eigen::Vector3f a = Eigen::Vector3f::Zero();  // base joint position, m
  Eigen::Vector3f b = Eigen::Vector3f::Zero();  // tip joint position, m
  float radius = 0;
  bool valid = false;  // both joints valid and finite
};

using HandCapsules = std::array<Capsule, kBoneCount>;

// The capsules of `hand` (invalid where a joint is missing), in bones() order.
void hand_capsules(const HandPose& hand, HandCapsules& out);

// Distance from p to the capsule's axis segment (subtract the radius for the surface).
float axis_distance(const Eigen::Vector3f& p, const Capsule& c);

// A joint's orientation as a unit quaternion (identity when the tracker's is unusable).
Eigen::Quaternionf joint_rotation(const JointPose& j);

}  // namespace sonoflow::hand
