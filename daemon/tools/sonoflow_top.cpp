// sonoflow-top: live view of a running sonoflowd, read from its shared-memory status file.
// Maps the file read-only; needs no socket and never changes anything in the daemon.
//
//   sonoflow-top [--shm PATH] [-d SECONDS] [-n ITERATIONS] [-b] [--json]
//   --json prints one snapshot as JSON (schema sonoflow.status) and exits; with -n N it prints
//   N snapshots, one per line (NDJSON). -b (batch) prints plain screens without clearing.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <string>

#include "daemon/status/status_file.hpp"
#include "daemon/status/status_format.hpp"

namespace {

using namespace sonoflow::daemon::status;

struct Options {
  std::string path = "/run/sonoflow/status";
  double delay_s = 1.0;
  long iterations = -1;  // -1: until q or interrupted
  bool batch = false;
  bool json = false;
};

void usage() {
  std::fprintf(stderr,
               "usage: sonoflow-top [--shm PATH] [-d SECONDS] [-n ITERATIONS] [-b] [--json]\n"
               "  live status of sonoflowd from its status file (default /run/sonoflow/status)\n"
               "  q quits; --json prints one snapshot (NDJSON with -n)\n");
}

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "--shm") {
      const char* v = next();
      if (!v) return std::nullopt;
      o.path = v;
    } else if (a == "-d") {
      const char* v = next();
      if (!v || (o.delay_s = std::atof(v)) <= 0) return std::nullopt;
    } else if (a == "-n") {
      const char* v = next();
      if (!v || (o.iterations = std::atol(v)) <= 0) return std::nullopt;
    } else if (a == "-b") {
      o.batch = true;
    } else if (a == "--json") {
      o.json = true;
    } else {
      return std::nullopt;
    }
  }
  if (o.json && o.iterations < 0) o.iterations = 1;
  return o;
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Raw keyboard input while the dashboard runs on a terminal, restored on exit.
class Keyboard {
 public:
  Keyboard() {
    if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    termios raw = saved_;
    raw.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0;
  }
  ~Keyboard() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  // Waits up to timeout_ms for a key; returns it, or 0.
  char wait(int timeout_ms) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (!active_) {
      poll(nullptr, 0, timeout_ms);
      return 0;
    }
    if (poll(&p, 1, timeout_ms) > 0) {
      char c = 0;
      if (read(STDIN_FILENO, &c, 1) == 1) return c;
    }
    return 0;
  }

 private:
  termios saved_{};
  bool active_ = false;
};

}  // namespace

int main(int argc, char** argv) {
  const auto options = parse(argc, argv);
  if (!options) {
    usage();
    return 2;
  }
  const Options& o = *options;
  std::string error;
  auto reader = StatusReader::attach(o.path, error);
  if (!reader) {
    std::fprintf(stderr, "sonoflow-top: %s\n  is sonoflowd running? Check: systemctl status sonoflow\n",
                 error.c_str());
    return 7;  // LSB: program not running
  }
  if (o.json) {
    for (long i = 0; i < o.iterations; ++i) {
      if (i > 0) poll(nullptr, 0, static_cast<int>(o.delay_s * 1000));
      std::printf("%s\n", to_json(reader->snapshot(), monotonic_ns()).c_str());
      std::fflush(stdout);
    }
    return 0;
  }

  Keyboard keyboard;
  std::optional<StatusSnapshot> previous;
  for (long i = 0; o.iterations < 0 || i < o.iterations; ++i) {
    if (reader->replaced()) {  // the daemon restarted: follow the new file
      if (auto fresh = StatusReader::attach(o.path, error)) {
        reader = std::move(fresh);
        previous.reset();
      }
    }
    const StatusSnapshot now = reader->snapshot();
    const std::string screen = to_screen(now, previous ? &*previous : nullptr, monotonic_ns());
    if (!o.batch) std::fputs("\x1b[H\x1b[2J", stdout);
    std::fputs(screen.c_str(), stdout);
    if (o.batch) std::fputs("\n", stdout);
    std::fflush(stdout);
    previous = now;
    if (o.iterations >= 0 && i + 1 >= o.iterations) break;
    if (keyboard.wait(static_cast<int>(o.delay_s * 1000)) == 'q') break;
  }
  return 0;
}
