// The hand as ghost particles: pressure on the palm when it presses into a pool, a contact field
// anchored to joints, and robustness when the hand teleports, moves fast or leaves the domain.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>
#include <numbers>

#include <Eigen/Geometry>

#include "kernels/fluid/material.hpp"
#include "kernels/hand/hand_capsules.hpp"
#include "kernels/types/eigen_bridge.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kFloor = 0.10f;  // pool floor, 10 cm above the array
constexpr float kDepth = 0.05f;

FluidConfig pool_config() {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material.substeps = 2;
  c.material.iterations = 4;
  return c;
}

// A box from (x0, y0) to (x1, y1) on the floor, walls up to 0.35 m, filled `depth` deep.
Scene box_pool(float x0, float y0, float x1, float y1, float depth) {
  Scene s;
  s.shapes.push_back(Shape::box({x0, y0, kFloor}, {x1, y1, 0.35f}));
  s.blocks.push_back({{x0, y0, kFloor}, {x1, y1, kFloor + depth}});
  return s;
}

Scene pool_scene() { return box_pool(-0.12f, -0.12f, 0.12f, 0.12f, kDepth); }

struct PressResult {
  Vec3f mean_force;          // N, mean over the pressing frames
  double palm_pressure = 0;  // Pa, summed over palm samples, mean over frames
  int palm_samples = 0;
  int samples = 0;
  bool samples_face_array = true;
  Vec3f mean_normal;         // pressure-weighted sample normal
  bool finite = true;
};

// The palm (centred over the pool) starts 2 cm above the surface and moves down at `speed`
// for `seconds`; forces are averaged over the frames in which the palm is below the surface.
PressResult press(FluidEngine& e, float speed, float seconds) {
  static ContactField field;
  FluidStats st;
  PressResult r;
  const double dt = 1.0 / 90.0;
  const float start = kFloor + kDepth + 0.02f;
  HandFrame prev = flat_hand({0.0f, 0.0f, start}, 0, 0);
  run(e, 30);  // settle the pool
  int frames = 0, counted = 0;
  double fz = 0, fx = 0, fy = 0, palm = 0, nx = 0, ny = 0, nz = 0;
  for (; frames < static_cast<int>(seconds * 90); ++frames) {
    const float z = start - speed * static_cast<float>((frames + 1) * dt);
    HandFrame now = flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(frames + 1), 0);
    e.step_frame(now, &prev, dt, field, st);
    prev = now;
    r.finite = r.finite && std::isfinite(st.hand_force.z) && st.non_finite == 0;
    if (z > kFloor + kDepth - 0.005f) continue;  // not yet in the fluid
    ++counted;
    fx += st.hand_force.x;
    fy += st.hand_force.y;
    fz += st.hand_force.z;
    for (std::uint32_t k = 0; k < field.count; ++k) {
      const ContactSample& s = field.samples[k];
      ++r.samples;
      // Sampled ghosts face the array (at the origin).
      if (s.normal.x * -s.position.x + s.normal.y * -s.position.y + s.normal.z * -s.position.z <= 0)
        r.samples_face_array = false;
      nx += s.pressure * s.normal.x;
      ny += s.pressure * s.normal.y;
      nz += s.pressure * s.normal.z;
      if (on_palm(s)) {
        ++r.palm_samples;
        palm += s.pressure;
      }
    }
  }
  if (counted > 0) {
    r.mean_force = {static_cast<float>(fx / counted), static_cast<float>(fy / counted),
                    static_cast<float>(fz / counted)};
    r.palm_pressure = palm / counted;
  }
  const double nl = std::sqrt(nx * nx + ny * ny + nz * nz);
  if (nl > 0) r.mean_normal = {static_cast<float>(nx / nl), static_cast<float>(ny / nl), static_cast<float>(nz / nl)};
  return r;
}

TEST(Hand, PressingIntoWaterPushesThePalmBack) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  const PressResult r = press(*e, 0.2f, 0.3f);
  std::printf("force %.3f %.3f %.3f N, palm samples %d of %d, palm pressure sum %.1f Pa\n",
              r.mean_force.x, r.mean_force.y, r.mean_force.z, r.palm_samples, r.samples,
              r.palm_pressure);
  EXPECT_TRUE(r.finite);
  EXPECT_GT(r.mean_force.z, 0.0f) << "the fluid must push the hand up, away from it";
  EXPECT_GT(r.mean_force.z, 5 * std::hypot(r.mean_force.x, r.mean_force.y));
  EXPECT_GT(r.palm_samples, 0);
  EXPECT_GT(r.palm_pressure, 0.0);
  EXPECT_TRUE(r.samples_face_array);
  EXPECT_LT(r.mean_normal.z, -0.8f) << "pressure sits on the surface that faces the fluid (down)";
}

// Two tracked hands in one pool (kMaxHands = 2), side by side 13.5 cm apart, the palms held 3 and
// 1.5 cm under the surface: each sample names its hand (ContactField::hand_ids) and is anchored
// to it (the named hand's joint + offset is where the sample is: how the haptic thread re-poses
// it), the deeper palm feels more, and when the tracker lists the hands the other way round (it
// may: hands are matched by id, not by slot) nothing changes - each hand's interpolation starts
// from its own previous pose, so no ghost sweeps across to the other hand's place (within the
// 15 cm teleport distance, a mix-up would sweep them through the pool in one frame). Measured:
// palms 239 / 177 Pa (1.35x; the palm reads 0.67 rho0 g per metre of depth, above), 240 / 172 Pa
// listed the other way; the fastest particle while the hands are held after the swap 0.29 m/s
// (the still hand's grooves settling: StillHandInStillWaterLetsItRest), held to 1 m/s. Fails when
// hands are paired by slot (the fastest particle 3.5 m/s after the swap) and when hand_ids are
// listed in the wrong order (every sample misplaced, the palms' order reversed).
struct TwoHandFigures {
  double palm[2] = {0, 0};  // Pa, mean over the frames and the palm's downward samples, hand id 7 / 9
  int palm_samples[2] = {0, 0};
  int misplaced = 0;        // samples not where their named hand's joint + offset puts them
  float max_speed = 0;      // m/s, fastest particle over the frames
};

// The flat hand with a forearm as thick as its palm (radius 12 mm instead of 30: as the still
// hand's below, so the palm's lower surface is the hand's lowest point).
HandFrame two_hands(float z7, float z9, bool swapped, std::uint64_t id) {
  HandFrame f = flat_hand({0.0f, -0.09f, z7}, id, 0);
  f.hands[0].joint(HandJoint::Elbow).radius = 0.012f;
  HandPose other = flat_hand({0.0f, 0.045f, z9}, id, 0).hands[0];
  other.joint(HandJoint::Elbow).radius = 0.012f;
  other.hand_id = 9;
  f.hand_count = 2;
  f.hands[1] = other;
  if (swapped) std::swap(f.hands[0], f.hands[1]);
  return f;
}

// Whether `cs` lies at its named hand's joint + offset in `f` (joint frames are the array's here).
bool anchored(const ContactSample& cs, const ContactField& field, const HandFrame& f) {
  for (int h = 0; h < f.hand_count; ++h) {
    const HandPose& hp = f.hands[static_cast<std::size_t>(h)];
    if (hp.hand_id != field.hand_ids[cs.hand]) continue;
    const Vec3f& j = hp.joints[cs.joint].position;
    return std::fabs(j.x + cs.offset.x - cs.position.x) < 1e-4f &&
           std::fabs(j.y + cs.offset.y - cs.position.y) < 1e-4f &&
           std::fabs(j.z + cs.offset.z - cs.position.z) < 1e-4f;
  }
  return false;
}

TEST(Hand, TwoHandsEachFeelTheirOwnPressure) {
  FluidConfig c = pool_config();
  c.max_particles = 4000;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  // 24 x 30 x 5 cm: room for two hands side by side
  ASSERT_FALSE(e->load_scene(box_pool(-0.12f, -0.15f, 0.12f, 0.15f, kDepth)));
  run(*e, 60);
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  const float surface = kFloor + kDepth, start = surface + 0.02f + 0.012f;
  std::uint64_t id = 0;
  HandFrame prev = two_hands(start, start, false, id);
  float z7 = start, z9 = start;
  const auto step = [&](bool swapped) {
    const HandFrame now = two_hands(z7, z9, swapped, ++id);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
  };
  while (z7 > surface - 0.03f + 0.012f || z9 > surface - 0.015f + 0.012f) {  // lowered at 0.1 m/s
    z7 = std::max(surface - 0.03f + 0.012f, z7 - static_cast<float>(0.1 * dt));
    z9 = std::max(surface - 0.015f + 0.012f, z9 - static_cast<float>(0.1 * dt));
    step(false);
  }
  const auto hold = [&](bool swapped) {
    TwoHandFigures r;
    for (int k = 0; k < 45; ++k) {
      step(swapped);
      r.max_speed = std::max(r.max_speed, st.max_speed);
      if (k < 18) continue;  // averaged over the last 0.3 s
      for (std::uint32_t q = 0; q < field.count; ++q) {
        const ContactSample& cs = field.samples[q];
        if (!anchored(cs, field, prev)) ++r.misplaced;
        // the palm's downward samples (the forearm's and the thumb's, on the wrist, left out)
        if (on_palm(cs) && cs.normal.z < -0.9f && cs.joint != static_cast<std::uint8_t>(HandJoint::Wrist)) {
          const int h = field.hand_ids[cs.hand] == 7 ? 0 : 1;
          r.palm[h] += cs.pressure;
          ++r.palm_samples[h];
        }
      }
    }
    for (int h = 0; h < 2; ++h) r.palm[h] /= std::max(r.palm_samples[h], 1);
    return r;
  };
  const TwoHandFigures in_order = hold(false), swapped = hold(true);
  std::printf("palm pressure, hand 7 (3 cm) / hand 9 (1.5 cm): listed in order %.0f / %.0f Pa, "
              "swapped %.0f / %.0f Pa; fastest particle %.3f / %.3f m/s; samples misplaced %d / %d\n",
              in_order.palm[0], in_order.palm[1], swapped.palm[0], swapped.palm[1], in_order.max_speed,
              swapped.max_speed, in_order.misplaced, swapped.misplaced);
  for (const TwoHandFigures& r : {in_order, swapped}) {
    EXPECT_EQ(r.misplaced, 0) << "every sample lies on the hand it names";
    EXPECT_GT(r.palm[1], 0.0) << "the shallower hand feels the fluid too";
    EXPECT_GT(r.palm[0], 1.2 * r.palm[1]) << "the deeper palm feels more";
  }
  for (int h = 0; h < 2; ++h) EXPECT_NEAR(swapped.palm[h], in_order.palm[h], 0.2 * in_order.palm[h]);
  EXPECT_LT(swapped.max_speed, 1.0f) << "m/s: no ghost swept across the pool";
}

// Thesis 6.2.1: the rendered pressure depends on the medium. A palm pressed 5.5 cm into an 8 cm
// pool at 0.8 m/s meets honey (tau = 0, alpha = 0.005: the most viscous preset) harder than
// runny cream (tau = 0.1, alpha = 0.01) and both much harder than water. (At slow presses,
// below ~0.5 m/s, the creams' elastic memory resists more than honey's viscosity: viscous stress
// grows with speed, the creams' stored deformation is capped by their yield.)
struct Medium {
  double force = 0;          // N, mean fluid force on the hand along +z while pressing
  double palm_pressure = 0;  // Pa, summed over palm samples, mean over those frames
};

Medium press_material(const Material& m) {
  Medium r;
  FluidConfig c = pool_config();
  c.max_particles = 6000;
  c.material = m;
  auto e = make_engine(c);
  if (!e) return r;
  constexpr float depth = 0.08f, surface = kFloor + depth, speed = 0.8f;
  Scene s = pool_scene();
  s.blocks[0].max.z = surface;
  EXPECT_FALSE(e->load_scene(s));
  run(*e, 20);
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  HandFrame prev = flat_hand({0.0f, 0.0f, surface + 0.02f}, 0, 0);
  int frames = 0;
  for (int k = 1;; ++k) {
    const float z = surface + 0.02f - speed * static_cast<float>(k * dt);
    if (z < surface - 0.055f) break;
    HandFrame now = flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
    if (z > surface - 0.005f) continue;
    ++frames;
    r.force += st.hand_force.z;
    for (std::uint32_t q = 0; q < field.count; ++q)
      if (on_palm(field.samples[q])) r.palm_pressure += field.samples[q].pressure;
  }
  r.force /= std::max(frames, 1);
  r.palm_pressure /= std::max(frames, 1);
  return r;
}

Medium press_preset(const char* name) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  EXPECT_TRUE(lib) << lib.error().message;
  if (!lib || lib->find(name) == nullptr) return {};
  return press_material(*lib->find(name));
}

TEST(Hand, PressureIsOrderedHoneyCreamWater) {
  const Medium honey = press_preset("honey");
  const Medium cream = press_preset("runny_cream");
  const Medium water = press_preset("water");
  std::printf("pressing at 0.8 m/s: honey %.1f N / %.0f Pa, cream %.1f N / %.0f Pa, water %.1f N / %.0f Pa\n",
              honey.force, honey.palm_pressure, cream.force, cream.palm_pressure, water.force,
              water.palm_pressure);
  EXPECT_GT(water.force, 0.0);
  EXPECT_GT(cream.force, 1.5 * water.force);
  EXPECT_GT(honey.force, 1.1 * cream.force);
  EXPECT_GT(water.palm_pressure, 0.0);
  EXPECT_GT(cream.palm_pressure, 1.5 * water.palm_pressure);
  // The issue asks for the order. With the closed hand (since handstill; the radial contact let
  // water into the hand) honey's palm pressure is 1.07 x cream's (the radial hand's was 1.44 x,
  // its pressures 0.12-0.25 of hydrostatic): part of honey's extra force is the no-slip hand's
  // shear, which the array-facing pressure does not carry (the forces keep 1.30 x).
  EXPECT_GT(honey.palm_pressure, 1.05 * cream.palm_pressure);
}

// Thesis fig. 6.7: "with a more plastic material, contact forces are smaller under the same user
// actions, which turn into lower rendered pressures". The same press into a clay pool: bonds that
// break at 0.1 m/s instead of 0.3 (the thesis' own plasticity, its hysteresis) and, further, a
// viscosity that yields at 900 Pa (clay_test's plastic clay) both lower the force on the hand and
// the palm's pressure.
TEST(Hand, PressureOnClayFallsWithItsPlasticity) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib && lib->find("clay"));
  Material clay = *lib->find("clay");
  clay.bond_off_speed = 0.3f;
  clay.yield_stress = 0.0f;
  const Medium stiff = press_material(clay);
  clay.bond_off_speed = 0.1f;
  const Medium breaking = press_material(clay);
  clay.yield_stress = 900.0f;
  const Medium plastic = press_material(clay);
  std::printf("pressing clay at 0.8 m/s: bonds off at 0.3 m/s %.1f N / %.0f Pa, at 0.1 m/s "
              "%.1f N / %.0f Pa, and yielding at 900 Pa %.1f N / %.0f Pa\n",
              stiff.force, stiff.palm_pressure, breaking.force, breaking.palm_pressure,
              plastic.force, plastic.palm_pressure);
  EXPECT_GT(stiff.force, 1.1 * breaking.force);
  EXPECT_GT(stiff.palm_pressure, 1.1 * breaking.palm_pressure);
  EXPECT_GT(breaking.force, 1.5 * plastic.force);
  EXPECT_GT(breaking.palm_pressure, 1.5 * plastic.palm_pressure);
}

// The lists between the fluid and the hand's ghosts hold at most max_neighbours entries; pairs
// beyond that neither push the fluid nor react on the hand, so an overflow is reported. The
// hand rests 2.5 cm deep in the pool for a few frames: with the default lists nothing
// overflows; ghosts 4 mm apart give a fluid particle more ghosts within h than its list holds;
// ghosts 4 cm apart in lists of 16 leave each fluid particle a few ghosts at most, but an
// immersed ghost finds about 30 fluid particles within h (its own list overflows).
FluidStats hand_in_pool(float ghost_spacing, int max_neighbours) {
  FluidConfig c = pool_config();
  c.hand.ghost_spacing = ghost_spacing;
  c.max_neighbours = max_neighbours;
  auto e = make_engine(c);
  FluidStats st;
  if (!e) return st;
  EXPECT_FALSE(e->load_scene(pool_scene()));
  static ContactField field;
  const HandFrame hand = flat_hand({0.0f, 0.0f, kFloor + kDepth - 0.025f}, 1, 0);
  for (int k = 0; k < 3; ++k) e->step_frame(hand, &hand, 1.0 / 90.0, field, st);
  std::printf("ghosts %.3f m apart, lists of %d: %d ghosts, ghost-list overflow %d, fluid-list "
              "overflow %d\n", ghost_spacing, max_neighbours, st.ghosts, st.ghost_list_overflow,
              st.neighbour_overflow);
  return st;
}

TEST(Hand, GhostListOverflowIsCounted) {
  const FluidStats fits = hand_in_pool(0.0f, 64);
  EXPECT_GT(fits.ghosts, 0);
  EXPECT_EQ(fits.ghost_list_overflow, 0);
  EXPECT_EQ(fits.neighbour_overflow, 0);
  const FluidStats dense = hand_in_pool(0.004f, 64);
  EXPECT_GT(dense.ghost_list_overflow, 0) << "fluid particles with more ghosts than their lists hold";
  EXPECT_EQ(dense.neighbour_overflow, 0);
  const FluidStats sparse = hand_in_pool(0.04f, 16);
  EXPECT_GT(sparse.ghost_list_overflow, 0) << "ghosts with more fluid particles than their lists hold";
  EXPECT_GT(sparse.neighbour_overflow, 0) << "the fluid's own lists of 16 overflow too";
}

// The contact field as the haptics re-pose it: each sample names the joint its ghost rides on
// and its offset in that joint's frame, so joint position + joint rotation x offset is the
// sample's position on the pose the field was computed for, its normal points straight out of
// the hand there, and the field carries that pose's capture time and frame id. The hand is
// tilted 30 degrees about x (joint frames no longer the array frame) and rests in the pool.
HandFrame tilted_hand(Vec3f palm, std::uint64_t frame_id, std::int64_t time_ns) {
  HandFrame f = flat_hand(palm, frame_id, time_ns);
  const float half = 0.5f * 30.0f * std::numbers::pi_v<float> / 180.0f;
  const float c = std::cos(2 * half), sn = std::sin(2 * half);
  for (JointPose& j : f.hands[0].joints) {
    if (!j.valid) continue;
    const float y = j.position.y - palm.y, z = j.position.z - palm.z;
    j.position = {j.position.x, palm.y + c * y - sn * z, palm.z + sn * y + c * z};
    j.orientation = {std::sin(half), 0.0f, 0.0f, std::cos(half)};
  }
  return f;
}

TEST(Hand, ContactSamplesAreAnchoredInTheirJointFramesAndStamped) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run(*e, 10);
  static ContactField field;
  FluidStats st;
  constexpr std::int64_t t0 = 5'000'000'000;
  const Vec3f palm{0.0f, 0.0f, kFloor + kDepth - 0.01f};
  HandFrame prev = tilted_hand(palm, 1, t0);
  int checked = 0, off_palm_joint = 0;
  float worst = 0;  // m, largest distance between a sample and its re-posed anchor
  float outward = 1;  // least share of a step along a sample's normal that leaves its capsule
  for (std::uint64_t k = 2; k <= 4; ++k) {
    const HandFrame now = tilted_hand(palm, k, t0 + static_cast<std::int64_t>(k) * 11'111'111);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    EXPECT_EQ(field.time_ns, now.capture_time_ns);
    EXPECT_EQ(field.hand_frame_id, now.frame_id);
    for (std::uint32_t q = 0; q < field.count; ++q) {
      const ContactSample& s = field.samples[q];
      ASSERT_LT(s.hand, field.hand_count);
      const JointPose& j = now.hands[s.hand].joints[s.joint];
      const Eigen::Vector3f at = to_eigen(j.position) + hand::joint_rotation(j) * to_eigen(s.offset);
      worst = std::max(worst, (at - to_eigen(s.position)).norm());
      // The normal is the outward normal of the capsule the sample lies on: a step along it
      // moves straight away from that capsule's axis.
      hand::HandCapsules caps;  // one hand in this scene
      hand::hand_capsules(now.hands[s.hand], caps);
      const Eigen::Vector3f p = to_eigen(s.position), n = to_eigen(s.normal);
      const hand::Capsule* own = nullptr;
      for (const hand::Capsule& cap : caps)
        if (cap.valid && (own == nullptr || std::fabs(hand::axis_distance(p, cap) - cap.radius) <
                                                std::fabs(hand::axis_distance(p, *own) - own->radius)))
          own = &cap;
      ASSERT_NE(own, nullptr);
      const float step = 1e-3f;
      outward = std::min(outward, (hand::axis_distance(p + step * n, *own) - hand::axis_distance(p, *own)) / step);
      off_palm_joint += s.joint != static_cast<std::uint8_t>(HandJoint::Palm);
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  EXPECT_GT(off_palm_joint, 0) << "samples on the fingers too";
  EXPECT_LT(worst, 1e-5f) << "joint + rotation x offset is where the sample is";
  std::printf("least outward share of a step along a sample normal %.4f\n", outward);
  EXPECT_GT(outward, 0.98f) << "normals point straight out of the tilted hand";
}

// A joint that jumps farther than teleport_distance between two tracker frames (tracking lost
// and found again) is placed at its new pose, not swept there: the fluid between the two poses
// must not feel a hand passing through it. The hand rests 2 cm deep at one end of a long pool,
// then is seen 30 cm away at the other end. Declared a teleport (the default 15 cm), the water
// halfway, 1.5 h and more from the hand before and after, barely stirs; declared a motion
// (teleport_distance 1 m), the hand crosses it within the frame and throws it aside.
double stirred_halfway(float teleport_distance) {
  FluidConfig c = pool_config();
  c.domain_min.y = -0.32f;
  c.domain_max.y = 0.32f;
  c.max_particles = 8000;
  c.hand.teleport_distance = teleport_distance;
  auto e = make_engine(c);
  if (!e) return 0;
  EXPECT_FALSE(e->load_scene(box_pool(-0.12f, -0.3f, 0.12f, 0.3f, kDepth)));
  static ContactField field;
  FluidStats st;
  // The hand's ghosts span y from palm - 0.041 to palm + 0.088 (little finger, thumb).
  const float z = kFloor + kDepth - 0.02f;
  const HandFrame before = flat_hand({0.0f, -0.15f, z}, 1, 0);
  for (int k = 0; k < 45; ++k) e->step_frame(before, &before, 1.0 / 90.0, field, st);
  const auto start = snapshot(*e);
  const HandFrame after = flat_hand({0.0f, 0.15f, z}, 2, 0);
  e->step_frame(after, &before, 1.0 / 90.0, field, st);
  const auto end = snapshot(*e);
  double fastest = 0;  // m/s, largest velocity change of the water halfway
                       // (y in [-0.03, 0.05]: 1.5 h from the old pose, 3 h from the new)
  for (std::size_t k = 0; k < start.id.size() && k < end.id.size(); ++k) {
    if (start.id[k] != end.id[k] || start.position[k].y < -0.03f || start.position[k].y > 0.05f) continue;
    // The change in this frame: the pool still sloshes from the hand's arrival 45 frames before.
    const Vec3f& a = start.velocity[k];
    const Vec3f& b = end.velocity[k];
    const float dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
    fastest = std::max(fastest, static_cast<double>(std::sqrt(dx * dx + dy * dy + dz * dz)));
  }
  std::printf("30 cm jump, teleport distance %.2f m: largest velocity change halfway %.3f m/s\n",
              teleport_distance, fastest);
  return fastest;
}

TEST(Hand, TeleportPlacesTheHandInsteadOfSweepingIt) {
  const double teleported = stirred_halfway(0.15f);
  const double swept = stirred_halfway(1.0f);
  EXPECT_LT(teleported, 0.25 * swept);
}

// Steps the pool with a scripted hand; checks every frame that nothing became non-finite, that
// no particle escaped the closed box, and that speeds stay within the clamp.
void run_scripted(FluidEngine& e, int frames, const auto& hand_at) {
  static ContactField field;
  FluidStats st;
  const int n0 = e.particle_count();
  HandFrame prev = hand_at(0);
  for (int k = 1; k <= frames; ++k) {
    HandFrame now = hand_at(k);
    e.step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    ASSERT_EQ(st.non_finite, 0) << "frame " << k;
    ASSERT_EQ(st.particles, n0) << "frame " << k;
    ASSERT_LE(st.max_speed, e.config().max_speed * 1.001f) << "frame " << k;
    ASSERT_TRUE(std::isfinite(st.hand_force.x) && std::isfinite(st.hand_force.z));
    for (std::uint32_t s = 0; s < field.count; ++s) ASSERT_TRUE(std::isfinite(field.samples[s].pressure));
  }
  const auto snap = snapshot(e);
  EXPECT_TRUE(all_finite(snap));
  // Afterwards the pool calms down again.
  const FluidStats calm = run(e, 90);
  EXPECT_LT(calm.max_speed, 1.0f);
  EXPECT_EQ(calm.particles, n0);
}

TEST(Hand, TeleportIntoTheFluidIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 60, [](int k) {
    // Above the box until frame 10, then suddenly inside the pool, then back and forth.
    const float z = k < 10 ? 0.30f : (k / 10) % 2 ? kFloor + 0.02f : 0.30f;
    return flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
  });
}

TEST(Hand, SweepAtTenMetresPerSecondIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 45, [](int k) {
    // 10 m/s along y through the pool, bouncing between y = +-0.1 (11 cm per frame).
    const float travel = 10.0f * static_cast<float>(k) / 90.0f;
    const float phase = std::fmod(travel, 0.4f);
    const float y = phase < 0.2f ? -0.1f + phase : 0.3f - phase;
    return flat_hand({0.0f, y, kFloor + 0.03f}, static_cast<std::uint64_t>(k), 0);
  });
}

TEST(Hand, LeavingTheDomainIsSafe) {
  auto e = make_engine(pool_config());
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  static ContactField field;
  FluidStats st;
  HandFrame far = flat_hand({0.0f, 0.0f, 2.0f}, 1, 0);  // far outside the domain
  e->step_frame(far, nullptr, 1.0 / 90.0, field, st);
  EXPECT_EQ(field.count, 0u);
  EXPECT_EQ(st.non_finite, 0);
  run_scripted(*e, 40, [](int k) {
    const float z = k < 20 ? kFloor + 0.03f : 2.0f;  // in the pool, then gone
    return flat_hand({0.0f, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
  });
}

// The same robustness in honey with the no-slip hand (viscous coupling): the hand sweeping at
// 10 m/s through it, then gone, leaves a pool that settles.
TEST(Hand, NoSlipSweepThroughHoneyAtTenMetresPerSecondIsSafe) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib);
  FluidConfig c = pool_config();
  c.material = *lib->find("honey");
  ASSERT_TRUE(c.hand.viscous_coupling);
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  run_scripted(*e, 45, [](int k) {
    const float travel = 10.0f * static_cast<float>(k) / 90.0f;
    const float phase = std::fmod(travel, 0.4f);
    const float y = phase < 0.2f ? -0.1f + phase : 0.3f - phase;
    return flat_hand({0.0f, y, kFloor + 0.03f}, static_cast<std::uint64_t>(k), 0);
  });
}

// Viscous coupling makes the hand no-slip in a viscous medium: the fluid's drag on a palm moving
// through honey then grows with speed like viscous drag (here about in proportion), while
// without it only the fluid's pressure on the hand's leading side resists, which grows about half
// as fast (no-slip 4.9 x for five times the speed, without coupling 2.5 x; the radial hand, porous,
// 5.4 x and 2.4 x). Water has no conformation constraints: coupling changes nothing.
double drag(const char* preset, bool coupling, float speed) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  EXPECT_TRUE(lib);
  if (!lib || lib->find(preset) == nullptr) return 0;
  FluidConfig c = pool_config();
  c.material = *lib->find(preset);
  c.hand.viscous_coupling = coupling;
  auto e = make_engine(c);
  if (!e) return 0;
  constexpr float depth = 0.04f;
  EXPECT_FALSE(e->load_scene(box_pool(-0.14f, -0.08f, 0.14f, 0.08f, depth)));
  run(*e, 10);
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  const float z = kFloor + depth - 0.015f;  // palm 1.5 cm deep, moving along +x
  HandFrame prev = flat_hand({-0.06f, 0.0f, z}, 0, 0);
  double fx = 0;
  for (int k = 1; k <= 20; ++k) {
    const float x = -0.06f + speed * static_cast<float>(k * dt);
    HandFrame now = flat_hand({x, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
    if (k > 5) fx += st.hand_force.x;
  }
  return -fx / 15.0;  // along -x: against the motion
}

TEST(Hand, NoSlipHandFeelsViscousDragInHoney) {
  const double slow = drag("honey", true, 0.2f), fast = drag("honey", true, 1.0f);
  const double slow_slip = drag("honey", false, 0.2f), fast_slip = drag("honey", false, 1.0f);
  const double water_slow = drag("water", true, 0.2f), water_slip = drag("water", false, 0.2f);
  std::printf("drag in honey at 0.2 / 1.0 m/s: no-slip %.2f / %.2f N, without coupling %.2f / %.2f N;"
              " water at 0.2 m/s %.3f / %.3f N\n", slow, fast, slow_slip, fast_slip, water_slow, water_slip);
  EXPECT_GT(slow, 0.0);
  EXPECT_GT(fast / slow, 3.5) << "viscous drag grows with speed";
  EXPECT_GT(fast / slow, 1.5 * (fast_slip / slow_slip)) << "the coupling is what makes it viscous";
  EXPECT_GT(fast, 2.0 * fast_slip);
  EXPECT_DOUBLE_EQ(water_slow, water_slip);
}


// Newton's third law between the hand and the fluid: with no gravity and nothing else in reach,
// the momentum a free-floating block gains while the hand sweeps through it is the impulse the
// fluid gives back to the hand (the summed hand force times the frame time).
struct MomentumBalance {
  double fluid = 0;  // kg m/s, the fluid's momentum change along x
  double hand = 0;   // kg m/s, the summed impulse of the fluid on the hand along x
};

struct Sweep {
  bool density_coupling = true;
  float ghost_spacing = 0;  // m (0: the particle spacing)
  int max_neighbours = 64;  // list capacity (fluid->fluid and fluid->ghost)
  float block_x = -0.02f;   // m, the block's back face (the fingertips start at x = -0.035)
};

MomentumBalance sweep_through_free_block(const Material& m, const Sweep& sw) {
  FluidConfig c;
  c.max_particles = 2000;
  c.max_neighbours = sw.max_neighbours;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.7f, -0.5f, -0.3f};  // room for the spray the hand throws
  c.domain_max = {0.5f, 0.5f, 0.7f};
  c.gravity = {0, 0, 0};
  c.material = m;
  c.hand.density_coupling = sw.density_coupling;
  c.hand.ghost_spacing = sw.ghost_spacing;
  MomentumBalance r;
  auto e = make_engine(c);
  if (!e) return r;
  Scene s;  // no container: a 12 x 12 x 8 cm block floats in front of the hand
  s.blocks.push_back({{sw.block_x, -0.06f, 0.15f}, {sw.block_x + 0.12f, 0.06f, 0.23f}});
  EXPECT_FALSE(e->load_scene(s));
  const FluidStats settled = run(*e, 5);
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  constexpr float speed = 0.4f, x0 = -0.15f, z = 0.19f;  // the palm at mid-height, along +x
  HandFrame prev = flat_hand({x0, 0.0f, z}, 0, 0);
  for (int k = 1; k <= 30; ++k) {
    const float x = x0 + speed * static_cast<float>(k * dt);
    HandFrame now = flat_hand({x, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
    EXPECT_EQ(st.removed, 0) << "a particle leaving the domain takes momentum with it; frame " << k;
    r.hand += st.hand_force.x * dt;
  }
  r.fluid = st.momentum.x - settled.momentum.x;
  std::printf("%s (density coupling %d, ghost spacing %.3f m, lists %d, block from x = %.2f m): "
              "fluid momentum change %+.5f kg m/s, impulse on the hand %+.5f kg m/s\n",
              m.name.c_str(), sw.density_coupling ? 1 : 0, sw.ghost_spacing, sw.max_neighbours,
              sw.block_x, r.fluid, r.hand);
  return r;
}

TEST(Hand, ImpulseOnTheHandIsTheMomentumTheFluidGains) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib);
  const Material& water = *lib->find("water");

  // Contact only; with the ghosts' boundary density (the default); the fingers starting 2.5 cm
  // deep in the block (many ghosts within h of one particle); and ghosts so dense that a fluid
  // particle finds more of them within h than its 32-entry list holds.
  for (const Sweep sw : {Sweep{.density_coupling = false}, Sweep{}, Sweep{.block_x = -0.06f},
                         Sweep{.ghost_spacing = 0.004f, .max_neighbours = 32}}) {
    const MomentumBalance b = sweep_through_free_block(water, sw);
    EXPECT_GT(b.fluid, 0.005) << "the hand pushes the block along +x";
    EXPECT_NEAR(b.hand, -b.fluid, 0.005 * b.fluid);
  }
}

// The same balance in honey with the no-slip hand (viscous coupling on): the ghosts also take
// part in the conformation constraints, whose DC-PBD corrections must then sum to zero over
// each constraint's particles, ghosts included: with the preset's plain Jacobi velocity sweeps
// and with them Chebyshev-accelerated (the ghosts' reaction is taken from the final mixed
// multipliers). The balance is exact up to float sums (measured 6e-5 of the gain), so it is
// held to 0.1 %: the ghosts' reaction to the velocity phase alone is 0.4 % of it.
TEST(Hand, ImpulseOnTheNoSlipHandIsTheMomentumHoneyGains) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib);
  Material honey = *lib->find("honey");
  for (const float rho : {honey.chebyshev, kMaxChebyshev}) {
    honey.chebyshev = rho;
    const MomentumBalance b = sweep_through_free_block(honey, Sweep{});
    EXPECT_GT(b.fluid, 0.05) << "the hand drags the block along +x (rho " << rho << ")";
    EXPECT_NEAR(b.hand, -b.fluid, 0.001 * b.fluid) << "rho " << rho;
  }
}

// Newton's laws at the domain's face: the pool's floor is the domain's bottom face and the
// hand lies flat under it, the top of its palm 3 mm below the floor and its thicker forearm
// through the floor into the water's bottom centimetre. The water at rest is carried by the floor
// and the forearm together: their pushes add up to its weight. A ghost outside the domain is dead:
// the fluid never lists it (the sort drops points outside the domain), so it must not push back
// either. (Kept alive, those next to the forearm's ghosts inside the domain got huge Akinci
// volumes - the ghost grid holds only the few neighbours inside - and their reaction to the
// water's pressure pushed the hand down with 14 kN, the floor unchanged.)
TEST(Hand, FloorAndForearmThroughItCarryThePoolsWeight) {
  FluidConfig c = pool_config();
  c.domain_min.z = kFloor;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  ASSERT_FALSE(e->load_scene(pool_scene()));
  static ContactField field;
  FluidStats st;
  const float palm_radius = 0.012f;
  const HandFrame hand = flat_hand({0.0f, 0.0f, kFloor - 0.003f - palm_radius}, 1, 0);
  for (int k = 0; k < 60; ++k) e->step_frame(hand, &hand, 1.0 / 90.0, field, st);  // settle
  double floor = 0, forearm = 0;  // N, pushes up, mean over half a second
  for (int k = 0; k < 45; ++k) {
    e->step_frame(hand, &hand, 1.0 / 90.0, field, st);
    ASSERT_EQ(st.non_finite, 0);
    floor -= st.wall_force.z / 45.0;
    forearm -= st.hand_force.z / 45.0;
  }
  const double weight = e->particle_mass() * st.particles * 9.81;
  std::printf("floor %.3f N + forearm %.3f N against the water's weight %.3f N\n", floor, forearm,
              weight);
  EXPECT_GT(forearm, 0.01 * weight) << "the forearm carries some of it";
  EXPECT_NEAR(floor + forearm, weight, 0.005 * weight);
}

// The no-slip hand carries honey at its own speed, but the fluid sees a ghost move at most
// hand.max_speed (pose_ghosts: a faster ghost starts its substep nearer its end, as if it had
// moved earlier), which bounds what a tracking jump short of a teleport can fling through the
// viscous coupling. A 6 x 6 x 2 cm honey slab rests on the back of the still flat hand for
// 10 frames; then the hand slides along its fingers at 1 m/s under it for 12 frames (13 cm, the
// slab stays over the hand). The slab's mean velocity: 1.003 m/s with the default clamp (20 m/s);
// with hand.max_speed 0.2 m/s the hand slides under it and it lags at 0.28 m/s (the capsules'
// rings still bump it along). (Without the clamp: carried at 1.003 m/s both times.)
float carried_by_the_hand(float hand_max_speed) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  EXPECT_TRUE(lib && lib->find("honey") != nullptr);
  if (!lib || lib->find("honey") == nullptr) return 0;
  FluidConfig c;
  c.max_particles = 200;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.6f, -0.3f, -0.2f};
  c.domain_max = {0.6f, 0.3f, 0.4f};
  c.material = *lib->find("honey");
  c.hand.max_speed = hand_max_speed;
  auto e = make_engine(c);
  if (!e) return 0;
  constexpr float z = 0.1f, top = z + 0.012f;  // the palm's centre line and top
  Scene s;  // no walls: the slab lies on the hand
  s.blocks.push_back({{-0.03f, -0.03f, top + 0.002f}, {0.03f, 0.03f, top + 0.022f}});
  EXPECT_FALSE(e->load_scene(s));
  static ContactField field;
  FluidStats st;
  HandFrame prev = flat_hand({0.0f, 0.0f, z}, 0, 0);
  for (int k = 1; k <= 22; ++k) {
    const float x = k <= 10 ? 0.0f : 1.0f * static_cast<float>(k - 10) / 90.0f;
    HandFrame now = flat_hand({x, 0.0f, z}, static_cast<std::uint64_t>(k), 0);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    EXPECT_EQ(st.non_finite, 0);
  }
  EXPECT_EQ(st.particles, 72);
  return st.momentum.x / (e->particle_mass() * static_cast<float>(st.particles));
}

TEST(Hand, NoSlipHandFasterThanItsSpeedClampSlidesUnderHoney) {
  const float free = carried_by_the_hand(20.0f), clamped = carried_by_the_hand(0.2f);
  std::printf("honey on the hand sliding at 1 m/s: carried at %.3f m/s, with hand.max_speed 0.2 m/s "
              "at %.3f m/s\n", free, clamped);
  EXPECT_NEAR(free, 1.0f, 0.05f) << "no-slip";
  EXPECT_LT(clamped, 0.5f) << "the fluid sees the hand at 0.2 m/s";
}


// A still hand in a pool (thesis 6.2.1: the pressure rendered on the skin is the fluid's on the
// hand): does it feel what hydrostatics says? The flat hand with its forearm as thick as its palm
// (radius 12 mm instead of 30), so the palm's lower surface is the hand's lowest point and an 8 cm
// pool holds it 4 cm deep with room under it.
HandFrame still_hand(Vec3f palm, std::uint64_t frame_id) {
  HandFrame f = flat_hand(palm, frame_id, 0);
  f.hands[0].joint(HandJoint::Elbow).radius = 0.012f;
  return f;
}
constexpr float kPalmRadius = 0.011f;  // m, the metacarpals' radius: palm centre line to its lower surface
// The still-hand pool: 25 x 20 x 8 cm (4,000 particles), the palm over its middle, the fingertips
// 2.8 cm from its +x wall, the forearm through its -x wall.
constexpr float kStillX0 = -0.10f, kStillX1 = 0.15f, kStillY0 = -0.08f, kStillY1 = 0.12f;
constexpr float kStillDepth = 0.08f;
constexpr float kStillArea = (kStillX1 - kStillX0) * (kStillY1 - kStillY0);  // m^2

// Volume of the hand's capsules (their union: the ghosts sit on its surface) inside the pool's
// walls and below z = surface, counted on a 1 mm grid.
double submerged_volume(const HandFrame& f, float surface) {
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  const double step = 0.001;
  const double zc = f.hands[0].joint(HandJoint::Palm).position.z;
  long inside = 0;
  for (double x = kStillX0 + 0.5 * step; x < kStillX1; x += step)
    for (double y = kStillY0 + 0.5 * step; y < kStillY1; y += step)
      for (double z = zc - 0.0125 + 0.5 * step; z < std::min<double>(surface, zc + 0.0125); z += step) {
        const Eigen::Vector3f p(static_cast<float>(x), static_cast<float>(y), static_cast<float>(z));
        for (const hand::Capsule& c : caps)
          if (c.valid && hand::axis_distance(p, c) < c.radius) {
            ++inside;
            break;
          }
      }
  return static_cast<double>(inside) * step * step * step;
}

// The free surface from the particles: the 95th percentile of z of the particles beyond the
// fingertips (x > 13 cm) or beside the little finger (y < -5 cm), plus half a spacing (a layer
// of particles carries the fluid up to d/2 above their centres).
double free_surface(const ParticleSnapshot& s, float d) {
  std::vector<float> z;
  for (const Vec3f& p : s.position)
    if (p.x > 0.13f || p.y < -0.05f) z.push_back(p.z);
  if (z.empty()) return 0;
  std::sort(z.begin(), z.end());
  return z[static_cast<std::size_t>(0.95 * static_cast<double>(z.size() - 1))] + 0.5 * d;
}

// Particles inside the hand's capsules.
int particles_inside(const ParticleSnapshot& s, const HandFrame& f) {
  hand::HandCapsules caps;
  hand::hand_capsules(f.hands[0], caps);
  int inside = 0;
  for (const Vec3f& q : s.position)
    for (const hand::Capsule& c : caps)
      if (c.valid && hand::axis_distance(to_eigen(q), c) < c.radius) {
        ++inside;
        break;
      }
  return inside;
}

// The nearest point of the hand's surface (its capsules' union) to p: distance (negative inside)
// and the outward normal of the capsule there.
struct SurfacePoint {
  float distance = 1e9f;  // m
  Eigen::Vector3f normal = Eigen::Vector3f::Zero();
};
SurfacePoint nearest_surface(const Eigen::Vector3f& p, const hand::HandCapsules& caps) {
  SurfacePoint out;
  for (const hand::Capsule& c : caps) {
    if (!c.valid) continue;
    const Eigen::Vector3f ab = c.b - c.a;
    const float t = std::clamp((p - c.a).dot(ab) / std::max(ab.squaredNorm(), 1e-12f), 0.0f, 1.0f);
    const Eigen::Vector3f r = p - (c.a + t * ab);
    const float d = r.norm() - c.radius;
    if (d < out.distance) {
      out.distance = d;
      out.normal = r / std::max(r.norm(), 1e-9f);
    }
  }
  return out;
}

// Means over the held frames that are averaged.
struct HeldFigures {
  double depth = 0;          // m, the palm's lower surface below the free surface
  double rise = 0;           // m, the free surface's rise since before the hand came in
  double force = 0;          // N, st.hand_force.z
  double floor_load = 0;     // N, -st.wall_force.z: the fluid's weight plus what the hand pushes down
  double weight = 0;         // N, the fluid's weight
  double archimedes = 0;     // N, rho0 g V, V of the hand's capsules under the surface
  double displaced = 0;      // N, rho0 g A rise: the weight of the water the level says it displaces
  double palm = 0;           // Pa, mean pressure of the palm's downward samples (n.z < -0.9)
  double palm_expected = 0;  // Pa, rho0 g (surface - z) over the same samples
  double fluct = 0;          // std / mean over the frames of that palm mean
  double jump = 0;           // largest change between consecutive frames / mean
  double sample_fluct = 0;   // median over the downward samples of their own std / mean
  int inside = 0;            // particles inside the hand at the end of the hold
  // Over the averaged frames: the fastest particle within 2 cm of the hand's surface, and the
  // fastest motion away from / towards it (along the surface's normal) within 1 cm of it.
  double near_max = 0, away_max = 0, towards_max = 0;  // m/s
};

// Adds one frame's particles near the hand to h's near_max, away_max and towards_max.
void near_hand_speeds(const ParticleSnapshot& s, const hand::HandCapsules& caps, HeldFigures& h) {
  for (std::size_t i = 0; i < s.position.size(); ++i) {
    const SurfacePoint q = nearest_surface(to_eigen(s.position[i]), caps);
    if (q.distance > 0.02f) continue;
    const Eigen::Vector3f v = to_eigen(s.velocity[i]);
    h.near_max = std::max<double>(h.near_max, v.norm());
    if (q.distance > 0.01f) continue;
    const double vn = v.dot(q.normal);
    h.away_max = std::max(h.away_max, vn);
    h.towards_max = std::max(h.towards_max, -vn);
  }
}

// The palm's downward samples over the averaged frames of a hold: their mean pressure per frame,
// and each sample's own series (keyed by its joint and offset; a frame it was missing from counts
// as no pressure).
struct PalmSeries {
  std::vector<double> mean;      // Pa, per frame
  double expected = 0;           // Pa, rho0 g (surface - z) over the same samples, summed over frames
  std::map<std::tuple<int, int, int, int>, std::vector<double>> per_sample;
};

// Adds one frame's field to the series; `level` is the free surface in that frame.
void record_palm(const ContactField& field, double level, double rho0_g, PalmSeries& s) {
  double p = 0, pe = 0;
  int n = 0;
  for (std::uint32_t q = 0; q < field.count; ++q) {
    const ContactSample& cs = field.samples[q];
    if (!on_palm(cs) || cs.normal.z > -0.9f || cs.joint == static_cast<std::uint8_t>(HandJoint::Wrist))
      continue;  // the palm's downward samples (the forearm's and the thumb's, on the wrist, left out)
    p += cs.pressure;
    pe += rho0_g * (level - cs.position.z);
    ++n;
    std::vector<double>& v = s.per_sample[{cs.joint, static_cast<int>(std::lround(cs.offset.x * 1e4f)),
                                           static_cast<int>(std::lround(cs.offset.y * 1e4f)),
                                           static_cast<int>(std::lround(cs.offset.z * 1e4f))}];
    v.resize(s.mean.size(), 0.0);
    v.push_back(cs.pressure);
  }
  s.mean.push_back(n > 0 ? p / n : 0);
  s.expected += n > 0 ? pe / n : 0;
}

// The series' mean, expected value and fluctuations into h (palm, palm_expected, fluct, jump,
// sample_fluct).
void palm_statistics(PalmSeries& s, HeldFigures& h) {
  const double cnt = static_cast<double>(std::max<std::size_t>(s.mean.size(), 1));
  h.palm_expected = s.expected / cnt;
  for (const double v : s.mean) h.palm += v / cnt;
  for (const double v : s.mean) h.fluct += (v - h.palm) * (v - h.palm) / cnt;
  h.fluct = std::sqrt(h.fluct) / h.palm;
  for (std::size_t k = 1; k < s.mean.size(); ++k)
    h.jump = std::max(h.jump, std::fabs(s.mean[k] - s.mean[k - 1]) / h.palm);
  std::vector<double> rel;
  for (auto& [key, v] : s.per_sample) {
    v.resize(s.mean.size(), 0.0);
    double mean = 0, var = 0;
    for (const double x : v) mean += x / cnt;
    for (const double x : v) var += (x - mean) * (x - mean) / cnt;
    if (mean > 0) rel.push_back(std::sqrt(var) / mean);
  }
  std::sort(rel.begin(), rel.end());
  h.sample_fluct = rel.empty() ? 0 : rel[rel.size() / 2];
}

void print_held(const FluidConfig& c, const HeldFigures& h, double volume) {
  std::printf("%s, %d substeps%s%s: D %.1f mm (level up %.2f mm): hand %.3f N, floor - weight %.3f N, "
              "rho0 g A rise %.3f N, rho0 g V_capsules %.3f N (V %.0f cm^3); palm %.0f Pa vs "
              "rho0 g depth %.0f Pa (%.3f); frame to frame std/mean %.3f, largest jump %.3f, per "
              "sample %.3f; %d particles inside the hand; near it fastest %.3f m/s, away %.3f, "
              "towards %.3f m/s\n",
              c.material.name.c_str(), c.material.substeps, c.hand.density_coupling ? "" : ", contact only",
              c.hand.inelastic_contact ? ", inelastic" : "",
              1e3 * h.depth, 1e3 * h.rise, h.force, h.floor_load - h.weight, h.displaced, h.archimedes,
              1e6 * volume, h.palm, h.palm_expected, h.palm / h.palm_expected, h.fluct, h.jump,
              h.sample_fluct, h.inside, h.near_max, h.away_max, h.towards_max);
}

// Settles the pool, lowers the hand at 0.1 m/s from 1 cm above the surface to each of `depths`
// (its palm's lower surface below the settled surface; the water then rises around it) in turn,
// holds it `hold` s at each and averages the hold's last `average` s.
std::vector<HeldFigures> hold_still(FluidConfig c, const std::vector<float>& depths, double hold,
                                    double average) {
  std::vector<HeldFigures> out;
  c.max_particles = 4000;
  auto e = make_engine(c);
  if (!e) return out;
  EXPECT_FALSE(e->load_scene(box_pool(kStillX0, kStillY0, kStillX1, kStillY1, kStillDepth)));
  run(*e, 45);
  const float d = c.particle_spacing;
  const double surface0 = free_surface(snapshot(*e), d);
  const double rho0 = c.material.rest_density, g = 9.81;
  static ContactField field;
  FluidStats st;
  const double dt = 1.0 / 90.0;
  float z = static_cast<float>(surface0) + 0.01f + kPalmRadius;  // the palm's centre line
  std::uint64_t id = 0;
  HandFrame prev = still_hand({0, 0, z}, id);
  const auto step = [&] {
    const HandFrame now = still_hand({0, 0, z}, ++id);
    e->step_frame(now, &prev, dt, field, st);
    prev = now;
  };
  for (const float depth : depths) {
    const float target = static_cast<float>(surface0) - depth + kPalmRadius;
    while (z > target) {
      z = std::max(target, z - static_cast<float>(0.1 * dt));
      step();
    }
    const int frames = static_cast<int>(hold * 90), averaged = static_cast<int>(average * 90);
    HeldFigures h;
    double surface = 0;
    PalmSeries palm;
    hand::HandCapsules caps;
    hand::hand_capsules(prev.hands[0], caps);
    for (int k = 0; k < frames; ++k) {
      step();
      EXPECT_EQ(st.non_finite, 0);
      if (k < frames - averaged) continue;
      const ParticleSnapshot now = snapshot(*e);
      const double level = free_surface(now, d);
      near_hand_speeds(now, caps, h);
      surface += level;
      h.force += st.hand_force.z;
      h.floor_load -= st.wall_force.z;
      record_palm(field, level, rho0 * g, palm);
    }
    const double cnt = static_cast<double>(std::max<std::size_t>(palm.mean.size(), 1));
    surface /= cnt;
    h.force /= cnt;
    h.floor_load /= cnt;
    palm_statistics(palm, h);
    h.depth = surface - (z - kPalmRadius);
    h.rise = surface - surface0;
    h.weight = e->particle_mass() * st.particles * g;
    const double volume = submerged_volume(prev, static_cast<float>(surface));
    h.archimedes = rho0 * g * volume;
    h.displaced = rho0 * g * kStillArea * h.rise;
    h.inside = particles_inside(snapshot(*e), prev);
    print_held(c, h, volume);
    out.push_back(h);
  }
  return out;
}

FluidConfig still_water(bool density_coupling) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  EXPECT_TRUE(lib && lib->find("water") != nullptr);
  FluidConfig c = pool_config();
  if (lib && lib->find("water") != nullptr) c.material = *lib->find("water");
  c.hand.density_coupling = density_coupling;
  // the default (hand.closed_contact): radially the hand lets the water in (bench/RESULTS.md)
  return c;
}

// Archimedes: the hand held still and level 2 and 3 cm deep (then about 2.6 and 3.6 cm: the water
// rises around it) is pushed up by the weight of the water it displaces. The pool's floor then
// carries the water's weight plus the hand's push on the water (Newton: 0-2.2 % off over these
// 0.6 s of a ringing pool, measured); the level rise reads that displaced weight to +8..+17 %
// at 11 depths from 2.2 to 4.2 cm (the level is read from the particles' top layer, 1 cm apart:
// 1 mm of level is 0.5 N here), so it is held to -5 %..+30 %. The fluid stays outside the hand.
// The ghosts' boundary density holds the water 7 mm off the palm instead of d/2 = 5 mm, so the
// hand displaces 1.33-1.45 times its capsules' volume (printed, not asserted: bench/RESULTS.md).
// Fails with the hand's reaction scaled by 0.8 (Newton) or taken from one substep of the frame
// (both), and with the radial contact (`hand.closed_contact` off: about 100 particles inside the hand).
TEST(Hand, StillHandInWaterFeelsArchimedesBuoyancy) {
  const std::vector<HeldFigures> held = hold_still(still_water(true), {0.02f, 0.03f}, 1.2, 0.6);
  ASSERT_EQ(held.size(), 2u);
  for (const HeldFigures& h : held) {
    EXPECT_EQ(h.inside, 0) << "the water stays outside the hand";
    EXPECT_GT(h.rise, 0.002) << "the level rises around the hand";
    EXPECT_NEAR(h.floor_load - h.weight, h.force, 0.05 * h.force) << "the floor carries the hand's push";
    EXPECT_GT(h.force, 0.95 * h.displaced) << "the weight of the water it displaces";
    EXPECT_LT(h.force, 1.30 * h.displaced) << "the weight of the water it displaces";
  }
}

// The palm's pressure is the water's: p = rho0 g (surface - z) at each downward palm sample,
// growing with depth at rho0 g. The slope is fitted (least squares) over five depths 5 mm apart:
// the palm's reading moves +-5 % with a 1 cm period in depth (the lattice under the palm fits or
// not), which a slope between two depths 1.5 cm apart took for the slope (0.67 against the fit's
// 0.91, contact only with the inelastic contact). The reading (HandGhosts::contact_field, since
// branch handread): a patch's force over its area, each ghost's area its share of the hand's
// surface (the capsules' union; their nominal areas counted the overlaps under the palm about
// 1.4 times). With the ghosts' boundary density (on by default) the palm feels 0.88-0.96 of rho0
// g depth at 2.7-4.6 cm, slope 0.84 rho0 g (each ghost alone, nominal areas: 0.69-0.76, slope
// 0.67: each push is shared by every ghost within h, both layers of an overlap too); held to
// 0.85-1.25 and a slope of 0.75-1.25 rho0 g. With contact only (no boundary density: every push
// is the one-sided contact at the nearest ghost's plane) 0.86-0.95 at 2.4-4.3 cm, slope 0.93
// (each ghost alone 0.86-0.97, 0.91; 1.06-1.12 and 1.06 before the inelastic contact, whose kicks
// the palm also felt); held to 0.85-1.35, slope 0.75-1.25. (The contact-only water pushes the
// palm with less: its force on a 7 x 5 cm patch of the palm over that area is 0.73-0.98 of rho0 g
// depth, the hand's 1.7 N against its capsules' 2.4 N of Archimedes; wider patches, 1.5 and 2 x
// the spacing, read it 0.82-0.90 and fail the bound.)
// Fails with the radial contact (`hand.closed_contact` off; contact only: the hand fills with water, 5-7 Pa;
// with the boundary density: 58-81 Pa at 2.5-4.4 cm, 0.12-0.25 of rho0 g depth, slope 0.06;
// figures of the per-ghost reading) and with the reading of branch handread undone (the coupled palm).
TEST(Hand, PalmPressureIsHydrostatic) {
  const double rho_g = 1000.0 * 9.81;
  for (const bool density : {false, true}) {
    const std::vector<HeldFigures> held =
        hold_still(still_water(density), {0.02f, 0.025f, 0.03f, 0.035f, 0.04f}, 1.2, 0.6);
    ASSERT_EQ(held.size(), 5u);
    double sd = 0, sp = 0, sdd = 0, sdp = 0;  // least squares: palm = a + slope depth
    for (const HeldFigures& h : held) {
      sd += h.depth, sp += h.palm, sdd += h.depth * h.depth, sdp += h.depth * h.palm;
    }
    const double slope = (5 * sdp - sd * sp) / (5 * sdd - sd * sd);
    std::printf("palm pressure against depth: slope %.0f Pa/m = %.3f rho0 g (density coupling %d)\n",
                slope, slope / rho_g, density ? 1 : 0);
    for (const HeldFigures& h : held) EXPECT_EQ(h.inside, 0);
    if (!density) {
      for (const HeldFigures& h : held) {
        EXPECT_GT(h.palm, 0.85 * h.palm_expected);
        EXPECT_LT(h.palm, 1.35 * h.palm_expected);
      }
      EXPECT_NEAR(slope / rho_g, 1.0, 0.25);
    } else {
      for (const HeldFigures& h : held) {
        EXPECT_GT(h.palm, 0.85 * h.palm_expected);
        EXPECT_LT(h.palm, 1.25 * h.palm_expected);
      }
      EXPECT_NEAR(slope / rho_g, 1.0, 0.25);
    }
  }
}

// A still hand in still water lets the water rest (thesis 6.2.1: the skin is given the water's
// pressure, not the hand's own noise), with the inelastic contact (`hand.inelastic_contact`,
// the default: its pushes add no more velocity than stops a particle's approach). Held 2.7 / 4.1 cm
// deep (targets 2 / 3.5 cm; the level rises around it), figures over 0.5-1.5 s after it stopped
// (bench/RESULTS.md, handbounce). Inelastic: within 1 cm of the hand particles move away from it
// at up to 0.15 / 0.18 m/s and towards it at 0.26 / 0.27 (the first layer settling into the
// grooves between the capsules, where the nearest ghost's plane lets it ~2 mm nearer), the
// fastest within 2 cm 0.32 / 0.34 m/s, the palm's mean pressure 0.033 / 0.044 (std / mean)
// frame to frame (0.042 / 0.050 with each ghost read alone, before branch handread). PBD's
// u = dx / dt (the option off, the default before stop 25): away 0.71 / 0.88 m/s (R / dt
// = 0.9 m/s) against towards 0.61 / 0.49, fastest 0.81 / 0.95 m/s, palm 0.078 / 0.077. The pool
// alone rests at 0.02-0.05 m/s. Held to: away below towards (a still, inelastic hand gives the
// water no energy), the fastest below 0.5 m/s, the palm's frame-to-frame fluctuation below 0.06;
// and, with the option on, the bounds StillHandInWaterFeelsArchimedesBuoyancy and
// PalmPressureIsHydrostatic (boundary density) hold by default (hand / level's displaced weight
// 1.13, palm 0.96 / 0.89 of rho0 g depth, slope 0.76 rho0 g; 0.76 / 0.70 and 0.58 each ghost
// read alone with the capsules' nominal areas). Fails with the option off (the
// three bounds at both depths) and with the momentum it takes off the fluid left out of the
// hand's reaction (palm 0.059 / 0.068, the deeper fails; Newton does not see it: 0.5 % of the
// hand's force).
TEST(Hand, StillHandInStillWaterLetsItRest) {
  FluidConfig c = still_water(true);
  c.hand.inelastic_contact = true;  // the default, named: it is what this test is about
  const std::vector<HeldFigures> held = hold_still(c, {0.02f, 0.035f}, 1.5, 1.0);
  ASSERT_EQ(held.size(), 2u);
  for (const HeldFigures& h : held) {
    EXPECT_LT(h.away_max, h.towards_max) << "the hand sends no particle off faster than they come";
    EXPECT_LT(h.near_max, 0.5) << "m/s, the fastest particle near the hand";
    EXPECT_LT(h.fluct, 0.06) << "the palm's pressure frame to frame (std / mean)";
    EXPECT_EQ(h.inside, 0);
    EXPECT_NEAR(h.floor_load - h.weight, h.force, 0.05 * h.force) << "the floor carries the hand's push";
    EXPECT_GT(h.force, 0.95 * h.displaced);
    EXPECT_LT(h.force, 1.30 * h.displaced);
  }
  const double slope = (held[1].palm - held[0].palm) / (held[1].depth - held[0].depth) / (1000.0 * 9.81);
  std::printf("palm pressure against depth: slope %.3f rho0 g\n", slope);
  EXPECT_GT(slope, 0.45);
  EXPECT_LT(slope, 1.25);
}

// The palm's reading does not depend on how the fluid's pushes land on the ghosts: the still
// hand 3 cm deep (then 3.7 cm) with ghosts 8 and 12 mm apart (10 by default) reads the same
// pressure, that of the water. The reading is a patch's force over its area, the areas the
// ghosts' shares of the hand's surface (kernels/fluid/CHOICES.md, the pressure reading): 0.895 /
// 0.958 of rho0 g depth. Each ghost alone with the capsules' nominal areas (before 2026-11-24,
// branch handread) read 0.718 / 0.882: fails. (At 7 mm the closed contact lets particles into the
// hand: 43 with the boundary density, 76 contact only; 8 / 12 mm let 9 / 4 in, printed.)
TEST(Hand, PalmPressureDoesNotDependOnGhostSpacing) {
  double ratio[2] = {0, 0};
  int k = 0;
  for (const float spacing : {0.008f, 0.012f}) {
    FluidConfig c = still_water(true);
    c.hand.ghost_spacing = spacing;
    const std::vector<HeldFigures> held = hold_still(c, {0.03f}, 1.2, 0.6);
    ASSERT_EQ(held.size(), 1u);
    ratio[k++] = held[0].palm / held[0].palm_expected;
  }
  std::printf("palm / rho0 g depth, ghosts 8 / 12 mm apart: %.3f / %.3f\n", ratio[0], ratio[1]);
  EXPECT_NEAR(ratio[0] / ratio[1], 1.0, 0.10) << "the same pressure at both spacings";
  for (const double r : ratio) {
    EXPECT_GT(r, 0.85) << "the water's pressure";
    EXPECT_LT(r, 1.25) << "the water's pressure";
  }
}

// The contact against the capsules' exact surface (`hand.capsule_contact`, opt-in; closed contact,
// inelastic, boundary density as by default) lets the water next to a still hand rest: nothing
// settles into grooves between the ghosts' planes. As StillHandInStillWaterLetsItRest (2.6 / 4.1 cm
// deep): fastest within 2 cm 0.24 / 0.13 m/s, away 0.08 / 0.08, the palm's frame-to-frame
// fluctuation 0.014 / 0.011, per sample 0.09 / 0.07; the plane (the default): 0.32 / 0.34, 0.15 /
// 0.18, 0.033 / 0.044, 0.14 / 0.15 (bench/RESULTS.md, handsdf; the palm's with handread's patch
// reading: before it 0.015 against 0.042 / 0.050, per sample 0.12 / 0.09 against 0.21 / 0.19).
// Held to 0.28 m/s, 0.12 m/s, 0.03 and 0.15: the plane fails the first three at both depths
// (checked: capsule_contact off, branch handcaps; the patch reading reads its samples under 0.15).
TEST(Hand, StillHandOnItsCapsulesSurfaceLetsTheWaterRest) {
  FluidConfig c = still_water(true);
  c.hand.capsule_contact = true;
  const std::vector<HeldFigures> held = hold_still(c, {0.02f, 0.035f}, 1.5, 1.0);
  ASSERT_EQ(held.size(), 2u);
  for (const HeldFigures& h : held) {
    EXPECT_LT(h.near_max, 0.28) << "m/s, the fastest particle near the hand";
    EXPECT_LT(h.away_max, 0.12) << "m/s, the fastest away from the hand";
    EXPECT_LT(h.fluct, 0.03) << "the palm's pressure frame to frame (std / mean)";
    EXPECT_LT(h.sample_fluct, 0.15) << "each palm sample's own std / mean (median)";
    EXPECT_EQ(h.inside, 0);
    EXPECT_GT(h.force, 0.95 * h.displaced);
    EXPECT_LT(h.force, 1.30 * h.displaced);
  }
}

}  // namespace
}  // namespace sonoflow::fluid::test
