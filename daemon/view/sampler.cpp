#include "daemon/view/sampler.hpp"

#include <time.h>

#include <cstdio>

#include "daemon/status/json_writer.hpp"
#include "daemon/status/status_format.hpp"
#include "daemon/view/scene_frame.hpp"
#include "kernels/acoustics/array_geometry.hpp"

namespace sonoflow::daemon::view {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::size_t kHistory = 300;  // 30 s at the default status.update_hz of 10

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

const char* daemon_state_name(status::DaemonState s) {
  switch (s) {
    case status::DaemonState::Starting: return "starting";
    case status::DaemonState::Running: return "running";
    case status::DaemonState::Stopping: return "stopping";
    case status::DaemonState::Stopped: break;
  }
  return "stopped";
}

}  // namespace

Sampler::Sampler(const SamplerSettings& settings, FrameHub& hub)
    : settings_(settings), hub_(hub), link_(settings.status_path, settings.scene_path),
      control_(settings.control_socket) {}

Sampler::~Sampler() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void Sampler::start() {
  thread_ = std::thread([this] { run(); });
}

void Sampler::run() {
  const auto period = static_cast<std::int64_t>(1e9 / std::max(settings_.rate_hz, 1.0));
  std::int64_t next = monotonic_ns();
  while (!stop_.load()) {
    sample_once();
    next += period;
    const std::int64_t now = monotonic_ns();
    if (next < now) next = now;  // fell behind: no catching up
    const timespec until{static_cast<time_t>(next / 1'000'000'000), static_cast<long>(next % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr);
  }
}

void Sampler::sample_once() {
  const std::int64_t now = monotonic_ns();
  bool viewer_changed = false;
  if (now >= next_refresh_ns_) {
    next_refresh_ns_ = now + 250 * kMs;
    viewer_changed = link_.refresh();
    if (link_.problem() != reported_problem_) {
      reported_problem_ = link_.problem();
      std::fprintf(stderr, "sonoflow-view: %s\n",
                   link_.problem().empty() ? "attached to sonoflowd" : link_.problem().c_str());
    }
  }
  if (viewer_changed || now >= next_access_ns_) {
    next_access_ns_ = now + 2000 * kMs;
    const ControlAccess access = control_.access();
    viewer_changed |= access.reachable != access_.reachable || access.may_write != access_.may_write ||
                      access.reason != access_.reason || access.materials != access_.materials;
    access_ = access;
  }
  const status::StatusReader* status = link_.status();
  if (status != nullptr && status->generation() != generation_) {
    generation_ = status->generation();
    viewer_changed = true;
    std::lock_guard lock(history_mutex_);
    history_.clear();  // a new daemon run: its history starts now
  }
  if (viewer_changed) publish_viewer();

  if (status != nullptr && now >= next_status_ns_) {
    next_status_ns_ = now + 100 * kMs;
    std::string json = status::to_json(status->snapshot(), now);
    {
      std::lock_guard lock(history_mutex_);
      history_.push_back(json);
      if (history_.size() > kHistory) history_.pop_front();
    }
    hub_.publish(FrameKind::Status, std::move(json));
  }

  const scene::SceneReader* scene = link_.scene();
  if (scene != nullptr &&
      (scene->fluid_publications() != fluid_seen_ || scene->haptic_publications() != haptic_seen_)) {
    fluid_seen_ = scene->fluid_publications();
    haptic_seen_ = scene->haptic_publications();
    scene::FluidScene fluid;
    scene::HapticScene haptic;
    const bool have_fluid = scene->read_fluid(fluid);
    const bool have_haptic = scene->read_haptic(haptic);
    if (have_fluid || have_haptic) {
      hub_.publish(FrameKind::Scene,
                   encode_scene_frame(have_fluid ? &fluid : nullptr, have_haptic ? &haptic : nullptr));
    }
  }
}

void Sampler::publish_viewer() {
  Json j;
  j.open('{');
  j.field("attached", link_.status() != nullptr).field("scene", link_.scene() != nullptr);
  j.field("problem", std::string_view(link_.problem()));
  j.field("status_path", std::string_view(link_.status_path()));
  j.field("scene_path", std::string_view(link_.scene_path()));
  j.field("attachments", link_.attachments());
  if (const auto* s = link_.status()) {
    char hex[20];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(s->generation()));
    j.field("generation", std::string_view(hex));
    j.field("daemon_state", std::string_view(daemon_state_name(s->snapshot().daemon_state)));
  }
  j.key("control").open('{').field("reachable", access_.reachable).field("may_write", access_.may_write)
      .field("reason", std::string_view(access_.reason));
  j.key("materials").open('[');
  for (const std::string& name : access_.materials) j.value(std::string_view(name));
  j.close(']').close('}');
  // The array outline: transducer centres of the default 16 x 16 grid (z = 0 plane).
  const acoustics::GridConfig grid;
  const auto geometry = acoustics::ArrayGeometry::grid(grid);
  j.key("array").open('{').field("columns", grid.columns).field("rows", grid.rows)
      .field("pitch_m", static_cast<double>(grid.pitch_m));
  j.key("transducers").open('[');
  for (int t = 0; t < geometry.size(); ++t) {
    j.value(static_cast<double>(geometry.positions(0, t))).value(static_cast<double>(geometry.positions(1, t)));
  }
  j.close(']').close('}');
  j.close('}');
  hub_.publish(FrameKind::Viewer, j.str());
}

std::string Sampler::history() const {
  std::lock_guard lock(history_mutex_);
  std::string out = "[";
  for (std::size_t i = 0; i < history_.size(); ++i) {
    if (i > 0) out += ',';
    out += history_[i];
  }
  return out + "]";
}

}  // namespace sonoflow::daemon::view
