#pragma once
// The pipeline: the four stages (tracker, fluid, haptic, stream), their links, and how they run.
//
// With force feedback (a ForceDevice in the parts) a fifth stage runs the device's servo loop.
// Two ways to run the same stages:
//   - start_threads(): one thread per stage on the real clock, each a PeriodicLoop with the
//     config's RT priority and CPU (falling back to normal scheduling, reported once);
//   - run_virtual_until(): on a VirtualClock, every stage in deadline order on the caller's
//     thread, so a test drives minutes of pipeline deterministically in seconds.
// stop() fades the output to silence and the force to zero, stops the stages in order (tracker,
// fluid, haptic, force, then the stream once the silent tail has played), disarms the array and
// leaves the force device released: never left emitting, never left pushing.
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/fluid_stage.hpp"
#include "daemon/pipeline/force_stage.hpp"
#include "daemon/pipeline/haptic_stage.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/stream_stage.hpp"
#include "daemon/pipeline/tracker_stage.hpp"
#include "rt/clock.hpp"
#include "rt/periodic_loop.hpp"
#include "rt/rt_thread.hpp"

namespace sonoflow::daemon {

struct PipelineParts {
  HandSource& hands;
  FluidModel& fluid;
  HapticRenderer& renderer;
  ArrayLink& array;
  drivers::ForceDevice* force = nullptr;  // force feedback's device; null: no force stage
};

HapticSettings haptic_settings_from(const Config& config);
HapticTiming haptic_timing_from(const Config& config);
FluidSettings fluid_settings_from(const Config& config);
force_feedback::ForceServoConfig force_servo_from(const Config& config);

class Pipeline {
 public:
  // tracker, fluid, haptic, stream, and force when the parts have a force device.
  static constexpr int kMaxStages = 5;
  // A stage that has not ticked for this long (or 10 periods, if longer) is stale.
  static constexpr std::int64_t kStaleHeartbeatNs = 1'000'000'000;

  // `status` may be null (no export). Allocates everything the stages will ever use.
  Pipeline(const Config& config, rt::Clock& clock, PipelineParts parts,
           status::StatusRegion* status);
  ~Pipeline();
  Pipeline(const Pipeline&) = delete;
  Pipeline& operator=(const Pipeline&) = delete;

  void start_threads();
  void run_virtual_until(rt::VirtualClock& clock, std::int64_t until_ns);
  // Virtual runs: called before every stage tick, e.g. to pump in-process device transports
  // (which have no service threads of their own then).
  void set_virtual_pump(std::function<void()> pump) { virtual_pump_ = std::move(pump); }
  // Before starting: the fluid and haptic threads publish the scene for live viewers into
  // `writer` (daemon/scene/) at its rate. Allocates the exports' staging here.
  void set_scene_export(scene::SceneWriter& writer);

  // Fades to silence and stops in order. Threads: waits up to timeout_ns of real time.
  // Virtual: advances the virtual clock up to timeout_ns. True when the fade completed.
  bool stop(std::int64_t timeout_ns);
  bool running() const noexcept { return started_ && !stopped_; }
  std::int64_t start_ns() const noexcept { return start_ns_; }

  // Supervisor thread: live keys (material, tau, alpha, mode, caps).
  void apply_live_settings(const Config& config);
  // Supervisor thread, at status rate: ring levels, heartbeat; true when every running
  // stage ticked recently (the systemd watchdog is fed only then).
  bool housekeeping(std::int64_t now_ns);
  // Threads outside the stages that the RT report and the DEGRADED mark cover too (the USB
  // transports' threads, threads.usb). Supervisor thread, before start_threads().
  void add_thread_report(std::string name, int requested_priority, rt::RtSetupReport report);
  // True once every stage thread has set up its scheduling (rt_report() is complete then).
  bool scheduling_known() const noexcept;
  // True once every stage has published its status (each does at its first tick): from then a
  // monitor attaching sees every loop's section filled in, so READY waits for it.
  bool every_loop_published() const noexcept;
  // One consolidated message when some stage or added thread did not get its RT scheduling;
  // empty otherwise. `refusing`: the daemon will not start (rt.require) rather than run degraded.
  std::string rt_report(bool refusing = false) const;
  bool degraded() const;

  std::string summary_json(std::int64_t now_ns) const;
  std::string status_line() const;  // for sd_notify STATUS=

  Links& links() noexcept { return *links_; }
  TrackerStage& tracker() noexcept { return *tracker_; }
  FluidStage& fluid() noexcept { return *fluid_; }
  HapticStage& haptic() noexcept { return *haptic_; }
  StreamStage& stream() noexcept { return *stream_; }
  ForceStage* force() noexcept { return force_.get(); }  // null without force feedback
  const rt::PeriodicLoop& loop(int stage) const noexcept { return *slots_[stage].loop; }

 private:
  struct Slot {
    Stage* stage = nullptr;
    ThreadSettings sched;
    std::unique_ptr<rt::PeriodicLoop> loop;
    std::thread thread;
    std::atomic<bool> stop{false};
    std::atomic<bool> active{false};
    std::atomic<std::int64_t> last_wake_ns{0};
    std::atomic<std::uint64_t> ticks{0};
    std::int64_t next_publish_ns = 0;
    std::uint64_t window_ticks = 0;
    std::int64_t window_start_ns = 0;
    rt::RtSetupReport rt;
    std::atomic<bool> rt_known{false};
    std::atomic<bool> published{false};
  };

  struct OtherThread {
    std::string name;
    int requested_priority = 0;
    rt::RtSetupReport rt;
  };

  void run_tick(Slot& slot, const rt::LoopTick& tick) noexcept;
  void publish_loop(Slot& slot, std::int64_t now_ns) noexcept;
  void stop_slot(Slot& slot);
  std::span<Slot> stage_slots() noexcept { return {slots_.data(), static_cast<std::size_t>(stage_count_)}; }
  std::span<const Slot> stage_slots() const noexcept {
    return {slots_.data(), static_cast<std::size_t>(stage_count_)};
  }
  // Advances until `done` or `timeout_ns` passes (virtual or real, as the pipeline runs).
  template <typename Done>
  bool wait_for(Done done, std::int64_t timeout_ns);

  Config config_;
  rt::Clock& clock_;
  PipelineParts parts_;
  status::StatusRegion* status_;
  std::unique_ptr<Links> links_;
  std::unique_ptr<TrackerStage> tracker_;
  std::unique_ptr<FluidStage> fluid_;
  std::unique_ptr<HapticStage> haptic_;
  std::unique_ptr<StreamStage> stream_;
  std::unique_ptr<ForceStage> force_;
  std::array<Slot, kMaxStages> slots_;
  int stage_count_ = 4;
  std::unique_ptr<FluidSceneExport> fluid_scene_;
  std::unique_ptr<HapticSceneExport> haptic_scene_;
  std::vector<OtherThread> other_threads_;
  std::int64_t publish_period_ns_;
  std::int64_t start_ns_ = 0;
  std::atomic<bool> go_{false};  // the stage threads' loops may start (start_threads)
  rt::VirtualClock* virtual_clock_ = nullptr;
  std::function<void()> virtual_pump_;
  bool started_ = false, threaded_ = false, stopped_ = false;
};

}  // namespace sonoflow::daemon
