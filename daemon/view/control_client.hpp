#pragma once
// The viewer's controls go through the daemon's control socket and nowhere else: the page's
// requests are checked against a short list of verbs (material, tau, alpha, mode), sent as the
// viewer's own user, and the daemon decides, per request, whether that user may change things
// (SO_PEERCRED, control.admin_group). The page shows the controls only when the daemon's
// `access` answer says this user may.
#include <string>
#include <vector>

namespace sonoflow::daemon::view {

struct ControlAccess {
  bool reachable = false;  // the socket accepted a connection
  bool may_write = false;  // the daemon says this user may change settings
  std::string reason;      // why not, for the page
  std::vector<std::string> materials;  // the presets the daemon's fluid can switch to
};

class ControlClient {
 public:
  explicit ControlClient(std::string socket_path) : path_(std::move(socket_path)) {}

  ControlAccess access() const;
  // Sends one allowed request (`material NAME`, `tau S`, `alpha A`, `mode am|stm|off`) and
  // returns the daemon's JSON reply, or an error reply of the viewer's own when the request
  // is not one of those or the daemon cannot be reached.
  std::string request(const std::string& line) const;
  // The reply to any line, unchecked (used by access()).
  std::string exchange(const std::string& line) const;

 private:
  std::string path_;
};

// The preset names in the daemon's reply to `materials` (empty if it is an error).
std::vector<std::string> material_list(const std::string& reply);

// True for the verbs the page may send, with one plain argument each.
bool allowed_request(const std::string& line);

}  // namespace sonoflow::daemon::view
