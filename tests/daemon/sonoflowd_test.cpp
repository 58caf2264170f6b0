// sonoflowd as a process, the way systemd runs it: sd_notify READY/WATCHDOG/STATUS/STOPPING
// through a NOTIFY_SOCKET of the test's own (the real libsystemd protocol), SIGTERM fades the
// array to silence and exits 0, SIGHUP reloads live keys, bad configs exit 78 naming the key,
// and the monitor and control tools work against the running daemon. Real clock: the test
// asserts what happened, never how fast.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "daemon/status/status_file.hpp"

extern char** environ;

namespace sonoflow::daemon {
namespace {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A datagram socket standing in for systemd's notification socket.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    unlink(path.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  }
  ~NotifySocket() {
    close(fd_);
    unlink(path_.c_str());
  }
  // Collects messages until one contains `wanted` (true) or `timeout` passes (false).
  bool wait_for(const std::string& wanted, std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    for (const auto& m : messages) if (m.find(wanted) != std::string::npos && !consumed(m)) return mark(m);
    while (std::chrono::steady_clock::now() < end) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 50) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      messages.emplace_back(buf, static_cast<std::size_t>(n));
      if (messages.back().find(wanted) != std::string::npos) return mark(messages.back());
    }
    return false;
  }
  int count(const std::string& wanted) const {
    int c = 0;
    for (const auto& m : messages) c += m.find(wanted) != std::string::npos ? 1 : 0;
    return c;
  }
  std::vector<std::string> messages;

 private:
  bool consumed(const std::string& m) const { return std::find(used_.begin(), used_.end(), &m) != used_.end(); }
  bool mark(const std::string& m) {
    used_.push_back(&m);
    return true;
  }
  std::string path_;
  int fd_;
  std::vector<const std::string*> used_;
};

struct Daemon {
  pid_t pid = -1;
  std::string stderr_path;

  static Daemon spawn(const std::vector<std::string>& args, const std::vector<std::string>& env,
                      const std::string& stderr_path) {
    std::vector<char*> argv, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    std::vector<std::string> env_strings(env);
    for (char** e = environ; *e; ++e) {
      const std::string s = *e;
      if (s.rfind("NOTIFY_SOCKET=", 0) != 0 && s.rfind("WATCHDOG_", 0) != 0) env_strings.push_back(s);
    }
    for (auto& e : env_strings) envp.push_back(e.data());
    envp.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    Daemon d;
    d.stderr_path = stderr_path;
    EXPECT_EQ(posix_spawn(&d.pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
    posix_spawn_file_actions_destroy(&actions);
    return d;
  }
  // Exit status, or -1 if it did not exit within the timeout (then it is killed).
  int wait(std::chrono::milliseconds timeout) {
    const auto end = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < end) {
      if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      std::this_thread::sleep_for(20ms);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  std::string log() const { return read_file(stderr_path); }
};

struct Sandbox {
  Sandbox() {
    dir = ::testing::TempDir() + "sfd" + std::to_string(getpid()) + "_" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
    config = dir + "/sonoflow.toml";
    write_config("");
  }
  void write_config(const std::string& extra) {
    std::ofstream out(config);
    // The paths as dotted keys; `extra` may add tables other than status, control, recorder
    // (or dotted keys for those).
    out << "status.path = \"" << dir << "/status\"\ncontrol.socket = \"" << dir
        << "/control.sock\"\nrecorder.directory = \"" << dir << "/sessions\"\n" << extra;
  }
  std::string run_tool(const std::string& command) const {
    const std::string out = dir + "/tool.out";
    const int rc = std::system((command + " >" + out + " 2>&1").c_str());
    return std::to_string(WEXITSTATUS(rc)) + ":" + read_file(out);
  }
  std::string dir, config;
};

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

TEST(Sonoflowd, BadConfigExits78NamingTheKey) {
  Sandbox box;
  box.write_config("[safety]\nmax_intensity = 1.5\n[haptic]\nmodes = \"am\"\n");
  Daemon d = Daemon::spawn({SONOFLOWD, "--config", box.config, "--emulate"}, {}, box.dir + "/stderr");
  EXPECT_EQ(d.wait(10s), 78);
  const std::string log = d.log();
  EXPECT_NE(log.find("'safety.max_intensity' = 1.5 is out of range (min 0, max 1)"), std::string::npos) << log;
  EXPECT_NE(log.find("unknown key 'haptic.modes' (did you mean 'haptic.mode'?)"), std::string::npos) << log;
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
  // A real-clock recording replays up to scheduling jitter: the tool reports the comparison.
  const std::string replay = box.run_tool(std::string(SONOFLOWD) + " --replay " + trace.substr(2, trace.size() - 3));
  EXPECT_NE(replay.find("compared (after 100 ms warm-up)"), std::string::npos) << replay;
}

}  // namespace
}  // namespace sonoflow::daemon
