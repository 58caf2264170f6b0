#include "daemon/pipeline/pipeline.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "daemon/status/json_writer.hpp"

namespace sonoflow::daemon {
namespace {

HapticMode mode_of(const std::string& mode) {
  return mode == "stm" ? HapticMode::STM : mode == "off" ? HapticMode::Silent : HapticMode::AM;
}

std::int64_t period_of(double rate_hz) { return static_cast<std::int64_t>(std::llround(1e9 / rate_hz)); }

template <typename Ring>
void export_ring(status::RingStatus::Ring& out, const char* name, const Ring& r) {
  std::strncpy(out.name.data(), name, out.name.size() - 1);
  out.depth = static_cast<std::uint32_t>(r.ring.size_estimate());
  out.capacity = static_cast<std::uint32_t>(std::remove_reference_t<decltype(r.ring)>::kCapacity);
  out.high_water = r.high_water.load(std::memory_order_relaxed);
  out.drops = r.drops.load(std::memory_order_relaxed);
}

}  // namespace

HapticSettings haptic_settings_from(const Config& c) {
  HapticSettings s;
  s.mode = mode_of(c.haptic.mode);
  s.am_frequency_hz = c.haptic.am_frequency_hz;
  s.max_foci = c.haptic.max_foci;
  s.stm_speed_m_s = c.haptic.stm_speed_m_s;
  s.max_intensity = static_cast<float>(c.safety.max_intensity);
  s.max_total_power = static_cast<float>(c.safety.max_total_power);
  return s;
}

HapticTiming haptic_timing_from(const Config& c) {
  HapticTiming timing;
  timing.period_ns = period_of(c.haptic.rate_hz);
  timing.lookahead_ns = static_cast<std::int64_t>(c.stream.lookahead_ms) * 1'000'000;
  timing.stale_after_ns = static_cast<std::int64_t>(c.safety.stale_after_ms) * 1'000'000;
  timing.field_stale_after_ns = static_cast<std::int64_t>(c.safety.field_stale_after_ms) * 1'000'000;
  timing.fade_ns = static_cast<std::int64_t>(c.safety.fade_ms) * 1'000'000;
  return timing;
}

FluidSettings fluid_settings_from(const Config& c) {
  FluidSettings s;
  std::strncpy(s.material.data(), c.fluid.material.c_str(), s.material.size() - 1);
  s.tau_s = c.fluid.tau_s;
  s.alpha = c.fluid.alpha;
  s.smoke = smoke::live_part(c.smoke);
  return s;
}

force_feedback::ForceServoConfig force_servo_from(const Config& c) {
  force_feedback::ForceServoConfig servo = c.force_feedback.servo;
  servo.frame_rate_hz = c.fluid.rate_hz;  // the FIR upsamples the fluid's frames
  return servo;
}

Pipeline::Pipeline(const Config& config, rt::Clock& clock, PipelineParts parts,
                   status::StatusRegion* status)
    : config_(config), clock_(clock), parts_(parts), status_(status),
      links_(std::make_unique<Links>()),
      publish_period_ns_(period_of(config.status.update_hz)) {
  tracker_ = std::make_unique<TrackerStage>(parts.hands, *links_, 1'000'000,
                                            haptic_timing_from(config).stale_after_ns);
  fluid_ = std::make_unique<FluidStage>(parts.fluid, *links_, clock, period_of(config.fluid.rate_hz));
  haptic_ = std::make_unique<HapticStage>(parts.renderer, *links_, clock, haptic_timing_from(config));
  StreamSettings stream;
  stream.period_ns = 1'000'000;
  stream.intensity_cap = static_cast<std::uint8_t>(std::lround(config.safety.max_intensity * 255.0));
  stream.watchdog_ms = static_cast<std::uint16_t>(config.safety.device_watchdog_ms);
  stream_ = std::make_unique<StreamStage>(parts.array, *links_, stream);
  if (parts.force != nullptr) {
    ForceTiming timing;
    timing.period_ns = period_of(config.force_feedback.servo.servo_rate_hz);
    timing.force_stale_after_ns = static_cast<std::int64_t>(config.safety.force_stale_after_ms) * 1'000'000;
    force_ = std::make_unique<ForceStage>(*parts.force, *links_, force_servo_from(config), timing);
    stage_count_ = 5;
  }

  const std::array<Stage*, kMaxStages> stages{tracker_.get(), fluid_.get(), haptic_.get(), stream_.get(),
                                              force_.get()};
  const std::array<ThreadSettings, kMaxStages> sched{config.threads.tracker, config.threads.fluid,
                                                     config.threads.haptic, config.threads.stream,
                                                     config.threads.force};
  for (int i = 0; i < stage_count_; ++i) {
    slots_[i].stage = stages[i];
    slots_[i].sched = sched[i];
    rt::PeriodicLoopConfig loop_config;
    loop_config.period_ns = stages[i]->period_ns();
    slots_[i].loop = std::make_unique<rt::PeriodicLoop>(clock, loop_config);
  }
  links_->haptic_settings.write(haptic_settings_from(config));
  links_->fluid_settings.write(fluid_settings_from(config));
  links_->recording.store(false);
}

Pipeline::~Pipeline() {
  if (started_ && !stopped_) stop(500'000'000);
  for (auto& slot : slots_) {
    slot.stop.store(true);
    if (slot.thread.joinable()) slot.thread.join();
  }
  parts_.array.disarm();
  if (parts_.force != nullptr) parts_.force->release();
}

void Pipeline::set_scene_export(scene::SceneWriter& writer) {
  fluid_scene_ = std::make_unique<FluidSceneExport>(writer);
  haptic_scene_ = std::make_unique<HapticSceneExport>(writer);
  fluid_->set_scene_export(fluid_scene_.get());
  haptic_->set_scene_export(haptic_scene_.get());
}

void Pipeline::publish_loop(Slot& slot, std::int64_t now) noexcept {
  if (status_ == nullptr) return;
  const rt::LoopStats stats = slot.loop->stats();
  status::LoopStatus l;
  l.updated_ns = now;
  l.period_target_ns = stats.period_target_ns;
  l.ticks = stats.counters.ticks;
  l.overruns = stats.counters.overruns;
  l.skipped_periods = stats.counters.skipped_periods;
  l.consecutive_overruns = stats.counters.consecutive_overruns;
  const bool rt_known = slot.rt_known.load(std::memory_order_acquire);
  const bool degraded = rt_known && slot.sched.priority > 0 && !slot.rt.realtime;
  l.state = degraded ? status::LoopState::Degraded : status::LoopState::Running;
  l.sched_priority = rt_known ? slot.rt.granted_priority : 0;
  l.cpu = rt_known && slot.rt.pinned ? slot.sched.cpu : -1;
  if (now > slot.window_start_ns && slot.window_start_ns > 0) {
    l.rate_hz = static_cast<double>(stats.counters.ticks - slot.window_ticks) * 1e9 /
                static_cast<double>(now - slot.window_start_ns);
  }
  slot.window_ticks = stats.counters.ticks;
  slot.window_start_ns = now;
  l.wake_p50_ns = stats.wakeup.p50_ns;
  l.wake_p99_ns = stats.wakeup.p99_ns;
  l.wake_max_ns = stats.wakeup.max_ns;
  l.period_p50_ns = stats.period.p50_ns;
  l.period_p99_ns = stats.period.p99_ns;
  l.period_max_ns = stats.period.max_ns;
  l.exec_p50_ns = stats.execution.p50_ns;
  l.exec_p99_ns = stats.execution.p99_ns;
  l.exec_max_ns = stats.execution.max_ns;
  status_->loops[static_cast<int>(slot.stage->id())].lock.store(l);
  slot.stage->publish(*status_, now);
}

void Pipeline::run_tick(Slot& slot, const rt::LoopTick& tick) noexcept {
  slot.stage->tick(tick);
  slot.last_wake_ns.store(tick.wake_ns, std::memory_order_release);
  slot.ticks.fetch_add(1, std::memory_order_relaxed);
  if (tick.wake_ns >= slot.next_publish_ns) {
    slot.next_publish_ns = tick.wake_ns + publish_period_ns_;
    publish_loop(slot, tick.wake_ns);
    slot.published.store(true, std::memory_order_release);
  }
}

void Pipeline::start_threads() {
  threaded_ = true;
  started_ = true;
  // No loop starts before every stage thread is set up: creating a thread populates and locks
  // its whole stack under mlockall (~3 ms a thread on the 2-core VM, holding the process's
  // memory map), and the later threads' creation ran into the fluid's first frame.
  for (Slot& slot : stage_slots()) {
    slot.active = true;
    slot.thread = std::thread([this, &slot] {
      rt::RtThreadConfig rt_config;
      rt_config.name = std::string("sf-") + status::kStageNames[static_cast<int>(slot.stage->id())];
      rt_config.fifo_priority = slot.sched.priority;
      rt_config.cpu = slot.sched.cpu;
      rt_config.prefault_heap_bytes = slot.stage->heap_bytes();
      slot.rt = rt::setup_current_thread(rt_config);
      slot.rt_known.store(true, std::memory_order_release);
      go_.wait(false, std::memory_order_acquire);
      slot.loop->start(start_ns_ + slot.stage->period_ns() + slot.stage->phase_ns());
      slot.loop->run([this, &slot](const rt::LoopTick& tick) { run_tick(slot, tick); }, slot.stop);
    });
  }
  while (!scheduling_known()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  start_ns_ = clock_.now_ns();
  for (Slot& slot : stage_slots()) slot.last_wake_ns = start_ns_;
  go_.store(true, std::memory_order_release);
  go_.notify_all();
}

void Pipeline::run_virtual_until(rt::VirtualClock& clock, std::int64_t until_ns) {
  if (!started_) {
    started_ = true;
    virtual_clock_ = &clock;
    start_ns_ = clock.now_ns();
    for (auto& slot : stage_slots()) {
      slot.active = true;
      slot.last_wake_ns = start_ns_;
      slot.loop->start(start_ns_ + slot.stage->period_ns() + slot.stage->phase_ns());
    }
  }
  for (;;) {
    Slot* next = nullptr;
    for (auto& slot : stage_slots()) {
      if (!slot.active.load(std::memory_order_relaxed)) continue;
      if (next == nullptr || slot.loop->next_deadline_ns() < next->loop->next_deadline_ns()) next = &slot;
    }
    if (next == nullptr || next->loop->next_deadline_ns() > until_ns) break;
    if (clock.now_ns() < next->loop->next_deadline_ns()) clock.set(next->loop->next_deadline_ns());
    if (virtual_pump_) virtual_pump_();
    next->loop->run_once([this, next](const rt::LoopTick& tick) { run_tick(*next, tick); });
  }
  if (clock.now_ns() < until_ns) clock.set(until_ns);
}

template <typename Done>
bool Pipeline::wait_for(Done done, std::int64_t timeout_ns) {
  const std::int64_t deadline = clock_.now_ns() + timeout_ns;
  while (!done()) {
    if (clock_.now_ns() >= deadline) return false;
    if (virtual_clock_ != nullptr) {
      run_virtual_until(*virtual_clock_, clock_.now_ns() + 1'000'000);
    } else {
      clock_.sleep_until(clock_.now_ns() + 1'000'000);
    }
  }
  return true;
}

void Pipeline::stop_slot(Slot& slot) {
  slot.stop.store(true, std::memory_order_release);
  if (slot.thread.joinable()) slot.thread.join();
  slot.active.store(false, std::memory_order_release);
}

bool Pipeline::stop(std::int64_t timeout_ns) {
  if (!started_ || stopped_) return true;
  // 1. Fade the output to silence (the haptic thread ramps its gain down over fade_ms) and the
  //    force to zero (the force thread ramps it within its step limit and releases the device).
  haptic_->request_stop();
  if (force_) force_->request_stop();
  const bool faded = wait_for(
      [this] { return haptic_->faded_out() && (!force_ || force_->released_for_stop()); }, timeout_ns);
  // 2. Stop producers in order: tracker, fluid, haptic, force.
  stop_slot(slots_[0]);
  stop_slot(slots_[1]);
  stop_slot(slots_[2]);
  if (force_) stop_slot(slots_[4]);
  // 3. Let the stream play out the queued (silent) tail; it feeds the array silence until the
  //    disarm below, so the FIFO never runs dry (a device underrun) at a stop.
  stream_->request_stop();
  wait_for([this] { return stream_->stopped(); }, 100'000'000);
  stop_slot(slots_[3]);
  // 4. Whatever happened above, the array ends disarmed and silent, the force device released.
  parts_.array.disarm();
  if (parts_.force != nullptr) parts_.force->release();
  stopped_ = true;
  return faded;
}

void Pipeline::apply_live_settings(const Config& config) {
  config_.haptic.mode = config.haptic.mode;
  links_->haptic_settings.write(haptic_settings_from(config));
  links_->fluid_settings.write(fluid_settings_from(config));
}

bool Pipeline::housekeeping(std::int64_t now_ns) {
  bool fresh = true;
  for (auto& slot : stage_slots()) {
    if (!slot.active.load(std::memory_order_acquire)) continue;
    // Liveness, not deadlines: a slow fluid frame is an overrun, a thread that stopped is not.
    const std::int64_t allowed = std::max<std::int64_t>(10 * slot.stage->period_ns(), kStaleHeartbeatNs);
    if (now_ns - slot.last_wake_ns.load(std::memory_order_acquire) > allowed) fresh = false;
  }
  if (status_ != nullptr) {
    status::RingStatus rings;
    export_ring(rings.rings[0], "tracker>fluid", links_->hands_to_fluid);
    export_ring(rings.rings[1], "haptic>stream", links_->blocks_to_stream);
    export_ring(rings.rings[2], "trace:hands", links_->trace_hands);
    export_ring(rings.rings[3], "trace:blocks", links_->trace_blocks);
    status_->rings.lock.store(rings);
    status_->header.degraded.store(degraded() ? 1 : 0, std::memory_order_relaxed);
  }
  return fresh;
}

void Pipeline::add_thread_report(std::string name, int requested_priority, rt::RtSetupReport report) {
  other_threads_.push_back({std::move(name), requested_priority, std::move(report)});
}

bool Pipeline::scheduling_known() const noexcept {
  for (const auto& slot : stage_slots()) {
    if (!slot.rt_known.load(std::memory_order_acquire)) return false;
  }
  return true;
}

bool Pipeline::every_loop_published() const noexcept {
  for (const auto& slot : stage_slots()) {
    if (!slot.published.load(std::memory_order_acquire)) return false;
  }
  return true;
}

bool Pipeline::degraded() const {
  for (const auto& slot : stage_slots()) {
    if (slot.rt_known.load(std::memory_order_acquire) && slot.sched.priority > 0 && !slot.rt.realtime)
      return true;
  }
  for (const auto& t : other_threads_) {
    if (t.requested_priority > 0 && !t.rt.realtime) return true;
  }
  return false;
}

std::string Pipeline::rt_report(bool refusing) const {
  std::string loops, why;
  for (const auto& slot : stage_slots()) {
    if (!slot.rt_known.load(std::memory_order_acquire) || slot.sched.priority == 0 || slot.rt.realtime)
      continue;
    loops += (loops.empty() ? "" : ", ") + std::string(status::kStageNames[static_cast<int>(slot.stage->id())]);
    if (why.empty()) why = slot.rt.message;
  }
  std::string threads;
  for (const auto& t : other_threads_) {
    if (t.requested_priority == 0 || t.rt.realtime) continue;
    threads += (threads.empty() ? "" : ", ") + t.name;
    if (why.empty()) why = t.rt.message;
  }
  if (loops.empty() && threads.empty()) return {};
  const std::string what = (loops.empty() ? "" : "loops " + loops) +
                           (loops.empty() || threads.empty() ? "" : " and ") +
                           (threads.empty() ? "" : "threads " + threads);
  std::string out = "realtime scheduling unavailable for " + what + ": " + why + "\n";
  out += refusing ? "  consequence: refusing to start (rt.require = true)\n"
                  : "  consequence: running DEGRADED on SCHED_OTHER; timing will be far worse than on a "
                    "configured system (marked in status and summary)\n";
  out += "  fix (service): LimitRTPRIO=95 and LimitMEMLOCK=infinity in sonoflow.service; kernels "
         "with CONFIG_RT_GROUP_SCHED refuse SCHED_FIFO to services even as root\n";
  out += "  fix (manual run): run as a user with RLIMIT_RTPRIO (limits.d) or CAP_SYS_NICE\n";
  out += refusing ? "  override: rt.require = false runs degraded instead"
                  : "  override: rt.require = true refuses to start instead";
  return out;
}

std::string Pipeline::status_line() const {
  // Read back through the status sections (seqlocks), not the stages' own counters, which
  // belong to their threads.
  status::ArrayStatus array;
  status::LoopStatus haptic;
  if (status_ == nullptr || !status_->array.lock.load(array) || !status_->loops[2].lock.load(haptic)) {
    return stopped_ ? "stopped" : "running";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "%s; RT %s; haptic %.0f Hz, %llu misses; array %s, %llu underruns, %llu usb errors",
                stopped_ ? "stopped" : "running", degraded() ? "DEGRADED" : "ok", haptic.rate_hz,
                static_cast<unsigned long long>(haptic.overruns),
                array.connected ? "streaming" : "LOST",
                static_cast<unsigned long long>(array.underruns),
                static_cast<unsigned long long>(array.usb_errors));
  std::string line = buf;
  status::ForceFeedbackStatus force;
  if (force_ && status_->force_feedback.lock.load(force)) {
    line += force.output == status::ForceOutput::Rendering ? "; force rendering"
            : force.output == status::ForceOutput::Ramping ? "; force ramping to zero"
                                                           : "; force released";
  }
  return line;
}

std::string Pipeline::summary_json(std::int64_t now_ns) const {
  Json j;
  j.open('{');
  j.field("schema", std::string_view("sonoflow.summary")).field("schema_version", 1);
  j.field("duration_ns", now_ns - start_ns_);
  j.field("degraded", degraded());
  j.key("loops").open('[');
  for (const auto& slot : stage_slots()) {
    const rt::LoopStats s = slot.loop->stats();
    j.open('{');
    j.field("name", std::string_view(status::kStageNames[static_cast<int>(slot.stage->id())]));
    j.field("period_ns", s.period_target_ns).field("ticks", s.counters.ticks);
    j.field("overruns", s.counters.overruns).field("skipped_periods", s.counters.skipped_periods);
    j.field("realtime", slot.rt_known.load() && slot.rt.realtime);
    j.key("wake_ns").open('{').field("p50", s.wakeup.p50_ns).field("p99", s.wakeup.p99_ns)
        .field("p999", s.wakeup.p999_ns).field("max", s.wakeup.max_ns).close('}');
    j.key("period_ns_measured").open('{').field("p50", s.period.p50_ns).field("p99", s.period.p99_ns)
        .field("p999", s.period.p999_ns).field("max", s.period.max_ns).close('}');
    j.key("busy_ns").open('{').field("p50", s.execution.p50_ns).field("p99", s.execution.p99_ns)
        .field("p999", s.execution.p999_ns).field("max", s.execution.max_ns).close('}');
    j.close('}');
  }
  j.close(']');
  j.key("threads").open('[');  // the other real-time threads (threads.usb)
  for (const auto& t : other_threads_) {
    j.open('{').field("name", std::string_view(t.name)).field("priority_requested", t.requested_priority);
    j.field("realtime", t.rt.realtime).field("priority", t.rt.granted_priority).close('}');
  }
  j.close(']');
  j.key("tracker").open('{').field("frames", tracker_->frames());
  j.field("stale_frames", tracker_->stale_frames()).close('}');
  j.key("fluid").open('{').field("frames", fluid_->frames()).close('}');
  j.key("haptic").open('{').field("blocks", haptic_->blocks()).close('}');
  j.key("array").open('{');
  j.field("blocks_sent", stream_->blocks_sent()).field("underruns", stream_->underruns());
  j.field("refused_blocks", stream_->refused_blocks()).field("usb_errors", stream_->usb_errors());
  j.field("reconnects", stream_->reconnects());
  j.close('}');
  j.key("force_feedback").open('{').field("enabled", force_ != nullptr);
  if (force_) {
    j.field("ticks", force_->ticks()).field("fluid_forces", force_->fluid_forces());
    j.field("max_force_n", force_->max_force_n()).field("max_step_n", force_->max_step_n());
    j.field("peak_force_n", force_->peak_force_n()).field("largest_step_n", force_->largest_step_n());
    j.field("releases", force_->releases()).field("stale_releases", force_->stale_releases());
    j.field("stylus_losses", force_->stylus_losses());
    j.field("released_at_stop", force_->released_for_stop());
  }
  j.close('}');
  j.key("drops").open('{');
  j.field("tracker_to_fluid", links_->hands_to_fluid.drops.load());
  j.field("haptic_to_stream", links_->blocks_to_stream.drops.load());
  j.field("trace_hands", links_->trace_hands.drops.load());
  j.field("trace_blocks", links_->trace_blocks.drops.load());
  j.field("trace_force", links_->trace_force.drops.load());
  j.field("force_to_fluid", links_->tool_poses_to_fluid.drops.load());
  j.close('}');
  const auto lat = rt::LatencySummary::of(stream_->latency());
  j.key("latency_ns").open('{');
  j.field("what", std::string_view("hand capture to first emitted sample"));
  j.field("count", lat.count).field("p50", lat.p50_ns).field("p99", lat.p99_ns);
  j.field("p999", lat.p999_ns).field("max", lat.max_ns);
  j.close('}');
  j.close('}');
  return j.str();
}

}  // namespace sonoflow::daemon
