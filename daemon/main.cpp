// sonoflowd: the sonoflow daemon. Loads and validates the config, exports live status, starts
// the pipeline threads, and supervises them until a stop signal (or --run-for) fades the array
// to silence. See daemon/supervisor/supervisor.hpp for the signals and the systemd protocol.
//
//   sonoflowd [--config FILE] [--emulate] [--run-for SECONDS] [--summary FILE.json]
//   sonoflowd --replay TRACE [--summary FILE.json]
//   sonoflowd --check-config [--config FILE]
//
// Exit status: 0 clean stop; 1 runtime failure; 2 usage; 69 a configured device is missing;
// 73 the status file or control socket cannot be created; 77 rt.require and no SCHED_FIFO;
// 78 invalid configuration.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "daemon/config/config_loader.hpp"
#include "daemon/control/control_server.hpp"
#include "daemon/devices/device_binding.hpp"
#include "daemon/devices/force_binding.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/opencl_workers.hpp"
#include "daemon/pipeline/kernel_smoke.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/recorder/recorder.hpp"
#include "daemon/recorder/replay.hpp"
#include "daemon/scene/scene_file.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/supervisor/log.hpp"
#include "daemon/supervisor/notifier.hpp"
#include "daemon/supervisor/signals.hpp"
#include "daemon/supervisor/supervisor.hpp"
#include "daemon/version.hpp"
#include "rt/rt_thread.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::daemon;

constexpr int kExitUsage = 2;
constexpr int kExitNoDevice = 69;
constexpr int kExitCantCreate = 73;
constexpr int kExitNoRealtime = 77;

struct Options {
  std::string config_path;
  bool emulate = false;
  double run_for_s = 0;
  std::string summary_path;
  std::string replay_path;
  bool check_config = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: sonoflowd [--config FILE] [--emulate] [--run-for SECONDS] [--summary FILE.json]\n"
               "       sonoflowd --replay TRACE [--summary FILE.json]\n"
               "       sonoflowd --check-config [--config FILE]\n"
               "Default config: /etc/sonoflow/sonoflow.toml if present, else "
               "/usr/share/sonoflow/sonoflow.toml, else built-in defaults.\n");
}

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "--config" && (v = value())) o.config_path = v;
    else if (a == "--emulate") o.emulate = true;
    else if (a == "--run-for" && (v = value())) o.run_for_s = std::atof(v);
    else if (a == "--summary" && (v = value())) o.summary_path = v;
    else if (a == "--replay" && (v = value())) o.replay_path = v;
    else if (a == "--check-config") o.check_config = true;
    else if (a == "--version") {
      std::printf("sonoflowd %s\n", kVersion);
      std::exit(0);
    } else {
      return std::nullopt;
    }
  }
  if (o.run_for_s < 0) return std::nullopt;
  return o;
}

std::string default_config_path() {
  for (const char* p : {"/etc/sonoflow/sonoflow.toml", "/usr/share/sonoflow/sonoflow.toml"}) {
    if (access(p, R_OK) == 0) return p;
  }
  return {};
}

// fluid.materials_dir, else materials/ beside the config file (or beside its folder, for the
// configs in config/scenes/), else the installed presets.
std::string materials_dir(const Config& config, const std::string& config_path) {
  if (!config.fluid.materials_dir.empty()) return config.fluid.materials_dir;
  if (!config_path.empty()) {
    const auto slash = config_path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : config_path.substr(0, slash);
    for (const std::string& candidate : {dir + "/materials", dir + "/../materials"}) {
      if (access(candidate.c_str(), R_OK) == 0) return candidate;
    }
  }
  return SONOFLOW_DATADIR "/sonoflow/materials";
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text << "\n";
  return static_cast<bool>(out);
}

int run_replay(const Options& o) {
  log_line(LogLevel::Info, "replay", "replaying the haptic ticks of %s", o.replay_path.c_str());
  const ReplayResult r = replay_trace(o.replay_path, 100'000'000);
  if (!o.summary_path.empty()) write_file(o.summary_path, r.summary_json());
  if (r.verdict == ReplayVerdict::Unreadable) {
    log_line(LogLevel::Error, "replay", "%s", r.error.c_str());
    return 1;
  }
  std::fputs(r.report().c_str(), stdout);
  return r.ok() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    usage();
    return kExitUsage;
  }
  Options o = *parsed;
  if (!o.replay_path.empty()) return run_replay(o);

  if (o.config_path.empty()) o.config_path = default_config_path();
  ConfigResult loaded;
  if (!o.config_path.empty()) loaded = load_config_file(o.config_path);
  if (!loaded.ok()) {
    std::fputs(loaded.error_report().c_str(), stderr);
    return kExitConfigInvalid;
  }
  // The particle fluid's material presets belong to the configuration: a material with no
  // preset, or a preset the fluid layer refuses, stops the start here (and --check-config).
  MaterialPresets presets;
  const bool particle_fluid = loaded.config.fluid.engine == "opencl" && loaded.config.fluid.medium != "smoke";
  if (particle_fluid) {
    std::string error;
    if (!load_material_presets(loaded.config, materials_dir(loaded.config, o.config_path), presets, error)) {
      std::fprintf(stderr, "sonoflowd: config: %s\nsonoflowd: configuration invalid; not starting\n", error.c_str());
      return kExitConfigInvalid;
    }
  }
  if (o.check_config) {
    std::printf("%s: configuration valid\n", o.config_path.empty() ? "built-in defaults" : o.config_path.c_str());
    return 0;
  }
  Config config = loaded.config;
  if (o.emulate) config.devices.emulate = true;

  log_line(LogLevel::Info, "daemon", "sonoflowd %s starting; config: %s", kVersion,
           o.config_path.empty() ? "built-in defaults" : o.config_path.c_str());
  // Signals are blocked before any thread starts, so only the supervisor ever sees them.
  SignalInbox signals;
  const Notifier notifier;
  if (config.rt.lock_memory) {
    const auto lock = rt::lock_process_memory();
    if (!lock.locked) log_line(LogLevel::Warning, "rt", "memory not locked: %s", lock.message.c_str());
  }

  rt::MonotonicClock clock;
  std::string error;
  auto status = status::StatusWriter::create(config.status.path, clock.now_ns(), error);
  if (!status) {
    log_line(LogLevel::Error, "status", "%s ('status.path')", error.c_str());
    return kExitCantCreate;
  }
  auto control = ControlServer::open(config, error);
  if (!control) {
    log_line(LogLevel::Error, "control", "%s ('control.socket')", error.c_str());
    return kExitCantCreate;
  }
  control->set_status(&status->region());
  // The scene snapshot for live viewers (sonoflow-view). Viewing is not the daemon's job: if
  // the file cannot be made, the daemon says so and runs without it.
  std::unique_ptr<scene::SceneWriter> scene_export;
  if (config.view.export_scene) {
    const std::string path = config.view.scene_path.empty() ? scene::scene_path_beside(config.status.path)
                                                            : config.view.scene_path;
    scene::SceneCapacity capacity;
    capacity.max_particles = static_cast<std::uint32_t>(config.view.max_particles);
    capacity.max_samples = static_cast<std::uint32_t>(config.view.max_samples);
    capacity.rate_hz = config.view.scene_rate_hz;
    scene_export = scene::SceneWriter::create(path, capacity, clock.now_ns(), error);
    if (!scene_export) log_line(LogLevel::Warning, "view", "no scene export: %s ('view.scene_path')", error.c_str());
  }

  // The devices: emulated in-process (VirtualArray + VirtualTracker on the real clock) or USB.
  std::unique_ptr<DeviceBinding> devices;
  if (config.devices.emulate) {
    devices = DeviceBinding::emulated(clock, config, true);
  } else {
    devices = DeviceBinding::usb(clock, config, error);
    if (!devices) {
      log_line(LogLevel::Error, "devices", "%s", error.c_str());
      return kExitNoDevice;
    }
  }
  // The tracker streams only once the stages are about to run (below): the fluid's kernels may
  // take seconds to build, and frames received meanwhile would be seconds old when drained.
  if (const std::string failed = devices->bring_up(); !failed.empty()) {
    log_line(LogLevel::Error, "devices",
             "%s: the array (USB 1209:5F01%s%s) or tracker (1209:5F02) is missing or not answering; "
             "'devices.emulate' = false needs both connected (or run with --emulate)",
             failed.c_str(), config.devices.array_serial.empty() ? "" : ", serial ",
             config.devices.array_serial.c_str());
    return kExitNoDevice;
  }
  log_line(LogLevel::Info, "devices", "%s", devices->describe().c_str());
  // threads.usb: the transports' own threads move every block to the array and every hand frame
  // from the tracker, so they run real-time like the stages (reported with them below).
  const auto usb_threads = devices->apply_usb_thread_config();
  // The fluid: the OpenCL particle engine or grid smoke (fluid.medium), or (fluid.engine =
  // "standin") the palm-drag model.
  std::unique_ptr<FluidModel> fluid;
  // threads.opencl: the OpenCL runtime's workers, started inside the engine's create.
  const ThreadSettings opencl_sched = worker_settings(config);
  std::vector<WorkerThread> opencl_workers;
  if (config.fluid.engine == "opencl" && config.fluid.medium == "smoke") {
    auto engine = create_with_workers(opencl_sched, opencl_workers,
                                      [&] { return KernelSmoke::create(config, error); });
    if (!engine) {
      log_line(LogLevel::Error, "fluid", "%s ('fluid.device' = \"%s\", 'fluid.compute_units' = %d; "
               "'fluid.engine' = \"standin\" runs without OpenCL)", error.c_str(),
               config.fluid.device.c_str(), config.fluid.compute_units);
      return kExitNoDevice;
    }
    log_line(LogLevel::Info, "fluid", "%s", engine->describe().c_str());
    fluid = std::move(engine);
  } else if (config.fluid.engine == "opencl") {
    auto engine = create_with_workers(opencl_sched, opencl_workers,
                                      [&] { return KernelFluid::create(config, std::move(presets), error); });
    if (!engine) {
      log_line(LogLevel::Error, "fluid", "%s ('fluid.device' = \"%s\", 'fluid.compute_units' = %d; "
               "'fluid.engine' = \"standin\" runs without OpenCL)", error.c_str(),
               config.fluid.device.c_str(), config.fluid.compute_units);
      return kExitNoDevice;
    }
    log_line(LogLevel::Info, "fluid", "%s", engine->describe().c_str());
    control->set_materials(engine->preset_names());
    fluid = std::move(engine);
  } else {
    log_line(LogLevel::Warning, "fluid", "fluid.engine = \"standin\": a particle-free palm-drag model, not the fluid");
    auto standin = std::make_unique<PalmDragField>();
    if (config.force_feedback.enabled) {
      standin->set_tool(static_cast<float>(config.force_feedback.tool_radius_m),
                        static_cast<float>(config.force_feedback.tool_length_m));
    }
    fluid = std::move(standin);
  }
  if (config.fluid.engine == "opencl")
    log_line(LogLevel::Info, "rt", "%s", describe_workers(opencl_workers, opencl_sched).c_str());
  // Force feedback: the device whose stylus moves the tool the fluid carries.
  std::unique_ptr<drivers::ForceDevice> force_device;
  if (config.force_feedback.enabled) {
    const float surface = config.fluid.engine == "opencl" ? fluid::kPoolSurfaceZ : PalmDragField::kSurfaceZ;
    force_device = make_force_device(config, clock, surface, error);
    if (!force_device) {
      log_line(LogLevel::Error, "force", "%s ('force_feedback.device')", error.c_str());
      return kExitNoDevice;
    }
    log_line(LogLevel::Info, "force", "%s", describe_force_device(*force_device, config).c_str());
  }
  KernelRenderer renderer(config);

  Pipeline pipeline(config, clock,
                    PipelineParts{devices->hand_source(), *fluid, renderer, devices->array_link(),
                                  force_device.get()},
                    &status->region());
  if (scene_export) pipeline.set_scene_export(*scene_export);
  for (const auto& t : usb_threads) {
    pipeline.add_thread_report(t.name, config.threads.usb.priority, t.report);
    // A refused priority is in the RT report below; what else went wrong (a CPU) is said here.
    const bool in_rt_report = config.threads.usb.priority > 0 && !t.report.realtime;
    if (!in_rt_report && !t.report.message.empty())
      log_line(LogLevel::Warning, "rt", "%s: %s", t.name.c_str(), t.report.message.c_str());
  }
  for (const auto& w : opencl_workers) pipeline.add_thread_report(w.name, opencl_sched.priority, w.report);
  Recorder recorder(config, pipeline.links(), clock, &status->region());
  control->set_recorder(&recorder);
  // Recording from the first tick on makes the whole session replayable bit for bit.
  if (config.recorder.record_at_start) recorder.start();
  if (const std::string failed = devices->start_tracker_stream(); !failed.empty()) {
    log_line(LogLevel::Error, "devices", "%s: the tracker (1209:5F02) stopped answering", failed.c_str());
    return kExitNoDevice;
  }
  pipeline.start_threads();
  recorder.set_origin(pipeline.start_ns());
  recorder.start_thread();

  // Wait for the stage threads to report their scheduling (a loaded machine may start them
  // late: rt.require must not pass on a report that is not in yet), then say once how it went.
  for (int i = 0; i < 500 && !pipeline.scheduling_known(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const std::string rt_report = pipeline.rt_report(config.rt.require);
  if (!rt_report.empty()) {
    if (config.rt.require) {
      log_line(LogLevel::Error, "rt", "%s", rt_report.c_str());
      pipeline.stop(200'000'000);
      return kExitNoRealtime;
    }
    log_line(LogLevel::Warning, "rt", "%s", rt_report.c_str());
  } else {
    log_line(LogLevel::Info, "rt", "every loop runs with its configured SCHED_FIFO priority");
  }
  // READY promises a whole status to a monitor attaching at once: every loop's first tick
  // publishes its section (the fluid's comes a period and a frame after the start).
  for (int i = 0; i < 500 && !pipeline.every_loop_published(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  status->set_state(status::DaemonState::Running);
  if (scene_export) scene_export->set_state(scene::SceneState::Running);
  notifier.ready(pipeline.status_line());
  log_line(LogLevel::Info, "daemon", "ready; status at %s, control at %s", config.status.path.c_str(),
           config.control.socket.c_str());

  Supervisor supervisor(config, o.config_path, clock, pipeline, status.get(), signals, notifier,
                        control.get());
  devices->start_maintenance_thread(clock, 100'000'000);
  supervisor.set_before_stop([&devices] { devices->stop_maintenance_thread(); });
  if (!config.scene.file.empty()) {
    const std::string why = supervisor.load_scene(config.scene.file);
    if (!why.empty()) log_line(LogLevel::Warning, "config", "scene not loaded ('scene.file'): %s", why.c_str());
  }
  const bool faded = supervisor.run(static_cast<std::int64_t>(o.run_for_s * 1e9));
  // Give the array time to report its state after the disarm.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  recorder.stop();
  recorder.stop_thread();
  // What the array is doing now that the pipeline stopped: the emulator's own state when
  // emulated, else the array's last STATUS.
  drivers::ArrayStatus final_status;
  bool have_status = false;
  if (auto* emulated = devices->emulated_devices()) {
    emulated->with_array([&](drivers::emulator::VirtualArray& a) { final_status = a.status(); });
    have_status = true;
  } else {
    have_status = devices->devices().array().status(final_status);
  }
  const bool silent = !have_status || final_status.state == drivers::ArrayState::Idle ||
                      final_status.state == drivers::ArrayState::Armed;
  log_line(LogLevel::Info, "daemon", "stopped; array %s (state %u), %llu underruns, latency samples %llu",
           silent ? "silent" : "NOT SILENT", have_status ? static_cast<unsigned>(final_status.state) : 0u,
           static_cast<unsigned long long>(pipeline.stream().underruns()),
           static_cast<unsigned long long>(pipeline.stream().latency().count()));
  log_line(LogLevel::Debug, "fluid", "first frame's step %.2f ms of %llu frames (period %.2f ms)",
           1e-6 * static_cast<double>(pipeline.fluid().first_step_ns()),
           static_cast<unsigned long long>(pipeline.fluid().frames()),
           1e-6 * static_cast<double>(pipeline.fluid().period_ns()));
  if (!o.summary_path.empty()) {
    std::string summary = pipeline.summary_json(clock.now_ns());
    // Append the device's view of what it emitted at the end.
    summary.pop_back();
    summary += std::string(",\"array_final\":{\"silent\":") + (silent ? "true" : "false") +
               ",\"state\":" + std::to_string(have_status ? static_cast<unsigned>(final_status.state) : 0u) +
               ",\"faded_cleanly\":" + (faded ? "true" : "false") + "}}";
    if (!write_file(o.summary_path, summary))
      log_line(LogLevel::Error, "daemon", "cannot write summary %s", o.summary_path.c_str());
  }
  return 0;
}
