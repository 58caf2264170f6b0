#pragma once
// The daemon's log lines on stderr, in the form `sonoflowd[I][topic] message`; under systemd,
// stderr goes to the journal. Only non-real-time threads log (supervisor, start-up, shutdown).
#include <cstdarg>
#include <cstdio>

namespace sonoflow::daemon {

enum class LogLevel : char { Error = 'E', Warning = 'W', Info = 'I', Debug = 'D' };

inline void log_line(LogLevel level, const char* topic, const char* format, ...)
    __attribute__((format(printf, 3, 4)));

inline void log_line(LogLevel level, const char* topic, const char* format, ...) {
  char message[1024];
  va_list args;
  va_start(args, format);
  std::vsnprintf(message, sizeof message, format, args);
  va_end(args);
  std::fprintf(stderr, "sonoflowd[%c][%s] %s\n", static_cast<char>(level), topic, message);
}

}  // namespace sonoflow::daemon
