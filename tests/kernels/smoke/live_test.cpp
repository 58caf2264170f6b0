// Live settings (SmokeEngine::apply_live, the daemon's reload path for [smoke]): a change reaches
// the running simulation between frames and keeps its flow - the same run diverges from an
// unchanged twin only after the change, the way the physics says - and a bad value is refused
// with nothing applied.
#include <gtest/gtest.h>

#include <cstdio>

#include "kernels/smoke/smoke_live.hpp"
#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace sonoflow::smoke {
namespace {

using test::cube;
using test::make_engine;

SmokeSetup plume_setup() {
  SmokeSetup s;
  s.config = cube(24, 0.01f);
  s.config.open_faces = kOpenHighZ;
  s.scene.plumes.push_back({{0.0f, 0.0f, 0.04f}, 0.03f, 1.0f, 60.0f});
  return s;
}

// A warm plume's lift is heat_lift x its temperature: quadrupling heat_lift live makes the
// changed twin's air move faster from then on, where before the change both ran bit-identically.
TEST(LiveSettings, StrongerBuoyancyAppliedLiveSpeedsTheFlowUpFromThenOn) {
  const SmokeSetup setup = plume_setup();
  auto same = make_engine(setup.config, setup.scene);
  auto changed = make_engine(setup.config, setup.scene);
  ASSERT_TRUE(same && changed);
  const SmokeStats a0 = test::run(*same, 10), b0 = test::run(*changed, 10);
  EXPECT_EQ(a0.kinetic_energy, b0.kinetic_energy);

  SmokeLive live = live_part(setup);
  live.heat_lift *= 4.0f;
  ASSERT_FALSE(changed->apply_live(live));
  EXPECT_EQ(changed->config().heat_lift, live.heat_lift);
  const SmokeStats a = test::run(*same, 15), b = test::run(*changed, 15);
  std::printf("plume kinetic energy after 25 frames: %.3g J unchanged, %.3g J with 4x heat_lift from frame 10\n",
              a.kinetic_energy, b.kinetic_energy);
  EXPECT_EQ(b.device_errors, 0);
  EXPECT_GT(a.kinetic_energy, a0.kinetic_energy);  // both keep their flow (no restart)
  EXPECT_GT(b.kinetic_energy, 2.0f * a.kinetic_energy);
  EXPECT_GT(b.max_speed, 1.3f * a.max_speed);
}

// The pressure cap, the advection scheme and the sources change live; values out of range are
// refused with the reason and leave the running settings as they were.
TEST(LiveSettings, SolverLimitsSchemeAndSourcesApplyAndBadValuesAreRefused) {
  const SmokeSetup setup = plume_setup();
  auto e = make_engine(setup.config, setup.scene);
  ASSERT_TRUE(e);
  test::run(*e, 5);

  SmokeLive live = live_part(setup);
  live.tolerance = 1e-6f;
  live.max_iterations = 1;
  live.advection = Advection::MacCormack;
  live.plume_count = 0;
  live.jet_count = 1;
  live.jets[0] = {{0.0f, 0.0f, 0.03f}, {0.0f, 0.0f, 1.5f}, 0.02f, 1.0f, 0.0f};
  ASSERT_FALSE(e->apply_live(live));
  const SmokeStats capped = test::run(*e, 3);
  EXPECT_EQ(capped.pressure_iterations_max, 1);
  EXPECT_FALSE(capped.pressure_converged);
  EXPECT_EQ(capped.device_errors, 0);
  EXPECT_EQ(e->config().advection, Advection::MacCormack);
  EXPECT_GT(capped.max_speed, 1.2f);  // the jet blows at 1.5 m/s

  SmokeLive bad = live;
  bad.tolerance = -1.0f;
  const auto refused = e->apply_live(bad);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->code, opencl::Errc::BadConfig);
  EXPECT_NE(refused->message.find("tolerance"), std::string::npos) << refused->message;
  bad = live;
  bad.jet_count = kMaxSources + 1;
  ASSERT_TRUE(e->apply_live(bad));
  EXPECT_EQ(e->config().pressure.tolerance, 1e-6f);  // nothing applied
}

}  // namespace
}  // namespace sonoflow::smoke
