// sonoflowd as a process, the way systemd runs it: sd_notify READY/WATCHDOG/STATUS/STOPPING
// through a NOTIFY_SOCKET of the test's own (the real libsystemd protocol), SIGTERM fades the
// array to silence and exits 0, SIGHUP reloads live keys, bad configs exit 78 naming the key,
// and the monitor and control tools work against the running daemon. Real clock: the test
// asserts what happened, never how fast.
#include <gtest/gtest.h>

#include <dirent.h>
#include <pthread.h>
#include <sched.h>

#include "daemon/status/status_file.hpp"
#include "tests/daemon/process_support.hpp"
#include "tests/support/fifo_permitted.hpp"

namespace sonoflow::daemon {
namespace {

using namespace std::chrono_literals;
using test::Daemon;
using test::NotifySocket;
using test::Sandbox;
using test::read_file;

using sonoflow::test::fifo_permitted;

struct ThreadSched {
  bool found = false;
  int policy = -1, priority = -1;
};

// How the kernel schedules the thread named `name` of process `pid`.
ThreadSched thread_of(pid_t pid, const std::string& name) {
  ThreadSched t;
  const std::string tasks = "/proc/" + std::to_string(pid) + "/task";
  DIR* dir = opendir(tasks.c_str());
  if (dir == nullptr) return t;
  while (const dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::string comm = read_file(tasks + "/" + e->d_name + "/comm");
    if (!comm.empty() && comm.back() == '\n') comm.pop_back();
    if (comm != name) continue;
    const pid_t tid = std::atoi(e->d_name);
    sched_param param{};
    t.found = true;
    t.policy = sched_getscheduler(tid);
    if (sched_getparam(tid, &param) == 0) t.priority = param.sched_priority;
  }
  closedir(dir);
  return t;
}

// The start of a thread's entry in the run summary: asked `priority`, and granted it where
// SCHED_FIFO is `permitted` (otherwise "realtime":false).
std::string thread_entry(const std::string& name, int priority, bool permitted) {
  const std::string p = std::to_string(priority);
  return "{\"name\":\"" + name + "\",\"priority_requested\":" + p + ",\"realtime\":" +
         (permitted ? "true,\"priority\":" + p + "}" : "false");
}

// `command` run the way an unprivileged service would be: RLIMIT_RTPRIO 0 and, as root, no
// CAP_SYS_NICE (dropped from the bounding and inheritable sets before exec, so it is gone for
// good). SCHED_FIFO is then impossible.
std::vector<std::string> without_realtime(const std::vector<std::string>& command) {
  std::vector<std::string> out{"/usr/bin/prlimit", "--rtprio=0:0"};
  if (geteuid() == 0) {
    for (const char* a : {"/usr/bin/setpriv", "--bounding-set", "-sys_nice", "--inh-caps", "-sys_nice"})
      out.push_back(a);
  }
  out.insert(out.end(), command.begin(), command.end());
  return out;
}

TEST(Sonoflowd, NotifiesReadyFeedsWatchdogAndStopsSilentOnSigterm) {
  Sandbox box;
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--summary", box.dir + "/summary.json"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock", "WATCHDOG_USEC=400000"},
                           box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", 5s));
  EXPECT_TRUE(notify.wait_for("WATCHDOG=1", 5s));
  EXPECT_TRUE(notify.wait_for("STATUS=running", 5s));

  // A monitor attaching mid-run sees a live daemon whose counters advance.
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;
  const auto first = reader->snapshot();
  std::this_thread::sleep_for(300ms);
  const auto second = reader->snapshot();
  EXPECT_EQ(first.daemon_state, status::DaemonState::Running);
  EXPECT_EQ(first.writer_pid, d.pid);
  EXPECT_GT(second.loops[2].ticks, first.loops[2].ticks);
  EXPECT_GT(second.array.blocks_sent, first.array.blocks_sent);
  EXPECT_GT(second.heartbeat_ns, first.heartbeat_ns);

  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
  EXPECT_TRUE(notify.wait_for("STOPPING=1", 1s));
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find("\"schema\":\"sonoflow.summary\""), std::string::npos);
  // The emulated array itself reports idle (disarmed, silent) after the stop.
  EXPECT_NE(summary.find("\"array_final\":{\"silent\":true,\"state\":0"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"faded_cleanly\":true"), std::string::npos);
  // The status file and socket are gone; the mapping says the writer stopped.
  EXPECT_NE(access((box.dir + "/status").c_str(), F_OK), 0);
  EXPECT_NE(access((box.dir + "/control.sock").c_str(), F_OK), 0);
  EXPECT_EQ(reader->snapshot().daemon_state, status::DaemonState::Stopped);
}

// READY=1 means a whole status: a monitor attaching at once finds every stage loop's section
// published (its first tick; the fluid's comes a period after the start) and the haptic mode of
// the config, not zeros. Fails when READY is sent as soon as the threads are set up.
TEST(Sonoflowd, AMonitorAttachingAtReadySeesEveryLoopsStatus) {
  Sandbox box;
  box.write_config("[haptic]\nmode = \"stm\"\n");
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;
  const auto s = reader->snapshot();
  for (const status::Stage stage : {status::Stage::Tracker, status::Stage::Fluid, status::Stage::Haptic,
                                    status::Stage::Stream}) {
    const auto& loop = s.loops[static_cast<int>(stage)];
    EXPECT_GT(loop.updated_ns, 0) << status::kStageNames[static_cast<int>(stage)];
    EXPECT_NE(loop.state, status::LoopState::Stopped) << status::kStageNames[static_cast<int>(stage)];
    EXPECT_GT(loop.period_target_ns, 0) << status::kStageNames[static_cast<int>(stage)];
  }
  EXPECT_EQ(s.haptic.mode, 2u) << "the config's mode (stm)";
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
}

TEST(Sonoflowd, SighupReloadsLiveKeysAndKeepsRestartKeys) {
  Sandbox box;
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  box.write_config("[haptic]\nmode = \"stm\"\nrate_hz = 500\n");
  kill(d.pid, SIGHUP);
  EXPECT_TRUE(notify.wait_for("RELOADING=1", 5s));
  EXPECT_TRUE(notify.wait_for("READY=1", 5s));
  const std::string ctl = std::string(SONOFLOWCTL) + " --socket " + box.dir + "/control.sock ";
  EXPECT_EQ(box.run_tool(ctl + "get haptic.mode"), "0:haptic.mode = \"stm\"\n");
  EXPECT_EQ(box.run_tool(ctl + "get haptic.rate_hz"), "0:haptic.rate_hz = 1000\n");
  EXPECT_NE(d.log().find("'haptic.rate_hz' changed but needs a restart"), std::string::npos);
  // A broken config on reload is refused and the daemon keeps running.
  box.write_config("[haptic]\nmode = 3\n");
  kill(d.pid, SIGHUP);
  EXPECT_TRUE(notify.wait_for("READY=1", 5s));
  EXPECT_EQ(box.run_tool(ctl + "ping"), "0:pong\n");
  kill(d.pid, SIGINT);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
}

TEST(Sonoflowd, ToolsWorkAgainstTheRunningDaemon) {
  Sandbox box;
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  const std::string top = box.run_tool(std::string(SONOFLOW_TOP) + " --shm " + box.dir + "/status --json");
  EXPECT_EQ(top.rfind("0:{\"schema\":\"sonoflow.status\"", 0), 0u) << top;
  const std::string screen = box.run_tool(std::string(SONOFLOW_TOP) + " --shm " + box.dir + "/status -b -n 1");
  EXPECT_NE(screen.find("haptic"), std::string::npos);
  const std::string ctl = std::string(SONOFLOWCTL) + " --socket " + box.dir + "/control.sock ";
  EXPECT_EQ(box.run_tool(ctl + "mode stm"), "0:haptic.mode = stm\n");
  EXPECT_EQ(box.run_tool(ctl + "set fluid.alpha 3").substr(0, 2), "1:");
  EXPECT_EQ(box.run_tool(ctl + "bogus").substr(0, 2), "1:");
  const std::string recording = box.run_tool(ctl + "record start");
  EXPECT_EQ(recording.substr(0, 2), "0:") << recording;
  std::this_thread::sleep_for(300ms);
  EXPECT_NE(box.run_tool(ctl + "record stop").find("recording stopped"), std::string::npos);
  EXPECT_EQ(box.run_tool(ctl + "status").substr(0, 2), "0:");
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
  EXPECT_EQ(box.run_tool(ctl + "ping").substr(0, 2), "7:");  // not running
}

// The config keys for the OpenCL particle fluid with the project's material presets, then `extra`.
std::string particle_fluid(const std::string& extra) {
  return "fluid.engine = \"opencl\"\nfluid.materials_dir = \"" SONOFLOW_SOURCE_DIR "/config/materials\"\n" + extra;
}

// The daemon's status once `ready` holds of it, or after 30 s.
status::StatusSnapshot snapshot_once(status::StatusReader& reader, const auto& ready) {
  return test::poll_status(reader, ready, 30s);
}

// The daemon on the OpenCL particle fluid (PoCL here): the hand stirs the pool, contact
// samples reach the haptic thread, and the array renders them. The pool holds fluid.particles
// (1,024 = 16 x 16 x 4 at 1 cm: not the default, so the key must reach the engine).
TEST(Sonoflowd, RunsTheParticleFluidAndRendersItsContact) {
  Sandbox box;
  box.write_config(particle_fluid("fluid.particles = 1024\n"));
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  // A cold PoCL kernel cache compiles first: allow for it.
  ASSERT_TRUE(notify.wait_for("READY=1", 120s)) << d.log();
  EXPECT_NE(d.log().find("fluid engine on"), std::string::npos) << d.log();
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;
  const status::StatusSnapshot s = snapshot_once(*reader, [](const status::StatusSnapshot& now) {
    return now.fluid.frames >= 30 && now.fluid.contact_samples > 0 && now.haptic.peak_intensity > 0;
  });
  EXPECT_EQ(s.fluid.particles, 1024u);
  EXPECT_GE(s.fluid.frames, 30u);
  EXPECT_GT(s.fluid.contact_samples, 0u);
  EXPECT_GT(s.haptic.peak_intensity, 0.0f);
  EXPECT_EQ(s.fluid.engine_errors, 0u);
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(30s), 0) << d.log();
}

// The tracker streams only once the fluid's kernels are built: a cold PoCL cache (a private,
// empty one) makes the build take seconds, and a stream started before it would overflow the
// driver's 32-frame ring at 120 frames/s (hundreds of frames lost, the first ones rendered seconds
// old). Started just before the stages run, the daemon takes every frame from the first on.
TEST(Sonoflowd, TheTrackerStreamsOnlyOnceTheFluidIsBuilt) {
  Sandbox box;
  box.write_config(particle_fluid("fluid.particles = 256\n"));
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock", "POCL_CACHE_DIR=" + box.dir + "/pocl-cache"},
                           box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 180s)) << d.log();
  std::string error;
  auto reader = status::StatusReader::attach(box.dir + "/status", error);
  ASSERT_TRUE(reader) << error;
  const status::StatusSnapshot s =
      snapshot_once(*reader, [](const status::StatusSnapshot& now) { return now.tracker.frames >= 120; });
  EXPECT_GE(s.tracker.frames, 120u);
  // Half a second of frames as margin for a stalled test machine; streaming through the build
  // loses the build's length of frames less 32 (600 or more for a cold build here).
  EXPECT_LT(s.tracker.dropped_frames, 60u) << "frames " << s.tracker.frames << ", last id " << s.tracker.last_frame_id;
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(30s), 0) << d.log();
}

// The stir-rod-honey scene (force feedback on) as sonoflowd runs it with --emulate: the servo
// runs on a thread of its own, the monitor shows it, and the stop leaves the device released.
// The scene's own file, on the palm-drag standin fluid so the test stays quick.
TEST(Sonoflowd, ForceFeedbackSceneRunsItsServoAndLeavesTheDeviceReleased) {
  Sandbox box;
  std::string scene = read_file(SONOFLOW_SOURCE_DIR "/config/scenes/stir-rod-honey.toml");
  const auto fluid = scene.find("[fluid]\n");
  ASSERT_NE(fluid, std::string::npos);
  scene.insert(fluid + 8, "engine = \"standin\"\n");
  {
    std::ofstream out(box.config);
    out << "[status]\npath = \"" << box.dir << "/status\"\n[control]\nsocket = \"" << box.dir
        << "/control.sock\"\n[recorder]\ndirectory = \"" << box.dir << "/sessions\"\n" << scene;
  }
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--summary", box.dir + "/summary.json"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  EXPECT_NE(d.log().find("force feedback: emulated 3-DoF stylus"), std::string::npos) << d.log();
  EXPECT_TRUE(thread_of(d.pid, "sf-force").found);
  std::this_thread::sleep_for(1500ms);  // the rod stirs a good part of a circle
  const std::string top = box.run_tool(std::string(SONOFLOW_TOP) + " --shm " + box.dir + "/status --json");
  EXPECT_NE(top.find("\"name\":\"force\",\"state\":\"running\""), std::string::npos) << top;
  EXPECT_NE(top.find("\"force_feedback\":{\"enabled\":true,\"output\":\"rendering\",\"stylus\":true"),
            std::string::npos) << top;
  const std::string screen = box.run_tool(std::string(SONOFLOW_TOP) + " --shm " + box.dir + "/status -b -n 1");
  EXPECT_NE(screen.find("FORCE   rendering stylus ok"), std::string::npos) << screen;
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find("\"force_feedback\":{\"enabled\":true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"released_at_stop\":true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"faded_cleanly\":true"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("\"peak_force_n\":0,"), std::string::npos) << "the rod felt the honey: " << summary;
}

// A bad [force_feedback] key refuses to start (exit 78) and names the key.
TEST(Sonoflowd, BadForceFeedbackKeyExits78NamingIt) {
  Sandbox box;
  box.write_config("[force_feedback]\nenabled = true\nmax_step_n = 50\n");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"}, {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(10s), 78);
  EXPECT_NE(d.log().find("'force_feedback.max_step_n' = 50 is out of range (min 0.0001, max 10)"),
            std::string::npos) << d.log();
}

TEST(Sonoflowd, BadConfigExits78NamingTheKey) {
  Sandbox box;
  box.write_config("[safety]\nmax_intensity = 1.5\n[haptic]\nmodes = \"am\"\n");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"}, {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(10s), 78);
  const std::string log = d.log();
  EXPECT_NE(log.find("'safety.max_intensity' = 1.5 is out of range (min 0, max 1)"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown key 'haptic.modes' (did you mean 'haptic.mode'?)"), std::string::npos) << log;
}

// The particle fluid's material is part of the configuration: a name with no preset (a typo)
// refuses to start naming the key and the presets there, before any OpenCL work; so does
// --check-config. (The daemon once ran water's coefficients under the asked-for name.)
TEST(Sonoflowd, AMaterialWithNoPresetRefusesToStart) {
  Sandbox box;
  box.write_config(particle_fluid("fluid.material = \"hony\"\n"));
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"}, {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(10s), 78);
  EXPECT_NE(d.log().find("'fluid.material' = \"hony\": no preset hony.toml"), std::string::npos) << d.log();
  EXPECT_NE(d.log().find("honey"), std::string::npos) << d.log();  // the presets it could have named
  const std::string check = box.run_tool(std::string(SONOFLOWD) + " --check-config --config " + box.config);
  EXPECT_EQ(check.substr(0, 3), "78:") << check;
  EXPECT_NE(check.find("'fluid.material'"), std::string::npos) << check;

  box.write_config("fluid.engine = \"opencl\"\nfluid.materials_dir = \"" + box.dir + "/no-such-dir\"\n");
  const std::string missing = box.run_tool(std::string(SONOFLOWD) + " --check-config --config " + box.config);
  EXPECT_EQ(missing.substr(0, 3), "78:") << missing;
  EXPECT_NE(missing.find("'fluid.materials_dir'"), std::string::npos) << missing;
}

TEST(Sonoflowd, MissingDeviceRefusesToStart) {
  Sandbox box;
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config}, {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(10s), 69);
  EXPECT_NE(d.log().find("'devices.emulate'"), std::string::npos) << d.log();
}

TEST(Sonoflowd, RunForStopsByItselfAndReplayReproducesTheRecording) {
  Sandbox box;
  box.write_config("recorder.record_at_start = true\n");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--run-for", "1.5"}, {},
                           box.dir + "/stderr");
  ASSERT_EQ(d.wait(20s), 0) << d.log();
  const std::string trace = box.run_tool("ls " + box.dir + "/sessions/*.sftrace");
  ASSERT_EQ(trace.substr(0, 2), "0:") << trace;
  // The real-clock recording (record_at_start: from the first tick) replays block for block.
  const std::string replay = box.run_tool(std::string(SONOFLOWD) + " --replay " + trace.substr(2, trace.size() - 3) +
                                          " --summary " + box.dir + "/replay.json");
  EXPECT_EQ(replay.substr(0, 2), "0:") << replay;
  const std::string summary = read_file(box.dir + "/replay.json");
  EXPECT_NE(summary.find("\"mid_run\":false"), std::string::npos) << summary;
  // Every block replay could compare is identical. A recording with no gaps compares them all;
  // on an overloaded machine the recorder may fall behind and count gaps (full telemetry rings
  // are dropped, never waited on), and then replay must say "incomplete", not "identical".
  const auto number_after = [](const std::string& text, const std::string& key) {
    const auto at = text.find(key);
    return at == std::string::npos ? -1L : std::stol(text.substr(at + key.size()));
  };
  const long compared = number_after(summary, "\"compared\":");
  EXPECT_GT(compared, 100) << summary;  // of about 1,500 ticks (1.5 s at 1 kHz)
  EXPECT_EQ(number_after(summary, "\"identical\":"), compared) << summary;
  const std::string log = d.log();  // "... recording stopped: PATH, R records, B bytes, G gaps"
  const auto stopped = log.find("recording stopped: ");
  ASSERT_NE(stopped, std::string::npos) << log;
  const std::string line = log.substr(stopped, log.find('\n', stopped) - stopped);
  const auto comma = line.rfind(", ");
  ASSERT_NE(comma, std::string::npos) << line;
  const long gaps = std::stol(line.substr(comma + 2));
  if (gaps == 0) {
    EXPECT_NE(replay.find(" identical: identical"), std::string::npos) << replay;
    EXPECT_NE(summary.find("\"verdict\":\"identical\""), std::string::npos) << summary;
  } else {
    std::printf("the recorder counted %ld gaps under this machine's load: %s\n", gaps, line.c_str());
  }
}

// threads.usb reaches the devices' transport threads: where SCHED_FIFO is permitted (CI runs as
// root) the kernel shows them with the configured priority, and the summary lists them.
TEST(Sonoflowd, UsbTransportThreadsRunWithThreadsUsbScheduling) {
  Sandbox box;
  box.write_config("[threads.usb]\npriority = 13\n");
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--summary", box.dir + "/summary.json"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 10s)) << d.log();
  const bool permitted = fifo_permitted(13);
  for (const char* name : {"sf-usb-array", "sf-usb-tracker"}) {
    const ThreadSched t = thread_of(d.pid, name);
    ASSERT_TRUE(t.found) << name << "\n" << d.log();
    if (permitted) {
      EXPECT_EQ(t.policy, SCHED_FIFO) << name;
      EXPECT_EQ(t.priority, 13) << name;
    }
  }
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(10s), 0) << d.log();
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find(thread_entry("sf-usb-array", 13, permitted)), std::string::npos) << summary;
}

// threads.opencl reaches PoCL's workers, which PoCL starts inside the fluid engine's create: the
// kernel shows them as sf-ocl-N with the configured priority (where SCHED_FIFO is permitted), the
// log says what they got, and the summary lists them.
TEST(Sonoflowd, OpenClWorkersRunWithThreadsOpenclScheduling) {
  Sandbox box;
  box.write_config(particle_fluid("fluid.particles = 1024\n[threads.opencl]\npriority = 11\n"));
  NotifySocket notify(box.dir + "/notify.sock");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate", "--summary", box.dir + "/summary.json"},
                           {"NOTIFY_SOCKET=" + box.dir + "/notify.sock"}, box.dir + "/stderr");
  ASSERT_TRUE(notify.wait_for("READY=1", 120s)) << d.log();  // a cold PoCL cache compiles first
  const bool permitted = fifo_permitted(11);
  const ThreadSched t = thread_of(d.pid, "sf-ocl-0");
  ASSERT_TRUE(t.found) << d.log();
  if (permitted) {
    EXPECT_EQ(t.policy, SCHED_FIFO);
    EXPECT_EQ(t.priority, 11);
    EXPECT_NE(d.log().find("OpenCL worker thread(s) sf-ocl-* (tid "), std::string::npos) << d.log();
    EXPECT_NE(d.log().find("SCHED_FIFO 11"), std::string::npos) << d.log();
  }
  kill(d.pid, SIGTERM);
  EXPECT_EQ(d.wait(30s), 0) << d.log();
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find(thread_entry("sf-ocl-0", 11, permitted)), std::string::npos) << summary;
}

// rt.require = true and no way to get SCHED_FIFO: exit 77 naming the threads and the reason.
TEST(Sonoflowd, RtRequireWithoutRealtimeExits77NamingWhy) {
  Sandbox box;
  box.write_config("rt.require = true\n");
  Daemon d = Daemon::spawn(without_realtime({SONOFLOWD, "--config", box.config, "--emulate"}), {},
                           box.dir + "/stderr");
  EXPECT_EQ(d.wait(20s), 77) << d.log();
  const std::string log = d.log();
  EXPECT_NE(log.find("realtime scheduling unavailable for loops tracker, fluid, haptic, stream and threads "
                     "sf-usb-array, sf-usb-tracker: SCHED_FIFO 70 refused (RLIMIT_RTPRIO=0)"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("refusing to start (rt.require = true)"), std::string::npos) << log;
}

// The default (rt.require = false) under the same conditions: a warning, DEGRADED, and it runs.
TEST(Sonoflowd, WithoutRealtimeTheDefaultRunsDegradedWithAWarning) {
  Sandbox box;
  Daemon d = Daemon::spawn(without_realtime({SONOFLOWD, "--config", box.config, "--emulate", "--run-for", "1",
                                             "--summary", box.dir + "/summary.json"}),
                           {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(20s), 0) << d.log();
  const std::string log = d.log();
  EXPECT_NE(log.find("[W][rt] realtime scheduling unavailable for loops tracker, fluid, haptic, stream"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("running DEGRADED on SCHED_OTHER"), std::string::npos) << log;
  const std::string summary = read_file(box.dir + "/summary.json");
  EXPECT_NE(summary.find("\"degraded\":true"), std::string::npos) << summary;
  EXPECT_NE(summary.find("\"blocks_sent\":"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("\"blocks_sent\":0,"), std::string::npos) << summary;
}

}  // namespace
}  // namespace sonoflow::daemon
