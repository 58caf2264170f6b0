#include "daemon/view/view_server.hpp"

#include <httplib.h>

#include <chrono>

namespace sonoflow::daemon::view {
namespace {

bool loopback_host(const std::string& host_header) {
  // "127.0.0.1:8470", "localhost:8470", "[::1]:8470"
  std::string host = host_header;
  if (!host.empty() && host.front() == '[') host = host.substr(1, host.find(']') - 1);
  else if (const auto colon = host.rfind(':'); colon != std::string::npos) host = host.substr(0, colon);
  return is_loopback(host);
}

}  // namespace

bool is_loopback(const std::string& a) {
  return a == "localhost" || a == "::1" || a.rfind("127.", 0) == 0;
}

ViewServer::ViewServer(const ServerSettings& settings, FrameHub& hub, Sampler& sampler)
    : settings_(settings), hub_(hub), sampler_(sampler), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  for (const auto& [ext, type] : {std::pair{"js", "text/javascript"}, {"mjs", "text/javascript"},
                                  {"css", "text/css"}, {"html", "text/html"}, {"png", "image/png"},
                                  {"json", "application/json"}, {"svg", "image/svg+xml"}}) {
    s.set_file_extension_and_mimetype_mapping(ext, type);
  }
  const bool loopback_only = is_loopback(settings_.bind);
  s.set_pre_routing_handler([loopback_only](const httplib::Request& req, httplib::Response& res) {
    if (loopback_only && !loopback_host(req.get_header_value("Host"))) {
      res.status = 403;
      res.set_content("sonoflow-view answers only to a loopback Host\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  s.Get("/api/stream", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    auto seen = std::make_shared<FrameHub::Seen>();
    res.set_chunked_content_provider("application/octet-stream",
                                     [this, seen](std::size_t, httplib::DataSink& sink) {
      std::string out;
      if (!hub_.next(*seen, out, std::chrono::milliseconds(500))) {
        sink.done();
        return true;
      }
      if (!sink.is_writable()) return false;  // the page went away
      return out.empty() || sink.write(out.data(), out.size());
    });
  });
  const auto latest = [this](FrameKind kind, const char* type) {
    return [this, kind, type](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      std::string frame = hub_.latest(kind);
      if (frame.empty()) {
        res.status = 503;
        res.set_content("nothing from sonoflowd yet\n", "text/plain");
        return;
      }
      res.set_content(frame, type);
    };
  };
  s.Get("/api/status", latest(FrameKind::Status, "application/json"));
  s.Get("/api/scene", latest(FrameKind::Scene, "application/octet-stream"));
  s.Get("/api/viewer", latest(FrameKind::Viewer, "application/json"));
  s.Get("/api/history", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(sampler_.history(), "application/json");
  });
  s.Post("/api/control", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("X-Sonoflow-View") != "1") {
      res.status = 403;
      res.set_content("{\"ok\":false,\"error\":{\"code\":\"forbidden\",\"message\":\"not from the viewer's page\"}}",
                      "application/json");
      return;
    }
    res.set_content(sampler_.control().request(req.body), "application/json");
  });
  if (!settings_.web_dir.empty()) s.set_mount_point("/", settings_.web_dir);
}

ViewServer::~ViewServer() { stop(); }

int ViewServer::bind(std::string& error) {
  int port = settings_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(settings_.bind);
    if (port <= 0) port = 0;
  } else if (!server_->bind_to_port(settings_.bind, port)) {
    port = 0;
  }
  if (port == 0) {
    error = "cannot listen on " + settings_.bind + ":" + std::to_string(settings_.port) +
            " (in use, or not an address of this machine; 'view.port' / --port)";
  }
  return port;
}

void ViewServer::run() { server_->listen_after_bind(); }

void ViewServer::stop() {
  hub_.close();
  if (server_) server_->stop();
}

}  // namespace sonoflow::daemon::view
