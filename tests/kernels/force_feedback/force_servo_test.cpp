#include "kernels/force_feedback/force_servo.hpp"

#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "tests/support/allocation_counter.hpp"

namespace sonoflow::force_feedback {
namespace {

TEST(HammingFir, HasTwoLPlusOneSymmetricTapsWithUnityGain) {
  const auto taps = design_hamming_lowpass(90, 1000);
  ASSERT_EQ(taps.size(), 23u);  // L = round(1000 / 90) = 11
  double sum = 0;
  for (std::size_t i = 0; i < taps.size(); ++i) {
    EXPECT_NEAR(taps[i], taps[taps.size() - 1 - i], 1e-15);
    sum += taps[i];
  }
  EXPECT_NEAR(sum, 1.0, 1e-12);
  EXPECT_THROW(design_hamming_lowpass(2000, 1000), std::invalid_argument);
}

TEST(HammingFir, PassesASteadyForceAndDelaysAStepByOneFrame) {
  HammingFir fir(90, 1000);
  const Eigen::Vector3d f(0.3, -0.2, 1.0);
  Eigen::Vector3d out;
  int half_crossing = -1;
  for (int t = 0; t < 100; ++t) {
    out = fir.push(f);
    if (half_crossing < 0 && out.z() >= 0.5) half_crossing = t;
  }
  EXPECT_TRUE(out.isApprox(f, 1e-12));
  // A symmetric FIR crosses half the step at its group delay: one fluid frame, L ticks.
  EXPECT_EQ(half_crossing, fir.delay_ticks());
  EXPECT_EQ(fir.delay_ticks(), 11);
}

TEST(HammingFir, SmoothsTheHeldStaircaseOfAVaryingForce) {
  // A 2 Hz sinusoidal force sampled at 90 Hz and zero-order held at 1 kHz is a staircase whose
  // steps the hand would feel as vibration; the filter must remove most of the jumps.
  HammingFir fir(90, 1000);
  double raw_jumps = 0, filtered_jumps = 0;
  Eigen::Vector3d held = Eigen::Vector3d::Zero(), previous_held = held, previous_out = held;
  for (int t = 0; t < 3000; ++t) {
    const int frame = static_cast<int>(t * 90 / 1000);
    held = Eigen::Vector3d(std::sin(2 * M_PI * 2 * frame / 90.0), 0, 0);
    const Eigen::Vector3d out = fir.push(held);
    if (t > 100) {
      raw_jumps += (held - previous_held).squaredNorm();
      filtered_jumps += (out - previous_out).squaredNorm();
    }
    previous_held = held;
    previous_out = out;
  }
  EXPECT_LT(filtered_jumps, 0.15 * raw_jumps);
}

TEST(ForceServo, NeverStepsMoreThanTheLimitNorExceedsTheCap) {
  ForceServoConfig config;
  config.max_step_n = 0.02;
  config.max_force_n = 2.0;
  ForceServo servo(config);
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> force(-20, 20);  // wild frames: teleports, explosions
  Eigen::Vector3d previous = Eigen::Vector3d::Zero();
  double largest_step = 0, largest_force = 0;
  for (int t = 0; t < 5000; ++t) {
    if (t % 11 == 0) servo.on_frame_force({force(rng), force(rng), force(rng)});
    const Eigen::Vector3d out = servo.tick();
    largest_step = std::max(largest_step, (out - previous).norm());
    largest_force = std::max(largest_force, out.norm());
    previous = out;
  }
  EXPECT_LE(largest_step, config.max_step_n + 1e-12);
  EXPECT_LE(largest_force, config.max_force_n + 1e-12);
  EXPECT_GT(largest_force, 0.5 * config.max_force_n);  // it does render something
}

TEST(ForceServo, ReleaseRampsToZeroAndTicksDoNotAllocate) {
  ForceServo servo(ForceServoConfig{});
  servo.on_frame_force({0, 0, 1.5});
  for (int t = 0; t < 200; ++t) servo.tick();
  EXPECT_NEAR(servo.output().z(), 1.5, 1e-9);
  servo.release();
  const test::AllocationScope scope;
  double previous = servo.output().z();
  for (int t = 0; t < 200; ++t) {
    const double z = servo.tick().z();
    EXPECT_LE(z, previous + 1e-12);  // monotone ramp down, no overshoot through zero
    previous = z;
  }
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_NEAR(servo.output().norm(), 0.0, 1e-9);
}

}  // namespace
}  // namespace sonoflow::force_feedback
