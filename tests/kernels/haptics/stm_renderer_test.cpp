// STM renderer and path player, tick by tick with virtual times: streaming at 7 m/s and 20 kHz
// (oracle 21), intensity gamma p* (22), hand-over continuity, following the hand, no heap.
#include <cmath>

#include <gtest/gtest.h>

#include "kernels/haptics/haptic_renderer.hpp"
#include "kernels/haptics/stm_renderer.hpp"
#include "tests/kernels/haptics/plumes.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::haptics {
namespace {

constexpr std::int64_t kMs = 1'000'000;

struct StmRig {
  StmConfig config;
  std::unique_ptr<StmRenderer> renderer;
  std::unique_ptr<TargetSamples> samples = std::make_unique<TargetSamples>();
  FocalBlock block;
  std::vector<FocalSample> stream;  // every sample rendered
  explicit StmRig(const StmConfig& c = {}) : config(c), renderer(std::make_unique<StmRenderer>(c)) {}
  const TargetSamples* field(const std::function<float(float, float)>& p, const HandFrame& hand,
                             std::int64_t t, std::uint64_t seq) {
    auto f = test::hand_field(hand, p, seq);
    f->time_ns = t;
    samples->select(*f, {});
    return samples.get();
  }
  void tick(const TargetSamples* fresh, const HandFrame& hand, std::int64_t t) {
    renderer->render(fresh, hand, t, block);
    for (const FocalSample& s : block.samples) stream.push_back(s);
  }
};

TEST(StmRenderer, StreamsAlongThePathsAtSevenMetresPerSecond) {
  StmConfig config;
  config.incremental_iterations = 0;  // loops stand still, so a focus returns exactly
  StmRig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  rig.tick(rig.field(test::four_plumes, hand, 0, 1), hand, 0);
  std::int64_t t = 1;
  while (rig.renderer->plans_completed() == 0 && t < 100) rig.tick(nullptr, hand, kMs * t++);
  ASSERT_EQ(rig.renderer->plans_completed(), 1u);
  EXPECT_GT(t, 2);  // the replan took several ticks
  const std::size_t start = rig.stream.size();
  for (int k = 0; k < 60; ++k) rig.tick(nullptr, hand, kMs * t++);
  // Four foci, one per path; consecutive samples 0.35 mm apart (7 m/s / 20 kHz), a little less
  // where the path turns at a vertex. Between blocks the incremental refinement may also move
  // the loop by at most incremental_iterations * incremental_max_move.
  const auto& plan = rig.renderer->player().current();
  ASSERT_EQ(plan.path_count, 4);
  const float refine = float(rig.config.incremental_iterations) * rig.config.incremental_max_move_m;
  for (std::size_t i = start + 20; i + 1 < rig.stream.size(); ++i) {
    ASSERT_EQ(rig.stream[i].count, 4);
    const bool across_blocks = (i + 1) % kSamplesPerBlock == 0;
    for (int k = 0; k < 4; ++k) {
      const float step = (to_eigen(rig.stream[i + 1].foci[std::size_t(k)].position) -
                          to_eigen(rig.stream[i].foci[std::size_t(k)].position)).norm();
      EXPECT_LE(step, 0.35e-3f + 1e-6f + (across_blocks ? refine : 0.0f)) << i;
      EXPECT_GE(step, 0.25e-3f - (across_blocks ? refine : 0.0f)) << i;
    }
  }
  // A focus comes back to where it was after one loop: L / v = 20 ms = 400 samples.
  const std::size_t a = start + 100;
  const Eigen::Vector3f x0 = to_eigen(rig.stream[a].foci[0].position);
  float best = 1e9f;
  std::size_t best_i = 0;
  for (std::size_t i = a + 300; i < a + 500; ++i) {
    const float d = (to_eigen(rig.stream[i].foci[0].position) - x0).norm();
    if (d < best) { best = d; best_i = i; }
  }
  EXPECT_LT(best, 0.5e-3f);
  EXPECT_NEAR(double(best_i - a), plan.paths[0].length / 7.0 * 20000.0, 3.0);
}

TEST(StmRenderer, IntensityIsGammaTimesTheTargetAtThePath) {
  StmConfig config;
  config.player.intensity.law = IntensityLaw::Linear;
  config.player.intensity.full_scale_pa = 2.0f;  // keep 1.4 p* below the cap
  config.player.intensity.max_total_power = 100;
  StmRig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  rig.tick(rig.field(test::one_plume, hand, 0, 1), hand, 0);
  for (std::int64_t t = 1; t < 40; ++t) rig.tick(nullptr, hand, kMs * t);
  const stm::StmPlan& plan = rig.renderer->player().current();
  ASSERT_GT(plan.path_count, 0);
  const FocalSample& s = rig.block.samples[0];
  for (int k = 0; k < s.count; ++k) {
    const Eigen::Vector3f x = to_eigen(s.foci[std::size_t(k)].position);
    const stm::StmPath& path = plan.paths[std::size_t(k)];
    int segment = 0;
    float p = 0;
    path.point_at(path.nearest_arc(x), segment, &p);
    EXPECT_NEAR(s.foci[std::size_t(k)].intensity, 1.4f * p / 2.0f, 2e-3f);
  }
}

TEST(StmRenderer, HandOverKeepsTheFocusContinuousWithBoundedSpeed) {
  StmRig rig;
  const HandFrame hand = test::flat_hand(0.2f);
  // One plume, then it jumps 40 mm sideways and splits into four, then back: two hand-overs
  // between very different plans.
  rig.tick(rig.field(test::one_plume, hand, 0, 1), hand, 0);
  std::int64_t t = 1;
  for (; t < 40; ++t) rig.tick(nullptr, hand, kMs * t);
  auto moved = [](float x, float y) { return test::one_plume(x - 0.04f, y); };
  rig.tick(rig.field(moved, hand, kMs * t, 2), hand, kMs * t);
  for (++t; t < 80; ++t) rig.tick(nullptr, hand, kMs * t);
  rig.tick(rig.field(test::four_plumes, hand, kMs * t, 3), hand, kMs * t);
  for (++t; t < 140; ++t) rig.tick(nullptr, hand, kMs * t);
  EXPECT_EQ(rig.renderer->plans_completed(), 3u);

  // Follow each focus slot through the stream; while the count is unchanged, consecutive
  // samples never move further than (v + v_extra) / 20 kHz, plus a little for the incremental
  // refinement moving the loop itself.
  const float bound = (rig.config.player.speed_m_s + rig.config.player.handover_extra_speed_m_s) /
                      20000.0f;
  float worst = 0;
  int transitions = 0;
  for (std::size_t i = 1; i < rig.stream.size(); ++i) {
    const FocalSample& a = rig.stream[i - 1];
    const FocalSample& b = rig.stream[i];
    if (a.count != b.count) {
      ++transitions;
      continue;
    }
    for (int k = 0; k < b.count; ++k) {
      if (a.foci[std::size_t(k)].intensity <= 0) continue;
      const float step = (to_eigen(b.foci[std::size_t(k)].position) -
                          to_eigen(a.foci[std::size_t(k)].position)).norm();
      if (step > bound * 1.1f) ADD_FAILURE() << "sample " << i << " slot " << k << " step " << step;
      worst = std::max(worst, step);
    }
  }
  std::printf("largest step between samples %.3f mm (bound %.3f mm), %d count changes\n",
              worst * 1e3, bound * 1e3, transitions);
  EXPECT_LE(worst, bound * 1.1f);
  // When the count changes (4 paths appear), the surviving slots still do not jump: slot 0 of
  // the sample before and after every count change.
  for (std::size_t i = 1; i < rig.stream.size(); ++i) {
    const FocalSample& a = rig.stream[i - 1];
    const FocalSample& b = rig.stream[i];
    if (a.count == b.count || a.count == 0 || b.count == 0) continue;
    EXPECT_LE((to_eigen(b.foci[0].position) - to_eigen(a.foci[0].position)).norm(), bound * 1.1f);
  }
}

TEST(StmRenderer, PathsRideAlongWithTheHand) {
  StmConfig config;
  config.incremental_iterations = 0;  // pure following, no refinement
  StmRig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  rig.tick(rig.field(test::four_plumes, hand, 0, 1), hand, 0);
  std::int64_t t = 1;
  for (; t < 40; ++t) rig.tick(nullptr, hand, kMs * t);
  const stm::StmPlan plan = rig.renderer->player().current();
  // Turn and shift the hand; every rendered focus lies on the moved loops.
  const Eigen::Quaternionf turn(Eigen::AngleAxisf(0.3f, Eigen::Vector3f::UnitZ()));
  const Eigen::Vector3f shift(0.02f, -0.01f, 0.01f);
  const HandFrame moved = test::flat_hand(0.2f, turn, shift);
  rig.tick(nullptr, moved, kMs * t);
  const Eigen::Vector3f palm(0, 0, 0.2f);
  for (const FocalSample& s : rig.block.samples) {
    for (int k = 0; k < s.count; ++k) {
      // Back into the hand's old pose, the focus is on path k.
      const Eigen::Vector3f x = turn.conjugate() * (to_eigen(s.foci[std::size_t(k)].position) - shift - palm) + palm;
      float d = 0;
      plan.paths[std::size_t(k)].nearest_arc(x, &d);
      EXPECT_LT(d, 1e-4f);
    }
  }
}

TEST(StmRenderer, SilenceWhenTheHandIsLostOrTheFieldIsEmpty) {
  StmRig rig;
  HandFrame hand = test::flat_hand(0.2f);
  rig.tick(nullptr, hand, 0);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  rig.tick(rig.field(test::one_plume, hand, kMs, 1), hand, kMs);
  std::int64_t t = 2;
  for (; t < 40; ++t) rig.tick(nullptr, hand, kMs * t);
  EXPECT_EQ(rig.block.mode, HapticMode::STM);
  hand.hand_count = 0;
  for (int k = 0; k < 6; ++k) rig.tick(nullptr, hand, kMs * t++);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  hand.hand_count = 1;
  for (int k = 0; k < 6; ++k) rig.tick(nullptr, hand, kMs * t++);
  EXPECT_EQ(rig.block.mode, HapticMode::STM);
  rig.tick(rig.field([](float, float) { return 0.0f; }, hand, kMs * t, 2), hand, kMs * t);
  for (int k = 0; k < 80; ++k) rig.tick(nullptr, hand, kMs * ++t);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  EXPECT_EQ(rig.block.samples[0].count, 0);
}

TEST(HapticRenderer, SwitchesModesAndNeverAllocatesPerTick) {
  HapticConfig config;
  config.mode = HapticMode::STM;
  auto renderer = std::make_unique<HapticRenderer>(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto one = test::hand_field(hand, test::one_plume, 1);
  auto four = test::hand_field(hand, test::four_plumes, 2);
  FocalBlock block;
  renderer->render(one.get(), hand, 0, block);
  sonoflow::test::AllocationScope scope;
  for (std::int64_t t = 1; t < 300; ++t) {
    if (t == 150) renderer->set_mode(HapticMode::AM);
    if (t == 250) renderer->set_mode(HapticMode::Silent);
    ContactField* fresh = nullptr;
    if (t % 11 == 0) {
      fresh = (t / 11) % 2 ? four.get() : one.get();
      fresh->time_ns = t * kMs;
    }
    renderer->render(fresh, hand, t * kMs, block);
    if (t == 149) {
      EXPECT_EQ(block.mode, HapticMode::STM);
    }
    if (t == 160) {
      EXPECT_EQ(block.mode, HapticMode::AM);
    }
    if (t == 260) {
      EXPECT_EQ(block.mode, HapticMode::Silent);
    }
  }
  EXPECT_EQ(scope.allocations(), 0u);
  // Live controls from the daemon: two AM foci at 150 Hz.
  renderer->set_mode(HapticMode::AM, 150.0, 2, 6.0);
  for (std::int64_t t = 300; t < 320; ++t) renderer->render(t == 300 ? four.get() : nullptr, hand, t * kMs, block);
  EXPECT_EQ(block.mode, HapticMode::AM);
  EXPECT_EQ(renderer->am().config().optimizer.max_foci, 2);
  EXPECT_EQ(renderer->am().config().modulation_hz, 150.0f);
  EXPECT_EQ(renderer->stm().config().player.speed_m_s, 6.0f);
  EXPECT_EQ(renderer->stm().config().planner.max_paths, 2);
  int sounding = 0;
  for (int k = 0; k < block.samples[0].count; ++k) sounding += block.samples[0].foci[std::size_t(k)].intensity > 0;
  EXPECT_LE(sounding, 2);
  // Malformed samples are dropped and counted, not rendered.
  one->samples[0].pressure = std::nanf("");
  renderer->render(one.get(), hand, 321 * kMs, block);
  EXPECT_EQ(renderer->malformed_samples(), 1);
}

}  // namespace
}  // namespace sonoflow::haptics
