// Recording and replay: the trace writer (io_uring and pwrite paths) round-trips every record
// type with CRCs, the reader refuses damaged data, and a session recorded on a virtual clock
// replays through the pipeline to the identical output.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
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

// Records `seconds` of stirring on a virtual clock, recording from the pipeline's start.
std::string record_session(const std::string& dir, double seconds, std::uint64_t* gaps = nullptr) {
  Config config;
  config.recorder.directory = dir;
  rt::VirtualClock clock(5'000'000'000);
  ScriptedHand hand(clock, 120);
  PalmDragField fluid;
  KernelRenderer renderer(config);
  EmulatedArray array(clock);
  status::StatusRegion region;
  Pipeline pipeline(config, clock, PipelineParts{hand, fluid, renderer, array}, &region);
  Recorder recorder(config, pipeline.links(), clock, &region);
  recorder.set_origin(clock.now_ns());
  const std::string started = recorder.start();
  EXPECT_TRUE(recorder.recording()) << started;
  const std::int64_t end = clock.now_ns() + static_cast<std::int64_t>(seconds * 1e9);
  while (clock.now_ns() < end) {
    pipeline.run_virtual_until(clock, clock.now_ns() + 20 * kMs);
    recorder.drain_once();
  }
  recorder.stop();
  status::RecorderStatus rs;
  EXPECT_TRUE(region.recorder.lock.load(rs));
  if (gaps) *gaps = rs.gaps;
  pipeline.stop(100 * kMs);
  return recorder.path();
}

TEST(Replay, VirtualClockSessionReplaysToIdenticalOutput) {
  std::uint64_t gaps = 1;
  const std::string path = record_session(temp_dir("replay_same"), 3.0, &gaps);
  EXPECT_EQ(gaps, 0u);
  {  // Every kind of record is in the trace, status snapshots once a second.
    std::string error;
    auto reader = trace::TraceReader::open(path, error);
    ASSERT_TRUE(reader) << error;
    std::map<trace::RecordType, int> kinds;
    trace::Record r;
    while (reader->next(r)) ++kinds[r.header.type];
    EXPECT_FALSE(reader->damaged());
    EXPECT_EQ(kinds[trace::RecordType::Config], 1);
    EXPECT_GE(kinds[trace::RecordType::HandFrame], 359);
    EXPECT_GE(kinds[trace::RecordType::ContactField], 260);
    EXPECT_GE(kinds[trace::RecordType::Block], 2990);
    EXPECT_GE(kinds[trace::RecordType::Status], 3);
  }
  const ReplayResult r = replay_trace(path, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_GE(r.recorded_blocks, 2990u);
  EXPECT_GE(r.compared, r.recorded_blocks - 5);
  EXPECT_EQ(r.identical, r.compared);
  EXPECT_TRUE(r.ok);
}

TEST(Replay, ATamperedBlockIsReportedAsADifference) {
  const std::string path = record_session(temp_dir("replay_tamper"), 1.0);
  // Rewrite the 500th output block with a louder first sample (and a valid CRC).
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekg(sizeof(trace::TraceHeader));
  int blocks = 0;
  for (;;) {
    const std::streamoff at = f.tellg();
    trace::RecordHeader h;
    if (!f.read(reinterpret_cast<char*>(&h), sizeof h)) break;
    std::vector<std::uint8_t> payload(trace::padded(h.size));
    f.read(reinterpret_cast<char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    if (h.type != trace::RecordType::Block || ++blocks != 500) continue;
    EmittedBlock b;
    std::memcpy(&b, payload.data(), sizeof b);
    b.block.samples[0].count = 1;
    b.block.samples[0].foci[0].intensity += 0.25f;
    std::memcpy(payload.data(), &b, sizeof b);
    h.crc = drivers::crc32c({payload.data(), h.size});
    f.seekp(at);
    f.write(reinterpret_cast<const char*>(&h), sizeof h);
    f.write(reinterpret_cast<const char*>(payload.data()), static_cast<std::streamsize>(payload.size()));
    break;
  }
  f.close();
  ASSERT_EQ(blocks, 500);
  const ReplayResult r = replay_trace(path, 0);
  ASSERT_TRUE(r.error.empty()) << r.error;
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.identical + 1, r.compared);
  EXPECT_GT(r.first_mismatch_ns, 0);
}

TEST(Replay, UnreadableTracesSayWhy) {
  EXPECT_NE(replay_trace("/nonexistent.sftrace", 0).error.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace sonoflow::daemon
