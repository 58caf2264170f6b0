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
Eigen::Vector3f v3(const Float4& v) { return {v.x, v.y, v.z}; }

// The patch grid's hash table: a power of two >= 2 x capacity, so few cells share a bucket.
std::size_t table_size(int capacity) {
  std::size_t t = 64;
  while (t < 2 * static_cast<std::size_t>(std::max(capacity, 1))) t *= 2;
  return t;
}

// Bucket of grid cell (x, y, z) in a table of `mask + 1` buckets.
std::int32_t bucket(int x, int y, int z, std::uint32_t mask) {
  const std::uint32_t h = (static_cast<std::uint32_t>(x) * 73856093u) ^
                          (static_cast<std::uint32_t>(y) * 19349663u) ^
                          (static_cast<std::uint32_t>(z) * 83492791u);
  return static_cast<std::int32_t>(h & mask);
}

}  // namespace

HandGhosts::HandGhosts(int capacity, float spacing, float patch_radius, float capsule_blend)
    : capacity_(capacity),
      spacing_(spacing),
      capsule_blend_(capsule_blend),
      patch_radius_(patch_radius < 0 ? kPatchSpacings * spacing : patch_radius),
      joint_slot_(static_cast<std::size_t>(capacity)),
      offset_(static_cast<std::size_t>(capacity)),
      capsule_mask_(static_cast<std::size_t>(capacity)),
      normal_(static_cast<std::size_t>(capacity)),
      area_(static_cast<std::size_t>(capacity)),
      world_pos_(static_cast<std::size_t>(capacity)),
      world_normal_(static_cast<std::size_t>(capacity)),
      force_(static_cast<std::size_t>(capacity)),
      bucket_of_(static_cast<std::size_t>(capacity)),
      bucket_start_(table_size(capacity) + 1),
      sorted_(static_cast<std::size_t>(capacity)) {}

void HandGhosts::add(int hand, int joint, std::uint64_t capsules, const float local_offset[3],
                     const float local_normal[3], float area) {
  if (count_ >= capacity_) {
    ++dropped_;
    return;
  }
  const auto k = static_cast<std::size_t>(count_++);
  joint_slot_[k] = hand * kHandJointCount + joint;
  offset_[k] = {local_offset[0], local_offset[1], local_offset[2], 0};
  capsule_mask_[k] = capsules;
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
    // The contact's surface (density.cl, pbf_apply): the valid capsules in slots, in bone order
    // (at most 23 a hand: every one has a slot).
    std::array<int, kBoneCount> slot{};
    for (int k = 0; k < kBoneCount; ++k) {
      const Capsule& c = caps[static_cast<std::size_t>(k)];
      slot[static_cast<std::size_t>(k)] = -1;
      if (!c.valid) continue;
      const auto b = hand::bones()[static_cast<std::size_t>(k)];
      slot[static_cast<std::size_t>(k)] = capsule_count_;
      capsules_[static_cast<std::size_t>(capsule_count_++)] = {
          std::bit_cast<float>(h * kHandJointCount + static_cast<int>(b.base)),
          std::bit_cast<float>(h * kHandJointCount + static_cast<int>(b.tip)), c.radius, 0};
    }
    for (int k = 0; k < kBoneCount; ++k) {
      const Capsule& c = caps[static_cast<std::size_t>(k)];
      if (!c.valid) continue;
      const int joint = static_cast<int>(hand::bones()[static_cast<std::size_t>(k)].base);
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

      // du, dv: the edges of the ghost's surface element (its area's sides along the surface).
      auto emit = [&](const Eigen::Vector3f& p, const Eigen::Vector3f& n, float area,
                      const Eigen::Vector3f& du, const Eigen::Vector3f& dv) {
        std::array<int, kBoneCount> near{};  // capsules the element may reach into
        int near_count = 0;
        // The contact's candidates for a particle that lists this ghost: its capsule, and those
        // it lies within a spacing of (a particle deep inside one of them lists none of its
        // ghosts, only this one; density.cl, pbf_apply), plus 1.5 x the blend radius k: the
        // smooth union takes in every capsule within ~1.25 k of the nearest (its fold lowers
        // the running value by up to k/4 a step; hand_ghosts_test checks the margin).
        std::uint64_t candidates = std::uint64_t{1} << slot[static_cast<std::size_t>(k)];
        for (int o = 0; o < kBoneCount; ++o) {
          const Capsule& other = caps[static_cast<std::size_t>(o)];
          if (o == k || !other.valid) continue;
          const float distance = hand::axis_distance(p, other);
          if (distance < other.radius - 0.25f * s) return;  // inside the hand
          if (distance < other.radius + 0.75f * s) near[static_cast<std::size_t>(near_count++)] = o;
          if (distance < other.radius + s + 1.5f * capsule_blend_) candidates |= std::uint64_t{1} << slot[static_cast<std::size_t>(o)];
        }
        // The reading's area is the part of the element on the hand's surface (the capsules'
        // union), 3 x 3 points of it tested against the capsules nearby: where capsules overlap,
        // the ghosts kept within s/4 inside another would otherwise count its surface twice.
        // Pressure reading only: the fluid never sees these areas.
        if (near_count > 0) {
          int outside = 0;
          for (int a = -1; a <= 1; ++a)
            for (int b = -1; b <= 1; ++b) {
              const Eigen::Vector3f q = p + (static_cast<float>(a) / 3.0f) * du + (static_cast<float>(b) / 3.0f) * dv;
              bool out = true;
              for (int o = 0; o < near_count && out; ++o) {
                const Capsule& other = caps[static_cast<std::size_t>(near[static_cast<std::size_t>(o)])];
                out = hand::axis_distance(q, other) >= other.radius;
              }
              outside += out ? 1 : 0;
            }
          area *= static_cast<float>(outside) / 9.0f;
        }
        const Eigen::Vector3f lo = inv * (p - origin);
        const Eigen::Vector3f ln = inv * n;
        const float off[3] = {lo.x(), lo.y(), lo.z()};
        const float nrm[3] = {ln.x(), ln.y(), ln.z()};
        add(h, joint, candidates, off, nrm, area);
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
          const Eigen::Vector3f around_dir = -std::sin(th) * u + std::cos(th) * w;
          emit(c.a + along * e + c.radius * n, n, cyl_area, (len / static_cast<float>(rings)) * e,
               (2 * pi * c.radius / static_cast<float>(around)) * around_dir);
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
            const Eigen::Vector3f radial = std::cos(th) * u + std::sin(th) * w;
            const Eigen::Vector3f meridian = std::cos(phi) * radial - std::sin(phi) * pole;
            const Eigen::Vector3f parallel = -std::sin(th) * u + std::cos(th) * w;
            emit(centre + c.radius * n, n, band_area / static_cast<float>(m),
                 (0.5f * pi * c.radius / static_cast<float>(bands)) * meridian,
                 (2 * pi * ring_r / static_cast<float>(m)) * parallel);
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

void HandGhosts::patch_sums(int i, float& force_n, float& area_n) const {
  const auto ki = static_cast<std::size_t>(i);
  const Eigen::Vector3f ni = v3(world_normal_[ki]);
  if (patch_radius_ <= 0) {  // the ghost alone: the thesis' p* = max(-n . f, 0) / area
    force_n = -ni.dot(v3(force_[ki]));
    area_n = area_[ki];
    return;
  }
  const Eigen::Vector3f pi = v3(world_pos_[ki]);
  const float hand = world_pos_[ki].w;
  const float rho2 = patch_radius_ * patch_radius_;
  const auto mask = static_cast<std::uint32_t>(bucket_start_.size() - 2);
  // Cells are 2 rho wide: the ghosts within rho lie in the 2 x 2 x 2 cells on the near side of
  // each axis (8 buckets to look in, not 27); a bucket two cells share is looked in once.
  const Eigen::Vector3f c = pi * (0.5f / patch_radius_);
  const Eigen::Vector3f lo = c.array().floor();
  std::array<std::int32_t, 8> cells{};
  int m = 0;
  for (int a = 0; a < 8; ++a) {
    int cell[3];
    for (int d = 0; d < 3; ++d) {
      const int side = c[d] - lo[d] < 0.5f ? -1 : 1;
      cell[d] = static_cast<int>(lo[d]) + (((a >> d) & 1) ? side : 0);
    }
    const std::int32_t b = bucket(cell[0], cell[1], cell[2], mask);
    if (std::find(cells.begin(), cells.begin() + m, b) == cells.begin() + m) cells[static_cast<std::size_t>(m++)] = b;
  }
  force_n = 0;
  area_n = 0;
  for (int q = 0; q < m; ++q) {
    const auto b = static_cast<std::size_t>(cells[static_cast<std::size_t>(q)]);
    for (std::int32_t s = bucket_start_[b]; s < bucket_start_[b + 1]; ++s) {
      const auto kj = static_cast<std::size_t>(sorted_[static_cast<std::size_t>(s)]);
      if (world_pos_[kj].w != hand) continue;  // the other hand
      const float r2 = (v3(world_pos_[kj]) - pi).squaredNorm();
      if (r2 >= rho2) continue;
      const float cos_ij = ni.dot(v3(world_normal_[kj]));
      if (cos_ij <= 0) continue;  // the surface's other side (a finger's far side)
      const float x = 1.0f - r2 / rho2;
      const float w = x * x;
      force_n -= w * ni.dot(v3(force_[kj]));
      area_n += w * area_[kj] * cos_ij;
    }
  }
}

void HandGhosts::contact_field(const HandFrame& newest, std::span<const Float4> impulse,
                               double frame_dt, const Vec3f& array_position, ContactField& out,
                               Vec3f& total_force, float& max_pressure) {
  out.count = 0;
  Eigen::Vector3f total = Eigen::Vector3f::Zero();
  max_pressure = 0;
  const Eigen::Vector3f array = to_eigen(array_position);
  const float inv_dt = frame_dt > 0 ? static_cast<float>(1.0 / frame_dt) : 0.0f;
  const int n = std::min<int>(count_, static_cast<int>(impulse.size()));

  // Each ghost's world position, normal and force on the newest pose.
  for (int g = 0; g < n; ++g) {
    const auto k = static_cast<std::size_t>(g);
    const Float4& im = impulse[k];
    const Eigen::Vector3f f(im.x * inv_dt, im.y * inv_dt, im.z * inv_dt);
    const int slot = joint_slot_[k];
    const int hand = slot / kHandJointCount;
    const int joint = slot % kHandJointCount;
    const JointPose& jp = newest.hands[static_cast<std::size_t>(hand)].joints[static_cast<std::size_t>(joint)];
    const Eigen::Quaternionf rot = joint_rotation(jp);
    const Eigen::Vector3f pos = to_eigen(jp.position) + rot * Eigen::Vector3f(offset_[k].x, offset_[k].y, offset_[k].z);
    const Eigen::Vector3f nrm = rot * Eigen::Vector3f(normal_[k].x, normal_[k].y, normal_[k].z);
    const bool finite = f.allFinite() && pos.allFinite();
    if (f.allFinite()) total += f;
    world_pos_[k] = {pos.x(), pos.y(), pos.z(), finite ? static_cast<float>(hand) : -1.0f};
    world_normal_[k] = f4(nrm);
    force_[k] = f4(f);
  }

  // Counting sort of the ghosts into the hashed grid (cells 2 x the patch radius).
  if (patch_radius_ > 0) {
    const auto mask = static_cast<std::uint32_t>(bucket_start_.size() - 2);
    const float inv_cell = 0.5f / patch_radius_;
    const std::size_t table = bucket_start_.size() - 1;
    std::fill(bucket_start_.begin(), bucket_start_.end(), 0);
    for (int g = 0; g < n; ++g) {
      const auto k = static_cast<std::size_t>(g);
      bucket_of_[k] = -1;
      if (world_pos_[k].w < 0) continue;
      bucket_of_[k] = bucket(static_cast<int>(std::floor(world_pos_[k].x * inv_cell)),
                             static_cast<int>(std::floor(world_pos_[k].y * inv_cell)),
                             static_cast<int>(std::floor(world_pos_[k].z * inv_cell)), mask);
      ++bucket_start_[static_cast<std::size_t>(bucket_of_[k])];
    }
    // Running sums make bucket_start_[b] the end of bucket b; filling backwards then leaves it
    // the start, and bucket_start_[b + 1] the end (the last entry: all sorted ghosts).
    for (std::size_t b = 1; b < table; ++b) bucket_start_[b] += bucket_start_[b - 1];
    bucket_start_[table] = bucket_start_[table - 1];
    for (int g = n - 1; g >= 0; --g) {
      const auto k = static_cast<std::size_t>(g);
      if (bucket_of_[k] < 0) continue;
      sorted_[static_cast<std::size_t>(--bucket_start_[static_cast<std::size_t>(bucket_of_[k])])] = g;
    }
  }

  for (int g = 0; g < n; ++g) {
    const auto k = static_cast<std::size_t>(g);
    if (world_pos_[k].w < 0) continue;  // force not finite
    const Eigen::Vector3f pos = v3(world_pos_[k]);
    const Eigen::Vector3f nrm = v3(world_normal_[k]);
    if (nrm.dot(array - pos) <= 0) continue;  // faces away from the array
    float force_n = 0, area_n = 0;
    patch_sums(g, force_n, area_n);
    // A patch with next to no surface (a ghost alone, inside another capsule) reads nothing.
    if (!(area_n > 1e-2f * spacing_ * spacing_)) continue;
    const float p = std::max(force_n, 0.0f) / area_n;
    if (!(p > 0) || out.count >= kMaxContactSamples) continue;
    const int slot = joint_slot_[k];
    ContactSample& smp = out.samples[out.count++];
    smp.position = to_vec3f(pos);
    smp.normal = to_vec3f(nrm);
    smp.pressure = p;
    smp.weight = 1;
    smp.joint = static_cast<std::uint8_t>(slot % kHandJointCount);
    smp.hand = static_cast<std::uint8_t>(slot / kHandJointCount);
    smp.offset = {offset_[k].x, offset_[k].y, offset_[k].z};
    max_pressure = std::max(max_pressure, p);
  }
  total_force = to_vec3f(total);
}

}  // namespace sonoflow::fluid
