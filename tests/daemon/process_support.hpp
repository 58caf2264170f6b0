#pragma once
// Helpers for tests that run sonoflowd as a process: a NOTIFY_SOCKET of the test's own, a
// spawned daemon with its stderr captured, and a scratch directory with a config whose paths
// point into it.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "daemon/status/status_file.hpp"

extern char** environ;

namespace sonoflow::daemon::test {

using namespace std::chrono_literals;

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A datagram socket standing in for systemd's notification socket. A thread reads it all the
// time, as systemd does: a full socket queue (net.unix.max_dgram_qlen, 10 by default) would
// block the daemon's sd_notify() and with it its supervisor.
class NotifySocket {
 public:
  explicit NotifySocket(const std::string& path) : path_(path) {
    fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof addr.sun_path - 1);
    unlink(path.c_str());
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    reader_ = std::thread([this] { read_loop(); });
  }
  ~NotifySocket() {
    stop_ = true;
    reader_.join();
    close(fd_);
    unlink(path_.c_str());
  }
  // Waits until a message not yet matched contains `wanted` (true), or `timeout` passes.
  bool wait_for(const std::string& wanted, std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    return arrived_.wait_for(lock, timeout, [&] {
      for (std::size_t i = 0; i < messages_.size(); ++i) {
        if (!matched_[i] && messages_[i].find(wanted) != std::string::npos) {
          matched_[i] = true;
          return true;
        }
      }
      return false;
    });
  }
  int count(const std::string& wanted) {
    std::lock_guard lock(mutex_);
    return static_cast<int>(std::count_if(messages_.begin(), messages_.end(), [&](const std::string& m) {
      return m.find(wanted) != std::string::npos;
    }));
  }

 private:
  void read_loop() {
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 20) <= 0) continue;
      char buf[4096];
      const ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) continue;
      std::lock_guard lock(mutex_);
      messages_.emplace_back(buf, static_cast<std::size_t>(n));
      matched_.push_back(false);
      arrived_.notify_all();
    }
  }
  std::string path_;
  int fd_;
  std::thread reader_;
  std::atomic<bool> stop_{false};
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> messages_;
  std::vector<bool> matched_;
};

// A spawned sonoflowd. One a test leaves running (an ASSERT returned early) is killed and
// reaped with it: left over, it held the test's stdout open and ctest waited for its timeout.
struct Daemon {
  pid_t pid = -1;
  std::string stderr_path;

  Daemon() = default;
  Daemon(Daemon&& other) noexcept
      : pid(std::exchange(other.pid, -1)), stderr_path(std::move(other.stderr_path)), reaped_(other.reaped_) {}
  Daemon(const Daemon&) = delete;
  Daemon& operator=(const Daemon&) = delete;
  Daemon& operator=(Daemon&&) = delete;
  ~Daemon() {
    if (pid <= 0 || reaped_) return;
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
  }

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
      if (waitpid(pid, &status, WNOHANG) == pid) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    // A hung daemon: keep its threads' stacks for the failure report (when gdb is there).
    if (access("/usr/bin/gdb", X_OK) == 0) {
      std::system(("/usr/bin/gdb -p " + std::to_string(pid) +
                   " -batch -ex 'thread apply all bt' >" + stderr_path + ".stacks 2>&1").c_str());
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    reaped_ = true;
    return -1;
  }
  std::string log() const {
    const std::string stacks = read_file(stderr_path + ".stacks");
    return read_file(stderr_path) + (stacks.empty() ? "" : "\n--- stacks of the hung daemon\n" + stacks);
  }

 private:
  bool reaped_ = false;
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
    // The particle fluid only where a test asks for it (its first OpenCL build takes seconds).
    out << "status.path = \"" << dir << "/status\"\ncontrol.socket = \"" << dir
        << "/control.sock\"\nrecorder.directory = \"" << dir << "/sessions\"\n"
        << (extra.find("fluid.engine") == std::string::npos ? "fluid.engine = \"standin\"\n" : "")
        << extra;
  }
  std::string run_tool(const std::string& command) const {
    const std::string out = dir + "/tool.out";
    const int rc = std::system((command + " >" + out + " 2>&1").c_str());
    return std::to_string(WEXITSTATUS(rc)) + ":" + read_file(out);
  }
  // Kept for a look when the test failed.
  ~Sandbox() {
    if (!::testing::Test::HasFailure()) std::system(("rm -rf " + dir).c_str());
  }
  std::string dir, config;
};

// The daemon's status once `ready` holds of it, or after `timeout` (then the caller's checks say
// what is missing). Polled every 100 ms.
template <class Ready>
status::StatusSnapshot poll_status(status::StatusReader& reader, Ready ready, std::chrono::seconds timeout) {
  const auto end = std::chrono::steady_clock::now() + timeout;
  status::StatusSnapshot s;
  do {
    std::this_thread::sleep_for(100ms);
    s = reader.snapshot();
  } while (!ready(s) && std::chrono::steady_clock::now() < end);
  return s;
}

}  // namespace sonoflow::daemon::test
