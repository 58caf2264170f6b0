// What the hand feels: the pressure on the palm when it presses into a pool (its sign, honey > cream >
// water, less on a more plastic clay), two hands each feeling their own, and the still palm's
// pressure against hydrostatics (rho0 g depth) at any ghost spacing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "kernels/fluid/material.hpp"
#include "tests/kernels/fluid/hand_scenes.hpp"

namespace sonoflow::fluid::test {
namespace {

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
  // shear, which the array-facing pressure does not carry (the forces keep 1.30 x). The contact
  // against the capsules (branch handsmooth, the default): 1.062 with the plane -> 1.076 with their
  // smooth union (k = 8 mm); their exact union read 1.047 and failed (bench/RESULTS.md handsmooth).
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
// the palm also felt); held to 0.85-1.35, slope 0.75-1.25.
// What the water pushes with, apart from the reading (branch palmforce): its vertical force on the
// palm's underside (hold_still's PalmForce: the ghosts facing down in a 7 x 5 cm box under the
// Palm joint, from their raw impulses) over its projected area, against rho0 g (surface - z) over
// the same area. Contact only 0.93-1.00, slope 0.99 rho0 g (the reading is 0.92-0.95 of it); with
// the boundary density 1.10-1.18, slope 1.02 (the ghosts' boundary density holds the water 7 mm
// off the palm, not d/2: it pushes with more, as the hand's 1.3-1.5 x Archimedes; the reading is
// 0.80-0.82 of it). One frame alone ranges 0.71-1.21 contact only. Held to 0.85-1.15 (contact only)
// and 0.85-1.30 (boundary density), slope 0.75-1.25. So the contact-only water does not push the
// palm with less: the lower reading of wider patches (1.5 and 2 x the spacing: 0.82-0.90, failing
// the reading's bound) is the reading's (bench/RESULTS.md, palmforce; handcaps' 7 x 5 cm 0.89-0.97
// is this force against rho0 g depth at the palm's lower surface, 0.91-0.97 here; handread's
// 0.73-0.98 is within one frame's spread, not an average: no averaged definition reproduces it).
// The contact against the capsules' smooth union (`hand.capsule_contact`, k = `capsule_blend` 8 mm;
// the default since branch handsmooth; figures above are the plane's): the reading contact only
// 0.95-1.00 of rho0 g depth, slope 1.01 rho0 g, with the boundary density 0.95-1.02, slope 0.95;
// the force 0.99-1.05 / 1.12-1.22, slopes 1.00 / 1.06. Their exact union (k = 0, branch handcaps)
// read 0.68-0.80 / 0.82-0.88 (slopes 0.79 / 0.77) and fails: its creases between the metacarpals
// tilt the pushes onto their flanks (the downward ghosts within 25 degrees took 0.65-0.75 of
// rho0 g depth contact only, the plane 1.01-1.11, the smooth union 1.14-1.22), which the palm's
// downward samples miss; k = 2 mm still fails (0.76-0.84), 4 mm passes by 1 % (0.86-0.92).
// Fails with the radial contact (`hand.closed_contact` off; contact only: the hand fills with water, 5-7 Pa;
// with the boundary density: 58-81 Pa at 2.5-4.4 cm, 0.12-0.25 of rho0 g depth, slope 0.06;
// figures of the per-ghost reading; the force: contact only 0.00 of rho0 g depth, with the
// boundary density 0.07-0.37, slopes 0.01 / -0.27) and with the reading of branch handread undone
// (the coupled palm). The force's bounds fail with the ghosts' impulses scaled at the host's
// read-back by 0.7 (slopes 0.69 / 0.72 rho0 g, every depth of both couplings) and by 1.3 (1.28 /
// 1.33, every depth; the contact-only reading, 1.12-1.24, passes its 0.85-1.35 there).
TEST(Hand, PalmPressureIsHydrostatic) {
  const double rho_g = 1000.0 * 9.81;
  for (const bool density : {false, true}) {
    const std::vector<HeldFigures> held =
        hold_still(still_water(density), {0.02f, 0.025f, 0.03f, 0.035f, 0.04f}, 1.2, 0.6);
    ASSERT_EQ(held.size(), 5u);
    double sd = 0, sp = 0, sdd = 0, sdp = 0;  // least squares: palm = a + slope depth
    double sf = 0, sdf = 0;                   // and the force's: palm_force = b + force_slope depth
    for (const HeldFigures& h : held) {
      sd += h.depth, sp += h.palm, sdd += h.depth * h.depth, sdp += h.depth * h.palm;
      sf += h.palm_force, sdf += h.depth * h.palm_force;
    }
    const double slope = (5 * sdp - sd * sp) / (5 * sdd - sd * sd);
    const double force_slope = (5 * sdf - sd * sf) / (5 * sdd - sd * sd);
    std::printf("palm pressure against depth: slope %.0f Pa/m = %.3f rho0 g; the water's force on the "
                "palm over its area: %.3f rho0 g (density coupling %d)\n",
                slope, slope / rho_g, force_slope / rho_g, density ? 1 : 0);
    for (const HeldFigures& h : held) EXPECT_EQ(h.inside, 0);
    // The water's force on the palm's underside, apart from the reading (hold_still's PalmForce).
    for (const HeldFigures& h : held) {
      EXPECT_GT(h.palm_force, 0.85 * h.palm_force_expected) << "the water's force on the palm";
      EXPECT_LT(h.palm_force, (density ? 1.30 : 1.15) * h.palm_force_expected) << "the water's force on the palm";
    }
    EXPECT_NEAR(force_slope / rho_g, 1.0, 0.25) << "the water's force on the palm against depth";
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
// The palm's reading does not depend on how the fluid's pushes land on the ghosts: the still
// hand 3 cm deep (then 3.7 cm) with ghosts 8 and 12 mm apart (10 by default) reads the same
// pressure, that of the water. The reading is a patch's force over its area, the areas the
// ghosts' shares of the hand's surface (kernels/fluid/CHOICES.md, the pressure reading): 0.895 /
// 0.958 of rho0 g depth with the plane contact, 0.993 / 1.060 against the capsules' smooth union
// (the default since branch handsmooth; their exact union 0.829 / 0.843: fails). Each ghost alone
// with the capsules' nominal areas (before 2026-11-24, branch handread) read 0.718 / 0.882: fails. (At 7 mm the closed contact lets particles into the
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

}  // namespace
}  // namespace sonoflow::fluid::test
