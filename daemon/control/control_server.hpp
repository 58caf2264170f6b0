#pragma once
// The control socket: a Unix SOCK_SEQPACKET socket (one request, one reply per message) at
// control.socket, mode 0660 and owned by control.group when that group exists. Each request is
// one line of text, `VERB [ARGS...]`; each reply is one JSON object, {"ok":true,...} or
// {"ok":false,"error":{"code":"...","message":"..."}}. Bad requests get an error reply, never
// a crash.
//
// Who may do what is decided per request from the peer's SO_PEERCRED credentials: reading
// (status, get, config, ping, access) needs root, the daemon's own user, or membership of
// control.group or control.admin_group; changing anything (set, mode, material, tau, alpha,
// scene, record, reload) needs root, the daemon's user, or control.admin_group.
//
// Runs on the supervisor thread (poll loop); never touches a real-time thread directly.
#include <poll.h>
#include <sys/types.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/status/status_layout.hpp"

namespace sonoflow::daemon {

class Supervisor;
class Recorder;

struct PeerCredentials {
  pid_t pid = 0;
  uid_t uid = 0;
  gid_t gid = 0;
  bool may_read = false;
  bool may_write = false;
};

class ControlServer {
 public:
  static constexpr int kMaxClients = 8;
  static constexpr std::size_t kMaxMessage = 4096;

  // Binds the socket (replacing a stale one). Returns null and sets `error` on failure.
  static std::unique_ptr<ControlServer> open(const Config& config, std::string& error);
  ~ControlServer();

  void set_status(const status::StatusRegion* region) noexcept { status_ = region; }
  void set_recorder(Recorder* recorder) noexcept { recorder_ = recorder; }
  // The material presets the running fluid loaded (empty: a medium without presets). The
  // `materials` verb lists them, and `material NAME` is refused for a name not among them.
  void set_materials(std::vector<std::string> names) { materials_ = std::move(names); }

  // Poll integration: fills the listening socket and every client, returns how many.
  int fill_pollfds(pollfd* fds) const noexcept;
  // Handles whatever is ready among the fds fill_pollfds gave.
  void handle(const pollfd* fds, std::size_t n, Supervisor& supervisor);

  // One request, already authorised or not: exposed for tests. Returns the JSON reply.
  std::string respond(const std::string& request, const PeerCredentials& peer, Supervisor& supervisor);

 private:
  ControlServer(const Config& config, int listen_fd, std::string path);
  PeerCredentials credentials_of(int fd) const;
  void serve_client(int slot, Supervisor& supervisor);
  bool known_material(const std::string& name) const;

  const Config& config_;
  int listen_fd_;
  std::string path_;
  std::array<int, kMaxClients> clients_;
  gid_t group_ = static_cast<gid_t>(-1), admin_group_ = static_cast<gid_t>(-1);
  const status::StatusRegion* status_ = nullptr;
  Recorder* recorder_ = nullptr;
  std::vector<std::string> materials_;
};

}  // namespace sonoflow::daemon
