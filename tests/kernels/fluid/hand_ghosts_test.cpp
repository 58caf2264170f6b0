// The contact field's pressure reading on the host (no OpenCL device): HandGhosts::contact_field
// given the ghosts' forces directly, on the tests' flat hand (palm down, the array below it).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <memory>
#include <vector>

#include <Eigen/Geometry>

#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kSpacing = 0.01f;  // m, the default ghost spacing (the particle spacing)
constexpr int kCapacity = 4096;

// A ghost's world position and normal on the pose it was laid out on.
struct WorldGhost {
  Eigen::Vector3f position, normal;
};

WorldGhost world(const HandGhosts& g, const HandFrame& f, std::size_t k) {
  const int slot = g.joint_slot()[k];
  const JointPose& jp = f.hands[static_cast<std::size_t>(slot / kHandJointCount)]
                            .joints[static_cast<std::size_t>(slot % kHandJointCount)];
  const Eigen::Quaternionf rot = hand::joint_rotation(jp);
  const Float4& o = g.offset()[k];
  const Float4& n = g.normal()[k];
  return {to_eigen(jp.position) + rot * Eigen::Vector3f(o.x, o.y, o.z), rot * Eigen::Vector3f(n.x, n.y, n.z)};
}

// The hand 15 cm over the array (at the origin); ghosts laid out for it.
struct Layout {
  HandFrame frame = flat_hand({0, 0, 0.15f}, 1, 0);
  std::unique_ptr<HandGhosts> ghosts;
  explicit Layout(float patch_radius) {
    ghosts = std::make_unique<HandGhosts>(kCapacity, kSpacing, patch_radius);
    ghosts->layout(frame);
  }
};

// Runs contact_field with forces (N; frame_dt 1 s, so impulse = force) from `force(ghost)`.
template <class ForceOf>
void read(Layout& l, ForceOf force, ContactField& field, Vec3f& total) {
  const auto n = static_cast<std::size_t>(l.ghosts->count());
  std::vector<Float4> impulse(n);
  for (std::size_t k = 0; k < n; ++k) {
    const Eigen::Vector3f f = force(world(*l.ghosts, l.frame, k), l.ghosts->area()[k]);
    impulse[k] = {f.x(), f.y(), f.z(), 0};
  }
  float max_pressure = 0;
  l.ghosts->contact_field(l.frame, impulse, 1.0, Vec3f{0, 0, 0}, field, total, max_pressure);
}

ContactField& field_buffer() {
  static ContactField field;  // large: one per process
  return field;
}

// Uniform pressure p (f_j = -p A_j n_j on every ghost) reads p on every array-facing sample, at
// any patch radius: the patch's force and area are projected on the same normal.
TEST(HandGhosts, UniformPressureReadsItselfAtAnyPatchRadius) {
  const float p = 500.0f;  // Pa
  for (const float rho : {0.0f, 0.5f * kSpacing, kSpacing, HandGhosts::kPatchSpacings * kSpacing,
                          2.0f * kSpacing, 3.0f * kSpacing}) {
    Layout l(rho);
    ASSERT_GT(l.ghosts->count(), 500);
    ASSERT_EQ(l.ghosts->dropped(), 0);
    int facing = 0;
    for (std::size_t k = 0; k < static_cast<std::size_t>(l.ghosts->count()); ++k) {
      const WorldGhost w = world(*l.ghosts, l.frame, k);
      // alone (rho = 0) a ghost wholly inside another capsule has no area and reads nothing
      facing += w.normal.dot(-w.position) > 0 && (rho > 0 || l.ghosts->area()[k] > 0) ? 1 : 0;
    }
    ContactField& field = field_buffer();
    Vec3f total;
    read(l, [&](const WorldGhost& w, float area) { return Eigen::Vector3f(-p * area * w.normal); }, field, total);
    EXPECT_EQ(static_cast<int>(field.count), facing) << "every array-facing ghost gives a sample";
    float lo = 1e9f, hi = 0;
    for (std::uint32_t s = 0; s < field.count; ++s) {
      lo = std::min(lo, field.samples[s].pressure);
      hi = std::max(hi, field.samples[s].pressure);
    }
    std::printf("uniform %.0f Pa, patch radius %.1f mm: %u samples read %.2f-%.2f Pa\n", p, 1e3 * rho,
                field.count, lo, hi);
    EXPECT_NEAR(lo, p, 0.01 * p);
    EXPECT_NEAR(hi, p, 0.01 * p);
  }
}

// The hand's silhouette seen from below (1 mm grid; the flat hand's capsules all lie at one height).
double silhouette(const HandFrame& f) {
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  const double step = 0.001;
  long in = 0;
  for (double x = -0.35 + 0.5 * step; x < 0.15; x += step)
    for (double y = -0.06 + 0.5 * step; y < 0.11; y += step)
      for (const hand::Capsule& c : caps) {
        const Eigen::Vector3f q(static_cast<float>(x), static_cast<float>(y), c.a.z());
        if (c.valid && hand::axis_distance(q, c) < c.radius) {
          ++in;
          break;
        }
      }
  return static_cast<double>(in) * step * step;
}

// The reading's areas tile the hand's surface (the union of its capsules): the downward ghosts'
// areas projected on z add up to the hand's silhouette. The capsules overlap (the palm's
// metacarpals 12 mm apart with radius 11 mm, the palm's cross pieces along them): by the capsules'
// nominal areas they add up to 336 cm^2 against a 299 cm^2 silhouette (under the palm 1.4 x), so
// every force spread over the overlaps read low (bench/RESULTS.md, handread).
TEST(HandGhosts, AreasTileTheHandsSurface) {
  Layout l(-1.0f);
  double down = 0;
  for (std::size_t k = 0; k < static_cast<std::size_t>(l.ghosts->count()); ++k) {
    const WorldGhost w = world(*l.ghosts, l.frame, k);
    down += l.ghosts->area()[k] * std::max(-w.normal.z(), 0.0f);
  }
  const double sil = silhouette(l.frame);
  std::printf("downward ghosts' projected area %.1f cm^2, silhouette %.1f cm^2 (%.3f)\n", 1e4 * down, 1e4 * sil,
              down / sil);
  EXPECT_NEAR(down / sil, 1.0, 0.05);
}

// A level fluid under the flat hand pushes it up with p per horizontal area: points 2 mm apart
// 5 mm under the hand's lowest surface, over its silhouette, each pushing p (2 mm)^2 along +z,
// shared the way the boundary density shares a particle's push: over the downward ghosts within
// h = 2 cm, weights (1 - r^2/h^2)^3, oblique ones too. The palm's downward samples (n.z < -0.9)
// read p: mean 1.02, median 0.96, quartiles 0.88-1.07. Fails with each ghost read alone (patch
// radius 0: median 0.89, quartiles 0.77-0.98, up to 4.7 p) and with the capsules' nominal areas
// (the overlaps counted twice: mean 0.79, median 0.80). Pushes all on the nearest ghost (the
// contact's reaction) read 1.19 with the default patch (1.05 at 1.5 x the spacing, 1.01 at 2 x):
// printed, not asserted.
TEST(HandGhosts, LevelFluidUnderThePalmReadsItsPressure) {
  const float p = 300.0f;  // Pa
  for (const bool shared : {false, true}) {
    Layout l(-1.0f);
    const auto n = static_cast<std::size_t>(l.ghosts->count());
    std::vector<WorldGhost> g(n);
    for (std::size_t k = 0; k < n; ++k) g[k] = world(*l.ghosts, l.frame, k);
    std::vector<Eigen::Vector3f> force(n, Eigen::Vector3f::Zero());
    hand::HandCapsules caps;
    hand::hand_capsules(l.frame.hands[0], caps);
    const float step = 0.002f, h = 0.02f;
    const float z = l.frame.hands[0].joint(HandJoint::Palm).position.z - 0.012f - 0.005f;
    for (float x = -0.35f + 0.5f * step; x < 0.15f; x += step)
      for (float y = -0.06f + 0.5f * step; y < 0.11f; y += step) {
        bool under = false;
        for (const hand::Capsule& c : caps)
          under = under || (c.valid && hand::axis_distance(Eigen::Vector3f(x, y, c.a.z()), c) < c.radius);
        if (!under) continue;
        const Eigen::Vector3f q(x, y, z);
        const Eigen::Vector3f push(0, 0, p * step * step);
        if (!shared) {
          std::size_t best = 0;
          float best_d = 1e9f;
          for (std::size_t k = 0; k < n; ++k) {
            const float d = (g[k].position - q).squaredNorm();
            if (g[k].normal.z() < 0 && d < best_d) best_d = d, best = k;
          }
          force[best] += push;
          continue;
        }
        double wsum = 0;
        for (std::size_t k = 0; k < n; ++k) {
          const float r2 = (g[k].position - q).squaredNorm();
          if (g[k].normal.z() < 0 && r2 < h * h) wsum += std::pow(1.0 - r2 / (h * h), 3);
        }
        for (std::size_t k = 0; k < n; ++k) {
          const float r2 = (g[k].position - q).squaredNorm();
          if (g[k].normal.z() < 0 && r2 < h * h)
            force[k] += static_cast<float>(std::pow(1.0 - r2 / (h * h), 3) / wsum) * push;
        }
      }
    std::size_t next = 0;
    ContactField& field = field_buffer();
    Vec3f total;
    read(l, [&](const WorldGhost&, float) { return force[next++]; }, field, total);
    int count = 0, within = 0;
    double sum = 0, lo = 1e9, hi = 0;
    std::vector<double> ratio;
    for (std::uint32_t s = 0; s < field.count; ++s) {
      const ContactSample& cs = field.samples[s];
      if (!on_palm(cs) || cs.normal.z > -0.9f || cs.joint == static_cast<std::uint8_t>(HandJoint::Wrist)) continue;
      const double r = cs.pressure / p;
      sum += r, lo = std::min(lo, r), hi = std::max(hi, r), ++count;
      within += std::fabs(r - 1.0) < 0.15 ? 1 : 0;
      ratio.push_back(r);
    }
    std::sort(ratio.begin(), ratio.end());
    const double median = ratio[ratio.size() / 2], q1 = ratio[ratio.size() / 4], q3 = ratio[3 * ratio.size() / 4];
    std::printf("level fluid at %.0f Pa, pushes %s: the palm's %d downward samples read %.3f (%.3f-%.3f) of it, "
                "median %.3f, quartiles %.3f-%.3f, %d within 15 %%; total %.3f N for p x silhouette %.3f N\n",
                p, shared ? "shared within h" : "on the nearest ghost", count, sum / count, lo, hi, median, q1, q3,
                within, total.z, p * silhouette(l.frame));
    ASSERT_GT(count, 20);
    if (!shared) continue;  // printed only: the contact's nearest ghost takes a whole push
    EXPECT_NEAR(sum / count, 1.0, 0.06);
    EXPECT_NEAR(median, 1.0, 0.07);
    EXPECT_GT(q1, 0.85) << "half the samples within 15 %";
    EXPECT_LT(q3, 1.15) << "half the samples within 15 %";
  }
}

// total_force is the raw sum of the ghosts' forces, whatever the reading.
TEST(HandGhosts, TotalForceIsTheSumOfTheGhostsForces) {
  Layout l(-1.0f);
  ContactField& field = field_buffer();
  Vec3f total;
  Eigen::Vector3d sum = Eigen::Vector3d::Zero();
  read(l, [&](const WorldGhost& w, float area) {
    const Eigen::Vector3f f(0.3f * area, -0.2f * area, 40.0f * area * std::max(-w.normal.z(), 0.0f));
    sum += f.cast<double>();
    return f;
  }, field, total);
  EXPECT_NEAR(total.x, sum.x(), 1e-4 * std::fabs(sum.x()) + 1e-9);
  EXPECT_NEAR(total.y, sum.y(), 1e-4 * std::fabs(sum.y()) + 1e-9);
  EXPECT_NEAR(total.z, sum.z(), 1e-4 * std::fabs(sum.z()) + 1e-9);
}

// The capsule contact (density.cl, pbf_apply) tries only the capsules in the masks of the ghosts
// a particle lists (within h = 2 spacings), not all 23: wherever it would push (a point within
// R = half a spacing of the capsules' union, or inside it) and lists a ghost, the nearest capsule
// must be among them, or the push differs from the full scan's. Checked on a 3 mm grid around the
// flat hand against the capsules themselves (its thick forearm too). Fails with each ghost's own
// capsule alone in its mask (points 2 cm inside a capsule list only ghosts of another one).
TEST(HandGhosts, CapsuleMasksHoldTheNearestCapsuleOfEveryPointTheContactPushes) {
  Layout l(-1.0f);
  const HandFrame& f = l.frame;
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  // The mask's bit of each bone: capsules() in the contact's order, matched by their joints.
  std::array<int, hand::kBoneCount> bit{};
  for (int k = 0; k < hand::kBoneCount; ++k) {
    bit[static_cast<std::size_t>(k)] = -1;
    const hand::Bone& b = hand::bones()[static_cast<std::size_t>(k)];
    for (int c = 0; c < l.ghosts->capsule_count(); ++c) {
      const Float4& cap = l.ghosts->capsules()[static_cast<std::size_t>(c)];
      if (std::bit_cast<int>(cap.x) == static_cast<int>(b.base) && std::bit_cast<int>(cap.y) == static_cast<int>(b.tip))
        bit[static_cast<std::size_t>(k)] = c;
    }
  }
  const auto n = static_cast<std::size_t>(l.ghosts->count());
  std::vector<Eigen::Vector3f> at(n);
  for (std::size_t g = 0; g < n; ++g) at[g] = world(*l.ghosts, f, g).position;
  const float h = 2.0f * kSpacing, r = 0.5f * kSpacing, step = 0.003f;
  const float zc = f.hands[0].joint(HandJoint::Palm).position.z;
  int pushed = 0, missed = 0, deep = 0;
  for (float x = -0.36f; x < 0.16f; x += step)
    for (float y = -0.07f; y < 0.12f; y += step)
      for (float z = zc - 0.04f; z < zc + 0.04f; z += step) {
        const Eigen::Vector3f p(x, y, z);
        float nearest = INFINITY;
        for (const hand::Capsule& c : caps)
          if (c.valid) nearest = std::min(nearest, hand::axis_distance(p, c) - c.radius);
        if (nearest >= r) continue;  // no push
        std::uint64_t mask = 0;
        bool listed = false;
        for (std::size_t g = 0; g < n; ++g)
          if ((at[g] - p).squaredNorm() < h * h) {
            mask |= l.ghosts->capsule_mask()[g];
            listed = true;
          }
        if (!listed) continue;  // no ghost listed: no push, capsules or not
        ++pushed;
        deep += nearest < -h ? 1 : 0;
        float tried = INFINITY;
        for (int k = 0; k < hand::kBoneCount; ++k) {
          const hand::Capsule& c = caps[static_cast<std::size_t>(k)];
          const int b = bit[static_cast<std::size_t>(k)];
          if (c.valid && b >= 0 && (mask >> b) & 1u) tried = std::min(tried, hand::axis_distance(p, c) - c.radius);
        }
        missed += tried == nearest ? 0 : 1;
      }
  std::printf("%d points the contact pushes (%d more than h inside), %d without their nearest capsule\n",
              pushed, deep, missed);
  EXPECT_GT(pushed, 10000);
  EXPECT_EQ(missed, 0);
}

}  // namespace
}  // namespace sonoflow::fluid::test
