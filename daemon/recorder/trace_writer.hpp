#pragma once
// TraceWriter: appends trace records (trace_format.hpp) to a file through a ring of aligned
// buffers. Full buffers are written with io_uring (buffers registered once, IORING_OP_WRITE_FIXED,
// O_DIRECT where the filesystem allows it); where io_uring is refused (seccomp, sysctl, old
// kernel) or io = "pwrite", the same buffers go out with pwrite(). Used only by the recorder
// thread: it may block on storage, which is why no real-time thread ever writes a trace.
#include <liburing.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "daemon/recorder/trace_format.hpp"
#include "daemon/status/status_layout.hpp"

namespace sonoflow::daemon::trace {

class TraceWriter {
 public:
  struct Options {
    std::string io = "auto";          // auto | io_uring | pwrite
    std::size_t buffer_bytes = 256 * 1024;
    int buffers = 4;
  };
  static std::unique_ptr<TraceWriter> create(const std::string& path, const TraceHeader& header,
                                             const Options& options, std::string& error);
  ~TraceWriter();  // finish() if not done
  TraceWriter(const TraceWriter&) = delete;
  TraceWriter& operator=(const TraceWriter&) = delete;

  // One record from up to two pieces of payload. False once the file failed (error() says why).
  bool append(RecordType type, std::int64_t time_ns, const void* a, std::uint32_t a_size,
              const void* b = nullptr, std::uint32_t b_size = 0);
  // Writes what is buffered, waits for every write, trims the file to its length, closes.
  bool finish();

  status::RecorderIo io() const noexcept { return uring_ ? status::RecorderIo::IoUring : status::RecorderIo::Pwrite; }
  bool direct_io() const noexcept { return direct_; }
  std::uint64_t bytes() const noexcept { return logical_bytes_; }
  std::uint64_t records() const noexcept { return sequence_; }
  const std::string& error() const noexcept { return error_; }

 private:
  TraceWriter() = default;
  bool put(const void* data, std::size_t size);
  bool flush_buffer(std::size_t length);   // writes the current buffer, moves to the next
  bool wait_buffer(int index);             // until buffer `index` is free again
  bool fail(const std::string& why);

  int fd_ = -1;
  bool direct_ = false;
  bool uring_ = false;
  io_uring ring_{};
  std::size_t buffer_bytes_ = 0;
  std::vector<std::uint8_t*> buffers_;
  std::vector<bool> in_flight_;
  std::vector<std::size_t> expected_;  // bytes each in-flight write must report
  int current_ = 0;
  std::size_t fill_ = 0;
  std::uint64_t file_offset_ = 0;    // where the current buffer will be written
  std::uint64_t logical_bytes_ = 0;  // bytes of records appended
  std::uint64_t sequence_ = 0;
  bool finished_ = false;
  std::string error_;
};

}  // namespace sonoflow::daemon::trace
