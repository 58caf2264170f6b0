#include "daemon/status/status_file.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <new>
#include <random>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "daemon/version.hpp"

namespace sonoflow::daemon::status {
namespace {

std::string errno_text(const char* what, const std::string& path) {
  return std::string(what) + " " + path + ": " + std::strerror(errno);
}

template <typename T>
SectionEntry entry(SectionId id, const void* base, const T& section, std::uint16_t count = 1) {
  return SectionEntry{id, 1, count,
                      static_cast<std::uint32_t>(reinterpret_cast<const char*>(&section) -
                                                 static_cast<const char*>(base)),
                      static_cast<std::uint32_t>(sizeof(section))};
}

std::uint64_t new_generation() {
  std::random_device rd;
  return (static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ static_cast<std::uint64_t>(getpid());
}

// Copies through a local: GCC 12 misreads a SeqLock copy straight into a struct member as a
// write into the member's first field (-Wstringop-overflow false positive).
template <typename T>
bool load_section(const Section<T>& section, T& out) noexcept {
  T copy{};
  const bool ok = section.lock.load(copy);
  if (ok) out = copy;
  return ok;
}

}  // namespace

std::unique_ptr<StatusWriter> StatusWriter::create(const std::string& path, std::int64_t start_ns,
                                                   std::string& error) {
  const std::string temp = path + ".new." + std::to_string(getpid());
  unlink(temp.c_str());
  const int fd = open(temp.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
  if (fd < 0) {
    error = errno_text("cannot create status file", temp);
    return nullptr;
  }
  fchmod(fd, 0640);  // exact mode whatever the umask
  const std::size_t size = sizeof(StatusRegion);
  if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
    error = errno_text("cannot size status file", temp);
    close(fd);
    unlink(temp.c_str());
    return nullptr;
  }
  void* memory = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    error = errno_text("cannot map status file", temp);
    unlink(temp.c_str());
    return nullptr;
  }
  auto* region = new (memory) StatusRegion{};
  StatusHeader& h = region->header;
  h.total_size = static_cast<std::uint32_t>(size);
  h.generation = new_generation();
  h.writer_pid = getpid();
  h.start_monotonic_ns = start_ns;
  h.heartbeat_monotonic_ns.store(start_ns, std::memory_order_relaxed);
  std::strncpy(h.version.data(), kVersion, h.version.size() - 1);
  const SectionEntry entries[] = {
      entry(SectionId::Loops, region, region->loops[0], kStageCount),
      entry(SectionId::Tracker, region, region->tracker),
      entry(SectionId::Fluid, region, region->fluid),
      entry(SectionId::Haptic, region, region->haptic),
      entry(SectionId::Array, region, region->array),
      entry(SectionId::Rings, region, region->rings),
      entry(SectionId::Latency, region, region->latency),
      entry(SectionId::Recorder, region, region->recorder),
      entry(SectionId::ForceFeedback, region, region->force_feedback),
  };
  h.section_count = 0;
  for (const auto& e : entries) h.sections[h.section_count++] = e;

  if (rename(temp.c_str(), path.c_str()) != 0) {
    error = errno_text("cannot move status file into place at", path);
    munmap(memory, size);
    unlink(temp.c_str());
    return nullptr;
  }
  return std::unique_ptr<StatusWriter>(new StatusWriter(path, region));
}

StatusWriter::~StatusWriter() {
  set_state(DaemonState::Stopped);
  // Only remove the file if it is still ours (a newer daemon may have replaced it).
  struct stat st {};
  if (stat(path_.c_str(), &st) == 0) {
    const int fd = open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      std::uint64_t generation = 0;
      if (pread(fd, &generation, sizeof generation, offsetof(StatusHeader, generation)) ==
              static_cast<ssize_t>(sizeof generation) &&
          generation == region_->header.generation) {
        unlink(path_.c_str());
      }
      close(fd);
    }
  }
  munmap(region_, sizeof(StatusRegion));
}

void StatusWriter::heartbeat(std::int64_t now_ns) noexcept {
  region_->header.heartbeat_monotonic_ns.store(now_ns, std::memory_order_release);
}

void StatusWriter::set_state(DaemonState state) noexcept {
  region_->header.daemon_state.store(state, std::memory_order_release);
}

std::unique_ptr<StatusReader> StatusReader::attach(const std::string& path, std::string& error) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = errno_text("cannot open", path);
    return nullptr;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<std::size_t>(st.st_size) < kHeaderSize) {
    error = path + ": too small to be a sonoflow status file";
    close(fd);
    return nullptr;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  void* memory = mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    error = errno_text("cannot map", path);
    return nullptr;
  }
  const auto* region = static_cast<const StatusRegion*>(memory);
  const StatusHeader& h = region->header;
  std::string why;
  if (h.magic != kMagic) {
    why = path + ": not a sonoflow status file (bad magic)";
  } else if (h.compat_major > kAbiMajor) {
    why = path + ": written by a newer sonoflowd (needs reader ABI " +
          std::to_string(h.compat_major) + ", this tool has " + std::to_string(kAbiMajor) + ")";
  } else if (h.total_size > size || size < sizeof(StatusRegion)) {
    why = path + ": truncated status file";
  }
  if (!why.empty()) {
    error = why;
    munmap(memory, size);
    return nullptr;
  }
  return std::unique_ptr<StatusReader>(new StatusReader(path, region, size, st.st_ino));
}

StatusReader::~StatusReader() { munmap(const_cast<StatusRegion*>(region_), size_); }

bool StatusReader::replaced() const noexcept {
  struct stat st {};
  if (stat(path_.c_str(), &st) != 0) return true;
  return st.st_ino != inode_;
}

StatusSnapshot StatusReader::snapshot() const noexcept { return take_snapshot(*region_); }

StatusSnapshot take_snapshot(const StatusRegion& r) noexcept {
  StatusSnapshot s;
  s.generation = r.header.generation;
  s.writer_pid = r.header.writer_pid;
  s.degraded = r.header.degraded.load(std::memory_order_relaxed);
  s.daemon_state = r.header.daemon_state.load(std::memory_order_acquire);
  s.start_ns = r.header.start_monotonic_ns;
  s.heartbeat_ns = r.header.heartbeat_monotonic_ns.load(std::memory_order_acquire);
  s.version.assign(r.header.version.data(), strnlen(r.header.version.data(), r.header.version.size()));
  bool ok = true;
  for (int i = 0; i < kStageCount; ++i) ok &= load_section(r.loops[i], s.loops[i]);
  ok &= load_section(r.tracker, s.tracker);
  ok &= load_section(r.fluid, s.fluid);
  ok &= load_section(r.haptic, s.haptic);
  ok &= load_section(r.array, s.array);
  ok &= load_section(r.rings, s.rings);
  ok &= load_section(r.latency, s.latency);
  ok &= load_section(r.recorder, s.recorder);
  ok &= load_section(r.force_feedback, s.force_feedback);
  s.torn = !ok;
  return s;
}

}  // namespace sonoflow::daemon::status
