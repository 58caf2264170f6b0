// The pipeline's scene export on a virtual clock: what the fluid and haptic threads publish for
// viewers is what they work with (the hand they were given, the foci they sent, target samples
// on that hand), at the configured rate, and publishing never allocates in steady state.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/scene/scene_file.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kSec = 1'000'000'000;

struct Rig {
  explicit Rig(std::string mode) : clock(kSec), hand(clock, 120), array(clock) {
    config.haptic.mode = std::move(mode);
    char pattern[] = "/tmp/sonoflow-scene-export.XXXXXX";
    dir = mkdtemp(pattern);
    std::string error;
    scene::SceneCapacity capacity;
    capacity.max_samples = 256;
    writer = scene::SceneWriter::create(dir + "/scene", capacity, 0, error);
    EXPECT_TRUE(writer) << error;
    reader = scene::SceneReader::attach(dir + "/scene", error);
    EXPECT_TRUE(reader) << error;
    renderer = std::make_unique<KernelRenderer>(config);
    status = std::make_unique<status::StatusRegion>();
    pipeline = std::make_unique<Pipeline>(config, clock, PipelineParts{hand, fluid, *renderer, array},
                                          status.get());
    pipeline->set_scene_export(*writer);
  }
  ~Rig() {
    pipeline.reset();
    std::system(("rm -rf " + dir).c_str());
  }
  void run_for(std::int64_t ns) { pipeline->run_virtual_until(clock, clock.now_ns() + ns); }

  Config config;
  rt::VirtualClock clock;
  ScriptedHand hand;
  PalmDragField fluid;
  EmulatedArray array;
  std::string dir;
  std::unique_ptr<scene::SceneWriter> writer;
  std::unique_ptr<scene::SceneReader> reader;
  std::unique_ptr<KernelRenderer> renderer;
  std::unique_ptr<status::StatusRegion> status;
  std::unique_ptr<Pipeline> pipeline;
};

float distance(float ax, float ay, float az, float bx, float by, float bz) {
  return std::sqrt((ax - bx) * (ax - bx) + (ay - by) * (ay - by) + (az - bz) * (az - bz));
}

TEST(SceneExport, PublishesAtTheConfiguredRate) {
  Rig rig("am");
  rig.run_for(2 * kSec);
  // 30 Hz over 2 s; the fluid section only after frames with a hand (from the first tracker
  // frame on), so a few fewer.
  EXPECT_NEAR(static_cast<double>(rig.reader->haptic_publications()), 60.0, 2.0);
  EXPECT_NEAR(static_cast<double>(rig.reader->fluid_publications()), 60.0, 3.0);
}

// The fluid section carries the hand the fluid thread stepped with and the contact field it made.
TEST(SceneExport, FluidSectionShowsTheHandAndTheContactField) {
  Rig rig("am");
  rig.run_for(1 * kSec);
  scene::FluidScene fluid;
  ASSERT_TRUE(rig.reader->read_fluid(fluid));
  EXPECT_EQ(fluid.head.hand_count, 1u);
  EXPECT_EQ(fluid.head.hands[0].valid_mask, (1u << kHandJointCount) - 1);
  // The palm is where the scripted hand holds it (above the array, within its 16 cm square).
  const scene::SceneJoint& palm = fluid.head.hands[0].joints[0];
  EXPECT_GT(palm.z, 0.1f);
  EXPECT_LT(std::abs(palm.x), 0.1f);
  EXPECT_GT(fluid.head.samples_total, 0u);
  EXPECT_EQ(fluid.samples.size(), std::min<std::size_t>(fluid.head.samples_total, 256));
  float max_pressure = 0;
  for (const auto& s : fluid.samples) max_pressure = std::max(max_pressure, s.pressure);
  EXPECT_GT(max_pressure, 0.0f);
  EXPECT_LE(max_pressure, fluid.head.max_pressure);
  EXPECT_EQ(fluid.particles.size(), 0u);  // the stand-in has no particles
  EXPECT_EQ(std::string(fluid.head.material.data()), rig.config.fluid.material);
}

// AM: the foci the haptic thread sent and the optimiser's own foci, and target samples re-posed
// onto the hand (each lies within a few centimetres of a joint of that hand).
TEST(SceneExport, HapticSectionInAmShowsFociAndTargetsOnTheHand) {
  Rig rig("am");
  rig.run_for(1500 * kMs);
  scene::HapticScene haptic;
  ASSERT_TRUE(rig.reader->read_haptic(haptic));
  scene::FluidScene fluid;
  ASSERT_TRUE(rig.reader->read_fluid(fluid));
  EXPECT_EQ(haptic.head.mode, 1u);
  EXPECT_GT(haptic.head.emitted_count, 0u);
  EXPECT_GT(haptic.head.solution_count, 0u);
  EXPECT_FLOAT_EQ(haptic.head.sigma_m, 8.6e-3f);
  for (std::uint32_t f = 0; f < haptic.head.emitted_count; ++f) {
    EXPECT_GE(haptic.head.emitted[f].value, 0.0f);
    EXPECT_LE(haptic.head.emitted[f].value, static_cast<float>(rig.config.safety.max_intensity) + 1e-6f);
  }
  ASSERT_GT(haptic.targets.size(), 0u);
  for (const auto& t : haptic.targets) {
    float nearest = 1e9f;
    for (const auto& j : fluid.head.hands[0].joints) nearest = std::min(nearest, distance(t.x, t.y, t.z, j.x, j.y, j.z));
    EXPECT_LT(nearest, 0.05f);
  }
  EXPECT_GT(haptic.trail.size(), 0u);
}

// STM: the playing plan's loops, at most 140 mm long each (thesis ch. 5), and the moving focus.
TEST(SceneExport, HapticSectionInStmShowsThePathsAndTheMovingFocus) {
  Rig rig("stm");
  rig.run_for(1500 * kMs);
  scene::HapticScene haptic;
  ASSERT_TRUE(rig.reader->read_haptic(haptic));
  EXPECT_EQ(haptic.head.mode, 2u);
  ASSERT_GT(haptic.head.path_count, 0u);
  EXPECT_GT(haptic.head.gamma, 0.0f);
  for (std::uint32_t p = 0; p < haptic.head.path_count; ++p) {
    const std::uint32_t n = haptic.head.path_vertices[p];
    ASSERT_GE(n, 2u);
    float length = 0;
    for (std::uint32_t v = 0; v < n; ++v) {
      const auto& a = haptic.paths[p * scene::kMaxPathVertices + v];
      const auto& b = haptic.paths[p * scene::kMaxPathVertices + (v + 1) % n];
      length += distance(a.x, a.y, a.z, b.x, b.y, b.z);
    }
    EXPECT_LE(length, 0.141f);
  }
  EXPECT_GE(haptic.head.emitted_count, 1u);
  // The trail holds every focus of every sample (one per path): each moves at ~7 m/s, 0.35 mm
  // in the 50 us between samples.
  const std::size_t foci = haptic.head.emitted_count;
  ASSERT_GE(haptic.trail.size(), 20 * foci);
  const auto& a = haptic.trail[haptic.trail.size() - 1 - foci];
  const auto& b = haptic.trail.back();
  EXPECT_LT(distance(a.x, a.y, a.z, b.x, b.y, b.z), 0.002f);
}

TEST(SceneExport, SteadyStateTicksWithTheExportNeverAllocate) {
  for (const char* mode : {"am", "stm"}) {
    Rig rig(mode);
    rig.run_for(1 * kSec);  // warm-up
    const std::uint64_t before = rig.reader->haptic_publications();
    test::AllocationScope scope;
    rig.run_for(2 * kSec);
    EXPECT_EQ(scope.allocations(), 0u) << mode;
    EXPECT_GT(rig.reader->haptic_publications(), before + 50) << mode;
  }
}

}  // namespace
}  // namespace sonoflow::daemon
