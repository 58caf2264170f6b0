// sonoflow-view: a live web view of a running sonoflowd. Attaches read-only to the daemon's
// status and scene files, follows it across restarts, and serves a page on 127.0.0.1 showing the
// fluid, the hand, the pressure on it, the focal points and the loops' figures over time, with
// controls that go through the daemon's control socket when this user may use it.
//
//   sonoflow-view [--config FILE] [--status PATH] [--scene PATH] [--socket PATH]
//                 [--bind ADDR] [--port N] [--web DIR] [--png FILE] [--chromium PATH]
//
// Paths, address and port default to the daemon's config (view.*, status.path,
// control.socket). --port 0 picks a free port. --png FILE writes a picture of the page and
// exits (headless Chromium). Exit status: 0 ok; 1 failure (--png: no picture); 2 usage;
// 78 invalid configuration.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>

#include "daemon/config/config_loader.hpp"
#include "daemon/scene/scene_file.hpp"
#include "daemon/view/png_capture.hpp"
#include "daemon/view/sampler.hpp"
#include "daemon/view/view_server.hpp"

namespace {

using namespace sonoflow::daemon;

struct Options {
  std::string config_path, status_path, scene_path, socket_path, bind, web_dir, png, chromium;
  std::optional<int> port;
  int png_wait_s = 30;
};

void usage() {
  std::fprintf(stderr,
               "usage: sonoflow-view [--config FILE] [--status PATH] [--scene PATH] [--socket PATH]\n"
               "                     [--bind ADDR] [--port N] [--web DIR] [--png FILE] [--chromium PATH]\n"
               "  serves a live view of sonoflowd on http://127.0.0.1:8470/ (view.port); --png FILE\n"
               "  writes a picture of the view and exits\n");
}

std::optional<Options> parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    const auto take = [&](std::string& out) {
      if (v == nullptr) return false;
      out = v;
      ++i;
      return true;
    };
    bool ok = true;
    if (a == "--config") ok = take(o.config_path);
    else if (a == "--status") ok = take(o.status_path);
    else if (a == "--scene") ok = take(o.scene_path);
    else if (a == "--socket") ok = take(o.socket_path);
    else if (a == "--bind") ok = take(o.bind);
    else if (a == "--web") ok = take(o.web_dir);
    else if (a == "--png") ok = take(o.png);
    else if (a == "--chromium") ok = take(o.chromium);
    else if (a == "--port" && v != nullptr) {
      char* end = nullptr;
      const long port = std::strtol(v, &end, 10);
      if (*end != '\0' || port < 0 || port > 65535) return std::nullopt;
      o.port = static_cast<int>(port);
      ++i;
    } else if (a == "--png-wait" && v != nullptr) {
      o.png_wait_s = std::atoi(v);
      ++i;
    } else {
      return std::nullopt;
    }
    if (!ok) return std::nullopt;
  }
  return o;
}

std::string default_config_path() {
  for (const char* p : {"/etc/sonoflow/sonoflow.toml", "/usr/share/sonoflow/sonoflow.toml"}) {
    if (access(p, R_OK) == 0) return p;
  }
  return {};
}

// --web, else the page assembled in the build tree, else the installed one.
std::string web_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (access(SONOFLOW_VIEW_BUILD_WEB "/index.html", R_OK) == 0) return SONOFLOW_VIEW_BUILD_WEB;
  return SONOFLOW_DATADIR "/sonoflow/view";
}

}  // namespace

int main(int argc, char** argv) {
  const auto parsed = parse(argc, argv);
  if (!parsed) {
    usage();
    return 2;
  }
  Options o = *parsed;
  if (o.config_path.empty()) o.config_path = default_config_path();
  Config config;
  if (!o.config_path.empty()) {
    const ConfigResult loaded = load_config_file(o.config_path);
    if (!loaded.ok()) {
      std::fputs(loaded.error_report().c_str(), stderr);
      return 78;
    }
    config = loaded.config;
  }
  view::SamplerSettings sampling;
  sampling.status_path = o.status_path.empty() ? config.status.path : o.status_path;
  sampling.scene_path = !o.scene_path.empty()            ? o.scene_path
                        : !config.view.scene_path.empty() ? config.view.scene_path
                                                          : scene::scene_path_beside(sampling.status_path);
  sampling.control_socket = o.socket_path.empty() ? config.control.socket : o.socket_path;
  sampling.rate_hz = config.view.scene_rate_hz;

  view::ServerSettings serving;
  serving.bind = o.bind.empty() ? config.view.bind : o.bind;
  serving.port = o.port.value_or(config.view.port);
  serving.web_dir = web_dir(o.web_dir);
  if (!o.png.empty()) {  // a private server for the picture
    serving.bind = "127.0.0.1";
    serving.port = 0;
  }
  if (access((serving.web_dir + "/index.html").c_str(), R_OK) != 0) {
    std::fprintf(stderr, "sonoflow-view: no page in %s (build the sonoflow_view_web target, or --web DIR)\n",
                 serving.web_dir.c_str());
    return 1;
  }
  if (!view::is_loopback(serving.bind)) {
    std::fprintf(stderr,
                 "sonoflow-view: WARNING: listening on %s, not loopback: other machines can see the view and, "
                 "as this user, change the daemon's material and mode. Use 127.0.0.1 unless you mean it.\n",
                 serving.bind.c_str());
  }

  // Signals go to one waiting thread, which stops the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  view::FrameHub hub;
  view::Sampler sampler(sampling, hub);
  view::ViewServer server(serving, hub, sampler);
  std::string error;
  const int port = server.bind(error);
  if (port == 0) {
    std::fprintf(stderr, "sonoflow-view: %s\n", error.c_str());
    return 1;
  }
  sampler.start();
  const std::string host = serving.bind.find(':') != std::string::npos ? "[" + serving.bind + "]" : serving.bind;
  const std::string url = "http://" + host + ":" + std::to_string(port) + "/";

  if (!o.png.empty()) {
    std::thread serving_thread([&server] { server.run(); });
    // Wait until the daemon's status and scene have arrived, so the picture shows them.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(o.png_wait_s);
    while (std::chrono::steady_clock::now() < deadline &&
           (hub.latest(view::FrameKind::Scene).empty() || hub.latest(view::FrameKind::Status).empty())) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (hub.latest(view::FrameKind::Scene).empty()) {
      std::fprintf(stderr, "sonoflow-view: no scene from sonoflowd within %d s; the picture shows why\n",
                   o.png_wait_s);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // a little status history
    view::CaptureSettings capture;
    if (!o.chromium.empty()) capture.chromium = o.chromium;
    const std::string why = view::capture_png(url + "?capture=1", o.png, capture);
    server.stop();
    serving_thread.join();
    if (!why.empty()) {
      std::fprintf(stderr, "sonoflow-view: --png: %s\n", why.c_str());
      return 1;
    }
    std::printf("sonoflow-view: wrote %s\n", o.png.c_str());
    return 0;
  }

  std::printf("sonoflow-view: serving %s (status %s, scene %s)\n", url.c_str(), sampling.status_path.c_str(),
              sampling.scene_path.c_str());
  std::fflush(stdout);
  std::thread waiter([&server, stop_signals] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    server.stop();
  });
  server.run();
  // Stopped by a signal, or the server failed: either way wake the waiter if it still waits.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  return 0;
}
