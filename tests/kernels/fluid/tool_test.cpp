// The force-feedback tool in the engine (issue 7; patent CN 105825059 A): a rod driven through
// the fluid feels a force that opposes its motion, grows with its speed and with the fluid's
// viscosity, and is zero out of the fluid; the 1 kHz servo renders it without steps larger than
// its limit.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include "kernels/force_feedback/force_servo.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kFloor = 0.10f;
constexpr float kDepth = 0.06f;

std::unique_ptr<FluidEngine> pool(float viscosity) {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material.substeps = 2;
  c.material.iterations = 4;
  c.material.media.viscosity.viscosity = viscosity;
  c.tool.kind = ToolKind::Rod;
  c.tool.radius = 0.006f;
  c.tool.length = 0.12f;
  auto e = make_engine(c);
  if (!e) return nullptr;
  Scene s;
  s.shapes.push_back(Shape::box({-0.12f, -0.12f, kFloor}, {0.12f, 0.12f, 0.35f}));
  s.blocks.push_back({{-0.12f, -0.12f, kFloor}, {0.12f, 0.12f, kFloor + kDepth}});
  EXPECT_FALSE(e->load_scene(s));
  run(*e, 30);  // settle
  return e;
}

struct Stroke {
  double drag = 0;         // N, mean force against the motion over the stroke's middle half
  double peak = 0;         // N, largest force magnitude
  std::vector<Vec3f> frames;  // the force of every frame
};

// A vertical rod, its centre at height z, moved along +x from -6 cm to +6 cm at `speed`.
Stroke stroke(FluidEngine& e, float speed, float z) {
  Stroke r;
  const double dt = 1.0 / 90.0;
  const int frames = static_cast<int>(std::lround(0.12 / (speed * dt)));
  ToolPose pose{{-0.06f, 0.0f, z}, {}};
  e.set_tool_pose(pose, nullptr);
  run(e, 1);
  int counted = 0;
  for (int f = 1; f <= frames; ++f) {
    const ToolPose before = pose;
    pose.position.x = -0.06f + speed * static_cast<float>(f * dt);
    e.set_tool_pose(pose, &before);
    run(e, 1);
    const ToolForce t = e.tool_force();
    r.frames.push_back(t.force);
    r.peak = std::max(r.peak, std::sqrt(double(t.force.x) * t.force.x + double(t.force.y) * t.force.y +
                                        double(t.force.z) * t.force.z));
    if (f > frames / 4 && f <= 3 * frames / 4) {
      r.drag += -t.force.x;
      ++counted;
    }
  }
  r.drag /= std::max(counted, 1);
  return r;
}

// The sweep a frame applies is the one the caller gives (start pose -> newest), with the hand's
// teleport rule, and lasts one frame: nothing of an earlier call's pose carries over.
TEST(Tool, SweepsFromTheGivenStartPoseForOneFrame) {
  ToolSpec spec;
  spec.kind = ToolKind::Rod;
  spec.radius = 0.006f;
  spec.length = 0.12f;
  ToolGhosts tool(spec, 0.01f);
  ASSERT_GT(tool.count(), 0);
  EXPECT_FALSE(tool.posed());
  const float teleport = 0.05f;
  const ToolPose a{{0.00f, 0.0f, 0.15f}, {}}, b{{0.01f, 0.0f, 0.15f}, {0, 0, 0.0998f, 0.995f}};
  const ToolPose c{{0.03f, 0.0f, 0.15f}, {}};
  tool.set_pose(c, &b, teleport);  // the caller's start pose, whatever came before
  EXPECT_TRUE(tool.posed());
  EXPECT_EQ(tool.pos_prev().x, 0.01f);
  EXPECT_NEAR(tool.rot_prev().z, 0.0998f, 1e-3f);
  EXPECT_NEAR(std::hypot(tool.rot_prev().z, tool.rot_prev().w), 1.0f, 1e-6f);
  EXPECT_EQ(tool.pos_new().x, 0.03f);
  tool.set_pose(c, &a, teleport);  // a later call replaces the sweep: it does not chain from b
  EXPECT_EQ(tool.pos_prev().x, 0.00f);
  tool.hold();  // after the frame: at rest at the newest pose
  EXPECT_EQ(tool.pos_prev().x, 0.03f);
  EXPECT_EQ(tool.pos_new().x, 0.03f);
  tool.set_pose(a, nullptr, teleport);  // no start pose: at rest
  EXPECT_EQ(tool.pos_prev().x, 0.00f);
  EXPECT_EQ(tool.pos_new().x, 0.00f);
  const ToolPose far{{0.20f, 0.0f, 0.15f}, {}};
  tool.set_pose(far, &a, teleport);  // farther than the teleport distance: starts at rest there
  EXPECT_EQ(tool.pos_prev().x, 0.20f);
  const ToolPose broken{{std::nanf(""), 0.0f, 0.15f}, {}};
  tool.set_pose(broken, &a, teleport);  // not finite: ignored, the tool rests where it was
  EXPECT_EQ(tool.pos_prev().x, 0.20f);
  EXPECT_EQ(tool.pos_new().x, 0.20f);
}

TEST(Tool, ForceOpposesMotionAndGrowsWithSpeedAndViscosity) {
  const float z = kFloor + kDepth;  // half the rod in the fluid
  auto water = pool(0.0f);
  ASSERT_TRUE(water);
  const Stroke slow = stroke(*water, 0.1f, z);
  const Stroke fast = stroke(*water, 0.3f, z);
  auto thick = pool(5.0f);
  ASSERT_TRUE(thick);
  const Stroke viscous = stroke(*thick, 0.1f, z);
  std::printf("drag against the motion: water 0.1 m/s %.4f N, 0.3 m/s %.4f N; 5 Pa s 0.1 m/s %.4f N\n",
              slow.drag, fast.drag, viscous.drag);
  EXPECT_GT(slow.drag, 0.0) << "the force must oppose the motion";
  EXPECT_GT(fast.drag, 1.5 * slow.drag) << "the force must grow with speed";
  EXPECT_GT(viscous.drag, 1.5 * slow.drag) << "the force must grow with viscosity";
}

TEST(Tool, NoForceOutOfTheFluid) {
  auto e = pool(1.0f);
  ASSERT_TRUE(e);
  const Stroke above = stroke(*e, 0.2f, kFloor + kDepth + 0.12f);  // 6 cm clear of the surface
  EXPECT_EQ(above.peak, 0.0);
  // Lowered in, it touches the fluid.
  const Stroke in = stroke(*e, 0.2f, kFloor + kDepth);
  EXPECT_GT(in.peak, 0.0);
}

// The engine's 90 Hz tool force, rendered by the 1 kHz servo: the output never steps by more
// than the configured limit, and it follows the fluid's force on average.
TEST(Tool, ServoRendersTheFluidForceWithinItsStepLimit) {
  auto e = pool(2.0f);
  ASSERT_TRUE(e);
  force_feedback::ForceServoConfig sc;
  sc.frame_rate_hz = 90;
  sc.max_force_n = 3.3;
  sc.max_step_n = 0.02;
  force_feedback::ForceServo servo(sc);
  const Stroke s = stroke(*e, 0.3f, kFloor + kDepth);
  Eigen::Vector3d last = Eigen::Vector3d::Zero();
  double worst_step = 0, mean_in = 0, mean_out = 0;
  int ticks = 0;
  for (std::size_t f = 0; f < s.frames.size(); ++f) {
    const Vec3f& F = s.frames[f];
    servo.on_frame_force({F.x, F.y, F.z});
    for (int k = 0; k < 11; ++k) {  // ~1000 / 90 servo ticks per frame
      const Eigen::Vector3d out = servo.tick();
      worst_step = std::max(worst_step, (out - last).norm());
      last = out;
      mean_out += out.x();
      mean_in += F.x;
      ++ticks;
    }
  }
  std::printf("servo: largest step %.4f N (limit %.4f), mean x force in %.4f out %.4f N\n",
              worst_step, sc.max_step_n, mean_in / ticks, mean_out / ticks);
  EXPECT_LE(worst_step, sc.max_step_n + 1e-9);
  EXPECT_LT(mean_out / ticks, 0.0) << "the rendered force must oppose the motion too";
}

}  // namespace
}  // namespace sonoflow::fluid::test
