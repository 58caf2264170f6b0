// The status file: its ABI is pinned, it is created 0640 and replaced atomically, monitors attach
// read-only and refuse foreign files, and a monitor attaching mid-run sees consistent, advancing
// counters while the writer keeps publishing.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <thread>

#include "daemon/status/status_file.hpp"
#include "daemon/status/status_format.hpp"

namespace sonoflow::daemon::status {
namespace {

std::string temp_path(const char* name) {
  return ::testing::TempDir() + name + std::to_string(getpid());
}

// Golden offsets: changing any of these is an ABI change (bump kAbiMajor or append instead).
TEST(StatusLayout, SizesAndOffsetsArePinned) {
  EXPECT_EQ(offsetof(StatusHeader, magic), 0u);
  EXPECT_EQ(offsetof(StatusHeader, abi_major), 8u);
  EXPECT_EQ(offsetof(StatusHeader, compat_major), 12u);
  EXPECT_EQ(offsetof(StatusHeader, header_size), 16u);
  EXPECT_EQ(offsetof(StatusHeader, total_size), 20u);
  EXPECT_EQ(offsetof(StatusHeader, generation), 24u);
  EXPECT_EQ(offsetof(StatusHeader, writer_pid), 32u);
  EXPECT_EQ(offsetof(StatusHeader, start_monotonic_ns), 40u);
  EXPECT_EQ(offsetof(StatusHeader, heartbeat_monotonic_ns), 48u);
  EXPECT_EQ(offsetof(StatusHeader, daemon_state), 56u);
  EXPECT_EQ(offsetof(StatusHeader, section_count), 60u);
  EXPECT_EQ(offsetof(StatusHeader, sections), 64u);
  EXPECT_EQ(offsetof(StatusHeader, version), 320u);
  EXPECT_EQ(sizeof(StatusHeader), 4096u);
  EXPECT_EQ(sizeof(SectionEntry), 16u);

  EXPECT_EQ(sizeof(LoopStatus), 136u);
  EXPECT_EQ(offsetof(LoopStatus, ticks), 16u);
  EXPECT_EQ(offsetof(LoopStatus, rate_hz), 56u);
  EXPECT_EQ(offsetof(LoopStatus, exec_max_ns), 128u);
  EXPECT_EQ(sizeof(TrackerStatus), 56u);
  EXPECT_EQ(sizeof(FluidStatus), 104u);
  EXPECT_EQ(offsetof(FluidStatus, medium), 80u);
  EXPECT_EQ(offsetof(FluidStatus, pressure_residual), 100u);
  EXPECT_EQ(sizeof(HapticStatus), 72u);
  EXPECT_EQ(sizeof(ArrayStatus), 88u);
  EXPECT_EQ(sizeof(RingStatus), 160u);
  EXPECT_EQ(sizeof(LatencyStatus), 304u);
  EXPECT_EQ(sizeof(RecorderStatus), 104u);
  EXPECT_EQ(sizeof(ForceFeedbackStatus), 112u);
  EXPECT_EQ(offsetof(ForceFeedbackStatus, stylus_position), 16u);
  EXPECT_EQ(offsetof(ForceFeedbackStatus, force_age_ns), 72u);
  EXPECT_EQ(sizeof(TrackerLateStatus), 8u);  // 2.2
  EXPECT_EQ(offsetof(TrackerLateStatus, stale_frames), 0u);

  EXPECT_EQ(offsetof(StatusRegion, loops), 4096u);
  EXPECT_EQ(sizeof(Section<LoopStatus>), 192u);
  EXPECT_EQ(offsetof(StatusRegion, tracker), 4096u + 8 * 192);
  EXPECT_EQ(offsetof(StatusRegion, force_feedback), 6720u);
  EXPECT_EQ(offsetof(StatusRegion, tracker_late), 6848u);  // 2.2: appended, nothing moved
  EXPECT_EQ(sizeof(Section<TrackerLateStatus>), 64u);
  EXPECT_EQ(sizeof(StatusRegion), 6912u);
  EXPECT_EQ(kAbiMajor, 2u) << "ABI 2: the force loop row moved every section after the loops";
  EXPECT_EQ(kAbiMinor, 2u) << "2.2: the tracker_late section";
}

TEST(StatusFile, CreatedWithMode0640AndADirectory) {
  const std::string path = temp_path("status_mode");
  std::string error;
  auto writer = StatusWriter::create(path, 1000, error);
  ASSERT_TRUE(writer) << error;
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);

  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader) << error;
  const StatusHeader& h = reader->region().header;
  EXPECT_EQ(h.magic, kMagic);
  EXPECT_EQ(h.total_size, sizeof(StatusRegion));
  EXPECT_EQ(h.writer_pid, getpid());
  ASSERT_EQ(h.section_count, 10u);
  EXPECT_EQ(h.sections[0].id, SectionId::Loops);
  EXPECT_EQ(h.sections[0].count, kStageCount);
  EXPECT_EQ(h.sections[0].offset, offsetof(StatusRegion, loops));
  EXPECT_EQ(h.sections[1].offset, offsetof(StatusRegion, tracker));
  EXPECT_EQ(h.sections[7].offset, offsetof(StatusRegion, recorder));
  EXPECT_EQ(h.sections[8].id, SectionId::ForceFeedback);
  EXPECT_EQ(h.sections[8].offset, offsetof(StatusRegion, force_feedback));
  EXPECT_EQ(h.sections[9].id, SectionId::TrackerLate);
  EXPECT_EQ(h.sections[9].offset, offsetof(StatusRegion, tracker_late));
  EXPECT_EQ(h.sections[9].size, sizeof(Section<TrackerLateStatus>));
}

TEST(StatusFile, ExitRemovesTheFileAndMarksItStopped) {
  const std::string path = temp_path("status_exit");
  std::string error;
  auto writer = StatusWriter::create(path, 0, error);
  ASSERT_TRUE(writer) << error;
  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader);
  writer->set_state(DaemonState::Running);
  EXPECT_EQ(reader->snapshot().daemon_state, DaemonState::Running);
  writer.reset();
  EXPECT_NE(access(path.c_str(), F_OK), 0);
  EXPECT_EQ(reader->snapshot().daemon_state, DaemonState::Stopped);
  EXPECT_TRUE(reader->replaced());
}

TEST(StatusFile, RestartGivesANewGenerationAndANewInode) {
  const std::string path = temp_path("status_restart");
  std::string error;
  auto first = StatusWriter::create(path, 0, error);
  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader);
  const auto old_generation = reader->generation();
  auto second = StatusWriter::create(path, 0, error);  // a new daemon replaces the file
  ASSERT_TRUE(second) << error;
  EXPECT_TRUE(reader->replaced());
  EXPECT_NE(second->generation(), old_generation);
  first.reset();  // the old daemon's exit must not remove the new daemon's file
  EXPECT_EQ(access(path.c_str(), F_OK), 0);
}

TEST(StatusFile, ReaderRefusesForeignAndTruncatedFiles) {
  const std::string path = temp_path("status_foreign");
  {
    std::ofstream f(path);
    f << std::string(8192, 'x');
  }
  std::string error;
  EXPECT_FALSE(StatusReader::attach(path, error));
  EXPECT_NE(error.find("bad magic"), std::string::npos);
  {
    std::ofstream f(path);
    f << "short";
  }
  EXPECT_FALSE(StatusReader::attach(path, error));
  EXPECT_NE(error.find("too small"), std::string::npos);
  EXPECT_FALSE(StatusReader::attach(path + ".missing", error));
  std::remove(path.c_str());
}

// The reader's mapping is PROT_READ: a write through it would fault. We check the mapping's
// protection in /proc/self/maps instead of crashing the test.
TEST(StatusFile, MonitorMappingIsReadOnly) {
  const std::string path = temp_path("status_ro");
  std::string error;
  auto writer = StatusWriter::create(path, 0, error);
  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader);
  const auto address = reinterpret_cast<std::uintptr_t>(&reader->region());
  std::ifstream maps("/proc/self/maps");
  std::string line;
  bool found = false;
  while (std::getline(maps, line)) {
    unsigned long begin = 0, end = 0;
    char perms[5] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %4s", &begin, &end, perms) == 3 && address >= begin &&
        address < end) {
      found = true;
      EXPECT_EQ(perms[0], 'r');
      EXPECT_EQ(perms[1], '-') << line;
    }
  }
  EXPECT_TRUE(found);
}

// A writer thread publishes loop and array sections whose fields are tied together; a monitor
// attaching mid-run must only ever see tied values, and counters that never go backwards.
TEST(StatusFile, MonitorAttachingMidRunSeesConsistentAdvancingCounters) {
  const std::string path = temp_path("status_midrun");
  std::string error;
  auto writer = StatusWriter::create(path, 0, error);
  ASSERT_TRUE(writer) << error;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> published{0};
  std::thread producer([&] {
    StatusRegion& r = writer->region();
    for (std::uint64_t i = 1; !stop.load(std::memory_order_relaxed); ++i) {
      LoopStatus loop;
      loop.ticks = i;
      loop.overruns = i / 3;
      loop.wake_max_ns = static_cast<std::int64_t>(i * 7);
      loop.exec_max_ns = static_cast<std::int64_t>(i * 11);
      r.loops[2].lock.store(loop);
      ArrayStatus array;
      array.blocks_sent = i;
      array.underruns = i / 5;
      array.device_tick = i * 40;
      r.array.lock.store(array);
      writer->heartbeat(static_cast<std::int64_t>(i));
      published.store(i, std::memory_order_relaxed);
      std::this_thread::yield();  // still far faster than any real loop publishes
    }
  });
  while (published.load() < 1000) std::this_thread::yield();

  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader) << error;
  std::uint64_t last_ticks = 0, last_blocks = 0;
  int advanced = 0;
  long torn = 0, consistent = 0;
  // Read until the writer has been seen to advance a few times (it may be descheduled for a
  // while on a loaded machine); the bound only keeps a broken writer from hanging the test.
  for (long n = 0; (consistent < 20'000 || advanced < 3) && n < 50'000'000; ++n) {
    if (n % 64 == 0) std::this_thread::yield();
    const StatusSnapshot s = reader->snapshot();
    // A writer hammering without pause can keep a section busy through every retry; the
    // reader then says so (torn) instead of handing out a mixed copy. Skip those.
    if (s.torn) {
      ++torn;
      continue;
    }
    ++consistent;
    const LoopStatus& l = s.loops[2];
    ASSERT_EQ(l.overruns, l.ticks / 3);
    ASSERT_EQ(static_cast<std::uint64_t>(l.wake_max_ns), l.ticks * 7);
    ASSERT_EQ(static_cast<std::uint64_t>(l.exec_max_ns), l.ticks * 11);
    ASSERT_EQ(s.array.underruns, s.array.blocks_sent / 5);
    ASSERT_EQ(s.array.device_tick, s.array.blocks_sent * 40);
    ASSERT_GE(l.ticks, last_ticks);
    ASSERT_GE(s.array.blocks_sent, last_blocks);
    if (l.ticks > last_ticks) ++advanced;
    last_ticks = l.ticks;
    last_blocks = s.array.blocks_sent;
  }
  stop = true;
  producer.join();
  EXPECT_GT(advanced, 1);
  EXPECT_GE(consistent, 20'000) << torn << " torn reads";
}

// A monitor upgraded while a 2.1 daemon still runs: its file ends before tracker_late. The
// monitor attaches, reads every 2.1 section and a stale count of 0.
TEST(StatusFile, ReaderAttachesToAnAbi21File) {
  const std::string path = temp_path("status_abi21");
  const std::string old_path = path + ".21";
  std::string error;
  auto writer = StatusWriter::create(path, 0, error);
  ASSERT_TRUE(writer) << error;
  TrackerStatus tracker;
  tracker.frames = 77;
  writer->region().tracker.lock.store(tracker);
  const std::uint32_t old_size = offsetof(StatusRegion, tracker_late);
  {
    std::ofstream f(old_path, std::ios::binary);
    f.write(reinterpret_cast<const char*>(&writer->region()), old_size);
  }
  const std::uint16_t old_minor = 1;
  const int fd = open(old_path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(pwrite(fd, &old_size, 4, offsetof(StatusHeader, total_size)), 4);
  ASSERT_EQ(pwrite(fd, &old_minor, 2, offsetof(StatusHeader, abi_minor)), 2);
  close(fd);

  auto reader = StatusReader::attach(old_path, error);
  ASSERT_TRUE(reader) << error;
  const StatusSnapshot s = reader->snapshot();
  EXPECT_FALSE(s.torn);
  EXPECT_EQ(s.tracker.frames, 77u);
  EXPECT_EQ(s.tracker_late.stale_frames, 0u);
  reader.reset();
  std::remove(old_path.c_str());
}

TEST(StatusFormat, JsonCarriesSchemaAndUnitsInKeys) {
  StatusSnapshot s;
  s.version = "0.1.0";
  s.loops[2].ticks = 42;
  s.loops[2].period_target_ns = 1'000'000;
  s.array.underruns = 3;
  const std::string json = to_json(s, 5'000'000'000);
  EXPECT_NE(json.find("\"schema\":\"sonoflow.status\""), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"haptic\""), std::string::npos);
  EXPECT_NE(json.find("\"period_ns\":1000000"), std::string::npos);
  EXPECT_NE(json.find("\"underruns\":3"), std::string::npos);
  EXPECT_NE(json.find("\"stale\":true"), std::string::npos);
}

TEST(StatusFormat, ForceFeedbackIsInTheJsonAndOnScreenOnlyWhenEnabled) {
  StatusSnapshot s;
  s.daemon_state = DaemonState::Running;
  EXPECT_EQ(to_screen(s, nullptr, 0).find("FORCE"), std::string::npos);
  EXPECT_NE(to_json(s, 0).find("\"force_feedback\":{\"enabled\":false,\"output\":\"off\""),
            std::string::npos);
  s.force_feedback.enabled = 1;
  s.force_feedback.output = ForceOutput::Rendering;
  s.force_feedback.stylus = 1;
  s.force_feedback.commanded = {0.3f, 0.4f, 0.0f};
  s.force_feedback.stale_releases = 2;
  const std::string screen = to_screen(s, nullptr, 0);
  EXPECT_NE(screen.find("FORCE   rendering stylus ok"), std::string::npos) << screen;
  EXPECT_NE(screen.find("out 0.500 N"), std::string::npos) << screen;
  const std::string json = to_json(s, 0);
  EXPECT_NE(json.find("\"output\":\"rendering\""), std::string::npos);
  EXPECT_NE(json.find("\"commanded_n\":[0.3"), std::string::npos) << json;
  EXPECT_NE(json.find("\"stale_releases\":2"), std::string::npos);
  EXPECT_NE(json.find("\"name\":\"force\""), std::string::npos) << "the force loop's row";
}

// The tracker's stale frames go from the region (as TrackerStage publishes them) through a
// monitor's read-only mapping to the JSON's tracker object and the tracker0 line.
TEST(StatusFormat, TrackerStaleFramesReachTheJsonAndTheScreen) {
  const std::string path = temp_path("status_stale");
  std::string error;
  auto writer = StatusWriter::create(path, 0, error);
  ASSERT_TRUE(writer) << error;
  TrackerStatus tracker;
  tracker.state = TrackerState::Streaming;
  tracker.frames = 900;
  tracker.dropped_frames = 3;
  writer->region().tracker.lock.store(tracker);
  TrackerLateStatus late;
  late.stale_frames = 32;
  writer->region().tracker_late.lock.store(late);

  auto reader = StatusReader::attach(path, error);
  ASSERT_TRUE(reader) << error;
  const StatusSnapshot s = reader->snapshot();
  const std::string json = to_json(s, 0);
  EXPECT_NE(json.find("\"frames\":900,\"dropped_frames\":3,\"stale_frames\":32,"), std::string::npos)
      << json;
  const std::string screen = to_screen(s, nullptr, 0);
  EXPECT_NE(screen.find("drops 3  stale 32  losses 0"), std::string::npos) << screen;
}

// The tracker0 line's age is the newest frame's age when the tracker published it (3 ms here),
// not the monitor's lag since that publication (95 ms more at status.update_hz = 10): that
// reads as a stale hand (safety.stale_after_ms is 50) while the tracker streams at 120 Hz.
TEST(StatusFormat, TrackerAgeIsTheNewestFramesAgeWhenPublished) {
  StatusSnapshot s;
  s.daemon_state = DaemonState::Running;
  s.heartbeat_ns = 5'090'000'000;
  s.loops[static_cast<int>(Stage::Tracker)].updated_ns = 5'000'000'000;
  s.tracker.state = TrackerState::Streaming;
  s.tracker.last_capture_ns = 4'997'000'000;
  const std::string screen = to_screen(s, nullptr, 5'095'000'000);
  EXPECT_NE(screen.find("age 3.00ms"), std::string::npos) << screen;
}

TEST(StatusFormat, HumanDurationsPickAUnitAndNeverPrintNonsense) {
  EXPECT_EQ(human_duration(850), "850ns");
  EXPECT_EQ(human_duration(31'000), "31us");
  EXPECT_EQ(human_duration(4'600'000), "4.60ms");
  EXPECT_EQ(human_duration(1'200'000'000), "1.20s");
  EXPECT_EQ(human_duration(-5), "n/a");
}

TEST(StatusFormat, StaleDaemonIsSaidOnScreen) {
  StatusSnapshot s;
  s.writer_pid = 1234;
  s.daemon_state = DaemonState::Running;
  s.heartbeat_ns = 0;
  const std::string screen = to_screen(s, nullptr, 3'200'000'000);
  EXPECT_NE(screen.find("STALE: no update from sonoflowd (pid 1234) for 3.20s"), std::string::npos);
}

}  // namespace
}  // namespace sonoflow::daemon::status
