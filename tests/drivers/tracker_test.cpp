// The tracker path on a virtual clock: VirtualTracker (scripted or recorded hands) -> in-process
// transport -> TrackerDriver -> HandFrame in the array frame, SI, host time.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <vector>

#include "drivers/emulator/recorded_hands.hpp"
#include "drivers/protocol/message.hpp"
#include "tests/drivers/pipeline_support.hpp"
#include "tests/support/allocation_counter.hpp"

namespace sonoflow::drivers {
namespace {

using test::Pipeline;

EmulatedDevicesConfig tracker_config(emulator::HandMotion motion, std::uint16_t rate_hz = 120) {
  EmulatedDevicesConfig c;
  c.hands.motion = motion;
  c.tracker_driver.rate_hz = rate_hz;
  c.tracker.drift_ppm = -35;  // the host must recover this from TIME_PINGs
  return c;
}

// Everything the pipeline's consumer collected so far (and forget it).
std::vector<HandFrame> drain(Pipeline& p) {
  std::vector<HandFrame> frames;
  frames.swap(p.frames);
  return frames;
}

float distance(const Vec3f& a, const Vec3f& b) {
  return std::sqrt((a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y) + (a.z - b.z) * (a.z - b.z));
}

// Script time (s since the tracker started streaming) of a frame, from its host capture time.
double script_time(Pipeline& p, const HandFrame& f) {
  double t = 0;
  p.devices->with_tracker([&](emulator::VirtualTracker& tr) {
    const double capture_us = double(tr.device_clock().count_at(f.capture_time_ns));
    t = (capture_us - double(tr.stream_start_us())) / 1e6;
  });
  return t;
}

struct Streaming : ::testing::Test {
  void start(Pipeline& p) {
    ASSERT_EQ(p.tracker().connect(), DriverError::Ok);
    ASSERT_EQ(p.tracker().start_streaming(), DriverError::Ok);
  }
};

TEST_F(Streaming, FramesArriveInTheArrayFrameAtTheScriptedPositions) {
  Pipeline p(tracker_config(emulator::HandMotion::StirCircle));
  start(p);
  p.run_ms(2'000);
  const std::vector<HandFrame> frames = drain(p);
  // 120 Hz for 2 s, less the 6 ms capture-to-publish latency.
  ASSERT_GE(frames.size(), 238u);
  ASSERT_LE(frames.size(), 240u);
  emulator::ScriptedHands truth({emulator::HandMotion::StirCircle}, emulator::default_tracker_mount());
  float worst = 0;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const HandFrame& f = frames[i];
    if (i > 0) {
      ASSERT_EQ(f.frame_id, frames[i - 1].frame_id + 1);
    }
    ASSERT_EQ(f.hand_count, 1);
    const double t = script_time(p, f);
    for (HandJoint j : {HandJoint::Palm, HandJoint::IndexTip, HandJoint::ThumbTip, HandJoint::Elbow}) {
      Vec3f expected;
      ASSERT_TRUE(truth.joint_in_array(t, 0, j, expected));
      worst = std::max(worst, distance(f.hands[0].joint(j).position, expected));
      EXPECT_TRUE(f.hands[0].joint(j).valid);
    }
    // Capture precedes arrival by the tracker's latency (6 ms) plus up to one pump step.
    EXPECT_GE(f.receive_time_ns - f.capture_time_ns, 5'900'000);
    EXPECT_LE(f.receive_time_ns - f.capture_time_ns, 7'100'000);
  }
  // Host capture times recovered within 1 ms of the truth means positions within
  // (stir speed ~0.13 m/s) x 1 ms; the conversion itself is exact to float precision.
  EXPECT_LT(worst, 2e-4f);
  // The palm faces the array (-z) and moves with the scripted velocity (|v| = 2 pi r / T).
  const HandPose& h = frames.back().hands[0];
  const float speed = std::sqrt(h.palm_velocity.x * h.palm_velocity.x + h.palm_velocity.y * h.palm_velocity.y);
  EXPECT_NEAR(speed, 2.0f * 3.14159265f * 0.04f / 2.0f, 0.005f);
  EXPECT_NEAR(h.palm_velocity.z, 0.0f, 1e-3f);
  EXPECT_EQ(h.chirality, Chirality::Right);
  EXPECT_NEAR(h.joint(HandJoint::IndexTip).radius, 7e-3f, 1e-6f);
  const TrackerDriverCounters c = p.tracker().counters();
  EXPECT_EQ(c.dropped_frames, 0u);
  EXPECT_EQ(c.frames_rejected, 0u);
  EXPECT_EQ(c.ring_full, 0u);
  EXPECT_GE(c.statuses, 19u);  // STATUS every 100 ms
}

TEST_F(Streaming, HostCaptureTimesTrackTheDriftingTrackerClock) {
  Pipeline p(tracker_config(emulator::HandMotion::Hover));
  start(p);
  p.run_ms(5'000);
  const std::vector<HandFrame> frames = drain(p);
  ASSERT_FALSE(frames.empty());
  // The truth: the host time at which the device clock showed the frame's capture time.
  std::int64_t worst = 0;
  for (const HandFrame& f : frames) {
    std::int64_t truth = 0;
    p.devices->with_tracker([&](emulator::VirtualTracker& tr) {
      const std::uint64_t capture_us = tr.device_clock().count_at(f.capture_time_ns);
      truth = tr.device_clock().host_ns_at(capture_us);
    });
    worst = std::max(worst, std::abs(f.capture_time_ns - truth));
  }
  EXPECT_LT(worst, 2'000);  // 2 us: the clock's resolution, despite 35 ppm of drift
}

TEST_F(Streaming, NinetyHertzMode) {
  Pipeline p(tracker_config(emulator::HandMotion::Hover, 90));
  start(p);
  p.run_ms(1'000);
  const auto frames = drain(p);
  EXPECT_GE(frames.size(), 89u);
  EXPECT_LE(frames.size(), 90u);
  p.devices->with_tracker([](emulator::VirtualTracker& t) { EXPECT_EQ(t.rate_hz(), 90); });
}

TEST_F(Streaming, TwoHandsKeepTheirSidesAndIds) {
  Pipeline p(tracker_config(emulator::HandMotion::TwoHands));
  start(p);
  p.run_ms(500);
  const auto frames = drain(p);
  ASSERT_FALSE(frames.empty());
  const std::uint32_t left_id = frames.front().hands[0].hand_id;
  for (const HandFrame& f : frames) {
    ASSERT_EQ(f.hand_count, 2);
    EXPECT_EQ(f.hands[0].chirality, Chirality::Left);
    EXPECT_EQ(f.hands[1].chirality, Chirality::Right);
    EXPECT_LT(f.hands[0].joint(HandJoint::Palm).position.x, f.hands[1].joint(HandJoint::Palm).position.x);
    EXPECT_EQ(f.hands[0].hand_id, left_id);
    EXPECT_NE(f.hands[1].hand_id, left_id);
  }
}

TEST_F(Streaming, PressDownReachesItsDepthAndSweepItsWidth) {
  for (emulator::HandMotion m : {emulator::HandMotion::PressDown, emulator::HandMotion::Sweep}) {
    Pipeline p(tracker_config(m));
    start(p);
    p.run_ms(2'100);  // one full period (2 s)
    float lo_z = 1, hi_z = -1, lo_x = 1, hi_x = -1;
    for (const HandFrame& f : drain(p)) {
      const Vec3f palm = f.hands[0].joint(HandJoint::Palm).position;
      lo_z = std::min(lo_z, palm.z), hi_z = std::max(hi_z, palm.z);
      lo_x = std::min(lo_x, palm.x), hi_x = std::max(hi_x, palm.x);
    }
    if (m == emulator::HandMotion::PressDown) {
      EXPECT_NEAR(hi_z, 0.20f, 1e-3f);
      EXPECT_NEAR(lo_z, 0.16f, 1e-3f);  // pressed 40 mm towards the array
    } else {
      EXPECT_NEAR(lo_x, -0.04f, 1e-3f);
      EXPECT_NEAR(hi_x, 0.04f, 1e-3f);
    }
  }
}

TEST_F(Streaming, LeavingTheViewEmptiesFramesAndReturningGivesANewId) {
  EmulatedDevicesConfig c = tracker_config(emulator::HandMotion::LeaveView);
  c.hands.leave_after_s = 0.5f;
  c.hands.return_after_s = 1.0f;
  Pipeline p(c);
  start(p);
  p.run_ms(1'500);
  std::uint32_t first_id = 0, second_id = 0;
  int empty = 0;
  for (const HandFrame& f : drain(p)) {
    if (f.hand_count == 0) {
      ++empty;
    } else if (empty == 0) {
      first_id = f.hands[0].hand_id;
    } else {
      second_id = f.hands[0].hand_id;
    }
  }
  EXPECT_NEAR(empty, 60, 2);  // 0.5 s at 120 Hz
  EXPECT_NE(first_id, 0u);
  EXPECT_NE(second_id, 0u);
  EXPECT_NE(first_id, second_id);
}

TEST_F(Streaming, InjectedFaultsAreDetected) {
  Pipeline p(tracker_config(emulator::HandMotion::Hover));
  start(p);
  p.run_ms(200);
  (void)drain(p);
  // Frames lost in transit show up as tracking_frame_id gaps.
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.lose_in_transit(3); });
  p.run_ms(200);
  EXPECT_EQ(p.tracker().counters().dropped_frames, 3u);
  // Corrupted frames fail their CRC: rejected, and their ids become gaps too.
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.corrupt_next_in(2); });
  p.run_ms(200);
  EXPECT_EQ(p.tracker().counters().frames_rejected, 2u);
  EXPECT_EQ(p.tracker().rejections()[CodecError::BadCrc], 2u);  // counted under their reason
  EXPECT_EQ(p.tracker().rejections().total_rejected(), 2u);
  EXPECT_EQ(p.tracker().counters().dropped_frames, 5u);
  // Tracking loss: empty frames for the duration, then the hand comes back with a new id.
  HandFrame before;
  ASSERT_TRUE(p.tracker().latest_frame(before));
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.lose_tracking(100'000); });
  p.run_ms(300);
  int empty = 0;
  std::uint32_t after_id = 0;
  for (const HandFrame& f : drain(p)) {
    if (f.hand_count == 0) ++empty;
    else after_id = f.hands[0].hand_id;
  }
  EXPECT_NEAR(empty, 12, 1);
  EXPECT_NE(after_id, before.hands[0].hand_id);
  TrackerStatus status;
  ASSERT_TRUE(p.tracker().status(status));
  EXPECT_EQ(status.tracking_losses, 1u);
  // Jitter: capture instants move, frames stay in order and complete.
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.set_jitter_us(1'500); });
  p.run_ms(500);
  const auto frames = drain(p);
  std::int64_t min_dt = INT64_MAX, max_dt = 0;
  for (std::size_t i = 1; i < frames.size(); ++i) {
    ASSERT_EQ(frames[i].frame_id, frames[i - 1].frame_id + 1);
    const std::int64_t dt = frames[i].capture_time_ns - frames[i - 1].capture_time_ns;
    min_dt = std::min(min_dt, dt), max_dt = std::max(max_dt, dt);
  }
  EXPECT_LT(min_dt, 8'333'333 - 500'000);
  EXPECT_GT(max_dt, 8'333'333 + 500'000);
  EXPECT_EQ(p.tracker().counters().dropped_frames, 5u);
}

TEST_F(Streaming, SlowConsumerLosesNewestFramesCountedNotBlocked) {
  Pipeline p(tracker_config(emulator::HandMotion::Hover));
  p.collect_frames = false;
  start(p);
  p.run_ms(1'000);  // 120 frames into a 32-frame ring, nobody reading
  EXPECT_EQ(p.tracker().counters().ring_full, 120u - TrackerDriver::kFrameRing);
  HandFrame latest;
  ASSERT_TRUE(p.tracker().latest_frame(latest));  // the mailbox always has the newest
  EXPECT_EQ(latest.frame_id, p.tracker().counters().frames);
}

TEST_F(Streaming, ConsumerCallsDoNotAllocate) {
  Pipeline p(tracker_config(emulator::HandMotion::StirCircle));
  start(p);
  p.run_ms(100);
  std::uint64_t allocations = 0, got = 0;
  HandFrame f;
  TrackerStatus s;
  p.collect_frames = false;
  for (int i = 0; i < 200; ++i) {
    p.run_ms(1);
    sonoflow::test::AllocationScope scope;
    while (p.tracker().try_pop_frame(f)) ++got;
    (void)p.tracker().latest_frame(f);
    (void)p.tracker().status(s);
    (void)p.tracker().clock_map();
    allocations += scope.allocations();
  }
  EXPECT_EQ(allocations, 0u);
  EXPECT_GT(got, 20u);
}

TEST_F(Streaming, MountOverrideReplacesDeviceCalibration) {
  EmulatedDevicesConfig c = tracker_config(emulator::HandMotion::Hover);
  TrackerCalibration shifted = emulator::default_tracker_mount();
  shifted.translation_mm[0] += 10;  // the config says the tracker sits 10 mm further along x
  c.tracker_driver.mount_override = shifted;
  Pipeline p(c);
  start(p);
  p.run_ms(100);
  HandFrame f;
  ASSERT_TRUE(p.tracker().latest_frame(f));
  Vec3f expected;
  emulator::ScriptedHands truth({emulator::HandMotion::Hover}, emulator::default_tracker_mount());
  ASSERT_TRUE(truth.palm_in_array(script_time(p, f), 0, expected));
  EXPECT_NEAR(f.hands[0].joint(HandJoint::Palm).position.x - expected.x, 0.010f, 1e-4f);
}

// A tracker may report up to four hands; the host carries two: the two most confident, in
// order of confidence, equal confidences in the wire's order, and the rest counted.
TEST(HandFrameConversion, KeepsTheMostConfidentHands) {
  HandFrameMsg m;
  m.n_hands = 4;
  const float confidence[4] = {0.2f, 0.9f, 0.5f, 0.9f};
  for (std::uint32_t k = 0; k < 4; ++k) {
    m.hands[k].hand_id = 10 + k;
    m.hands[k].confidence = confidence[k];
  }
  HandFrame out;
  const int dropped = convert_hand_frame(m, MountTransform{}, ClockMap{}, 1'000, out);
  EXPECT_EQ(dropped, 2);
  ASSERT_EQ(out.hand_count, 2);
  EXPECT_EQ(out.hands[0].hand_id, 11u);
  EXPECT_EQ(out.hands[1].hand_id, 13u);
  m.n_hands = 3;  // the second 0.9 is not reported: 0.5 comes next
  EXPECT_EQ(convert_hand_frame(m, MountTransform{}, ClockMap{}, 1'000, out), 1);
  EXPECT_EQ(out.hands[1].hand_id, 12u);
}

TEST(TrackerReplay, RecordedFramesReplayThroughTheTracker) {
  // Record 1 s of a stirring hand as the bus carried it, then replay it at 90 Hz.
  emulator::Recording recording;
  {
    Pipeline p(tracker_config(emulator::HandMotion::StirCircle));
    ASSERT_EQ(p.tracker().connect(), DriverError::Ok);
    ASSERT_EQ(p.tracker().start_streaming(), DriverError::Ok);
    emulator::ScriptedHands script({emulator::HandMotion::StirCircle}, emulator::default_tracker_mount());
    for (int i = 0; i < 120; ++i) {
      HandFrameMsg m;
      m.frame_id = m.tracking_frame_id = std::uint64_t(i + 1);
      m.capture_time_us = 1'000'000 + std::uint64_t(i) * 1'000'000 / 120;
      m.publish_time_us = m.capture_time_us + 6'000;
      emulator::HandSnapshot s;
      script.hands_at(i / 120.0, s);
      m.n_hands = std::uint8_t(s.count);
      m.hands = s.hands;
      recording.frames.push_back(m);
    }
  }
  const std::string path =
      (std::filesystem::temp_directory_path() / "sonoflow_replay_test.htk").string();
  ASSERT_TRUE(emulator::save_recording(path, recording));
  EmulatedDevicesConfig c = tracker_config(emulator::HandMotion::Hover, 90);
  c.recording_path = path;
  Pipeline p(c);
  ASSERT_NE(p.devices, nullptr);
  ASSERT_EQ(p.tracker().connect(), DriverError::Ok);
  ASSERT_EQ(p.tracker().start_streaming(), DriverError::Ok);
  p.run_ms(900);
  std::filesystem::remove(path);
  const auto frames = drain(p);
  ASSERT_GE(frames.size(), 80u);
  emulator::ScriptedHands truth({emulator::HandMotion::StirCircle}, emulator::default_tracker_mount());
  float worst = 0;
  for (const HandFrame& f : frames) {
    // Sample-and-hold: the replayed hand is the recorded one at or just before the script
    // time (which we know to a microsecond or so, hence a look at the neighbours too).
    const double i = std::floor(script_time(p, f) * 120.0);
    float best = 1;
    for (double k : {i - 1, i, i + 1}) {
      Vec3f expected;
      ASSERT_TRUE(truth.palm_in_array(std::fmod(k, 120.0) / 120.0, 0, expected));
      best = std::min(best, distance(f.hands[0].joint(HandJoint::Palm).position, expected));
    }
    worst = std::max(worst, best);
  }
  EXPECT_LT(worst, 1e-4f);
}

TEST(TrackerReplay, MalformedRecordingIsRejected) {
  emulator::Recording r;
  std::vector<std::uint8_t> bytes(100, 0xAB);
  EXPECT_NE(emulator::parse_recording(bytes, r), CodecError::Ok);
  EmulatedDevicesConfig c;
  c.recording_path = "/nonexistent/recording.htk";
  rt::VirtualClock clock;
  EXPECT_EQ(make_emulated_devices(clock, c), nullptr);
}

TEST(TrackerLink, UnplugIsReportedAndReplugReconnects) {
  Pipeline p(tracker_config(emulator::HandMotion::Hover));
  ASSERT_EQ(p.tracker().connect(), DriverError::Ok);
  ASSERT_EQ(p.tracker().start_streaming(), DriverError::Ok);
  p.run_ms(300);
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.unplug(); });
  p.run_ms(300);
  EXPECT_EQ(p.tracker().link_state(), LinkState::Disconnected);
  EXPECT_EQ(p.tracker().counters().links_lost, 1u);
  (void)drain(p);
  p.devices->with_tracker([](emulator::VirtualTracker& t) { t.plug(); });
  p.run_ms(300);
  EXPECT_EQ(p.tracker().link_state(), LinkState::Streaming);
  EXPECT_EQ(p.tracker().counters().reconnects, 1u);
  const auto frames = drain(p);
  EXPECT_GE(frames.size(), 20u);
}

}  // namespace
}  // namespace sonoflow::drivers
