#pragma once
// Signals arrive on a signalfd read by the supervisor's poll loop, never as asynchronous
// handlers: SIGTERM/SIGINT stop, SIGHUP reloads. block_signals() must run before any thread is
// started so every thread inherits the blocked mask (no RT thread is ever interrupted).
namespace sonoflow::daemon {

enum class SignalEvent { None, Stop, Reload };

class SignalInbox {
 public:
  SignalInbox();  // blocks SIGTERM, SIGINT, SIGHUP and opens the signalfd
  ~SignalInbox();
  SignalInbox(const SignalInbox&) = delete;
  SignalInbox& operator=(const SignalInbox&) = delete;

  int fd() const noexcept { return fd_; }
  SignalEvent read() noexcept;  // one pending signal, or None

 private:
  int fd_ = -1;
};

}  // namespace sonoflow::daemon
