#include "daemon/status/status_format.hpp"

#include "daemon/status/json_writer.hpp"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string_view>

namespace sonoflow::daemon::status {
using sonoflow::daemon::Json;
namespace {

template <std::size_t N>
std::string_view text_of(const std::array<char, N>& a) {
  return {a.data(), strnlen(a.data(), N)};
}

const char* daemon_state_name(DaemonState s) {
  switch (s) {
    case DaemonState::Starting: return "starting";
    case DaemonState::Running: return "running";
    case DaemonState::Stopping: return "stopping";
    case DaemonState::Stopped: return "stopped";
  }
  return "unknown";
}
const char* loop_state_name(LoopState s) {
  switch (s) {
    case LoopState::Stopped: return "stopped";
    case LoopState::Running: return "running";
    case LoopState::Degraded: return "degraded";
    case LoopState::Error: return "error";
  }
  return "unknown";
}
const char* tracker_state_name(TrackerState s) {
  switch (s) {
    case TrackerState::Absent: return "absent";
    case TrackerState::Connecting: return "connecting";
    case TrackerState::Streaming: return "streaming";
    case TrackerState::Lost: return "lost";
  }
  return "unknown";
}
const char* safety_name(SafetyState s) {
  switch (s) {
    case SafetyState::Silent: return "silent";
    case SafetyState::Active: return "active";
    case SafetyState::Fading: return "fading";
  }
  return "unknown";
}
const char* mode_name(std::uint32_t m) { return m == 1 ? "am" : m == 2 ? "stm" : "silent"; }
const char* device_state_name(std::uint32_t s) {
  static const char* names[] = {"idle", "armed", "emitting", "holding", "fading"};
  return s < 5 ? names[s] : "unknown";
}
const char* force_output_name(ForceOutput o) {
  switch (o) {
    case ForceOutput::Off: return "off";
    case ForceOutput::Released: return "released";
    case ForceOutput::Rendering: return "rendering";
    case ForceOutput::Ramping: return "ramping";
  }
  return "unknown";
}
double norm(const std::array<float, 3>& v) {
  return std::sqrt(static_cast<double>(v[0]) * v[0] + static_cast<double>(v[1]) * v[1] +
                   static_cast<double>(v[2]) * v[2]);
}
const char* io_name(RecorderIo io) {
  return io == RecorderIo::IoUring ? "io_uring" : io == RecorderIo::Pwrite ? "pwrite" : "none";
}

std::string wallclock_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string hex64(std::uint64_t v) {
  char buf[20];
  std::snprintf(buf, sizeof buf, "%016" PRIx64, v);
  return buf;
}

}  // namespace

std::string human_duration(std::int64_t ns) {
  char buf[32];
  if (ns < 0) return "n/a";
  if (ns < 1'000) {
    std::snprintf(buf, sizeof buf, "%" PRId64 "ns", ns);
  } else if (ns < 1'000'000) {
    std::snprintf(buf, sizeof buf, ns < 10'000 ? "%.1fus" : "%.0fus", ns / 1e3);
  } else if (ns < 1'000'000'000) {
    std::snprintf(buf, sizeof buf, ns < 10'000'000 ? "%.2fms" : "%.1fms", ns / 1e6);
  } else {
    std::snprintf(buf, sizeof buf, "%.2fs", ns / 1e9);
  }
  return buf;
}

std::string to_json(const StatusSnapshot& s, std::int64_t now_ns) {
  Json j;
  j.open('{');
  j.field("schema", std::string_view("sonoflow.status")).field("schema_version", kStatusSchemaVersion);
  j.field("monotonic_ns", now_ns).field("wallclock", std::string_view(wallclock_now()));
  j.key("daemon").open('{');
  j.field("version", std::string_view(s.version)).field("pid", s.writer_pid);
  j.field("generation", std::string_view(hex64(s.generation)));
  j.field("state", std::string_view(daemon_state_name(s.daemon_state)));
  j.field("uptime_ns", now_ns - s.start_ns).field("heartbeat_age_ns", now_ns - s.heartbeat_ns);
  j.field("stale", now_ns - s.heartbeat_ns > kStaleAfterNs);
  j.field("degraded", s.degraded != 0).field("torn_read", s.torn);
  j.close('}');

  j.key("loops").open('[');
  for (int i = 0; i < kStageCount; ++i) {
    const LoopStatus& l = s.loops[i];
    j.open('{');
    j.field("name", std::string_view(kStageNames[i]));
    j.field("state", std::string_view(loop_state_name(l.state)));
    j.field("priority", l.sched_priority).field("cpu", l.cpu);
    j.field("period_ns", l.period_target_ns).field("rate_hz", l.rate_hz);
    j.field("ticks", l.ticks).field("overruns", l.overruns);
    j.field("skipped_periods", l.skipped_periods);
    j.key("wake_ns").open('{').field("p50", l.wake_p50_ns).field("p99", l.wake_p99_ns)
        .field("max", l.wake_max_ns).close('}');
    j.key("period_ns_measured").open('{').field("p50", l.period_p50_ns).field("p99", l.period_p99_ns)
        .field("max", l.period_max_ns).close('}');
    j.key("busy_ns").open('{').field("p50", l.exec_p50_ns).field("p99", l.exec_p99_ns)
        .field("max", l.exec_max_ns).close('}');
    j.field("updated_ns", l.updated_ns);
    j.close('}');
  }
  j.close(']');

  j.key("tracker").open('{');
  j.field("state", std::string_view(tracker_state_name(s.tracker.state)));
  j.field("hands", s.tracker.hands_visible).field("frame_rate_hz", s.tracker.frame_rate_hz);
  j.field("frames", s.tracker.frames).field("dropped_frames", s.tracker.dropped_frames);
  j.field("stale_frames", s.tracker_late.stale_frames);
  j.field("tracking_losses", s.tracker.tracking_losses);
  j.field("last_frame_id", s.tracker.last_frame_id);
  j.field("last_capture_ns", s.tracker.last_capture_ns);
  j.close('}');

  j.key("fluid").open('{');
  j.field("material", text_of(s.fluid.material)).field("tau_s", s.fluid.tau_s);
  j.field("alpha", s.fluid.alpha).field("particles", s.fluid.particles);
  j.field("contact_samples", s.fluid.contact_samples).field("frames", s.fluid.frames);
  j.key("step_ns").open('{').field("p50", s.fluid.step_p50_ns).field("p99", s.fluid.step_p99_ns)
      .field("max", s.fluid.step_max_ns).close('}');
  j.field("engine_errors", s.fluid.engine_errors);
  j.field("medium", std::string_view(s.fluid.medium == 1 ? "smoke" : "particles"));
  if (s.fluid.medium == 1) {
    j.key("grid").open('[');
    j.value(s.fluid.grid[0]).value(s.fluid.grid[1]).value(s.fluid.grid[2]);
    j.close(']');
    j.field("pressure_iterations", s.fluid.pressure_iterations);
    j.field("pressure_residual_per_s", static_cast<double>(s.fluid.pressure_residual));
  }
  j.close('}');

  j.key("haptic").open('{');
  j.field("mode", std::string_view(mode_name(s.haptic.mode)));
  j.field("safety", std::string_view(safety_name(s.haptic.safety)));
  j.field("focal_points", s.haptic.focal_points);
  j.field("peak_intensity", static_cast<double>(s.haptic.peak_intensity));
  j.field("total_power", static_cast<double>(s.haptic.total_power));
  j.field("blocks", s.haptic.blocks).field("capped_samples", s.haptic.capped_samples);
  j.field("stale_fades", s.haptic.stale_fades);
  j.key("solve_ns").open('{').field("p50", s.haptic.solve_p50_ns).field("p99", s.haptic.solve_p99_ns)
      .field("max", s.haptic.solve_max_ns).close('}');
  j.close('}');

  j.key("devices").open('[').open('{');
  j.field("name", std::string_view("array0")).field("connected", s.array.connected != 0);
  j.field("state", std::string_view(device_state_name(s.array.device_state)));
  j.field("fifo_level", s.array.fifo_level).field("fifo_depth", s.array.fifo_depth);
  j.field("queue_ns", s.array.lookahead_ns).field("device_tick", s.array.device_tick);
  j.field("blocks_sent", s.array.blocks_sent).field("underruns", s.array.underruns);
  j.field("late_blocks", s.array.late_blocks).field("usb_errors", s.array.usb_errors);
  j.field("reconnects", s.array.reconnects).field("silent_blocks", s.array.silent_blocks);
  j.field("emitted_peak_intensity", static_cast<double>(s.array.emitted_peak_intensity));
  j.close('}').close(']');

  j.key("rings").open('[');
  for (const auto& r : s.rings.rings) {
    if (r.capacity == 0) continue;
    j.open('{').field("name", text_of(r.name)).field("depth", r.depth)
        .field("capacity", r.capacity).field("high_water", r.high_water).field("drops", r.drops)
        .close('}');
  }
  j.close(']');

  j.key("latency").open('{');
  j.field("what", std::string_view("hand capture to first emitted sample"));
  j.field("count", s.latency.count).field("p50_ns", s.latency.p50_ns);
  j.field("p99_ns", s.latency.p99_ns).field("p999_ns", s.latency.p999_ns);
  j.field("max_ns", s.latency.max_ns).field("bucket_ns", kLatencyBucketNs);
  j.key("buckets").open('[');
  for (auto b : s.latency.buckets) j.value(b);
  j.close(']');
  j.field("overflow", s.latency.overflow);
  j.close('}');

  const ForceFeedbackStatus& ff = s.force_feedback;
  const auto vector = [&j](const char* key, const std::array<float, 3>& v) {
    j.key(key).open('[');
    for (float x : v) j.value(static_cast<double>(x));
    j.close(']');
  };
  j.key("force_feedback").open('{');
  j.field("enabled", ff.enabled != 0);
  j.field("output", std::string_view(force_output_name(ff.output)));
  j.field("stylus", ff.stylus != 0).field("touching", ff.touching);
  vector("stylus_position_m", ff.stylus_position);
  vector("fluid_force_n", ff.fluid_force);
  vector("commanded_n", ff.commanded);
  j.field("max_force_n", static_cast<double>(ff.max_force_n));
  j.field("max_step_n", static_cast<double>(ff.max_step_n));
  j.field("largest_step_n", static_cast<double>(ff.largest_step_n));
  j.field("peak_force_n", static_cast<double>(ff.peak_force_n));
  j.field("force_age_ns", ff.force_age_ns).field("fluid_forces", ff.fluid_forces);
  j.field("releases", ff.releases).field("stale_releases", ff.stale_releases);
  j.field("stylus_losses", ff.stylus_losses);
  j.close('}');

  j.key("recorder").open('{');
  j.field("recording", s.recorder.recording != 0);
  j.field("io", std::string_view(io_name(s.recorder.io)));
  j.field("session", s.recorder.session).field("records", s.recorder.records);
  j.field("bytes", s.recorder.bytes).field("gaps", s.recorder.gaps);
  j.field("path", text_of(s.recorder.path));
  j.close('}');
  j.close('}');
  return j.str();
}

std::string to_screen(const StatusSnapshot& s, const StatusSnapshot* prev, std::int64_t now_ns) {
  std::string out;
  char line[256];
  const auto add = [&](const char* fmt, auto... args) {
    std::snprintf(line, sizeof line, fmt, args...);
    out += line;
  };
  const std::int64_t up = now_ns - s.start_ns;
  add("sonoflow %s  pid %d  up %s  %s  %s%s\n", s.version.c_str(), s.writer_pid,
      human_duration(up).c_str(), daemon_state_name(s.daemon_state),
      s.degraded ? "RT:DEGRADED (normal scheduling)" : "RT:ok",
      s.recorder.recording ? "  REC" : "");
  const std::int64_t age = now_ns - s.heartbeat_ns;
  if (age > kStaleAfterNs || s.daemon_state == DaemonState::Stopped) {
    add("STALE: no update from sonoflowd (pid %d) for %s; numbers below are not live\n",
        s.writer_pid, human_duration(age).c_str());
  }
  add("S LOOP        PRIO   RATE/Hz   PERIOD     WAKE  WAKEmax     BUSY  BUSYmax   B/P    MISS dMISS\n");
  for (int i = 0; i < kStageCount; ++i) {
    const LoopStatus& l = s.loops[i];
    if (l.ticks == 0 && l.state == LoopState::Stopped) continue;
    const char state = l.state == LoopState::Running    ? 'R'
                       : l.state == LoopState::Degraded ? 'D'
                       : l.state == LoopState::Error    ? 'E'
                                                        : 'S';
    char prio[16];
    if (l.sched_priority > 0) std::snprintf(prio, sizeof prio, "F%d", l.sched_priority);
    else std::snprintf(prio, sizeof prio, "O");
    const double load = l.period_target_ns > 0
                            ? static_cast<double>(l.exec_max_ns) / static_cast<double>(l.period_target_ns)
                            : 0.0;
    const std::uint64_t dmiss = prev ? l.overruns - prev->loops[i].overruns : 0;
    add("%c %-10s %5s %9.1f %8s %8s %8s %8s %8s %5.2f %7" PRIu64 " %5" PRIu64 "\n", state,
        kStageNames[i], prio, l.rate_hz,
        l.period_target_ns > 0 ? human_duration(l.period_target_ns).c_str() : "event",
        human_duration(l.wake_p50_ns).c_str(), human_duration(l.wake_max_ns).c_str(),
        human_duration(l.exec_p50_ns).c_str(), human_duration(l.exec_max_ns).c_str(), load,
        l.overruns, dmiss);
  }
  const ArrayStatus& a = s.array;
  const std::uint64_t dunder = prev ? a.underruns - prev->array.underruns : 0;
  add("\nDEVICE    STATE      QUEUE    FIFO        UNDR dUNDR  LATE  USBERR RECONN  PEAK\n");
  add("array0    %-9s %7s %5u/%-5u %6" PRIu64 " %5" PRIu64 " %5" PRIu64 " %7" PRIu64 " %6" PRIu64
      "  %.2f\n",
      a.connected ? device_state_name(a.device_state) : "absent",
      human_duration(a.lookahead_ns).c_str(), a.fifo_level, a.fifo_depth, a.underruns, dunder,
      a.late_blocks, a.usb_errors, a.reconnects, static_cast<double>(a.emitted_peak_intensity));
  const TrackerStatus& t = s.tracker;
  // The newest frame's age when the tracker stage published it: the monitor's own lag (up to
  // 1 / status.update_hz) is not the tracker's, and would read as a stale hand.
  const std::int64_t published_ns = s.loops[static_cast<int>(Stage::Tracker)].updated_ns;
  const std::int64_t age_ns = (published_ns > 0 ? published_ns : now_ns) - t.last_capture_ns;
  add("tracker0  %-9s %6.1f f/s  hands %u  frames %" PRIu64 "  drops %" PRIu64 "  stale %" PRIu64
      "  losses %" PRIu64 "  age %s\n",
      tracker_state_name(t.state), t.frame_rate_hz, t.hands_visible, t.frames, t.dropped_frames,
      s.tracker_late.stale_frames, t.tracking_losses,
      t.last_capture_ns > 0 ? human_duration(age_ns).c_str() : "n/a");

  const FluidStatus& f = s.fluid;
  if (f.medium == 1) {
    add("\nFLUID   smoke      grid %ux%ux%u  pressure %u it, residual %.3g 1/s  contact %u  step p50 %s p99 %s\n",
        f.grid[0], f.grid[1], f.grid[2], f.pressure_iterations, static_cast<double>(f.pressure_residual),
        f.contact_samples, human_duration(f.step_p50_ns).c_str(), human_duration(f.step_p99_ns).c_str());
  } else {
    add("\nFLUID   %-10.*s tau %.3g s  alpha %.3g  particles %u  contact %u  step p50 %s p99 %s\n",
        static_cast<int>(text_of(f.material).size()), text_of(f.material).data(), f.tau_s, f.alpha,
        f.particles, f.contact_samples, human_duration(f.step_p50_ns).c_str(),
        human_duration(f.step_p99_ns).c_str());
  }
  const HapticStatus& h = s.haptic;
  add("HAPTIC  %-6s safety %-7s foci %u  peak %.2f  power %.2f  solve p50 %s p99 %s  capped %" PRIu64
      "  fades %" PRIu64 "\n",
      mode_name(h.mode), safety_name(h.safety), h.focal_points,
      static_cast<double>(h.peak_intensity), static_cast<double>(h.total_power),
      human_duration(h.solve_p50_ns).c_str(), human_duration(h.solve_p99_ns).c_str(),
      h.capped_samples, h.stale_fades);
  const ForceFeedbackStatus& ff = s.force_feedback;
  if (ff.enabled) {
    add("FORCE   %-9s stylus %s (%.1f, %.1f, %.1f) cm  touching %u  fluid %.3f N  out %.3f N"
        "  cap %.2f N  step max %.3f/%.3f N  age %s  stale %" PRIu64 "  releases %" PRIu64 "\n",
        force_output_name(ff.output), ff.stylus ? "ok" : "LOST",
        static_cast<double>(ff.stylus_position[0]) * 100, static_cast<double>(ff.stylus_position[1]) * 100,
        static_cast<double>(ff.stylus_position[2]) * 100, ff.touching, norm(ff.fluid_force),
        norm(ff.commanded), static_cast<double>(ff.max_force_n), static_cast<double>(ff.largest_step_n),
        static_cast<double>(ff.max_step_n), human_duration(ff.force_age_ns).c_str(), ff.stale_releases,
        ff.releases);
  }

  add("\nRING                 FILL   HWM   DROPS\n");
  for (const auto& r : s.rings.rings) {
    if (r.capacity == 0) continue;
    add("%-16.*s %4u/%-4u %5u %7" PRIu64 "\n", static_cast<int>(text_of(r.name).size()),
        text_of(r.name).data(), r.depth, r.capacity, r.high_water, r.drops);
  }
  const LatencyStatus& lat = s.latency;
  add("\nLATENCY hand->array  n %" PRIu64 "  p50 %s  p99 %s  p99.9 %s  max %s\n", lat.count,
      human_duration(lat.p50_ns).c_str(), human_duration(lat.p99_ns).c_str(),
      human_duration(lat.p999_ns).c_str(), human_duration(lat.max_ns).c_str());
  if (s.recorder.recording || s.recorder.session) {
    add("REC     %s session %" PRIu64 "  %s  %" PRIu64 " records  %.1f MB  gaps %" PRIu64 "  %.*s\n",
        s.recorder.recording ? "on " : "off", s.recorder.session, io_name(s.recorder.io),
        s.recorder.records, static_cast<double>(s.recorder.bytes) / 1e6, s.recorder.gaps,
        static_cast<int>(text_of(s.recorder.path).size()), text_of(s.recorder.path).data());
  }
  return out;
}

}  // namespace sonoflow::daemon::status
