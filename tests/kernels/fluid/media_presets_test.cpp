// The issue 7 presets (config/materials) in the daemon's pool: each rests 3 s in it losing no
// particle, lays its medium out as its regions say, and the welding preset's gun lays hot filler
// into the joint between the plates as the hand moves along it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kernels/fluid/material.hpp"
#include "kernels/fluid/pool_scene.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::fluid::test {
namespace {

// The daemon's pool (pool_scene.hpp) filled at 1 cm: 1,024 particles.
std::unique_ptr<FluidEngine> daemon_pool(const Material& m) {
  FluidConfig c;
  c.max_particles = 5000;
  fit_pool(c, 1024);
  c.material = m;
  auto e = make_engine(c);
  if (!e) return nullptr;
  EXPECT_FALSE(e->load_scene(pool_scene()));
  return e;
}

const Material& preset(const MaterialLibrary& lib, const char* name) {
  const Material* m = lib.find(name);
  EXPECT_NE(m, nullptr) << name;
  static const Material none;
  return m != nullptr ? *m : none;
}

TEST(MediaPresets, EachRunsInTheDaemonPool) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib) << lib.error().message;
  for (const char* name : {"mixing", "molten_steel", "constraint_water", "windy_water", "droplets"}) {
    auto e = daemon_pool(preset(lib.value(), name));
    ASSERT_TRUE(e) << name;
    HandFrame none;
    static ContactField field;
    FluidStats st;
    e->step_frame(none, nullptr, 1.0 / 90.0, field, st);
    const int laid_out = st.particles;
    // 3 s at rest: long enough for a pool that leaks through its walls to show it (droplets' did).
    for (int f = 1; f < 270; ++f) e->step_frame(none, nullptr, 1.0 / 90.0, field, st);
    float lowest = 1.0f;
    for (const Vec3f& p : snapshot(*e).position) lowest = std::fmin(lowest, p.z);
    std::printf("%-16s %4d of %4d particles after 3 s, lowest %.4f m, compression %.4f, max speed %.3f "
                "m/s, device errors %d\n", name, st.particles, laid_out, lowest, st.mean_compression,
                st.max_speed, st.device_errors);
    EXPECT_EQ(st.device_errors, 0) << name;
    EXPECT_EQ(st.non_finite, 0) << name;
    EXPECT_GT(laid_out, 300) << name;
    EXPECT_EQ(st.particles, laid_out) << name << ": particles left the pool";
    EXPECT_GT(lowest, kPoolFloorZ) << name << ": below the pool's floor";
    EXPECT_LT(st.mean_compression, 0.03f) << name;
  }
}

// The mixing preset lays syrup under water; the steel preset cuts two cold plates with a joint.
TEST(MediaPresets, RegionsLayTheMediumOut) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib) << lib.error().message;
  {
    auto e = daemon_pool(preset(lib.value(), "mixing"));
    ASSERT_TRUE(e);
    run(*e, 1);
    const auto s = snapshot(*e);
    ASSERT_EQ(s.fractions.size(), s.position.size());
    int syrup = 0, water = 0, misplaced = 0;
    for (std::size_t i = 0; i < s.position.size(); ++i) {
      const bool is_syrup = s.fractions[i][1] > 0.95f, is_water = s.fractions[i][0] > 0.95f;
      syrup += is_syrup;
      water += is_water;
      misplaced += (is_syrup && s.position[i].z > 0.132f) || (is_water && s.position[i].z < 0.128f);
    }
    EXPECT_EQ(syrup, 16 * 16 * 2);  // the two lower layers
    EXPECT_EQ(water, 16 * 16 * 2);
    EXPECT_EQ(misplaced, 0);
    // Colours blend by fraction: syrup red below, water blue above.
    ASSERT_EQ(s.colour.size(), s.position.size());
    for (std::size_t i = 0; i < s.position.size(); ++i) {
      if (s.fractions[i][1] > 0.95f) {
        EXPECT_GT(s.colour[i][0], 0.8f);
      }
      if (s.fractions[i][0] > 0.95f) {
        EXPECT_GT(s.colour[i][2], 0.9f);
      }
    }
  }
  {
    auto e = daemon_pool(preset(lib.value(), "molten_steel"));
    ASSERT_TRUE(e);
    const FluidStats st = run(*e, 2);  // regions, then the removed particles are compacted
    const auto s = snapshot(*e);
    int in_joint = 0, above = 0;
    for (std::size_t i = 0; i < s.position.size(); ++i) {
      in_joint += std::fabs(s.position[i].x) < 0.006f;
      above += s.position[i].z > 0.13f;
      EXPECT_TRUE(s.solid[i]);
      EXPECT_NEAR(s.temperature[i], 300.0f, 1.0f);
    }
    EXPECT_EQ(in_joint, 0);
    EXPECT_EQ(above, 0);
    EXPECT_EQ(st.particles, 16 * 2 * 14);  // two plates of 7 x 16 columns, 2 layers
  }
}

// The welding gun in the index fingertip, moved along the joint: filler particles at 2000 K are
// emitted, fall into the joint, heat the plates' edges, and freeze there as they cool.
TEST(MediaPresets, WeldingGunLaysABeadIntoTheJoint) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib) << lib.error().message;
  const Material& steel = preset(lib.value(), "molten_steel");
  auto e = daemon_pool(steel);
  ASSERT_TRUE(e);
  const FluidStats start = run(*e, 2);
  static ContactField field;
  FluidStats st;
  // The flat test hand's index tip is at palm + (0.115, 0.03): put it over the joint.
  auto hand = [](int f) {
    const float y = -0.05f + 0.10f * static_cast<float>(f) / 180.0f;
    return flat_hand({-0.115f, y - 0.03f, 0.19f}, static_cast<std::uint64_t>(f), f * 11'111'111LL);
  };
  HandFrame prev = hand(0);
  float hottest = 0;
  for (int f = 1; f <= 180; ++f) {
    const HandFrame now = hand(f);
    e->step_frame(now, &prev, 1.0 / 90.0, field, st);
    prev = now;
    hottest = std::max(hottest, st.media.max_temperature);
  }
  HandFrame none;
  for (int f = 0; f < 360; ++f) e->step_frame(none, nullptr, 1.0 / 90.0, field, st);  // cool 4 s
  const auto s = snapshot(*e);
  int in_joint = 0, frozen_in_joint = 0, warmed_plate = 0;
  for (std::size_t i = 0; i < s.position.size(); ++i) {
    const Vec3f& p = s.position[i];
    if (std::fabs(p.x) < 0.006f && p.z < 0.13f) {
      ++in_joint;
      frozen_in_joint += s.solid[i];
    }
    if (std::fabs(p.x) > 0.008f && std::fabs(p.x) < 0.02f && p.z < 0.13f && s.temperature[i] > 400)
      ++warmed_plate;
  }
  std::printf("filler %d particles (hottest %.0f K), %d in the joint (%d frozen), %d plate "
              "particles by the joint above 400 K; %d solid of %d\n",
              st.particles - start.particles, hottest, in_joint, frozen_in_joint, warmed_plate,
              st.media.solid, st.particles);
  EXPECT_GT(st.particles - start.particles, 200) << "the gun did not emit";
  EXPECT_GT(hottest, 1780.0f) << "no molten filler";
  EXPECT_GT(in_joint, 30) << "the filler did not reach the joint";
  EXPECT_GT(frozen_in_joint, in_joint / 2) << "the bead did not freeze";
  EXPECT_GT(warmed_plate, 5) << "the plates' edges did not heat";
}

}  // namespace
}  // namespace sonoflow::fluid::test
