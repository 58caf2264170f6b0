#pragma once
// sonoflow-view's HTTP side (cpp-httplib): the page and its files, one binary stream of frames
// per open page, the latest frames for one-shot readers, and the controls.
//
//   GET  /                 the page (web/), its modules and the vendored three.js and uPlot
//   GET  /api/stream       chunked application/octet-stream of frames (frame_hub.hpp)
//   GET  /api/status       newest status (JSON, schema sonoflow.status)
//   GET  /api/history      the last 30 s of status (JSON array)
//   GET  /api/scene        newest scene frame (binary, scene_frame.hpp)
//   GET  /api/viewer       what the viewer is attached to, the controls allowed, the array
//   POST /api/control      one control line (control_client.hpp), JSON reply
//
// Only same-origin pages can use the controls: a POST needs the X-Sonoflow-View header (which a
// cross-origin page cannot send without a CORS pre-flight this server never grants), and every
// request must name a loopback host unless the server was bound elsewhere on purpose (against
// DNS rebinding).
#include <memory>
#include <string>

#include "daemon/view/frame_hub.hpp"
#include "daemon/view/sampler.hpp"

namespace httplib {
class Server;
}

namespace sonoflow::daemon::view {

struct ServerSettings {
  std::string bind = "127.0.0.1";
  int port = 8470;  // 0: any free port
  std::string web_dir;
};

// True for 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(const std::string& address);

class ViewServer {
 public:
  ViewServer(const ServerSettings& settings, FrameHub& hub, Sampler& sampler);
  ~ViewServer();

  // Binds the socket; returns the port, or 0 with `error` set.
  int bind(std::string& error);
  void run();   // serves until stop()
  void stop();

 private:
  ServerSettings settings_;
  FrameHub& hub_;
  Sampler& sampler_;
  std::unique_ptr<httplib::Server> server_;
};

}  // namespace sonoflow::daemon::view
