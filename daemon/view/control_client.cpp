#include "daemon/view/control_client.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "daemon/status/json_writer.hpp"

namespace sonoflow::daemon::view {
namespace {

std::string viewer_error(std::string_view code, std::string_view message) {
  Json j;
  j.open('{').field("ok", false).key("error").open('{').field("code", code).field("message", message)
      .close('}').close('}');
  return j.str();
}

}  // namespace

bool allowed_request(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() != 2 || words[1].size() > 64) return false;
  for (char c : words[1]) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  }
  const std::string& verb = words[0];
  if (verb == "mode") return words[1] == "am" || words[1] == "stm" || words[1] == "off";
  return verb == "material" || verb == "tau" || verb == "alpha";
}

std::string ControlClient::exchange(const std::string& line) const {
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (fd < 0) return viewer_error("unreachable", std::strerror(errno));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path_.c_str(), sizeof addr.sun_path - 1);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const std::string why = "cannot connect to " + path_ + ": " + std::strerror(errno);
    close(fd);
    return viewer_error(errno == EACCES ? "not_authorised" : "unreachable", why);
  }
  std::string reply;
  if (send(fd, line.data(), line.size(), MSG_NOSIGNAL) >= 0) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 2000) > 0) {
      reply.resize(1 << 16);
      const ssize_t n = recv(fd, reply.data(), reply.size(), 0);
      reply.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    }
  }
  close(fd);
  return reply.empty() ? viewer_error("unreachable", "no reply from sonoflowd") : reply;
}

// The names in a `materials` reply ({"ok":true,"materials":["honey",...]}); preset names are
// file names, so they hold no quotes or escapes.
std::vector<std::string> material_list(const std::string& reply) {
  std::vector<std::string> names;
  const auto open = reply.find("\"materials\":[");
  if (reply.find("\"ok\":true") == std::string::npos || open == std::string::npos) return names;
  const auto close = reply.find(']', open);
  for (auto at = reply.find('"', open + 13); at < close; at = reply.find('"', at + 1)) {
    const auto end = reply.find('"', at + 1);
    if (end == std::string::npos || end > close) break;
    names.push_back(reply.substr(at + 1, end - at - 1));
    at = end;
  }
  return names;
}

ControlAccess ControlClient::access() const {
  ControlAccess a;
  const std::string reply = exchange("access");
  if (reply.find("\"ok\":true") == std::string::npos) {
    const auto at = reply.find("\"message\":\"");
    a.reason = at == std::string::npos ? reply : reply.substr(at + 11, reply.find('"', at + 11) - at - 11);
    a.reachable = reply.find("\"unreachable\"") == std::string::npos;
    return a;
  }
  a.reachable = true;
  a.may_write = reply.find("\"write\":true") != std::string::npos;
  a.materials = material_list(exchange("materials"));
  if (!a.may_write) a.reason = "this user may read but not change settings (control.admin_group)";
  return a;
}

std::string ControlClient::request(const std::string& line) const {
  if (!allowed_request(line)) {
    return viewer_error("not_allowed", "the viewer sends only: material NAME, tau S, alpha A, mode am|stm|off");
  }
  return exchange(line);
}

}  // namespace sonoflow::daemon::view
