// sonoflowctl: talks to a running sonoflowd over its control socket.
//
//   sonoflowctl [--socket PATH] [--json] VERB [ARGS...]
//   verbs: status | get KEY | config | ping | set KEY VALUE | mode am|stm|off | material NAME |
//          tau SECONDS | alpha VALUE | scene FILE | record start|stop | reload
//
// Exit status: 0 ok; 1 the daemon refused the request; 2 usage; 4 not authorised; 7 sonoflowd
// is not running (or the socket cannot be reached).
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

void usage() {
  std::fprintf(stderr,
               "usage: sonoflowctl [--socket PATH] [--json] VERB [ARGS...]\n"
               "  read:   status | get KEY | config | ping | help\n"
               "  change: set KEY VALUE | mode am|stm|off | material NAME | tau S | alpha A |\n"
               "          scene FILE | record start|stop | reload\n");
}

// The string value of "key" in a flat JSON reply (enough for the daemon's own replies).
std::string json_string(const std::string& json, const std::string& key) {
  std::string needle = "\"";
  needle.append(key).append("\":\"");
  const auto at = json.find(needle);
  if (at == std::string::npos) return {};
  std::string out;
  for (std::size_t i = at + needle.size(); i < json.size() && json[i] != '"'; ++i) {
    if (json[i] == '\\' && i + 1 < json.size()) {
      const char c = json[++i];
      if (c == 'n') out += '\n';
      else if (c == 't') out += '\t';
      else if (c == 'u' && i + 4 < json.size()) {
        out += static_cast<char>(std::stoi(json.substr(i + 1, 4), nullptr, 16));
        i += 4;
      } else out += c;
    } else {
      out += json[i];
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string socket_path = "/run/sonoflow/control.sock";
  bool json = false;
  int i = 1;
  for (; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--socket" && i + 1 < argc) socket_path = argv[++i];
    else if (a == "--json") json = true;
    else if (a == "-h" || a == "--help") {
      usage();
      return 0;
    } else break;
  }
  if (i >= argc) {
    usage();
    return 2;
  }
  std::string request;
  for (int k = i; k < argc; ++k) {
    if (k > i) request.push_back(' ');
    request.append(argv[k]);
  }
  const bool status_text = !json && request == "status";
  if (status_text) request = "status text";

  const int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, socket_path.c_str(), sizeof addr.sun_path - 1);
  if (fd < 0 || connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    std::fprintf(stderr, "sonoflowctl: cannot connect to %s: %s\n", socket_path.c_str(), std::strerror(err));
    if (err == EACCES) {
      std::fprintf(stderr, "  You are not in group 'sonoflow'. Fix: sudo usermod -aG sonoflow $USER (then log in again)\n");
      return 4;
    }
    std::fprintf(stderr, "  sonoflowd is not running. Check: systemctl status sonoflow.service; journalctl -u sonoflow -b\n");
    return 7;
  }
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    std::fprintf(stderr, "sonoflowctl: send: %s\n", std::strerror(errno));
    return 7;
  }
  std::string reply(1 << 20, '\0');
  const ssize_t n = recv(fd, reply.data(), reply.size(), 0);
  close(fd);
  if (n <= 0) {
    std::fprintf(stderr, "sonoflowctl: no reply from sonoflowd\n");
    return 7;
  }
  reply.resize(static_cast<std::size_t>(n));
  const bool ok = reply.find("\"ok\":false") == std::string::npos;
  if (json) {
    std::printf("%s\n", reply.c_str());
  } else if (!ok) {
    std::fprintf(stderr, "sonoflowctl: %s\n", json_string(reply, "message").c_str());
  } else if (status_text) {
    std::fputs(json_string(reply, "text").c_str(), stdout);
  } else if (const std::string config = json_string(reply, "config"); !config.empty()) {
    std::fputs(config.c_str(), stdout);
  } else if (const std::string value = json_string(reply, "value"); !value.empty()) {
    std::printf("%s = %s\n", json_string(reply, "key").c_str(), value.c_str());
  } else {
    std::printf("%s\n", json_string(reply, "message").c_str());
  }
  if (ok) return 0;
  return json_string(reply, "code") == "not_authorised" ? 4 : 1;
}
