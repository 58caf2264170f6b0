#include "daemon/status/status_file.hpp"

#include <cstddef>
#include <cstring>
#include <new>
#include <unistd.h>

#include "daemon/version.hpp"

namespace sonoflow::daemon::status {
namespace {

// The region as ABI 2.1 wrote it: readers accept a file this long (its later sections read 0).
constexpr std::size_t kAbi21RegionSize = offsetof(StatusRegion, tracker_late);

template <typename T>
SectionEntry entry(SectionId id, const void* base, const T& section, std::uint16_t count = 1) {
  return SectionEntry{id, 1, count,
                      static_cast<std::uint32_t>(reinterpret_cast<const char*>(&section) -
                                                 static_cast<const char*>(base)),
                      static_cast<std::uint32_t>(sizeof(section))};
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
  const std::size_t size = sizeof(StatusRegion);
  std::optional<shm::SharedFile> file = shm::SharedFile::create(path, size, "status file", error);
  if (!file) return nullptr;
  void* memory = file->data();
  auto* region = new (memory) StatusRegion{};
  StatusHeader& h = region->header;
  h.total_size = static_cast<std::uint32_t>(size);
  h.generation = shm::new_generation();
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
      entry(SectionId::TrackerLate, region, region->tracker_late),
  };
  h.section_count = 0;
  for (const auto& e : entries) h.sections[h.section_count++] = e;

  if (!file->publish(error)) return nullptr;
  return std::unique_ptr<StatusWriter>(new StatusWriter(std::move(*file)));
}

StatusWriter::~StatusWriter() {
  set_state(DaemonState::Stopped);
  file_.unlink_if_ours(offsetof(StatusHeader, generation), region().header.generation);
}

void StatusWriter::heartbeat(std::int64_t now_ns) noexcept {
  region().header.heartbeat_monotonic_ns.store(now_ns, std::memory_order_release);
}

void StatusWriter::set_state(DaemonState state) noexcept {
  region().header.daemon_state.store(state, std::memory_order_release);
}

std::unique_ptr<StatusReader> StatusReader::attach(const std::string& path, std::string& error) {
  std::optional<shm::SharedFile> file = shm::SharedFile::open_read_only(path, kHeaderSize, "status file", error);
  if (!file) return nullptr;
  const StatusHeader& h = static_cast<const StatusRegion*>(file->data())->header;
  if (h.magic != kMagic) {
    error = path + ": not a sonoflow status file (bad magic)";
  } else if (h.compat_major > kAbiMajor) {
    error = path + ": written by a newer sonoflowd (needs reader ABI " + std::to_string(h.compat_major) +
            ", this tool has " + std::to_string(kAbiMajor) + ")";
  } else if (h.total_size > file->size() || h.total_size < kAbi21RegionSize) {
    error = path + ": truncated status file";
  } else {
    return std::unique_ptr<StatusReader>(new StatusReader(std::move(*file)));
  }
  return nullptr;
}

StatusSnapshot StatusReader::snapshot() const noexcept {
  return take_snapshot(region(), region().header.total_size);  // attach checked it is mapped
}

StatusSnapshot take_snapshot(const StatusRegion& r, std::size_t size) noexcept {
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
  // A 2.1 daemon's file (still running after an upgrade of the tools) ends before tracker_late.
  if (size >= offsetof(StatusRegion, tracker_late) + sizeof(r.tracker_late))
    ok &= load_section(r.tracker_late, s.tracker_late);
  s.torn = !ok;
  return s;
}

}  // namespace sonoflow::daemon::status
