#include "drivers/force_device/emulated_force_device.hpp"

#include <cmath>

#include <gtest/gtest.h>

#include "kernels/force_feedback/force_servo.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::drivers {
namespace {

TEST(EmulatedForceDevice, StylusFollowsItsScriptOnTheClock) {
  rt::VirtualClock clock;
  EmulatedForceDeviceConfig config;
  config.script = StylusScript::StirCircle;
  EmulatedForceDevice device(clock, config);
  StylusPose start, quarter;
  ASSERT_TRUE(device.read_pose(start));
  clock.advance(static_cast<std::int64_t>(0.25 * config.period_s * 1e9));
  ASSERT_TRUE(device.read_pose(quarter));
  EXPECT_NEAR(start.position.x - config.centre.x, config.radius_m, 1e-6);
  EXPECT_NEAR(quarter.position.y - config.centre.y, config.radius_m, 1e-6);
  EXPECT_EQ(quarter.time_ns, clock.now_ns());
  device.set_connected(false);
  EXPECT_FALSE(device.read_pose(quarter));
}

TEST(EmulatedForceDevice, ClampsToItsPeakForceAndCountsIt) {
  rt::VirtualClock clock;
  EmulatedForceDevice device(clock, {});
  device.command_force({0, 0, 1.0f});
  device.command_force({0, 30.0f, 40.0f});
  const auto rec = device.recorded();
  ASSERT_EQ(rec.size(), 2u);
  EXPECT_FLOAT_EQ(rec[0].force_n.z, 1.0f);
  EXPECT_NEAR(std::hypot(rec[1].force_n.y, rec[1].force_n.z), 3.3, 1e-5);
  EXPECT_EQ(device.clamped_commands(), 1u);
}

TEST(EmulatedForceDevice, StartsReleasedEngagesOnACommandAndReleasesOnRequest) {
  rt::VirtualClock clock;
  EmulatedForceDeviceConfig config;
  config.phase_rad = 1.5707964f;  // a quarter turn ahead: starts at +y
  EmulatedForceDevice device(clock, config);
  EXPECT_TRUE(device.released());
  StylusPose pose;
  ASSERT_TRUE(device.read_pose(pose));
  EXPECT_NEAR(pose.position.y - config.centre.y, config.radius_m, 1e-6);
  device.command_force({0.5f, 0, 0});
  EXPECT_FALSE(device.released());
  EXPECT_FLOAT_EQ(device.last_force().x, 0.5f);
  device.release();
  device.release();  // idempotent
  EXPECT_TRUE(device.released());
  EXPECT_EQ(device.releases(), 1u);
  EXPECT_FLOAT_EQ(device.last_force().x, 0.0f);
}

// The servo loop as the daemon runs it: 90 Hz frame forces in, 1 kHz commands out.
TEST(EmulatedForceDevice, ServoLoopRendersSmoothForcesWithoutAllocating) {
  rt::VirtualClock clock;
  EmulatedForceDevice device(clock, {});
  force_feedback::ForceServoConfig config;
  config.max_step_n = 0.03;
  force_feedback::ForceServo servo(config);
  const test::AllocationScope scope;
  for (int tick = 0; tick < 3000; ++tick) {
    StylusPose pose;
    ASSERT_TRUE(device.read_pose(pose));
    if (tick % 11 == 0) {
      // A frame force that jumps between frames: in and out of the fluid every half second.
      const bool in_fluid = (tick / 500) % 2 == 0;
      servo.on_frame_force(in_fluid ? Eigen::Vector3d(0.4, 0, 1.2) : Eigen::Vector3d::Zero());
    }
    const Eigen::Vector3d f = servo.tick();
    device.command_force({static_cast<float>(f.x()), static_cast<float>(f.y()),
                          static_cast<float>(f.z())});
    clock.advance(rt::kNsPerMs);
  }
  EXPECT_EQ(scope.allocations(), 0u);
  const auto rec = device.recorded();
  ASSERT_EQ(rec.size(), 3000u);
  float largest_step = 0, largest_z = 0;
  for (std::size_t i = 1; i < rec.size(); ++i) {
    const Vec3f& a = rec[i - 1].force_n;
    const Vec3f& b = rec[i].force_n;
    largest_step = std::max(largest_step, std::hypot(b.x - a.x, b.y - a.y, b.z - a.z));
    largest_z = std::max(largest_z, b.z);
    EXPECT_EQ(rec[i].time_ns - rec[i - 1].time_ns, rt::kNsPerMs);
  }
  EXPECT_LE(largest_step, config.max_step_n + 1e-6);
  EXPECT_NEAR(largest_z, 1.2, 1e-3);  // the steady in-fluid force is reached
  EXPECT_EQ(device.clamped_commands(), 0u);
}

}  // namespace
}  // namespace sonoflow::drivers
