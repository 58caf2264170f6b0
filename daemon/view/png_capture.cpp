#include "daemon/view/png_capture.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace sonoflow::daemon::view {

std::string capture_png(const std::string& url, const std::string& file, const CaptureSettings& s) {
  if (access(s.chromium.c_str(), X_OK) != 0) {
    return "no Chromium at " + s.chromium + " (apt-get install chromium, or --chromium PATH)";
  }
  char profile[] = "/tmp/sonoflow-view-chromium.XXXXXX";
  if (mkdtemp(profile) == nullptr) return std::string("cannot make a Chromium profile: ") + std::strerror(errno);
  unlink(file.c_str());
  const std::vector<std::string> args = {
      s.chromium,
      "--headless=new",
      "--no-sandbox",  // root in CI containers; the page is our own, served from loopback
      "--no-first-run",
      "--disable-extensions",
      "--hide-scrollbars",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      "--user-data-dir=" + std::string(profile),
      "--window-size=" + std::to_string(s.width) + "," + std::to_string(s.height),
      "--virtual-time-budget=" + std::to_string(s.budget_ms),
      "--screenshot=" + file,
      url,
  };
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  std::string why;
  if (spawned != 0) {
    why = "cannot start " + s.chromium + ": " + std::strerror(spawned);
  } else {
    int status = 0;
    for (int waited_ms = 0;; waited_ms += 100) {
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (waited_ms > s.timeout_s * 1000) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        why = "Chromium did not finish within " + std::to_string(s.timeout_s) + " s";
        break;
      }
      const timespec tenth{0, 100'000'000};
      nanosleep(&tenth, nullptr);
    }
    struct stat st {};
    if (why.empty() && (stat(file.c_str(), &st) != 0 || st.st_size == 0)) {
      why = "Chromium wrote no picture (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
    }
  }
  std::system(("rm -rf '" + std::string(profile) + "'").c_str());
  return why;
}

}  // namespace sonoflow::daemon::view
