#include "kernels/fluid/hand/hand_ghosts.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <numbers>

#include <Eigen/Geometry>

#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"

namespace sonoflow::fluid {

namespace {

using hand::Capsule;
using hand::joint_rotation;
using hand::kBoneCount;
static_assert(kCapsuleSlots == kMaxHands * kBoneCount);

Float4 f4(const Eigen::Vector3f& v) { return {v.x(), v.y(), v.z(), 0}; }
Float4 f4(const Eigen::Quaternionf& q) { return {q.x(), q.y(), q.z(), q.w()}; }

}  // namespace

HandGhosts::HandGhosts(int capacity, float spacing)
    : capacity_(capacity),
      spacing_(spacing),
      joint_slot_(static_cast<std::size_t>(capacity)),
      offset_(static_cast<std::size_t>(capacity)),
      normal_(static_cast<std::size_t>(capacity)),
      area_(static_cast<std::size_t>(capacity)) {}

void HandGhosts::add(int hand, int joint, const float local_offset[3], const float local_normal[3],
                     float area) {
  if (count_ >= capacity_) {
    ++dropped_;
    return;
  }
  const auto k = static_cast<std::size_t>(count_++);
  joint_slot_[k] = hand * kHandJointCount + joint;
  offset_[k] = {local_offset[0], local_offset[1], local_offset[2], 0};
  normal_[k] = {local_normal[0], local_normal[1], local_normal[2], 0};
  area_[k] = area;
}

void HandGhosts::layout(const HandFrame& frame) {
  count_ = 0;
  dropped_ = 0;
  capsule_count_ = 0;
  const int hands = std::min<int>(frame.hand_count, kMaxHands);
  const float s = spacing_;
  constexpr float pi = std::numbers::pi_v<float>;
  for (int h = 0; h < hands; ++h) {
    const HandPose& pose = frame.hands[static_cast<std::size_t>(h)];
    hand::HandCapsules caps;
    hand::hand_capsules(pose, caps);
    for (int k = 0; k < kBoneCount; ++k) {
      const Capsule& c = caps[static_cast<std::size_t>(k)];
      if (!c.valid) continue;
      const int joint = static_cast<int>(hand::bones()[static_cast<std::size_t>(k)].base);
      if (capsule_count_ < kCapsuleSlots) {  // the contact's surface (density.cl, pbf_apply)
        const int tip = static_cast<int>(hand::bones()[static_cast<std::size_t>(k)].tip);
        capsules_[static_cast<std::size_t>(capsule_count_++)] = {
            std::bit_cast<float>(h * kHandJointCount + joint),
            std::bit_cast<float>(h * kHandJointCount + tip), c.radius, 0};
      }
      const JointPose& base = pose.joints[static_cast<std::size_t>(joint)];
      const Eigen::Quaternionf rot = joint_rotation(base);
      const Eigen::Quaternionf inv = rot.conjugate();
      const Eigen::Vector3f origin = to_eigen(base.position);

      const Eigen::Vector3f ab = c.b - c.a;
      const float len = ab.norm();
      const Eigen::Vector3f e = len > 1e-6f ? Eigen::Vector3f(ab / len) : Eigen::Vector3f::UnitZ();
      // A ring frame tied to the base joint, so the pattern turns with the bone, not per frame.
      Eigen::Vector3f u = rot * Eigen::Vector3f::UnitX();
      u -= u.dot(e) * e;
      if (u.norm() < 0.1f) {
        u = rot * Eigen::Vector3f::UnitY();
        u -= u.dot(e) * e;
      }
      u.normalize();
      const Eigen::Vector3f w = e.cross(u);

      auto emit = [&](const Eigen::Vector3f& p, const Eigen::Vector3f& n, float area) {
        for (int o = 0; o < kBoneCount; ++o) {
          const Capsule& other = caps[static_cast<std::size_t>(o)];
          if (o == k || !other.valid) continue;
          if (hand::axis_distance(p, other) < other.radius - 0.25f * s) return;  // inside the hand
        }
        const Eigen::Vector3f lo = inv * (p - origin);
        const Eigen::Vector3f ln = inv * n;
        const float off[3] = {lo.x(), lo.y(), lo.z()};
        const float nrm[3] = {ln.x(), ln.y(), ln.z()};
        add(h, joint, off, nrm, area);
      };

      // Cylinder.
      const int rings = len > 1e-6f ? std::max(1, static_cast<int>(std::ceil(len / s))) : 0;
      const int around = std::max(3, static_cast<int>(std::ceil(2 * pi * c.radius / s)));
      const float cyl_area = (2 * pi * c.radius / static_cast<float>(around)) *
                             (rings > 0 ? len / static_cast<float>(rings) : 0.0f);
      for (int t = 0; t < rings; ++t) {
        const float along = (static_cast<float>(t) + 0.5f) * len / static_cast<float>(rings);
        const float phase = (t % 2) ? 0.5f : 0.0f;  // staggered rings close the gaps
        for (int q = 0; q < around; ++q) {
          const float th = 2 * pi * (static_cast<float>(q) + phase) / static_cast<float>(around);
          const Eigen::Vector3f n = std::cos(th) * u + std::sin(th) * w;
          emit(c.a + along * e + c.radius * n, n, cyl_area);
        }
      }
      // Hemispherical caps at both ends (at -e around a, at +e around b).
      const int bands = std::max(1, static_cast<int>(std::round(0.5f * pi * c.radius / s)));
      for (int end = 0; end < 2; ++end) {
        const Eigen::Vector3f centre = end == 0 ? c.a : c.b;
        const Eigen::Vector3f pole = end == 0 ? Eigen::Vector3f(-e) : e;
        for (int bnd = 0; bnd < bands; ++bnd) {
          const float phi = 0.5f * pi * (static_cast<float>(bnd) + 0.5f) / static_cast<float>(bands);
          const float ring_r = c.radius * std::sin(phi);
          const int m = std::max(1, static_cast<int>(std::ceil(2 * pi * ring_r / s)));
          const float band_area = 2 * pi * c.radius * c.radius *
                                  (std::cos(0.5f * pi * static_cast<float>(bnd) / static_cast<float>(bands)) -
                                   std::cos(0.5f * pi * static_cast<float>(bnd + 1) / static_cast<float>(bands)));
          for (int q = 0; q < m; ++q) {
            const float th = 2 * pi * static_cast<float>(q) / static_cast<float>(m);
            const Eigen::Vector3f n =
                std::sin(phi) * (std::cos(th) * u + std::sin(th) * w) + std::cos(phi) * pole;
            emit(centre + c.radius * n, n, band_area / static_cast<float>(m));
          }
        }
      }
    }
  }
}

void HandGhosts::joint_poses(const HandFrame& newest, const HandFrame* previous,
                             float teleport_distance) {
  const int hands = std::min<int>(newest.hand_count, kMaxHands);
  for (int h = 0; h < hands; ++h) {
    const HandPose& now = newest.hands[static_cast<std::size_t>(h)];
    const HandPose* before = nullptr;
    if (previous != nullptr) {
      for (int p = 0; p < std::min<int>(previous->hand_count, kMaxHands); ++p) {
        if (previous->hands[static_cast<std::size_t>(p)].hand_id == now.hand_id) {
          before = &previous->hands[static_cast<std::size_t>(p)];
        }
      }
    }
    for (int j = 0; j < kHandJointCount; ++j) {
      const auto slot = static_cast<std::size_t>(h * kHandJointCount + j);
      const JointPose& jn = now.joints[static_cast<std::size_t>(j)];
      const Eigen::Vector3f pn = to_eigen(jn.position);
      const Eigen::Quaternionf qn = joint_rotation(jn);
      pos_new_[slot] = f4(pn);
      rot_new_[slot] = f4(qn);
      pos_prev_[slot] = pos_new_[slot];
      rot_prev_[slot] = rot_new_[slot];
      if (before == nullptr) continue;
      const JointPose& jp = before->joints[static_cast<std::size_t>(j)];
      const Eigen::Vector3f pp = to_eigen(jp.position);
      if (!jp.valid || !pp.allFinite() || (pp - pn).norm() > teleport_distance) continue;
      pos_prev_[slot] = f4(pp);
      rot_prev_[slot] = f4(joint_rotation(jp));
    }
  }
}

void HandGhosts::contact_field(const HandFrame& newest, std::span<const Float4> impulse,
                               double frame_dt, const Vec3f& array_position, ContactField& out,
                               Vec3f& total_force, float& max_pressure) const {
  out.count = 0;
  Eigen::Vector3f total = Eigen::Vector3f::Zero();
  max_pressure = 0;
  const Eigen::Vector3f array = to_eigen(array_position);
  const float inv_dt = frame_dt > 0 ? static_cast<float>(1.0 / frame_dt) : 0.0f;
  const int n = std::min<int>(count_, static_cast<int>(impulse.size()));
  for (int g = 0; g < n; ++g) {
    const auto k = static_cast<std::size_t>(g);
    const Float4& im = impulse[k];
    const Eigen::Vector3f f(im.x * inv_dt, im.y * inv_dt, im.z * inv_dt);
    if (!f.allFinite()) continue;
    total += f;
    const int slot = joint_slot_[k];
    const int hand = slot / kHandJointCount;
    const int joint = slot % kHandJointCount;
    const JointPose& jp = newest.hands[static_cast<std::size_t>(hand)].joints[static_cast<std::size_t>(joint)];
    const Eigen::Quaternionf rot = joint_rotation(jp);
    const Eigen::Vector3f lo(offset_[k].x, offset_[k].y, offset_[k].z);
    const Eigen::Vector3f pos = to_eigen(jp.position) + rot * lo;
    const Eigen::Vector3f nrm = rot * Eigen::Vector3f(normal_[k].x, normal_[k].y, normal_[k].z);
    if (nrm.dot(array - pos) <= 0) continue;  // faces away from the array
    const float p = std::max(-nrm.dot(f), 0.0f) / std::max(area_[k], 1e-12f);
    if (!(p > 0) || out.count >= kMaxContactSamples) continue;
    ContactSample& smp = out.samples[out.count++];
    smp.position = to_vec3f(pos);
    smp.normal = to_vec3f(nrm);
    smp.pressure = p;
    smp.weight = 1;
    smp.joint = static_cast<std::uint8_t>(joint);
    smp.hand = static_cast<std::uint8_t>(hand);
    smp.offset = to_vec3f(lo);
    max_pressure = std::max(max_pressure, p);
  }
  total_force = to_vec3f(total);
}

}  // namespace sonoflow::fluid
