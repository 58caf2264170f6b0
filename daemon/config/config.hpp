#pragma once
// The daemon's configuration: one plain struct, filled from TOML by the loader in
// config_loader.hpp. The defaults here and in config/sonoflow.toml are the same values (a test
// checks it); config_schema.cpp holds every key's type, range, unit and reload policy, except
// [force_feedback], whose keys kernels/force_feedback reads and renders itself.
#include <string>

#include "kernels/force_feedback/force_feedback_config.hpp"
#include "kernels/smoke/smoke_toml.hpp"

namespace sonoflow::daemon {

// Scheduling of one stage thread. priority 1..99 asks for SCHED_FIFO, 0 keeps SCHED_OTHER;
// cpu -1 leaves the affinity alone.
struct ThreadSettings {
  int priority = 0;
  int cpu = -1;
};

struct Config {
  struct Rt {
    bool require = false;      // refuse to start without SCHED_FIFO (exit 77)
    bool lock_memory = true;   // mlockall at start
  } rt;

  struct Threads {
    ThreadSettings tracker{70, -1};
    ThreadSettings fluid{60, -1};
    ThreadSettings haptic{80, -1};
    ThreadSettings stream{90, -1};
    ThreadSettings usb{85, -1};
    ThreadSettings force{80, -1};     // the 1 kHz force-feedback servo (force_feedback.enabled)
    ThreadSettings recorder{0, -1};
    // PoCL's CPU workers, which compute the fluid's kernels (priority only: they are never pinned).
    // Below the fluid thread, which enqueues a frame and waits for them (bench/RESULTS.md, poclprio).
    ThreadSettings opencl{59, -1};
  } threads;

  struct Devices {
    bool emulate = false;             // in-process emulated array and tracker
    std::string array_serial;         // empty: the first array found
    std::string tracker_serial;       // empty: the first tracker found
    // The emulated tracker's scripted hand (drivers/emulator/hand_script.hpp): palm down,
    // fingers +y, centred over the array at hand_height_m.
    std::string hand_motion = "stir"; // stir | hover | sweep | press
    double hand_height_m = 0.13;
    double hand_amplitude_m = 0.04;
    double hand_period_s = 2.0;
  } devices;

  struct Tracker {
    int rate_hz = 120;                // 90 or 120
  } tracker;

  struct Fluid {
    std::string medium = "particles"; // particles (kernels/fluid) | smoke (kernels/smoke, [smoke])
    double rate_hz = 90;
    std::string material = "honey";   // a preset in config/materials/
    double tau_s = 0.0;               // conformation relaxation time
    double alpha = 0.005;             // elastic/plastic blend
    int substeps = 2;
    int particles = 675;              // in the pool; its volume is fixed, the spacing follows
    int max_particles = 5000;
    std::string engine = "opencl";    // opencl | standin (a particle-free palm-drag model)
    std::string device;               // OpenCL device name substring; empty: any (GPU first)
    int compute_units = 0;            // 0: the whole device; n: a sub-device of n compute units
    std::string materials_dir;        // presets; empty: materials/ beside the config file
  } fluid;

  struct Haptic {
    int rate_hz = 1000;
    std::string mode = "am";          // am | stm | off
    double am_frequency_hz = 200;
    int max_foci = 4;
    double stm_speed_m_s = 7.0;
    double full_scale_pa = 400.0;     // contact pressure rendered at full intensity
  } haptic;

  struct Stream {
    std::string encoding = "foci";    // foci | drive
    int lookahead_ms = 3;             // device FIFO target ahead of the play head
    int transfers_in_flight = 4;
  } stream;

  struct Safety {
    double max_intensity = 0.8;       // per focus, fraction of the array's full output
    double max_total_power = 1.0;     // sum of squared focus intensities per sample
    int stale_after_ms = 50;          // no fresh hand frame for this long: fade
    int field_stale_after_ms = 200;   // no fresh contact field for this long: fade
    int fade_ms = 20;                 // ramp to silence
    int device_watchdog_ms = 20;      // the array holds its last sample this long, then fades
    int force_stale_after_ms = 100;   // no fresh fluid force on the tool for this long: ramp to 0
  } safety;

  struct Status {
    std::string path = "/run/sonoflow/status";
    double update_hz = 10;
  } status;

  struct Control {
    std::string socket = "/run/sonoflow/control.sock";
    std::string group = "sonoflow";              // may read status
    std::string admin_group = "sonoflow-admin";  // may change settings and recording
  } control;

  struct Recorder {
    std::string directory = "/var/lib/sonoflow/sessions";
    bool record_at_start = false;
    std::string io = "auto";          // auto | io_uring | pwrite
    int buffer_kib = 256;
    int buffers = 4;
  } recorder;

  struct Scene {
    std::string file;                 // scene TOML to load at start; empty: none
  } scene;

  // A hand-held tool in the fluid whose force a force-feedback device renders (issue 7): the
  // device, the tool's shape, the servo's limits. Restart keys.
  force_feedback::ForceFeedbackSettings force_feedback;

  // The scene snapshot for live viewers (daemon/scene/) and sonoflow-view's own settings.
  struct View {
    bool export_scene = true;         // publish the scene snapshot
    std::string scene_path;           // empty: "scene" beside status.path
    double scene_rate_hz = 30;        // publications per second of the fluid and haptic sections
    int max_particles = 4096;         // particles shown (every k-th when there are more)
    int max_samples = 1024;           // contact / target samples shown
    int port = 8470;                  // sonoflow-view's HTTP port
    std::string bind = "127.0.0.1";   // sonoflow-view's address (anything else is warned about)
  } view;

  // The smoke medium's grid, schemes, jets and plumes: the [smoke] table, read and validated by
  // kernels/smoke/smoke_toml.hpp (it has arrays of tables, so it is not in the flat key schema).
  // A file without one keeps the setup it started from.
  smoke::SmokeSetup smoke;
};

}  // namespace sonoflow::daemon
