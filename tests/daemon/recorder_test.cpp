// Recording and replay: the trace writer (io_uring and pwrite paths) round-trips every record
// type with CRCs, the reader refuses damaged data and other formats, sessions recorded on a
// virtual clock and on the real clock (threaded, with a live mode switch) replay to the
// identical output, and tampered or lost records are reported.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <thread>
#include <vector>

#include "daemon/pipeline/pipeline.hpp"
#include "daemon/recorder/recorder.hpp"
#include "daemon/recorder/replay.hpp"
#include "daemon/recorder/trace_reader.hpp"
#include "daemon/recorder/trace_writer.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/standins/emulated_array.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/standins/scripted_hand.hpp"
#include "drivers/force_device/emulated_force_device.hpp"
#include "drivers/protocol/crc32c.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::int64_t kMs = 1'000'000;

std::string temp_dir(const std::string& name) {
  const std::string dir = ::testing::TempDir() + name + std::to_string(getpid());
  std::system(("rm -rf " + dir + " && mkdir -p " + dir).c_str());
  return dir;
}

class TraceWriterTest : public ::testing::TestWithParam<const char*> {};

TEST_P(TraceWriterTest, EveryRecordRoundTripsAcrossBufferBoundaries) {
  const std::string path = temp_dir("trace_rt") + "/t.sftrace";
  trace::TraceHeader header;
  header.start_ns = 123;
  trace::TraceWriter::Options options;
  options.io = GetParam();
  options.buffer_bytes = 8192;  // small, so records straddle buffers
  options.buffers = 3;
  std::string error;
  auto writer = trace::TraceWriter::create(path, header, options, error);
  ASSERT_TRUE(writer) << error;
  if (std::string(GetParam()) == "pwrite") {
    EXPECT_EQ(writer->io(), status::RecorderIo::Pwrite);
  }

  std::vector<HandFrame> frames(20);
  for (std::size_t i = 0; i < frames.size(); ++i) {
    frames[i].frame_id = i + 1;
    frames[i].capture_time_ns = static_cast<std::int64_t>(i) * 8 * kMs;
    frames[i].hand_count = 1;
    frames[i].hands[0].joints[5].position.x = static_cast<float>(i);
  }
  for (const auto& f : frames) ASSERT_TRUE(writer->append(trace::RecordType::HandFrame, f.capture_time_ns, &f, sizeof f));
  const std::string text = "odd-length config text";
  ASSERT_TRUE(writer->append(trace::RecordType::Config, 0, text.data(), static_cast<std::uint32_t>(text.size())));
  ASSERT_TRUE(writer->finish()) << writer->error();
  const std::uint64_t bytes = writer->bytes();

  auto reader = trace::TraceReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().start_ns, 123);
  trace::Record r;
  for (const auto& expected : frames) {
    ASSERT_TRUE(reader->next(r));
    HandFrame got;
    ASSERT_TRUE(trace::TraceReader::decode(r, got));
    EXPECT_EQ(got.frame_id, expected.frame_id);
    EXPECT_EQ(got.hands[0].joints[5].position.x, expected.hands[0].joints[5].position.x);
  }
  ASSERT_TRUE(reader->next(r));
  EXPECT_EQ(std::string(r.payload.begin(), r.payload.end()), text);
  EXPECT_FALSE(reader->next(r));
  EXPECT_FALSE(reader->damaged());
  EXPECT_EQ(reader->gaps(), 0u);
  std::ifstream f(path, std::ios::ate | std::ios::binary);
  EXPECT_EQ(static_cast<std::uint64_t>(f.tellg()), bytes);  // direct-I/O padding trimmed
}

INSTANTIATE_TEST_SUITE_P(IoPaths, TraceWriterTest, ::testing::Values("auto", "pwrite"));

TEST(TraceReader, CorruptedPayloadAndTornTailAreDetected) {
  const std::string path = temp_dir("trace_bad") + "/t.sftrace";
  std::string error;
  {
    auto writer = trace::TraceWriter::create(path, trace::TraceHeader{}, {"pwrite", 4096, 2}, error);
    ASSERT_TRUE(writer);
    for (std::uint64_t i = 0; i < 3; ++i) {
      HandFrame h;
      h.frame_id = i;
      writer->append(trace::RecordType::HandFrame, 0, &h, sizeof h);
    }
  }
  {  // flip one payload byte of the second record
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(sizeof(trace::TraceHeader) + sizeof(trace::RecordHeader) + trace::padded(sizeof(HandFrame)) +
            sizeof(trace::RecordHeader) + 40);
    f.put('\x7f');
  }
  auto reader = trace::TraceReader::open(path, error);
  ASSERT_TRUE(reader);
  trace::Record r;
  EXPECT_TRUE(reader->next(r));
  EXPECT_FALSE(reader->next(r));
  EXPECT_TRUE(reader->damaged());

  truncate(path.c_str(), static_cast<off_t>(sizeof(trace::TraceHeader) + 100));
  reader = trace::TraceReader::open(path, error);
  ASSERT_TRUE(reader);
  EXPECT_FALSE(reader->next(r));
  EXPECT_TRUE(reader->damaged());

  std::FILE* junk = std::fopen(path.c_str(), "w");
  std::fputs("not a trace at all, just text that is long enough to fill a header......", junk);
  std::fclose(junk);
  EXPECT_FALSE(trace::TraceReader::open(path, error));
  EXPECT_NE(error.find("not a sonoflow trace"), std::string::npos);
}

TEST(TraceReader, RefusesOtherVersionsAndUnknownRecords) {
  const std::string dir = temp_dir("trace_strict");
  std::string error;
  {  // a version-2 header
    trace::TraceHeader old;
    old.version = 2;
    std::ofstream(dir + "/v2.sftrace", std::ios::binary).write(reinterpret_cast<const char*>(&old), sizeof old);
    EXPECT_FALSE(trace::TraceReader::open(dir + "/v2.sftrace", error));
    EXPECT_NE(error.find("trace version 2, this build reads 5"), std::string::npos) << error;
  }
  {  // a record type this build does not know, with a valid CRC, after a good record
    auto writer = trace::TraceWriter::create(dir + "/t.sftrace", trace::TraceHeader{}, {"pwrite", 4096, 2}, error);
    ASSERT_TRUE(writer) << error;
    HandFrame h;
    writer->append(trace::RecordType::HandFrame, 0, &h, sizeof h);
    writer->append(static_cast<trace::RecordType>(42), 0, &h, 8);
    writer->append(trace::RecordType::HapticTick, 0, &h, 8);  // wrong size for its type
    ASSERT_TRUE(writer->finish());
  }
  auto reader = trace::TraceReader::open(dir + "/t.sftrace", error);
  ASSERT_TRUE(reader) << error;
  trace::Record r;
  EXPECT_TRUE(reader->next(r));
  EXPECT_FALSE(reader->next(r));
  EXPECT_TRUE(reader->damaged());
  EXPECT_NE(reader->error().find("unknown record type 42"), std::string::npos) << reader->error();
}

struct Session {
  std::string path;
  std::uint64_t gaps = 0;
  std::uint64_t refused = 0, usb_errors = 0;
};

// Records `seconds` of stirring on a virtual clock, recording from the pipeline's start.
// `fault(clock_ns, array)` runs every 20 ms, e.g. to unplug the array for a while.
// `force_feedback`: with a stylus stirring a rod through the (palm-drag) fluid.
Session record_session(const std::string& dir, double seconds, EmulatedArray::Options array_options = {},
                       const std::function<void(std::int64_t, EmulatedArray&)>& fault = {},
                       bool force_feedback = false) {
  Config config;
  config.recorder.directory = dir;
  config.force_feedback.enabled = force_feedback;
  rt::VirtualClock clock(5'000'000'000);
  ScriptedHand hand(clock, 120);
  PalmDragField fluid;
  if (force_feedback) fluid.set_tool(0.006f, 0.12f);
  KernelRenderer renderer(config);
  EmulatedArray array(clock, array_options);
  drivers::EmulatedForceDeviceConfig stylus;
  stylus.centre = {0.0f, 0.0f, PalmDragField::kSurfaceZ + 0.03f};
  drivers::EmulatedForceDevice device(clock, stylus);
  status::StatusRegion region;
  Pipeline pipeline(config, clock,
                    PipelineParts{hand, fluid, renderer, array, force_feedback ? &device : nullptr}, &region);
  Recorder recorder(config, pipeline.links(), clock, &region);
  recorder.set_origin(clock.now_ns());
  const std::string started = recorder.start();
  EXPECT_TRUE(recorder.recording()) << started;
  const std::int64_t end = clock.now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  while (clock.now_ns() < end) {
    pipeline.run_virtual_until(clock, clock.now_ns() + 20 * kMs);
    if (fault) fault(clock.now_ns(), array);
    recorder.drain_once();
  }
  recorder.stop();
  Session s;
  status::RecorderStatus rs;
  EXPECT_TRUE(region.recorder.lock.load(rs));
  s.gaps = rs.gaps;
  s.refused = pipeline.stream().refused_blocks();
  s.usb_errors = pipeline.stream().usb_errors();
  pipeline.stop(100 * kMs);
  s.path = recorder.path();
  return s;
}

std::map<trace::RecordType, int> record_kinds(const std::string& path) {
  std::string error;
  auto reader = trace::TraceReader::open(path, error);
  EXPECT_TRUE(reader) << error;
  std::map<trace::RecordType, int> kinds;
  if (!reader) return kinds;
  trace::Record r;
  while (reader->next(r)) ++kinds[r.header.type];
  EXPECT_FALSE(reader->damaged()) << reader->error();
  return kinds;
}

std::string describe(const ReplayResult& r) { return r.report() + r.error; }

// Rewrites a trace, leaving out the records `drop` picks (as a full trace ring would have), or
// changing them with `edit` (the payload's CRC is recomputed: a tampered, not a damaged, file).
void rewrite_trace(const std::string& path, const std::function<bool(const trace::Record&)>& drop,
                   const std::function<void(trace::Record&)>& edit = {}) {
  std::string error;
  auto reader = trace::TraceReader::open(path, error);
  ASSERT_TRUE(reader) << error;
  std::vector<trace::Record> kept;
  trace::Record r;
  while (reader->next(r)) {
    if (drop && drop(r)) continue;
    if (edit) edit(r);
    kept.push_back(r);
  }
  ASSERT_FALSE(reader->damaged()) << reader->error();
  const trace::TraceHeader header = reader->header();
  reader.reset();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(&header), sizeof header);
  for (trace::Record& k : kept) {
    k.header.crc = drivers::crc32c(k.payload);
    k.payload.resize(trace::padded(k.header.size));
    out.write(reinterpret_cast<const char*>(&k.header), sizeof k.header);
    out.write(reinterpret_cast<const char*>(k.payload.data()), static_cast<std::streamsize>(k.payload.size()));
  }
}

template <typename T>
T payload_as(const trace::Record& r) {
  T value;
  std::memcpy(&value, r.payload.data(), sizeof value);
  return value;
}

TEST(Replay, VirtualClockSessionReplaysToIdenticalOutput) {
  const Session s = record_session(temp_dir("replay_same"), 3.0);
  EXPECT_EQ(s.gaps, 0u);
  const auto kinds = record_kinds(s.path);  // every kind of record, status once a second
  EXPECT_EQ(kinds.at(trace::RecordType::Config), 1);
  EXPECT_GE(kinds.at(trace::RecordType::HandFrame), 359);
  EXPECT_GE(kinds.at(trace::RecordType::ContactField), 260);
  EXPECT_GE(kinds.at(trace::RecordType::Block), 2990);
  EXPECT_GE(kinds.at(trace::RecordType::HapticTick), 2990);
  EXPECT_EQ(kinds.at(trace::RecordType::HapticSettings), 1);
  EXPECT_GE(kinds.at(trace::RecordType::Status), 3);

  const ReplayResult r = replay_trace(s.path, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.verdict, ReplayVerdict::Identical) << describe(r);
  EXPECT_FALSE(r.mid_run);
  EXPECT_EQ(r.compared, r.recorded_blocks) << describe(r);
  EXPECT_EQ(r.identical, r.compared);
  for (const auto& n : r.not_compared) EXPECT_TRUE(n.expected) << n.reason;
}

// With force feedback every servo tick is recorded (stylus pose, the fluid force it held, the
// force it commanded); the haptic replay is unaffected by the extra records.
TEST(Replay, ForceFeedbackTicksAreRecordedAndTheSessionStillReplaysIdentically) {
  const Session s = record_session(temp_dir("replay_force"), 2.0, {}, {}, true);
  EXPECT_EQ(s.gaps, 0u);
  const auto kinds = record_kinds(s.path);
  EXPECT_GE(kinds.at(trace::RecordType::ForceTick), 1990);

  std::string error;
  auto reader = trace::TraceReader::open(s.path, error);
  ASSERT_TRUE(reader) << error;
  EXPECT_EQ(reader->header().force_tick_size, sizeof(ForceTickRecord));
  trace::Record r;
  std::uint64_t last_tick = 0, frames = 0;
  double largest_step = 0, peak = 0;
  Vec3f previous{};
  while (reader->next(r)) {
    ForceTickRecord t;
    if (r.header.type != trace::RecordType::ForceTick) continue;
    ASSERT_TRUE(trace::TraceReader::decode(r, t));
    EXPECT_EQ(t.tick, last_tick + 1) << "every tick, in order";
    last_tick = t.tick;
    EXPECT_EQ(r.header.time_ns, t.deadline_ns);
    EXPECT_GE(t.wake_ns, t.deadline_ns);
    EXPECT_EQ(t.stylus_ok, 1);
    if (t.force_frame != 0) ++frames;
    const double dx = t.commanded.x - previous.x, dy = t.commanded.y - previous.y,
                 dz = t.commanded.z - previous.z;
    largest_step = std::max(largest_step, std::sqrt(dx * dx + dy * dy + dz * dz));
    peak = std::max(peak, std::sqrt(double{t.commanded.x} * t.commanded.x +
                                    double{t.commanded.y} * t.commanded.y));
    previous = t.commanded;
  }
  EXPECT_FALSE(reader->damaged()) << reader->error();
  EXPECT_NEAR(static_cast<double>(frames), 2.0 * 90, 3) << "one fluid force per fluid frame";
  EXPECT_GT(peak, 0.01) << "the rod was dragged through the standin's honey";
  EXPECT_LE(largest_step, Config{}.force_feedback.servo.max_step_n + 1e-6);

  // The servo re-runs on the recorded ticks: every commanded force bit for bit.
  EXPECT_EQ(kinds.at(trace::RecordType::ForceServo), 1);
  const ReplayResult replayed = replay_trace(s.path, 0);
  EXPECT_EQ(replayed.verdict, ReplayVerdict::Identical) << describe(replayed);
  EXPECT_EQ(replayed.force.ticks, last_tick);
  EXPECT_EQ(replayed.force.compared, last_tick) << describe(replayed);
  EXPECT_EQ(replayed.force.identical, last_tick) << describe(replayed);
  EXPECT_NE(replayed.summary_json().find("\"force\":{\"ticks\":"), std::string::npos);
}

// A commanded force changed in the file is a difference, found at its tick; a trace without the
// servo's settings, or with force ticks lost, is incomplete and says why.
TEST(Replay, ForceServoDifferencesAndLossesAreReported) {
  const Session s = record_session(temp_dir("replay_force_edit"), 1.0, {}, {}, true);
  ASSERT_EQ(s.gaps, 0u);
  const std::string tampered = s.path + ".tampered.sftrace";
  std::filesystem::copy_file(s.path, tampered);
  rewrite_trace(tampered, {}, [](trace::Record& r) {
    if (r.header.type != trace::RecordType::ForceTick) return;
    ForceTickRecord t = payload_as<ForceTickRecord>(r);
    if (t.tick != 500) return;
    t.commanded.x = std::nextafter(t.commanded.x, 10.0f);  // one unit in the last place
    std::memcpy(r.payload.data(), &t, sizeof t);
  });
  const ReplayResult edited = replay_trace(tampered, 0);
  EXPECT_EQ(edited.verdict, ReplayVerdict::Different) << describe(edited);
  EXPECT_EQ(edited.force.first_difference_tick, 500u) << describe(edited);
  EXPECT_EQ(edited.force.identical + 1, edited.force.compared);
  EXPECT_EQ(edited.compared, edited.identical) << "the haptic blocks are untouched";

  const std::string no_servo = s.path + ".noservo.sftrace";
  std::filesystem::copy_file(s.path, no_servo);
  rewrite_trace(no_servo, [](const trace::Record& r) { return r.header.type == trace::RecordType::ForceServo; });
  const ReplayResult without = replay_trace(no_servo, 0);
  EXPECT_EQ(without.verdict, ReplayVerdict::Incomplete) << describe(without);
  EXPECT_EQ(without.force.compared, 0u);
  EXPECT_NE(without.report().find("no force-servo settings record"), std::string::npos) << describe(without);

  const std::string gap = s.path + ".gap.sftrace";
  std::filesystem::copy_file(s.path, gap);
  rewrite_trace(gap, [](const trace::Record& r) {
    return r.header.type == trace::RecordType::ForceTick && payload_as<ForceTickRecord>(r).tick == 300;
  });
  const ReplayResult lost = replay_trace(gap, 0);
  EXPECT_EQ(lost.verdict, ReplayVerdict::Incomplete) << describe(lost);
  EXPECT_EQ(lost.force.compared, 299u) << describe(lost);
  EXPECT_EQ(lost.force.identical, 299u);
  EXPECT_FALSE(lost.force.not_compared_expected);
  EXPECT_NE(lost.report().find("servo state unknown from force tick 300"), std::string::npos) << describe(lost);
}

// The gap this closes: on the real clock the tracker, fluid and haptic threads interleave as
// the scheduler lets them, so which hand frame and field each haptic tick saw is known only from
// the tick's own record. Three seconds of the threaded pipeline with a live AM -> STM switch
// replay block for block.
TEST(Replay, RealClockThreadedSessionWithLiveModeSwitchReplaysIdentically) {
  Config config;
  for (ThreadSettings* t : {&config.threads.tracker, &config.threads.fluid, &config.threads.haptic,
                            &config.threads.stream}) {
    t->priority = 0;
  }
  config.recorder.directory = temp_dir("replay_real");
  config.recorder.io = "pwrite";
  rt::MonotonicClock clock;
  ScriptedHand hand(clock, 120);
  PalmDragField fluid;
  KernelRenderer renderer(config);
  EmulatedArray array(clock);
  Pipeline pipeline(config, clock, PipelineParts{hand, fluid, renderer, array}, nullptr);
  Recorder recorder(config, pipeline.links(), clock, nullptr);
  ASSERT_EQ(recorder.start().rfind("recording to", 0), 0u);  // from the first tick on
  recorder.start_thread();
  pipeline.start_threads();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  Config live = config;
  live.haptic.mode = "stm";
  pipeline.apply_live_settings(live);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(pipeline.stop(2'000'000'000));  // the fade-out is recorded too
  recorder.stop();
  recorder.stop_thread();
  const std::string path = recorder.path();

  const auto kinds = record_kinds(path);
  EXPECT_EQ(kinds.at(trace::RecordType::HapticSettings), 2);
  int am = 0, stm = 0;
  {
    std::string error;
    auto reader = trace::TraceReader::open(path, error);
    ASSERT_TRUE(reader) << error;
    trace::Record r;
    auto b = std::make_unique<EmittedBlock>();
    while (reader->next(r)) {
      if (!trace::TraceReader::decode(r, *b)) continue;
      am += b->block.mode == HapticMode::AM;
      stm += b->block.mode == HapticMode::STM;
    }
  }
  EXPECT_GT(am, 300);
  EXPECT_GT(stm, 300);

  const ReplayResult r = replay_trace(path, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.verdict, ReplayVerdict::Identical) << describe(r);
  // Both modes' blocks (am, stm > 300 above); how many of the 3,000 ticks ran depends on the
  // machine's load (2,075 under AddressSanitizer on two busy cores), so no more is asked here.
  EXPECT_GT(r.compared, 600u);
  EXPECT_EQ(r.identical, r.compared) << describe(r);
  // Without drops every recorded block is compared: none is left out, whatever the reason.
  if (pipeline.links().trace_blocks.drops.load() == 0 && pipeline.links().blocks_to_stream.drops.load() == 0) {
    EXPECT_EQ(r.compared, r.recorded_blocks) << describe(r);
  }
}

TEST(Replay, ATamperedBlockIsReportedAsADifference) {
  const Session s = record_session(temp_dir("replay_tamper"), 1.0);
  // Make the 500th block's first sample louder (and keep its CRC valid).
  rewrite_trace(s.path, {}, [](trace::Record& r) {
    if (r.header.type != trace::RecordType::Block) return;
    auto b = std::make_unique<EmittedBlock>(payload_as<EmittedBlock>(r));
    if (b->block.sequence != 500) return;
    b->block.samples[0].count = 1;
    b->block.samples[0].foci[0].intensity += 0.25f;
    std::memcpy(r.payload.data(), b.get(), sizeof *b);
  });
  const ReplayResult r = replay_trace(s.path, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_EQ(r.verdict, ReplayVerdict::Different);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.identical + 1, r.compared);
  EXPECT_EQ(r.first_difference_tick, 500u);
  EXPECT_GT(r.first_difference_ns, 0);
  EXPECT_NE(r.report().find("first difference: the block of tick 500"), std::string::npos) << r.report();
}

// Records a full trace ring would have dropped: the replay says which blocks it could not
// compare and why, and never calls the result identical.
TEST(Replay, LostRecordsAreReportedNeverPassedOver) {
  const std::string dir = temp_dir("replay_lost");
  struct Case {
    const char* what;
    std::function<bool(const trace::Record&)> drop;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {"block", [](const trace::Record& r) {
         return r.header.type == trace::RecordType::Block && payload_as<EmittedBlock>(r).block.sequence == 300;
       }, "block record lost (trace ring full)"},
      {"tick", [](const trace::Record& r) {
         return r.header.type == trace::RecordType::HapticTick && payload_as<HapticTickRecord>(r).tick == 300;
       }, "replay state unknown from tick 300: tick records lost"},
      {"field", [](const trace::Record& r) {
         return r.header.type == trace::RecordType::ContactField && payload_as<std::uint64_t>(r) == 30;
       }, "contact field 30 is not in the trace"},
  };
  for (const Case& c : cases) {
    const Session s = record_session(dir + "/" + c.what, 0.8);
    rewrite_trace(s.path, c.drop);
    const ReplayResult r = replay_trace(s.path, 0);
    ASSERT_TRUE(r.error.empty()) << c.what << ": " << r.error;
    EXPECT_EQ(r.verdict, ReplayVerdict::Incomplete) << c.what << ": " << describe(r);
    EXPECT_EQ(r.identical, r.compared) << c.what;
    bool named = false;
    for (const auto& n : r.not_compared) named |= !n.expected && n.reason.find(c.reason) != std::string::npos;
    EXPECT_TRUE(named) << c.what << ": " << describe(r);
  }
}

// Blocks the array refused, and blocks dropped while it was unplugged, are recorded with their
// fate (so they are no silent gap) and compared all the same: they are the haptic output.
TEST(Replay, RefusedAndDiscardedBlocksAreRecordedAndCompared) {
  EmulatedArray::Options small;
  small.fifo_depth = 50;  // 2.5 ms: the third block of the 3 ms lookahead does not fit
  const Session s = record_session(temp_dir("replay_refused"), 1.0, small, [](std::int64_t now, EmulatedArray& a) {
    if (now > 5'400'000'000 && now < 5'500'000'000) a.unplug();
    else a.replug();
  });
  EXPECT_GT(s.refused, 0u);
  EXPECT_GT(s.usb_errors, 0u);
  const ReplayResult r = replay_trace(s.path, 0);
  EXPECT_EQ(r.verdict, ReplayVerdict::Identical) << describe(r);
  EXPECT_GT(r.refused, 0u);
  EXPECT_GT(r.discarded, 0u);
  EXPECT_EQ(r.compared, r.recorded_blocks);
}

TEST(Replay, UnreadableTracesSayWhy) {
  const ReplayResult r = replay_trace("/nonexistent.sftrace", 0);
  EXPECT_EQ(r.verdict, ReplayVerdict::Unreadable);
  EXPECT_NE(r.error.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace sonoflow::daemon
