// The pipeline on its real threads and the real clock, with the other threads that touch it in
// the daemon: a monitor reading the status sections, the supervisor changing live settings and
// doing housekeeping, the recorder draining telemetry; with force feedback, so the stylus poses'
// ring and the tool force mailbox between the force and fluid threads are checked too. Built
// again under ThreadSanitizer (label `concurrency`), which checks every hand-off between these
// threads. It asserts what happened, never how fast.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <memory>
#include <thread>

#include "daemon/pipeline/pipeline.hpp"
#include "daemon/recorder/recorder.hpp"
#include "daemon/scene/scene_file.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "daemon/status/status_file.hpp"
#include "drivers/force_device/emulated_force_device.hpp"

namespace sonoflow::daemon {
namespace {

using namespace std::chrono_literals;

TEST(ThreadedPipeline, RunsWithMonitorSupervisorAndRecorderThenStopsSilent) {
  Config config;
  for (ThreadSettings* t : {&config.threads.tracker, &config.threads.fluid, &config.threads.haptic,
                            &config.threads.stream, &config.threads.force}) {
    t->priority = 0;  // normal scheduling: this test checks hand-offs, not timing
  }
  config.recorder.directory = ::testing::TempDir() + "threaded" + std::to_string(getpid());
  config.recorder.io = "pwrite";
  rt::MonotonicClock clock;
  ScriptedHand hand(clock, 120);
  config.force_feedback.enabled = true;
  PalmDragField fluid;
  fluid.set_tool(0.006f, 0.12f);
  KernelRenderer renderer(config);
  EmulatedArray array(clock);
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.centre = {0.0f, 0.0f, PalmDragField::kSurfaceZ + 0.03f};  // the rod 9 cm deep
  drivers::EmulatedForceDevice device(clock, stylus);
  auto region = std::make_unique<status::StatusRegion>();
  Pipeline pipeline(config, clock, PipelineParts{hand, fluid, renderer, array, &device}, region.get());
  Recorder recorder(config, pipeline.links(), clock, region.get());
  // The scene export for viewers, read by the monitor thread as sonoflow-view would.
  std::string error;
  const std::string scene_path = ::testing::TempDir() + "threaded-scene" + std::to_string(getpid());
  auto scene = scene::SceneWriter::create(scene_path, {}, clock.now_ns(), error);
  ASSERT_TRUE(scene) << error;
  auto scene_reader = scene::SceneReader::attach(scene_path, error);
  ASSERT_TRUE(scene_reader) << error;
  pipeline.set_scene_export(*scene);
  pipeline.start_threads();
  recorder.set_origin(pipeline.start_ns());
  recorder.start_thread();

  std::atomic<bool> done{false};
  std::atomic<std::uint64_t> consistent{0}, scenes{0};
  std::thread monitor([&] {
    scene::FluidScene fluid_scene;
    scene::HapticScene haptic_scene;
    while (!done.load()) {
      const auto s = status::take_snapshot(*region);
      if (!s.torn) consistent.fetch_add(1);
      if (scene_reader->read_fluid(fluid_scene) && scene_reader->read_haptic(haptic_scene)) scenes.fetch_add(1);
      std::this_thread::sleep_for(1ms);
    }
  });

  EXPECT_TRUE(recorder.start().rfind("recording to", 0) == 0);
  Config live = config;
  for (int i = 0; i < 40; ++i) {  // ~800 ms of supervisor work
    pipeline.housekeeping(clock.now_ns());
    live.haptic.mode = i % 2 ? "stm" : "am";
    live.fluid.material = i % 2 ? "syrup" : "honey";
    pipeline.apply_live_settings(live);
    (void)pipeline.status_line();
    std::this_thread::sleep_for(20ms);
  }
  const std::string stopped = recorder.stop();
  EXPECT_NE(stopped.find("recording stopped"), std::string::npos) << stopped;
  EXPECT_TRUE(pipeline.stop(2'000'000'000));
  done = true;
  monitor.join();
  recorder.stop_thread();

  EXPECT_GT(pipeline.stream().blocks_sent(), 100u);
  EXPECT_GT(pipeline.tracker().frames(), 10u);
  EXPECT_GT(consistent.load(), 10u);
  EXPECT_GT(scenes.load(), 10u);
  array.status();
  EXPECT_EQ(array.output_intensity(), 0.0f);
  EXPECT_FALSE(array.status().armed);
  // The stirred rod was felt, and the device was left released.
  EXPECT_GT(pipeline.force()->fluid_forces(), 10u);
  EXPECT_GT(pipeline.force()->peak_force_n(), 0.0);
  EXPECT_TRUE(pipeline.force()->released_for_stop());
  EXPECT_TRUE(device.released());
}

}  // namespace
}  // namespace sonoflow::daemon
