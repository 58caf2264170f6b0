// AM renderer, driven tick by tick with virtual block times as the 1 kHz thread would drive it.
#include <cmath>

#include <gtest/gtest.h>

#include "kernels/haptics/am_renderer.hpp"
#include "tests/kernels/haptics/synthetic_hand.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::haptics {
namespace {

constexpr std::int64_t kMs = 1'000'000;

struct Rig {
  AmConfig config;
  std::unique_ptr<AmRenderer> renderer;
  TargetSamples samples;
  FocalBlock block;
  explicit Rig(const AmConfig& c) : config(c), renderer(std::make_unique<AmRenderer>(c)) {}
  void feed(const ContactField& field, std::int64_t t_ns) {
    ContactField& f = const_cast<ContactField&>(field);
    f.time_ns = t_ns;
    samples.select(field, {});
  }
};

std::unique_ptr<ContactField> blob_at(const HandFrame& hand, float cx, float cy, float amplitude = 1.0f,
                                      std::uint64_t sequence = 1) {
  return test::planar_field(hand, -0.06f, 0.06f, -0.06f, 0.10f, 0.004f, [=](float x, float y) {
    return amplitude * test::gaussian(x, y, cx, cy, 0.012f);
  }, sequence);
}

TEST(AmRenderer, BlockHoldsTwentySamplesModulatedAt200Hz) {
  AmConfig config;
  config.optimizer.max_foci = 1;
  config.optimizer.sigma_m = 0.012f;  // the blob's own width: p_i = 0.5 exactly
  config.intensity.law = IntensityLaw::Linear;
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto field = blob_at(hand, 0.0f, 0.0f, 0.5f);
  rig.feed(*field, 0);
  // Render 20 ms; record the intensity of focus 0 at every 20 kHz sample.
  std::vector<float> intensity;
  for (int tick = 0; tick < 20; ++tick) {
    rig.renderer->render(tick == 0 ? &rig.samples : nullptr, hand, tick * kMs, rig.block);
    ASSERT_EQ(rig.block.start_time_ns, tick * kMs);
    ASSERT_EQ(rig.block.sequence, std::uint64_t(tick + 1));
    for (const FocalSample& s : rig.block.samples) {
      ASSERT_EQ(s.count, 1);
      intensity.push_back(s.foci[0].intensity);
      EXPECT_NEAR(s.foci[0].position.x, 0.0f, 1e-3f);
      EXPECT_NEAR(s.foci[0].position.z, 0.2f, 1e-4f);
    }
  }
  // After the 5 ms fade-in, the envelope is I (1 + sin(2 pi 200 t)) / 2 with I = 0.5 (linear law,
  // p_i = 0.5 recovered exactly): upward crossings of I/2 at 5, 10 and 15 ms (samples 100, 200,
  // 300) between 3 ms and 20 ms.
  int crossings = 0;
  float peak = 0;
  for (std::size_t i = 61; i < intensity.size(); ++i) {
    if (intensity[i - 1] < 0.25f && intensity[i] >= 0.25f) ++crossings;
    peak = std::max(peak, intensity[i]);
  }
  EXPECT_EQ(crossings, 3);
  EXPECT_NEAR(peak, 0.5f, 0.01f);
  // Exactly sinusoidal: sample at t = 6.25 ms is the crest (sin = 1), t = 7.5 ms the mean.
  EXPECT_NEAR(intensity[125], 0.5f, 0.01f);
  EXPECT_NEAR(intensity[150], 0.25f, 0.01f);
  EXPECT_NEAR(am_modulation(1'250'000, 200, 1), 1.0f, 1e-6f);
  EXPECT_NEAR(am_modulation(3'750'000, 200, 1), 0.0f, 1e-6f);
  EXPECT_NEAR(am_modulation(3'750'000, 200, 0.4f), 0.6f, 1e-6f);
  // Phase stays exact after days of uptime.
  EXPECT_NEAR(am_modulation(86'400'000'000'000LL * 30 + 1'250'000, 200, 1), 1.0f, 1e-5f);
}

TEST(AmRenderer, SilenceForEmptyZeroStaleFieldOrLostHand) {
  Rig rig(AmConfig{});
  HandFrame hand = test::flat_hand(0.2f);
  // No field yet.
  rig.renderer->render(nullptr, hand, 0, rig.block);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  EXPECT_EQ(rig.block.samples[0].count, 0);
  // All-zero field.
  auto zero = test::planar_field(hand, -0.05f, 0.05f, -0.05f, 0.05f, 0.005f, [](float, float) { return 0.0f; });
  rig.feed(*zero, 1 * kMs);
  rig.renderer->render(&rig.samples, hand, 1 * kMs, rig.block);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  // A real field: sound within a few ticks.
  auto field = blob_at(hand, 0, 0);
  rig.feed(*field, 2 * kMs);
  rig.renderer->render(&rig.samples, hand, 2 * kMs, rig.block);
  EXPECT_EQ(rig.block.mode, HapticMode::AM);
  for (int t = 3; t < 10; ++t) rig.renderer->render(nullptr, hand, t * kMs, rig.block);
  EXPECT_GT(rig.block.samples[0].count, 0);
  // Hand lost: fades to silence within 1 / intensity_rate = 5 ms.
  hand.hand_count = 0;
  for (int t = 10; t < 16; ++t) rig.renderer->render(nullptr, hand, t * kMs, rig.block);
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
  // Hand back, but the field is now older than max_field_age_ns: still silent.
  hand.hand_count = 1;
  rig.renderer->render(nullptr, hand, 2 * kMs + rig.config.max_field_age_ns + kMs, rig.block);
  for (int k = 0; k < 10; ++k) {
    rig.renderer->render(nullptr, hand, 2 * kMs + rig.config.max_field_age_ns + (2 + k) * kMs, rig.block);
  }
  EXPECT_EQ(rig.block.mode, HapticMode::Silent);
}

TEST(AmRenderer, FociGlideWhenTheTargetJumps) {
  AmConfig config;
  config.optimizer.max_foci = 1;
  config.glide.rematch_distance_m = 1.0f;  // always glide, never cross-fade
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto first = blob_at(hand, -0.03f, 0.0f, 1.0f, 1);
  rig.feed(*first, 0);
  rig.renderer->render(&rig.samples, hand, 0, rig.block);
  for (int t = 1; t < 10; ++t) rig.renderer->render(nullptr, hand, t * kMs, rig.block);
  Eigen::Vector3f previous = to_eigen(rig.block.samples[0].foci[0].position);
  EXPECT_NEAR(previous.x(), -0.03f, 1e-3f);
  // The blob jumps 60 mm: the focus travels at the glide speed, never faster.
  auto second = blob_at(hand, 0.03f, 0.0f, 1.0f, 2);
  rig.feed(*second, 10 * kMs);
  const float max_step = config.glide.max_speed_m_s * 1e-3f;
  int ticks = 0;
  for (int t = 10; t < 60; ++t) {
    rig.renderer->render(t == 10 ? &rig.samples : nullptr, hand, t * kMs, rig.block);
    ASSERT_EQ(rig.block.samples[0].count, 1);
    const Eigen::Vector3f now = to_eigen(rig.block.samples[0].foci[0].position);
    EXPECT_LE((now - previous).norm(), max_step + 1e-6f);
    if ((now - previous).norm() > 1e-6f) ++ticks;
    previous = now;
  }
  EXPECT_NEAR(previous.x(), 0.03f, 1e-3f);
  EXPECT_NEAR(ticks, 30, 2);  // 60 mm at 2 mm per ms
}

TEST(AmRenderer, DistantTargetCrossFadesInsteadOfTeleporting) {
  AmConfig config;
  config.optimizer.max_foci = 1;
  config.intensity.law = IntensityLaw::Linear;
  config.modulation_depth = 0;
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto first = blob_at(hand, -0.04f, 0.0f, 1.0f, 1);
  rig.feed(*first, 0);
  for (int t = 0; t < 10; ++t) rig.renderer->render(t == 0 ? &rig.samples : nullptr, hand, t * kMs, rig.block);
  auto second = blob_at(hand, 0.04f, 0.0f, 1.0f, 2);
  rig.feed(*second, 10 * kMs);
  float max_change = 0;
  float last_old = 1.0f;
  for (int t = 10; t < 20; ++t) {
    rig.renderer->render(t == 10 ? &rig.samples : nullptr, hand, t * kMs, rig.block);
    float old_intensity = 0, new_intensity = 0;
    for (int k = 0; k < rig.block.samples[0].count; ++k) {
      const Focus& f = rig.block.samples[0].foci[std::size_t(k)];
      // Every focus is at one of the two blobs: nothing in between.
      EXPECT_NEAR(std::abs(f.position.x), 0.04f, 1e-3f);
      (f.position.x < 0 ? old_intensity : new_intensity) = f.intensity;
    }
    max_change = std::max(max_change, std::abs(old_intensity - last_old));
    last_old = old_intensity;
  }
  EXPECT_LE(max_change, config.glide.intensity_rate_per_s * 1e-3f + 1e-5f);
  // One focus sounds, at the new blob. It took the next slot: the old one, now silent, keeps
  // slot 0, so a consumer following foci by index never sees one jump across the hand.
  const FocalSample& s = rig.block.samples[0];
  ASSERT_EQ(s.count, 2);
  EXPECT_EQ(s.foci[0].intensity, 0.0f);
  EXPECT_NEAR(s.foci[0].position.x, -0.04f, 1e-3f);
  EXPECT_GT(s.foci[1].intensity, 0.5f);
  EXPECT_NEAR(s.foci[1].position.x, 0.04f, 1e-3f);
}

TEST(AmRenderer, FociFollowTheHandBetweenFields) {
  AmConfig config;
  config.optimizer.max_foci = 2;
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto field = test::planar_field(hand, -0.06f, 0.06f, -0.06f, 0.1f, 0.004f, [](float x, float y) {
    return test::gaussian(x, y, -0.03f, 0, 0.01f) + test::gaussian(x, y, 0.03f, 0.04f, 0.01f);
  });
  rig.feed(*field, 0);
  rig.renderer->render(&rig.samples, hand, 0, rig.block);
  // The hand drifts +x at 0.5 m/s for 20 ms with no new field: the foci go with it.
  for (int t = 1; t <= 20; ++t) {
    const HandFrame moved = test::flat_hand(0.2f, Eigen::Quaternionf::Identity(), {0.0005f * float(t), 0, 0});
    rig.renderer->render(nullptr, moved, t * kMs, rig.block);
  }
  ASSERT_EQ(rig.block.samples[0].count, 2);
  for (int k = 0; k < 2; ++k) {
    const float x = rig.block.samples[0].foci[std::size_t(k)].position.x;
    EXPECT_NEAR(std::abs(x - 0.01f), 0.03f, 1e-3f);
  }
}

TEST(AmRenderer, IntensityCapsHold) {
  AmConfig config;
  config.optimizer.max_foci = 4;
  config.intensity.gain = 50;  // drive far past full scale
  config.intensity.max_intensity = 0.8f;
  config.intensity.max_total_power = 1.0f;
  config.modulation_depth = 0;
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto field = test::planar_field(hand, -0.06f, 0.06f, -0.06f, 0.1f, 0.004f, [](float x, float y) {
    return test::gaussian(x, y, -0.04f, 0, 0.01f) + test::gaussian(x, y, 0.04f, 0, 0.01f) +
           test::gaussian(x, y, 0, 0.06f, 0.01f) + test::gaussian(x, y, 0, -0.04f, 0.01f);
  });
  rig.feed(*field, 0);
  for (int t = 0; t < 20; ++t) rig.renderer->render(t == 0 ? &rig.samples : nullptr, hand, t * kMs, rig.block);
  const FocalSample& s = rig.block.samples[0];
  ASSERT_EQ(s.count, 4);
  float power = 0;
  for (int k = 0; k < s.count; ++k) {
    EXPECT_LE(s.foci[std::size_t(k)].intensity, 0.8f + 1e-6f);
    power += s.foci[std::size_t(k)].intensity * s.foci[std::size_t(k)].intensity;
  }
  EXPECT_NEAR(power, 1.0f, 1e-3f);  // four capped foci share one focus's power
}

TEST(AmRenderer, RenderDoesNotAllocate) {
  AmConfig config;
  config.optimizer.max_foci = 8;
  config.weight_map.enabled = true;
  Rig rig(config);
  const HandFrame hand = test::flat_hand(0.2f);
  auto a = blob_at(hand, -0.02f, 0.0f, 1.0f, 1);
  auto b = blob_at(hand, 0.03f, 0.02f, 1.0f, 2);
  TargetSamples sa, sb;
  a->time_ns = 0;
  b->time_ns = 0;
  sa.select(*a, {});
  sb.select(*b, {});
  rig.renderer->render(&sa, hand, 0, rig.block);  // warm-up outside the scope is not needed
  sonoflow::test::AllocationScope scope;
  for (int t = 1; t < 200; ++t) {
    const TargetSamples* fresh = t % 11 == 0 ? (t % 22 == 0 ? &sa : &sb) : nullptr;
    rig.renderer->render(fresh, hand, t * kMs, rig.block);
  }
  EXPECT_EQ(scope.allocations(), 0u);
}

}  // namespace
}  // namespace sonoflow::haptics
