// Force feedback in the pipeline (issue 7) on a virtual clock: the emulated stylus moves the tool
// through the fluid, the fluid's force on it comes back once per frame, and the 1 kHz force
// stage renders it on the device. The physics runs on the OpenCL particle fluid (PoCL in CI):
// the force opposes the stylus motion and is zero with the tool out of the fluid. The safety
// paths run on a fluid whose tool force the test sets (the FluidModel seam): no step larger than
// the limit, and a ramp to zero ending in a released device on stop, on a stale fluid force and
// on stylus loss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "daemon/status/status_layout.hpp"
#include "drivers/force_device/emulated_force_device.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSec = 1'000'000'000;

// The palm-drag fluid for the hand, with a tool force the test sets; it can fail every frame, or
// take longer than a period (it moves the virtual clock on). It notes how each frame sweeps the
// tool (previous -> newest pose over the frame): the speed against the stylus' own speed, and
// the stylus time the sweep spans.
struct ScriptedToolFluid final : FluidModel {
  void step(const HandFrame& newest, const HandFrame* previous, double dt, ContactField& out,
            FluidStepInfo& info) noexcept override {
    palm.step(newest, previous, dt, out, info);
    if (stalled) info.ok = false;
    if (poses > 0 && stylus_speed > 0) {
      const Vec3f& a = sweep_from.position;
      const Vec3f& b = last_pose.position;
      const double ratio = std::hypot(b.x - a.x, b.y - a.y, b.z - a.z) / dt / stylus_speed;
      ++swept_frames;
      lowest_speed_ratio = std::min(lowest_speed_ratio, ratio);
      highest_speed_ratio = std::max(highest_speed_ratio, ratio);
      const std::int64_t span = last_pose.time_ns - sweep_from.time_ns;
      shortest_span_ns = std::min(shortest_span_ns, span);
      longest_span_ns = std::max(longest_span_ns, span);
    }
    if (slow_clock != nullptr) slow_clock->advance(step_takes_ns);
  }
  void set_material(std::string_view name, double tau, double alpha) noexcept override {
    palm.set_material(name, tau, alpha);
  }
  void set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept override {
    last_pose = newest;
    sweep_from = previous != nullptr ? *previous : newest;
    ++poses;
  }
  void reset_sweeps() {
    swept_frames = 0;
    lowest_speed_ratio = 1e9, highest_speed_ratio = 0;
    shortest_span_ns = std::numeric_limits<std::int64_t>::max(), longest_span_ns = 0;
  }
  bool tool_force(ToolForceSample& out) noexcept override {
    out.force = force;
    out.touching = 10;
    return true;
  }
  PalmDragField palm;
  Vec3f force{};
  bool stalled = false;
  ToolPoseSample last_pose{}, sweep_from{};
  int poses = 0;
  double stylus_speed = 0;  // m/s, the scripted stylus' own speed (0: don't note sweeps)
  rt::VirtualClock* slow_clock = nullptr;
  std::int64_t step_takes_ns = 0;
  int swept_frames = 0;
  double lowest_speed_ratio = 1e9, highest_speed_ratio = 0;
  std::int64_t shortest_span_ns = std::numeric_limits<std::int64_t>::max(), longest_span_ns = 0;
};

Config force_config() {
  Config c;
  c.force_feedback.enabled = true;
  c.force_feedback.servo.max_step_n = 0.05;
  c.force_feedback.servo.max_force_n = 3.0;
  c.haptic.mode = "off";  // the array's side is the pipeline tests' subject
  return c;
}

struct Rig {
  Rig(const Config& c, FluidModel& fluid_model, drivers::EmulatedForceDeviceConfig stylus)
      : config(c),
        clock(kSec),
        hand(clock, config.tracker.rate_hz),
        renderer(config),
        array(clock),
        device(clock, stylus),
        status(std::make_unique<status::StatusRegion>()) {
    pipeline = std::make_unique<Pipeline>(
        config, clock, PipelineParts{hand, fluid_model, renderer, array, &device}, status.get());
  }
  void run_for(std::int64_t ns) { pipeline->run_virtual_until(clock, clock.now_ns() + ns); }

  Config config;
  rt::VirtualClock clock;
  ScriptedHand hand;
  KernelRenderer renderer;
  EmulatedArray array;
  drivers::EmulatedForceDevice device;
  std::unique_ptr<status::StatusRegion> status;
  std::unique_ptr<Pipeline> pipeline;
};

double norm(const Vec3f& v) { return std::sqrt(double{v.x} * v.x + double{v.y} * v.y + double{v.z} * v.z); }

// The largest change between two consecutive commands the device received.
double largest_step(const std::vector<drivers::RecordedForce>& commands) {
  double worst = commands.empty() ? 0 : norm(commands.front().force_n);  // from rest
  for (std::size_t i = 1; i < commands.size(); ++i) {
    const Vec3f& a = commands[i - 1].force_n;
    const Vec3f& b = commands[i].force_n;
    worst = std::max(worst, norm({b.x - a.x, b.y - a.y, b.z - a.z}));
  }
  return worst;
}

// A stylus that holds still, its tool's origin at `z`.
drivers::EmulatedForceDeviceConfig held_at(float z) {
  drivers::EmulatedForceDeviceConfig s;
  s.script = drivers::StylusScript::Hold;
  s.centre = {0.0f, 0.0f, z};
  return s;
}

// ---- Physics: the OpenCL particle fluid ---------------------------------------------------

std::unique_ptr<KernelFluid> particle_fluid(const Config& config) {
  MaterialPresets presets;
  std::string error;
  EXPECT_TRUE(load_material_presets(config, SONOFLOW_SOURCE_DIR "/config/materials", presets, error)) << error;
  auto fluid = KernelFluid::create(config, std::move(presets), error);
  EXPECT_TRUE(fluid) << error;
  return fluid;
}

// The honey pool of sonoflowd (1,024 particles, 4 cm deep) with the rod stirring a 4 cm circle
// every 2 s, its tip 2.5 cm deep: the force the device renders works against the stylus's
// velocity, and the rendering never steps by more than the limit.
TEST(ForceFeedback, RenderedForceOpposesTheStylusMotionThroughTheFluid) {
  const Config config = force_config();
  auto fluid = particle_fluid(config);
  ASSERT_TRUE(fluid);
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.script = drivers::StylusScript::StirCircle;
  stylus.radius_m = 0.04f;
  stylus.period_s = 2.0f;
  stylus.centre = {0.0f, 0.0f, fluid::kPoolSurfaceZ - 0.025f + 0.06f};
  Rig rig(config, *fluid, stylus);
  rig.run_for(3 * kSec);

  const auto commands = rig.device.recorded();
  ASSERT_GT(commands.size(), 2500u);
  double along = 0, magnitude = 0;
  int counted = 0;
  for (const auto& c : commands) {
    if (c.time_ns < rig.clock.now_ns() - 2 * kSec) continue;  // the first second: stirring up
    const auto a = rig.device.pose_at(c.time_ns - kMs).position;
    const auto b = rig.device.pose_at(c.time_ns + kMs).position;
    const double vx = b.x - a.x, vy = b.y - a.y, vz = b.z - a.z;
    const double speed = std::sqrt(vx * vx + vy * vy + vz * vz);
    along += (c.force_n.x * vx + c.force_n.y * vy + c.force_n.z * vz) / speed;
    magnitude += norm(c.force_n);
    ++counted;
  }
  along /= counted;
  magnitude /= counted;
  std::printf("rod in honey at %.3f m/s: mean force %.3f N, along the motion %.3f N\n",
              2 * 3.14159 * 0.04 / 2.0, magnitude, along);
  EXPECT_GT(magnitude, 0.01) << "the rod in the fluid must feel a force";
  EXPECT_LT(along, -0.3 * magnitude) << "the force must work against the stylus motion";
  EXPECT_LE(largest_step(commands), config.force_feedback.servo.max_step_n + 1e-6);
  EXPECT_EQ(rig.device.clamped_commands(), 0u) << "the servo's cap keeps within the device's peak";
  EXPECT_LE(rig.pipeline->force()->peak_force_n(), config.force_feedback.servo.max_force_n + 1e-9);
}

// Held 10 cm above the resting pool the rod touches nothing: no force at all reaches the device.
// (No hand in the pool either: a hand appearing in the fluid splashes it up to the rod.)
TEST(ForceFeedback, NoForceWithTheToolOutOfTheFluid) {
  const Config config = force_config();
  auto fluid = particle_fluid(config);
  ASSERT_TRUE(fluid);
  Rig rig(config, *fluid, held_at(fluid::kPoolSurfaceZ + 0.1f + 0.06f));
  rig.hand.set_hand_visible(false);
  rig.run_for(1 * kSec);
  EXPECT_GT(rig.pipeline->force()->fluid_forces(), 30u);
  EXPECT_EQ(rig.pipeline->force()->peak_force_n(), 0.0);
  status::ForceFeedbackStatus s;
  ASSERT_TRUE(rig.status->force_feedback.lock.load(s));
  EXPECT_EQ(s.touching, 0u);
  EXPECT_EQ(s.fluid_force[0], 0.0f);
  EXPECT_EQ(s.fluid_force[2], 0.0f);
}

// ---- Safety paths: a fluid whose tool force the test sets ----------------------------------

struct ScriptedRig {
  explicit ScriptedRig(Config c = force_config(), drivers::EmulatedForceDeviceConfig stylus = held_at(0.17f))
      : rig(c, fluid, stylus) {}
  ScriptedToolFluid fluid;
  Rig rig;
};

// A fluid frame sweeps the tool over one fluid period of the stylus' motion, at full rate and
// when each step takes 2.5 periods: the tool moves through the fluid at the stylus' speed, not
// at the speed of the poses the steps happen to see (2.5x too fast and too much force fed back).
TEST(ForceFeedback, AFluidBehindRealTimeSweepsTheToolAtTheStylusSpeed) {
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.script = drivers::StylusScript::StirCircle;
  stylus.radius_m = 0.04f;
  stylus.period_s = 2.0f;
  stylus.centre = {0.0f, 0.0f, 0.17f};
  ScriptedRig r(force_config(), stylus);
  r.fluid.stylus_speed = 2 * 3.14159265 * 0.04 / 2.0;
  r.rig.run_for(100 * kMs);  // the first frames have less than a period of stylus behind them
  r.fluid.reset_sweeps();
  r.rig.run_for(1 * kSec);
  const std::int64_t period = r.rig.pipeline->fluid().period_ns();
  ASSERT_GT(r.fluid.swept_frames, 80);
  EXPECT_NEAR(r.fluid.lowest_speed_ratio, 1.0, 0.02);
  EXPECT_NEAR(r.fluid.highest_speed_ratio, 1.0, 0.02);
  EXPECT_EQ(r.fluid.shortest_span_ns, period);
  EXPECT_EQ(r.fluid.longest_span_ns, period);
  const std::uint64_t frames_at_full_rate = r.rig.pipeline->fluid().frames();

  r.fluid.reset_sweeps();
  r.fluid.slow_clock = &r.rig.clock;
  r.fluid.step_takes_ns = period * 5 / 2;
  r.rig.run_for(2 * kSec);
  const std::uint64_t slow_frames = r.rig.pipeline->fluid().frames() - frames_at_full_rate;
  EXPECT_LT(slow_frames, 2u * 90u / 2u);  // the premise: fewer than half the periods ran a step
  ASSERT_GT(r.fluid.swept_frames, 40);
  EXPECT_NEAR(r.fluid.lowest_speed_ratio, 1.0, 0.02);
  EXPECT_NEAR(r.fluid.highest_speed_ratio, 1.0, 0.02);
  EXPECT_EQ(r.fluid.shortest_span_ns, period);
  EXPECT_EQ(r.fluid.longest_span_ns, period);
  EXPECT_EQ(r.rig.pipeline->links().tool_poses_to_fluid.drops.load(), 0u);
}

// The fluid's force flips between +2.5 N and -2.5 N each half second and jumps to 40 N once:
// every command stays within the step limit and the cap.
TEST(ForceFeedback, NoServoStepLargerThanTheLimitWhateverTheFluidDoes) {
  ScriptedRig r;
  for (int i = 0; i < 6; ++i) {
    r.fluid.force = {i % 2 ? -2.5f : 2.5f, 0.0f, i % 3 ? 0.0f : 1.0f};
    r.rig.run_for(500 * kMs);
  }
  r.fluid.force = {0.0f, 40.0f, 0.0f};
  r.rig.run_for(300 * kMs);
  const auto commands = r.rig.device.recorded();
  ASSERT_GT(commands.size(), 3000u);
  EXPECT_LE(largest_step(commands), 0.05 + 1e-6);
  double peak = 0;
  for (const auto& c : commands) peak = std::max(peak, norm(c.force_n));
  EXPECT_NEAR(peak, 3.0, 1e-5) << "the cap holds the 40 N jump";
  status::ForceFeedbackStatus s;
  ASSERT_TRUE(r.rig.status->force_feedback.lock.load(s));
  EXPECT_EQ(s.output, status::ForceOutput::Rendering);
  EXPECT_LE(s.largest_step_n, 0.05f + 1e-6f);
  EXPECT_NEAR(s.commanded[1], 3.0f, 1e-4f);
  // The stylus moved the tool: the fluid got its pose before its frames.
  EXPECT_GT(r.fluid.poses, 200);
  EXPECT_FLOAT_EQ(r.fluid.last_pose.position.z, 0.17f);
}

// Ramp from `from` N to zero at max_step_n per tick, after the FIR's delay: an upper bound.
std::int64_t ramp_bound_ns(double from) { return static_cast<std::int64_t>((from / 0.05 + 2 * 12 + 2) * kMs); }

TEST(ForceFeedback, StopRampsToZeroWithinTheStepLimitThenReleasesTheDevice) {
  ScriptedRig r;
  r.fluid.force = {0.0f, 2.0f, 0.0f};
  r.rig.run_for(1 * kSec);
  ASSERT_FALSE(r.rig.device.released());
  ASSERT_NEAR(r.rig.device.last_force().y, 2.0f, 1e-4f);
  const std::int64_t stop_at = r.rig.clock.now_ns();
  EXPECT_TRUE(r.rig.pipeline->stop(500 * kMs));
  EXPECT_TRUE(r.rig.device.released());
  EXPECT_EQ(r.rig.device.releases(), 1u);
  const auto commands = r.rig.device.recorded();
  EXPECT_EQ(norm(commands.back().force_n), 0.0);
  EXPECT_LE(commands.back().time_ns, stop_at + ramp_bound_ns(2.0));
  EXPECT_GE(commands.back().time_ns, stop_at + 40 * kMs) << "2 N at 0.05 N per tick takes 40 ticks";
  EXPECT_LE(largest_step(commands), 0.05 + 1e-6);
  EXPECT_TRUE(r.rig.pipeline->force()->released_for_stop());
}

TEST(ForceFeedback, StaleFluidForceRampsToZeroReleasesAndResumes) {
  ScriptedRig r;
  r.fluid.force = {1.5f, 0.0f, 0.0f};
  r.rig.run_for(1 * kSec);
  const std::int64_t stalled_at = r.rig.clock.now_ns();
  r.fluid.stalled = true;  // frames fail: no force comes back
  r.rig.run_for(80 * kMs);
  EXPECT_FALSE(r.rig.device.released()) << "younger than force_stale_after_ms (100): still rendered";
  r.rig.run_for(420 * kMs);
  EXPECT_TRUE(r.rig.device.released());
  const auto stale = r.rig.device.recorded();
  EXPECT_EQ(norm(stale.back().force_n), 0.0);
  // Stale after 100 ms (plus up to a fluid frame), then the ramp.
  EXPECT_LE(stale.back().time_ns, stalled_at + 100 * kMs + 12 * kMs + ramp_bound_ns(1.5));
  EXPECT_EQ(r.rig.pipeline->force()->stale_releases(), 1u);

  r.fluid.stalled = false;  // the fluid recovers: rendering resumes from zero, step-limited
  r.rig.run_for(500 * kMs);
  EXPECT_FALSE(r.rig.device.released());
  EXPECT_NEAR(r.rig.device.last_force().x, 1.5f, 1e-4f);
  EXPECT_LE(largest_step(r.rig.device.recorded()), 0.05 + 1e-6);
}

TEST(ForceFeedback, StylusLossRampsToZeroAndReleases) {
  ScriptedRig r;
  r.fluid.force = {0.0f, 0.0f, -1.0f};
  r.rig.run_for(1 * kSec);
  const int poses = r.fluid.poses;
  r.rig.device.set_connected(false);  // unplugged: no pose, commands go nowhere
  r.rig.run_for(200 * kMs);
  EXPECT_TRUE(r.rig.device.released());
  EXPECT_EQ(r.rig.pipeline->force()->stylus_losses(), 1u);
  EXPECT_LE(r.fluid.poses, poses + 1) << "no pose reaches the fluid without the stylus";
  // Back: the servo had ramped to zero meanwhile, so it starts from rest, never with a jump.
  const std::size_t before = r.rig.device.recorded().size();
  r.rig.device.set_connected(true);
  r.rig.run_for(500 * kMs);
  EXPECT_FALSE(r.rig.device.released());
  EXPECT_NEAR(r.rig.device.last_force().z, -1.0f, 1e-4f);
  const auto all = r.rig.device.recorded();
  const std::vector<drivers::RecordedForce> after(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  EXPECT_LE(largest_step(after), 0.05 + 1e-6) << "largest_step counts the first command from rest";
}

TEST(ForceFeedback, ForceLoopPublishesItsRowAndSection) {
  ScriptedRig r;
  r.fluid.force = {0.3f, 0.0f, 0.0f};
  r.rig.run_for(2 * kSec);
  status::LoopStatus loop;
  ASSERT_TRUE(r.rig.status->loops[static_cast<int>(status::Stage::Force)].lock.load(loop));
  EXPECT_GT(loop.ticks, 1800u);
  EXPECT_EQ(loop.period_target_ns, 1'000'000);
  status::ForceFeedbackStatus s;
  ASSERT_TRUE(r.rig.status->force_feedback.lock.load(s));
  EXPECT_EQ(s.enabled, 1u);
  EXPECT_EQ(s.stylus, 1u);
  EXPECT_EQ(s.touching, 10u);
  EXPECT_FLOAT_EQ(s.stylus_position[2], 0.17f);
  EXPECT_FLOAT_EQ(s.max_force_n, 3.0f);
  EXPECT_GT(s.fluid_forces, 150u);
  EXPECT_GE(s.force_age_ns, 0);
  EXPECT_LE(s.force_age_ns, 12 * kMs);
  const std::string summary = r.rig.pipeline->summary_json(r.rig.clock.now_ns());
  EXPECT_NE(summary.find("\"name\":\"force\""), std::string::npos);
  EXPECT_NE(summary.find("\"force_feedback\":{\"enabled\":true"), std::string::npos);
  EXPECT_NE(r.rig.pipeline->status_line().find("; force rendering"), std::string::npos)
      << r.rig.pipeline->status_line();
}

// The force loop (device read, mailboxes, servo, device command, status, trace) in steady
// state allocates nothing, like the haptic and stream loops.
TEST(ForceFeedback, SteadyStateForceTicksNeverAllocate) {
  ScriptedRig r;
  r.fluid.force = {0.5f, 0.2f, 0.0f};
  r.rig.pipeline->links().recording.store(true);
  r.rig.run_for(1 * kSec);
  test::AllocationScope scope;
  r.rig.run_for(2 * kSec);
  EXPECT_EQ(scope.allocations(), 0u);
  EXPECT_GT(r.rig.pipeline->force()->ticks(), 2900u);
}

// The standin fluid (fluid.engine = "standin") has a tool too: a drag that opposes the motion.
TEST(ForceFeedback, StandinFluidDragsTheRodAgainstItsMotion) {
  PalmDragField palm;
  palm.set_material("honey", 0, 0);
  palm.set_tool(0.006f, 0.12f);
  HandFrame none{};
  ContactField field;
  FluidStepInfo info;
  ToolPoseSample pose;
  pose.position = {0.0f, 0.0f, PalmDragField::kSurfaceZ + 0.03f};  // 3 cm of the rod immersed
  palm.set_tool_pose(pose, nullptr);
  palm.step(none, nullptr, 1.0 / 90, field, info);
  const ToolPoseSample before = pose;
  pose.position.x += 0.1f / 90;  // 0.1 m/s along +x
  palm.set_tool_pose(pose, &before);
  palm.step(none, nullptr, 1.0 / 90, field, info);
  ToolForceSample f;
  ASSERT_TRUE(palm.tool_force(f));
  EXPECT_LT(f.force.x, -0.01f);
  EXPECT_GT(f.force.z, 0.0f) << "buoyancy";
  pose.position.z += 0.2f;  // lifted out
  palm.set_tool_pose(pose, nullptr);
  palm.step(none, nullptr, 1.0 / 90, field, info);
  ASSERT_TRUE(palm.tool_force(f));
  EXPECT_EQ(norm(f.force), 0.0);
}

}  // namespace
}  // namespace sonoflow::daemon
