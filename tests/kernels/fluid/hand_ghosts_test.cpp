// The contact field's pressure reading on the host (no OpenCL device): HandGhosts::contact_field
// given the ghosts' forces directly, on the tests' flat hand (palm down, the array below it).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
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

// The capsule contact's surface at p, as density.cl's hand_surface: the capsules (bones() order,
// `bit` their mask bits) in `mask`, folded by the polynomial smooth minimum of radius k (0: the
// exact union's min); grad its blended gradient.
float capsule_surface(const Eigen::Vector3f& p, const hand::HandCapsules& caps,
                      const std::array<int, hand::kBoneCount>& bit, std::uint64_t mask, float k,
                      Eigen::Vector3f& grad) {
  float best = INFINITY;
  grad = Eigen::Vector3f::Zero();
  for (int c = 0; c < hand::kBoneCount; ++c) {
    const hand::Capsule& cap = caps[static_cast<std::size_t>(c)];
    const int b = bit[static_cast<std::size_t>(c)];
    if (!cap.valid || b < 0 || ((mask >> b) & 1u) == 0) continue;
    const Eigen::Vector3f ab = cap.b - cap.a;
    const float t = std::clamp((p - cap.a).dot(ab) / std::max(ab.squaredNorm(), 1e-12f), 0.0f, 1.0f);
    const Eigen::Vector3f r = p - cap.a - t * ab;
    const float d = r.norm() - cap.radius;
    const Eigen::Vector3f g = r.norm() > 1e-7f ? Eigen::Vector3f(r / r.norm()) : Eigen::Vector3f::UnitZ();
    if (k <= 0) {
      if (d < best) best = d, grad = g;
      continue;
    }
    const float w = std::clamp(0.5f + 0.5f * (best - d) / k, 0.0f, 1.0f);
    const float m = std::max(1.0f - std::fabs(best - d) / k, 0.0f);
    grad = (1 - w) * grad + w * g;
    best = std::min(best, d) - 0.25f * k * m * m;
  }
  return best;
}

// The capsule contact (density.cl, pbf_apply) tries only the capsules in the masks of the ghosts
// a particle lists (within h = 2 spacings), not all 23: wherever it would push (a point within
// R = half a spacing of the hand's surface, or inside it) and lists a ghost, the surface from the
// listed masks must be the full scan's, or the push differs. For the exact union (k = 0) that is
// the nearest capsule; for the smooth union of blend radius k (hand.capsule_blend) every capsule
// within about k of the nearest (up to ~1.25 k: the fold lowers its running value by up to k/4
// a step), which the masks take in with a margin of a spacing + 1.5 k. Checked
// on a 3 mm grid around the flat hand against the capsules themselves (its thick forearm too), at
// k = 0, 2, 4, 6, 8 and 10 mm. Fails with each ghost's own capsule alone in its mask (points 2 cm
// inside a capsule list only ghosts of another one) and, for the smooth union, with the exact
// union's margin (a spacing, k left out: 517 points at k = 10 mm; on this flat hand 2-8 mm pass) and
// a spacing + k (2 points at 10 mm).
TEST(HandGhosts, CapsuleMasksHoldTheNearestCapsuleOfEveryPointTheContactPushes) {
  for (const float k : {0.0f, 0.002f, 0.004f, 0.006f, 0.008f, 0.010f}) {
    const HandFrame f = flat_hand({0, 0, 0.15f}, 1, 0);
    HandGhosts ghosts(kCapacity, kSpacing, -1.0f, k);
    ghosts.layout(f);
    hand::HandCapsules caps;
    hand::hand_capsules(f.hands[0], caps);
    // The mask's bit of each bone: capsules() in the contact's order, matched by their joints.
    std::array<int, hand::kBoneCount> bit{};
    for (int c = 0; c < hand::kBoneCount; ++c) {
      bit[static_cast<std::size_t>(c)] = -1;
      const hand::Bone& b = hand::bones()[static_cast<std::size_t>(c)];
      for (int s = 0; s < ghosts.capsule_count(); ++s) {
        const Float4& cap = ghosts.capsules()[static_cast<std::size_t>(s)];
        if (std::bit_cast<int>(cap.x) == static_cast<int>(b.base) && std::bit_cast<int>(cap.y) == static_cast<int>(b.tip))
          bit[static_cast<std::size_t>(c)] = s;
      }
    }
    const auto n = static_cast<std::size_t>(ghosts.count());
    std::vector<Eigen::Vector3f> at(n);
    for (std::size_t g = 0; g < n; ++g) at[g] = world(ghosts, f, g).position;
    const float h = 2.0f * kSpacing, r = 0.5f * kSpacing, step = 0.003f;
    const float zc = f.hands[0].joint(HandJoint::Palm).position.z;
    int pushed = 0, missed = 0, deep = 0, blended = 0;
    Eigen::Vector3f g_all, g_tried, g_exact;
    for (float x = -0.36f; x < 0.16f; x += step)
      for (float y = -0.07f; y < 0.12f; y += step)
        for (float z = zc - 0.04f; z < zc + 0.04f; z += step) {
          const Eigen::Vector3f p(x, y, z);
          const float surface = capsule_surface(p, caps, bit, ~std::uint64_t{0}, k, g_all);
          if (surface >= r) continue;  // no push
          std::uint64_t mask = 0;
          bool listed = false;
          for (std::size_t g = 0; g < n; ++g)
            if ((at[g] - p).squaredNorm() < h * h) {
              mask |= ghosts.capsule_mask()[g];
              listed = true;
            }
          if (!listed) continue;  // no ghost listed: no push, capsules or not
          ++pushed;
          deep += surface < -h ? 1 : 0;
          const float tried = capsule_surface(p, caps, bit, mask, k, g_tried);
          blended += k > 0 && surface < capsule_surface(p, caps, bit, ~std::uint64_t{0}, 0, g_exact) - 1e-5f;
          missed += std::fabs(tried - surface) < 1e-6f && g_tried.normalized().dot(g_all.normalized()) > 0.9999f ? 0 : 1;
        }
    std::printf("k %.0f mm: %d points the contact pushes (%d more than h inside, %d in a blend), %d "
                "without the full scan's surface\n", 1e3 * k, pushed, deep, blended, missed);
    EXPECT_GT(pushed, 10000);
    EXPECT_EQ(missed, 0) << "k = " << k;
  }
}

}  // namespace
}  // namespace sonoflow::fluid::test
