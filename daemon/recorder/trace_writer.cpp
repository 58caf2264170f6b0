#include "daemon/recorder/trace_writer.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "drivers/protocol/crc32c.hpp"

namespace sonoflow::daemon::trace {
namespace {
constexpr std::size_t kAlignment = 4096;  // O_DIRECT: buffer address, length and offset
}

std::unique_ptr<TraceWriter> TraceWriter::create(const std::string& path, const TraceHeader& header,
                                                 const Options& options, std::string& error) {
  std::unique_ptr<TraceWriter> w(new TraceWriter());
  w->buffer_bytes_ = (options.buffer_bytes + kAlignment - 1) / kAlignment * kAlignment;
  // O_DIRECT first (page cache bypass, the io_uring fast path); tmpfs and some filesystems
  // refuse it, then buffered I/O.
  w->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_DIRECT, 0640);
  w->direct_ = w->fd_ >= 0;
  if (w->fd_ < 0 && errno == EINVAL) w->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (w->fd_ < 0) {
    error = "cannot create trace " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  for (int i = 0; i < options.buffers; ++i) {
    void* p = nullptr;
    if (posix_memalign(&p, kAlignment, w->buffer_bytes_) != 0) {
      error = "cannot allocate recorder buffers";
      return nullptr;
    }
    std::memset(p, 0, w->buffer_bytes_);
    w->buffers_.push_back(static_cast<std::uint8_t*>(p));
  }
  w->in_flight_.assign(w->buffers_.size(), false);
  w->expected_.assign(w->buffers_.size(), 0);
  if (options.io != "pwrite") {
    bool ok = io_uring_queue_init(static_cast<unsigned>(options.buffers * 2), &w->ring_, 0) == 0;
    if (ok) {
      std::vector<iovec> iov;
      for (auto* b : w->buffers_) iov.push_back(iovec{b, w->buffer_bytes_});
      // Registration pins the buffers (counted against RLIMIT_MEMLOCK).
      if (io_uring_register_buffers(&w->ring_, iov.data(), static_cast<unsigned>(iov.size())) != 0) {
        io_uring_queue_exit(&w->ring_);
        ok = false;
      }
    }
    w->uring_ = ok;
    if (!ok && options.io == "io_uring") {
      error = "io_uring refused on this system (recorder.io = \"io_uring\"); use \"auto\" to fall back to pwrite";
      return nullptr;
    }
  }
  if (!w->put(&header, sizeof header)) {
    error = w->error();
    return nullptr;
  }
  w->logical_bytes_ = sizeof header;
  return w;
}

TraceWriter::~TraceWriter() {
  if (!finished_) finish();
  if (uring_) io_uring_queue_exit(&ring_);
  for (auto* b : buffers_) std::free(b);
}

bool TraceWriter::fail(const std::string& why) {
  if (error_.empty()) error_ = why;
  return false;
}

bool TraceWriter::wait_buffer(int index) {
  while (in_flight_[index]) {
    io_uring_cqe* cqe = nullptr;
    const int rc = io_uring_wait_cqe(&ring_, &cqe);
    if (rc < 0) return fail(std::string("io_uring wait: ") + std::strerror(-rc));
    const auto done = static_cast<int>(io_uring_cqe_get_data64(cqe));
    const int res = cqe->res;
    io_uring_cqe_seen(&ring_, cqe);
    in_flight_[done] = false;
    if (res < 0) return fail(std::string("trace write: ") + std::strerror(-res));
    if (static_cast<std::size_t>(res) != expected_[done]) return fail("trace write: short write");
  }
  return true;
}

bool TraceWriter::flush_buffer(std::size_t length) {
  // Direct I/O writes whole aligned blocks; the padding is cut off by finish().
  const std::size_t write_len = direct_ ? (length + kAlignment - 1) / kAlignment * kAlignment : length;
  if (write_len > length) std::memset(buffers_[current_] + length, 0, write_len - length);
  if (uring_) {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) return fail("io_uring submission queue full");
    io_uring_prep_write_fixed(sqe, fd_, buffers_[current_], static_cast<unsigned>(write_len),
                              file_offset_, current_);
    io_uring_sqe_set_data64(sqe, static_cast<std::uint64_t>(current_));
    in_flight_[current_] = true;
    expected_[current_] = write_len;
    const int rc = io_uring_submit(&ring_);
    if (rc < 0) return fail(std::string("io_uring submit: ") + std::strerror(-rc));
  } else {
    std::size_t done = 0;
    while (done < write_len) {
      const ssize_t n = pwrite(fd_, buffers_[current_] + done, write_len - done,
                               static_cast<off_t>(file_offset_ + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return fail(std::string("trace pwrite: ") + std::strerror(errno));
      done += static_cast<std::size_t>(n);
    }
  }
  file_offset_ += length;
  current_ = (current_ + 1) % static_cast<int>(buffers_.size());
  fill_ = 0;
  return uring_ ? wait_buffer(current_) : true;
}

bool TraceWriter::put(const void* data, std::size_t size) {
  const auto* bytes = static_cast<const std::uint8_t*>(data);
  while (size > 0) {
    const std::size_t n = std::min(size, buffer_bytes_ - fill_);
    if (bytes != nullptr) std::memcpy(buffers_[current_] + fill_, bytes, n);
    else std::memset(buffers_[current_] + fill_, 0, n);
    fill_ += n;
    size -= n;
    if (bytes != nullptr) bytes += n;
    if (fill_ == buffer_bytes_ && !flush_buffer(fill_)) return false;
  }
  return true;
}

bool TraceWriter::append(RecordType type, std::int64_t time_ns, const void* a, std::uint32_t a_size,
                         const void* b, std::uint32_t b_size) {
  if (!error_.empty() || finished_) return false;
  RecordHeader h;
  h.type = type;
  h.size = a_size + b_size;
  h.sequence = ++sequence_;
  h.time_ns = time_ns;
  std::uint32_t crc = 0;
  if (a_size) crc = drivers::crc32c({static_cast<const std::uint8_t*>(a), a_size}, crc);
  if (b_size) crc = drivers::crc32c({static_cast<const std::uint8_t*>(b), b_size}, crc);
  h.crc = crc;
  const std::uint32_t pad = padded(h.size) - h.size;
  const bool ok = put(&h, sizeof h) && (a_size == 0 || put(a, a_size)) &&
                  (b_size == 0 || put(b, b_size)) && (pad == 0 || put(nullptr, pad));
  logical_bytes_ += sizeof h + padded(h.size);
  return ok;
}

bool TraceWriter::finish() {
  if (finished_) return error_.empty();
  finished_ = true;
  bool ok = error_.empty();
  // A direct write covers whole blocks: the bytes past the file length are zeros, cut below.
  if (ok && fill_ > 0) ok = flush_buffer(fill_);
  if (uring_) {
    for (std::size_t i = 0; i < buffers_.size(); ++i) ok = wait_buffer(static_cast<int>(i)) && ok;
  }
  if (fd_ >= 0) {
    if (ftruncate(fd_, static_cast<off_t>(file_offset_)) != 0) ok = fail("trace truncate failed");
    fdatasync(fd_);
    close(fd_);
    fd_ = -1;
  }
  return ok;
}

}  // namespace sonoflow::daemon::trace
