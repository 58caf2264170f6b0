#include "daemon/supervisor/signals.hpp"

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

namespace sonoflow::daemon {

SignalInbox::SignalInbox() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  fd_ = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  signal(SIGPIPE, SIG_IGN);  // a monitor closing its socket must not kill the daemon
}

SignalInbox::~SignalInbox() {
  if (fd_ >= 0) close(fd_);
}

SignalEvent SignalInbox::read() noexcept {
  signalfd_siginfo info{};
  if (::read(fd_, &info, sizeof info) != static_cast<ssize_t>(sizeof info)) return SignalEvent::None;
  return info.ssi_signo == SIGHUP ? SignalEvent::Reload : SignalEvent::Stop;
}

}  // namespace sonoflow::daemon
