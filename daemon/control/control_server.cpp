#include "daemon/control/control_server.hpp"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

#include "daemon/config/config_loader.hpp"
#include "daemon/config/config_schema.hpp"
#include "daemon/recorder/recorder.hpp"
#include "daemon/status/json_writer.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/status/status_format.hpp"
#include "daemon/supervisor/log.hpp"
#include "daemon/supervisor/supervisor.hpp"

namespace sonoflow::daemon {
namespace {

std::string ok_reply(std::string_view message) {
  Json j;
  j.open('{').field("ok", true).field("message", message).close('}');
  return j.str();
}

std::string error_reply(std::string_view code, std::string_view message) {
  Json j;
  j.open('{').field("ok", false).key("error").open('{').field("code", code)
      .field("message", message).close('}').close('}');
  return j.str();
}

gid_t group_id(const std::string& name) {
  if (name.empty()) return static_cast<gid_t>(-1);
  const group* g = getgrnam(name.c_str());
  return g ? g->gr_gid : static_cast<gid_t>(-1);
}

// Every group the peer belongs to (SO_PEERGROUPS: the supplementary groups at connect time).
std::vector<gid_t> peer_groups(int fd, gid_t primary) {
  std::vector<gid_t> groups(64);
  socklen_t len = static_cast<socklen_t>(groups.size() * sizeof(gid_t));
  if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups.data(), &len) == 0) {
    groups.resize(len / sizeof(gid_t));
  } else {
    groups.clear();
  }
  groups.push_back(primary);
  return groups;
}

std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::istringstream in(line);
  std::string w;
  while (in >> w) words.push_back(w);
  return words;
}

bool printable(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '\n' || c == '\t' || (static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
  });
}

}  // namespace

ControlServer::ControlServer(const Config& config, int listen_fd, std::string path)
    : config_(config), listen_fd_(listen_fd), path_(std::move(path)) {
  clients_.fill(-1);
  group_ = group_id(config.control.group);
  admin_group_ = group_id(config.control.admin_group);
}

std::unique_ptr<ControlServer> ControlServer::open(const Config& config, std::string& error) {
  const std::string& path = config.control.socket;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) {
    error = "'control.socket' path is too long for a Unix socket: " + path;
    return nullptr;
  }
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    error = std::string("cannot create control socket: ") + std::strerror(errno);
    return nullptr;
  }
  unlink(path.c_str());  // a stale socket from a crashed run
  const mode_t old_umask = umask(0117);  // the socket is created 0660
  const int bound = bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  umask(old_umask);
  if (bound != 0 || listen(fd, 8) != 0) {
    error = "cannot bind control socket " + path + ": " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  const gid_t g = group_id(config.control.group);
  if (g != static_cast<gid_t>(-1) && chown(path.c_str(), static_cast<uid_t>(-1), g) != 0) {
    log_line(LogLevel::Warning, "control", "cannot give %s to group '%s': %s", path.c_str(),
             config.control.group.c_str(), std::strerror(errno));
  }
  return std::unique_ptr<ControlServer>(new ControlServer(config, fd, path));
}

ControlServer::~ControlServer() {
  for (int fd : clients_)
    if (fd >= 0) close(fd);
  close(listen_fd_);
  unlink(path_.c_str());
}

int ControlServer::fill_pollfds(pollfd* fds) const noexcept {
  int n = 0;
  fds[n++] = pollfd{listen_fd_, POLLIN, 0};
  for (int fd : clients_) fds[n++] = pollfd{fd, static_cast<short>(fd >= 0 ? POLLIN : 0), 0};
  return n;
}

PeerCredentials ControlServer::credentials_of(int fd) const {
  PeerCredentials p;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return p;  // nothing allowed
  p.pid = cred.pid;
  p.uid = cred.uid;
  p.gid = cred.gid;
  const bool owner = cred.uid == 0 || cred.uid == geteuid();
  const auto groups = peer_groups(fd, cred.gid);
  const auto in = [&](gid_t g) {
    return g != static_cast<gid_t>(-1) && std::find(groups.begin(), groups.end(), g) != groups.end();
  };
  p.may_write = owner || in(admin_group_);
  p.may_read = p.may_write || in(group_);
  return p;
}

void ControlServer::handle(const pollfd* fds, std::size_t n, Supervisor& supervisor) {
  if (n == 0) return;
  if (fds[0].revents & POLLIN) {
    const int client = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (client >= 0) {
      auto free_slot = std::find(clients_.begin(), clients_.end(), -1);
      if (free_slot == clients_.end()) {
        const std::string busy = error_reply("busy", "too many control clients; try again");
        send(client, busy.data(), busy.size(), MSG_NOSIGNAL);
        close(client);
      } else {
        *free_slot = client;
      }
    }
  }
  for (std::size_t i = 1; i < n && i - 1 < clients_.size(); ++i) {
    if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) {
      serve_client(static_cast<int>(i - 1), supervisor);
    }
  }
}

void ControlServer::serve_client(int slot, Supervisor& supervisor) {
  const int fd = clients_[slot];
  char buffer[kMaxMessage + 1];
  const ssize_t got = recv(fd, buffer, sizeof buffer, MSG_TRUNC);
  if (got <= 0) {
    if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(fd);
      clients_[slot] = -1;
    }
    return;
  }
  std::string reply;
  if (static_cast<std::size_t>(got) > kMaxMessage) {
    reply = error_reply("too_long", "request longer than 4096 bytes");
  } else {
    reply = respond(std::string(buffer, static_cast<std::size_t>(got)), credentials_of(fd), supervisor);
  }
  send(fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
}

bool ControlServer::known_material(const std::string& name) const {
  if (materials_.empty()) return true;  // a medium without presets: the fluid decides
  std::string key = name;  // presets name files with '_' where configs may say '-'
  std::replace(key.begin(), key.end(), '-', '_');
  return std::find(materials_.begin(), materials_.end(), key) != materials_.end();
}

std::string ControlServer::respond(const std::string& request, const PeerCredentials& peer,
                                   Supervisor& supervisor) {
  if (!printable(request)) return error_reply("bad_request", "request is not text");
  const auto words = words_of(request);
  if (words.empty()) return error_reply("bad_request", "empty request; try 'help'");
  const std::string& verb = words[0];
  const auto arg = [&](std::size_t i) { return i < words.size() ? words[i] : std::string{}; };
  if (!peer.may_read) {
    return error_reply("not_authorised", "uid " + std::to_string(peer.uid) + " is not in group '" +
                                             config_.control.group + "'");
  }

  // Read-only verbs.
  if (verb == "ping") return ok_reply("pong");
  if (verb == "access") {  // what this peer may do (sonoflow-view shows its controls by it)
    Json j;
    j.open('{').field("ok", true).field("read", peer.may_read).field("write", peer.may_write)
        .field("uid", static_cast<std::uint32_t>(peer.uid)).close('}');
    return j.str();
  }
  if (verb == "help") {
    return ok_reply("verbs: status, get KEY, config, materials, ping, access | set KEY VALUE, mode am|stm|off, "
                    "material NAME, tau SECONDS, alpha VALUE, scene FILE, record start|stop, reload");
  }
  if (verb == "status") {
    if (status_ == nullptr) return error_reply("unavailable", "no status export");
    const auto snapshot = status::take_snapshot(*status_);
    if (arg(1) == "text") {
      Json j;
      j.open('{').field("ok", true)
          .field("text", std::string_view(status::to_screen(snapshot, nullptr, monotonic_ns())))
          .close('}');
      return j.str();
    }
    return status::to_json(snapshot, monotonic_ns());
  }
  if (verb == "materials") {  // the presets `material NAME` can switch to
    Json j;
    j.open('{').field("ok", true).key("materials").open('[');
    for (const std::string& name : materials_) j.value(std::string_view(name));
    j.close(']').close('}');
    return j.str();
  }
  if (verb == "config") {
    Json j;
    j.open('{').field("ok", true).field("config", std::string_view(render_config(config_))).close('}');
    return j.str();
  }
  if (verb == "get") {
    Config copy = config_;
    for (const auto& key : config_keys(copy)) {
      if (key.key == arg(1)) {
        Json j;
        j.open('{').field("ok", true).field("key", key.key)
            .field("value", std::string_view(format_value(key))).close('}');
        return j.str();
      }
    }
    return error_reply("unknown_key", "unknown key '" + arg(1) + "'");
  }

  // Verbs that change something.
  static const char* const kWriteVerbs[] = {"set", "mode", "material", "tau", "alpha", "scene",
                                            "record", "reload"};
  if (std::find_if(std::begin(kWriteVerbs), std::end(kWriteVerbs),
                   [&](const char* v) { return verb == v; }) == std::end(kWriteVerbs)) {
    return error_reply("unknown_verb", "unknown verb '" + verb + "'; try 'help'");
  }
  if (!peer.may_write) {
    return error_reply("not_authorised", "changing settings needs group '" +
                                             config_.control.admin_group + "'");
  }
  const auto set = [&](const std::string& key, const std::string& value) {
    if (value.empty()) return error_reply("bad_request", "'" + verb + "' needs a value");
    if (key == "fluid.material" && !known_material(value)) {
      std::string list;
      for (const std::string& name : materials_) list += (list.empty() ? "" : ", ") + name;
      return error_reply("unknown_material", "no material preset '" + value + "'; this daemon has " + list);
    }
    const std::string why = supervisor.set_key(key, value);
    return why.empty() ? ok_reply(key + " = " + value) : error_reply("invalid_value", why);
  };
  if (verb == "set") {
    if (words.size() < 3) return error_reply("bad_request", "usage: set KEY VALUE");
    std::string value = words[2];
    for (std::size_t i = 3; i < words.size(); ++i) value += " " + words[i];
    return set(words[1], value);
  }
  if (verb == "mode") return set("haptic.mode", arg(1));
  if (verb == "material") return set("fluid.material", arg(1));
  if (verb == "tau") return set("fluid.tau_s", arg(1));
  if (verb == "alpha") return set("fluid.alpha", arg(1));
  if (verb == "reload") return ok_reply(supervisor.reload());
  if (verb == "scene") {
    if (arg(1).empty()) return error_reply("bad_request", "usage: scene FILE");
    const std::string why = supervisor.load_scene(arg(1));
    return why.empty() ? ok_reply("scene " + arg(1) + " loaded") : error_reply("bad_scene", why);
  }
  if (verb == "record") {
    if (recorder_ == nullptr) return error_reply("unavailable", "this daemon runs without a recorder");
    if (arg(1) == "start") {
      const std::string result = recorder_->start();
      return recorder_->recording() ? ok_reply(result) : error_reply("record_failed", result);
    }
    if (arg(1) == "stop") return ok_reply(recorder_->stop());
    return error_reply("bad_request", "usage: record start|stop");
  }
  return error_reply("unknown_verb", "unknown verb '" + verb + "'");
}

}  // namespace sonoflow::daemon
