#include "daemon/config/config_schema.hpp"

#include <cstdio>

namespace sonoflow::daemon {
namespace {

KeyInfo boolean(std::string_view key, bool* slot, Reload reload, std::string_view doc) {
  return KeyInfo{key, KeyKind::Bool, 0, 0, {}, reload, "", doc, slot};
}
KeyInfo integer(std::string_view key, int* slot, double min, double max, std::string_view unit,
                Reload reload, std::string_view doc) {
  return KeyInfo{key, KeyKind::Int, min, max, {}, reload, unit, doc, slot};
}
KeyInfo real(std::string_view key, double* slot, double min, double max, std::string_view unit,
             Reload reload, std::string_view doc) {
  return KeyInfo{key, KeyKind::Float, min, max, {}, reload, unit, doc, slot};
}
KeyInfo text(std::string_view key, std::string* slot, Reload reload, std::string_view doc) {
  return KeyInfo{key, KeyKind::String, 0, 0, {}, reload, "", doc, slot};
}
KeyInfo choice(std::string_view key, std::string* slot, std::vector<std::string_view> choices,
               Reload reload, std::string_view doc) {
  return KeyInfo{key, KeyKind::Choice, 0, 0, std::move(choices), reload, "", doc, slot};
}

void add_thread(std::vector<KeyInfo>& keys, std::string_view priority_key,
                std::string_view cpu_key, ThreadSettings& t) {
  keys.push_back(integer(priority_key, &t.priority, 0, 99, "", Reload::Restart,
                         "SCHED_FIFO priority 1..99; 0 = normal scheduling"));
  keys.push_back(integer(cpu_key, &t.cpu, -1, 1023, "", Reload::Restart,
                         "CPU to pin the thread to; -1 = no pinning"));
}

}  // namespace

std::vector<KeyInfo> config_keys(Config& c) {
  constexpr Reload live = Reload::Live;
  constexpr Reload restart = Reload::Restart;
  std::vector<KeyInfo> k;
  k.push_back(boolean("rt.require", &c.rt.require, restart,
                      "refuse to start (exit 77) when SCHED_FIFO is not granted"));
  k.push_back(boolean("rt.lock_memory", &c.rt.lock_memory, restart,
                      "mlockall() so page faults never stall a loop"));

  add_thread(k, "threads.tracker.priority", "threads.tracker.cpu", c.threads.tracker);
  add_thread(k, "threads.fluid.priority", "threads.fluid.cpu", c.threads.fluid);
  add_thread(k, "threads.haptic.priority", "threads.haptic.cpu", c.threads.haptic);
  add_thread(k, "threads.stream.priority", "threads.stream.cpu", c.threads.stream);
  add_thread(k, "threads.usb.priority", "threads.usb.cpu", c.threads.usb);
  add_thread(k, "threads.force.priority", "threads.force.cpu", c.threads.force);
  add_thread(k, "threads.recorder.priority", "threads.recorder.cpu", c.threads.recorder);
  k.push_back(integer("threads.opencl.priority", &c.threads.opencl.priority, 0, 98, "", Reload::Restart,
                      "SCHED_FIFO priority of the OpenCL runtime's worker threads (PoCL's CPU workers, "
                      "which compute the fluid); below threads.fluid.priority; 0 = normal scheduling"));

  k.push_back(boolean("devices.emulate", &c.devices.emulate, restart,
                      "use in-process emulated devices instead of USB (also --emulate)"));
  k.push_back(text("devices.array_serial", &c.devices.array_serial, restart,
                   "serial number of the array to open; empty = the first found"));
  k.push_back(text("devices.tracker_serial", &c.devices.tracker_serial, restart,
                   "serial number of the tracker to open; empty = the first found"));

  k.push_back(choice("devices.hand_motion", &c.devices.hand_motion, {"stir", "hover", "sweep", "press"},
                     restart, "emulated tracker: the scripted hand's motion (circle, still, side to "
                     "side, up and down)"));
  k.push_back(real("devices.hand_height_m", &c.devices.hand_height_m, 0.02, 0.6, "m", restart,
                   "emulated tracker: the palm's height above the array"));
  k.push_back(real("devices.hand_amplitude_m", &c.devices.hand_amplitude_m, 0, 0.2, "m", restart,
                   "emulated tracker: radius or half-width of the hand's motion"));
  k.push_back(real("devices.hand_period_s", &c.devices.hand_period_s, 0.2, 60, "s", restart,
                   "emulated tracker: one cycle of the hand's motion"));

  k.push_back(integer("tracker.rate_hz", &c.tracker.rate_hz, 90, 120, "Hz", restart,
                      "tracker frame rate: 90 or 120"));

  k.push_back(choice("fluid.medium", &c.fluid.medium, {"particles", "smoke"}, restart,
                     "particles: the particle fluid (fluid.material); smoke: air and smoke on a grid "
                     "([smoke] table)"));
  k.push_back(real("fluid.rate_hz", &c.fluid.rate_hz, 30, 240, "Hz", restart,
                   "fluid frame rate"));
  k.push_back(text("fluid.material", &c.fluid.material, live,
                   "material preset name (config/materials/<name>.toml)"));
  k.push_back(real("fluid.tau_s", &c.fluid.tau_s, 0, 100, "s", live,
                   "viscoelastic relaxation time tau (0 = purely viscous)"));
  k.push_back(real("fluid.alpha", &c.fluid.alpha, 0, 1, "", live,
                   "elastic/plastic blend alpha"));
  k.push_back(integer("fluid.substeps", &c.fluid.substeps, 0, 32, "", restart,
                      "solver substeps per fluid frame for every preset; 0 = each preset's own"));
  k.push_back(integer("fluid.particles", &c.fluid.particles, 64, 1'000'000, "", restart,
                      "particles filling the pool (16 x 16 x 4 cm): more is a finer fluid and a "
                      "dearer frame"));
  k.push_back(integer("fluid.max_particles", &c.fluid.max_particles, 64, 1'000'000, "", restart,
                      "particle buffer capacity"));
  k.push_back(choice("fluid.engine", &c.fluid.engine, {"opencl", "standin"}, restart,
                     "opencl: the particle fluid; standin: a particle-free palm-drag model"));
  k.push_back(text("fluid.device", &c.fluid.device, restart,
                   "OpenCL device name substring; empty = any (a GPU first)"));
  k.push_back(integer("fluid.compute_units", &c.fluid.compute_units, 0, 1024, "", restart,
                      "compute units of the OpenCL device the fluid uses; 0 = all (on PoCL one "
                      "unit is one worker thread)"));
  k.push_back(text("fluid.materials_dir", &c.fluid.materials_dir, restart,
                   "material presets (<name>.toml); empty = materials/ beside the config file"));

  k.push_back(integer("haptic.rate_hz", &c.haptic.rate_hz, 250, 2000, "Hz", restart,
                      "haptic loop rate; one FocalBlock (1 ms of samples) per tick at 1000"));
  k.push_back(choice("haptic.mode", &c.haptic.mode, {"am", "stm", "off"}, live,
                     "rendering: amplitude modulation, spatiotemporal modulation, or silent"));
  // The AM optimiser preallocates for its focus count and modulation: restart keys.
  k.push_back(real("haptic.am_frequency_hz", &c.haptic.am_frequency_hz, 1, 1000, "Hz", restart,
                   "AM modulation frequency"));
  k.push_back(integer("haptic.max_foci", &c.haptic.max_foci, 1, 8, "", restart,
                      "most simultaneous AM focal points"));
  k.push_back(real("haptic.stm_speed_m_s", &c.haptic.stm_speed_m_s, 0.5, 20, "m/s", live,
                   "speed of the STM focal point along its path"));
  k.push_back(real("haptic.full_scale_pa", &c.haptic.full_scale_pa, 1, 1e6, "Pa", restart,
                   "contact pressure rendered at full intensity (square-root law)"));

  k.push_back(choice("stream.encoding", &c.stream.encoding, {"foci", "drive"}, restart,
                     "FOCI (the array solves phases) or DRIVE (256 phases per sample from here)"));
  k.push_back(integer("stream.lookahead_ms", &c.stream.lookahead_ms, 1, 20, "ms", restart,
                      "device FIFO kept this far ahead of the play head"));
  k.push_back(integer("stream.transfers_in_flight", &c.stream.transfers_in_flight, 2, 8, "",
                      restart, "USB bulk OUT transfers kept in flight"));

  k.push_back(real("safety.max_intensity", &c.safety.max_intensity, 0, 1, "", live,
                   "cap on each focus intensity, fraction of full output"));
  k.push_back(real("safety.max_total_power", &c.safety.max_total_power, 0, 8, "", live,
                   "cap on the sum of squared focus intensities per sample (1 = one full focus)"));
  k.push_back(integer("safety.stale_after_ms", &c.safety.stale_after_ms, 5, 95, "ms", restart,
                      "no fresh hand frame for this long starts the fade to silence"));
  k.push_back(integer("safety.field_stale_after_ms", &c.safety.field_stale_after_ms, 20, 1000, "ms",
                      restart, "no fresh contact field for this long (the fluid stopped) starts the fade"));
  k.push_back(integer("safety.fade_ms", &c.safety.fade_ms, 1, 95, "ms", restart,
                      "length of the ramp to silence"));
  k.push_back(integer("safety.device_watchdog_ms", &c.safety.device_watchdog_ms, 1, 1000, "ms",
                      restart, "the array holds its last sample this long when starved, then fades"));
  k.push_back(integer("safety.force_stale_after_ms", &c.safety.force_stale_after_ms, 20, 1000, "ms",
                      restart, "no fresh fluid force on the tool for this long ramps the device to zero"));

  k.push_back(text("status.path", &c.status.path, restart,
                   "shared-memory status file read by sonoflow-top (mode 0640)"));
  k.push_back(real("status.update_hz", &c.status.update_hz, 1, 100, "Hz", restart,
                   "how often each stage publishes its status section"));

  k.push_back(text("control.socket", &c.control.socket, restart,
                   "Unix control socket used by sonoflowctl (mode 0660)"));
  k.push_back(text("control.group", &c.control.group, restart,
                   "group whose members may read status over the socket"));
  k.push_back(text("control.admin_group", &c.control.admin_group, restart,
                   "group whose members may change settings and recording"));

  k.push_back(text("recorder.directory", &c.recorder.directory, restart,
                   "where recordings (traces) are written"));
  k.push_back(boolean("recorder.record_at_start", &c.recorder.record_at_start, restart,
                      "start a recording as soon as the pipeline runs"));
  k.push_back(choice("recorder.io", &c.recorder.io, {"auto", "io_uring", "pwrite"}, restart,
                     "write path; auto tries io_uring and falls back to pwrite"));
  k.push_back(integer("recorder.buffer_kib", &c.recorder.buffer_kib, 4, 16384, "KiB", restart,
                      "size of each write buffer (multiple of 4)"));
  k.push_back(integer("recorder.buffers", &c.recorder.buffers, 2, 16, "", restart,
                      "write buffers (registered with io_uring)"));

  k.push_back(text("scene.file", &c.scene.file, live,
                   "scene to load at start (config/scenes/*.toml); empty = none"));

  k.push_back(boolean("view.export_scene", &c.view.export_scene, restart,
                      "publish the scene snapshot live viewers read (sonoflow-view)"));
  k.push_back(text("view.scene_path", &c.view.scene_path, restart,
                   "shared-memory scene snapshot (mode 0640); empty = 'scene' beside status.path"));
  k.push_back(real("view.scene_rate_hz", &c.view.scene_rate_hz, 1, 120, "Hz", restart,
                   "how often the fluid and haptic threads publish the scene"));
  k.push_back(integer("view.max_particles", &c.view.max_particles, 16, 1'000'000, "", restart,
                      "most particles in the scene (every k-th particle when there are more)"));
  k.push_back(integer("view.max_samples", &c.view.max_samples, 16, 4096, "", restart,
                      "most contact and target samples in the scene"));
  k.push_back(integer("view.port", &c.view.port, 1, 65535, "", restart,
                      "sonoflow-view's HTTP port"));
  k.push_back(text("view.bind", &c.view.bind, restart,
                   "sonoflow-view's listening address; anything but loopback is warned about"));
  return k;
}

std::string format_value(const KeyInfo& key) {
  struct Visitor {
    std::string operator()(bool* v) const { return *v ? "true" : "false"; }
    std::string operator()(int* v) const { return std::to_string(*v); }
    std::string operator()(double* v) const {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.6g", *v);
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(std::string* v) const { return "\"" + *v + "\""; }
  };
  return std::visit(Visitor{}, key.slot);
}

}  // namespace sonoflow::daemon
