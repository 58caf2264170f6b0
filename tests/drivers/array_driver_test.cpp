// ArrayDriver over the in-process transport on a virtual clock: identity and calibration,
// configuration, loss and reconnection, stalls, corrupted status, DRIVE mode with an acoustic
// check of what the array emitted.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <numbers>

#include "drivers/array/drive_encoder.hpp"
#include "kernels/acoustics/field.hpp"
#include "kernels/acoustics/focus_solver.hpp"
#include "tests/drivers/pipeline_support.hpp"

namespace sonoflow::drivers {
namespace {

using test::EmissionLog;
using test::Pipeline;

TEST(ArrayDriver, ConnectReadsIdentityAndTheCalibratedTable) {
  Pipeline p;
  ASSERT_EQ(p.array().connect(), DriverError::Ok);
  EXPECT_EQ(p.array().link_state(), LinkState::Connected);
  EXPECT_EQ(std::string(p.array().info().serial.data()), "SFA-EMU-0001");
  EXPECT_EQ(p.array().info().fifo_depth, 800u);
  const acoustics::ArrayGeometry g =
      acoustics::ArrayGeometry::from_table(p.array().transducer_table());
  const acoustics::ArrayGeometry grid = acoustics::ArrayGeometry::grid({});
  ASSERT_EQ(g.size(), 256);
  EXPECT_LT((g.positions - grid.positions).cwiseAbs().maxCoeff(), 1e-6f);  // 1 um wire units
  EXPECT_LT((g.normals - grid.normals).cwiseAbs().maxCoeff(), 1e-4f);
  p.devices->with_array([&](emulator::VirtualArray& a) {
    for (int i = 0; i < 256; ++i) {
      EXPECT_FLOAT_EQ(g.phase_offset[i], a.table()[i].phase_corr * 2 * std::numbers::pi_v<float> / 256);
      EXPECT_FLOAT_EQ(g.amplitude_gain[i], a.table()[i].amp_corr_permille / 1000.0f);
    }
  });
  // The clock map matches the device's own tick (virtual clock: exact round trips).
  const ClockMap m = p.array().clock_map();
  ASSERT_TRUE(m.valid());
  p.devices->with_array([&](emulator::VirtualArray& a) {
    EXPECT_NEAR(m.device_at(p.clock.now_ns()), double(a.device_tick()) + 0.5, 0.51);
  });
}

TEST(ArrayDriver, SetupCallsCheckTheirPreconditions) {
  Pipeline p;
  EXPECT_EQ(p.array().configure({}), DriverError::NotConnected);
  EXPECT_EQ(p.array().start_streaming(), DriverError::NotConnected);
  ASSERT_EQ(p.array().connect(), DriverError::Ok);
  StreamConfig bad;
  bad.tick_div = 0;
  EXPECT_EQ(p.array().configure(bad), DriverError::BadArgument);
  bad.tick_div = 2;
  bad.mode = StreamMode::None;
  EXPECT_EQ(p.array().configure(bad), DriverError::BadArgument);
  EXPECT_EQ(p.array().arm(), DriverError::Transfer);  // the device stalls ARM before a config
  FocalBlock b;
  EXPECT_FALSE(p.array().submit(b, 0));  // not streaming: refused, counted
  EXPECT_EQ(p.array().counters().submit_not_streaming, 1u);
}

TEST(ArrayDriver, NoDeviceMeansNoConnection) {
  Pipeline p;
  p.devices->with_array([](emulator::VirtualArray& a) { a.unplug(); });
  EXPECT_EQ(p.array().connect(), DriverError::NoDevice);
  EXPECT_EQ(p.array().link_state(), LinkState::Disconnected);
}

// Hot-unplug mid-stream: reported, not fatal; replug: maintain() reconnects and streaming
// resumes on the new session and the restarted device clock.
TEST(ArrayDriver, UnplugMidStreamIsReportedAndReplugResumesStreaming) {
  Pipeline p;
  EmissionLog log;
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&log); });
  StreamConfig c;
  p.start_array(c);
  p.run_ms(500);
  const std::uint32_t epoch = p.array().stream_epoch();
  p.devices->with_array([](emulator::VirtualArray& a) { a.unplug(); });
  p.run_ms(1);  // Lost at once (a maintain() in this step may already have handled it)
  EXPECT_NE(p.array().link_state(), LinkState::Streaming);
  EXPECT_EQ(p.array().counters().links_lost, 1u);
  FocalBlock b;
  EXPECT_FALSE(p.array().submit(b, 0));
  p.run_ms(300);  // maintain() runs: cleans up, finds no device
  EXPECT_EQ(p.array().link_state(), LinkState::Disconnected);
  EXPECT_EQ(p.array().counters().links_lost, 1u);
  const std::uint64_t played_before = log.played;
  p.devices->with_array([](emulator::VirtualArray& a) { a.plug(); });
  p.run_ms(300);
  EXPECT_EQ(p.array().link_state(), LinkState::Streaming);
  EXPECT_EQ(p.array().counters().reconnects, 1u);
  EXPECT_NE(p.array().stream_epoch(), epoch);
  p.run_ms(1'000);
  EXPECT_GT(log.played, played_before + 19'000);
  EXPECT_EQ(log.mismatches, 0u);
  ArrayStatus s;
  ASSERT_TRUE(p.array().status(s));
  EXPECT_EQ(s.underruns, 0u);  // a fresh session on the replugged device
  EXPECT_EQ(s.state, ArrayState::Emitting);
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(nullptr); });
}

TEST(ArrayDriver, StalledStreamEndpointIsClearedByMaintain) {
  Pipeline p;
  p.start_array({});
  p.run_ms(200);
  p.devices->with_array([](emulator::VirtualArray& a) { a.stall_endpoint(kArrayEpStreamOut); });
  p.run_ms(150);
  EXPECT_GE(p.array().counters().out_errors, 1u);
  const std::uint64_t sent = p.array().counters().blocks_sent;
  p.run_ms(500);
  EXPECT_GT(p.array().counters().blocks_sent, sent + 400);  // flowing again
}

TEST(ArrayDriver, CorruptedStatusIsRejectedAndCounted) {
  Pipeline p;
  p.start_array({});
  p.run_ms(100);
  p.devices->with_array([](emulator::VirtualArray& a) { a.corrupt_next_in(3); });
  p.run_ms(100);
  EXPECT_EQ(p.array().counters().statuses_rejected, 3u);
  EXPECT_EQ(p.array().rejections()[CodecError::BadCrc], 3u);
}

TEST(ArrayDriver, DisconnectLeavesTheArraySilent) {
  Pipeline p;
  p.start_array({});
  p.run_ms(100);
  p.array().disconnect();
  p.devices->with_array([](emulator::VirtualArray& a) {
    EXPECT_EQ(a.status().state, ArrayState::Idle);
    EXPECT_EQ(a.status().fifo_level, 0u);
  });
}

// DRIVE mode: the host computes the phases of all 256 transducers for a moving focus; the
// array emits them; the field of the emitted drive (kernels/acoustics, Eq. 2.12, with the
// device's calibration) peaks at the intended focus.
TEST(ArrayDriver, DriveModeEmissionFocusesWhereThePlanSaid) {
  Pipeline p;
  struct Capture final : emulator::EmissionObserver {
    std::vector<std::pair<std::uint64_t, std::vector<std::uint8_t>>> samples;
    void on_emit(const emulator::EmittedSample& s) override {
      if (s.kind == emulator::EmissionKind::Played && s.tick % 400 == 0)
        samples.emplace_back(s.tick, std::vector<std::uint8_t>(s.drive.begin(), s.drive.end()));
    }
  } capture;
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(&capture); });
  StreamConfig c;
  c.mode = StreamMode::Drive;
  p.start_array(c);
  const acoustics::ArrayGeometry geometry =
      acoustics::ArrayGeometry::from_table(p.array().transducer_table());
  const acoustics::TransducerModel model;
  const DriveEncoder encoder(geometry, model.wavenumber());
  // The focus the plan asks for at device tick t: a 3 cm circle at 15 cm.
  const auto focus_at = [](std::uint64_t tick) {
    const float a = float(tick % 40'000) / 40'000.0f * 2 * std::numbers::pi_v<float>;
    return Vec3f{0.03f * std::cos(a), 0.03f * std::sin(a), 0.15f};
  };
  DriveBlock block;
  for (int ms = 0; ms < 300; ++ms) {
    p.clock.advance(rt::kNsPerMs);
    const ClockMap map = p.array().clock_map();
    while (auto tick = p.pacer.next_block(map.device_at(p.clock.now_ns()))) {
      FocalBlock plan;
      for (int i = 0; i < kSamplesPerBlock; ++i) {
        plan.samples[i].count = 1;
        plan.samples[i].foci[0] = {focus_at(*tick + 2u * std::uint64_t(i)), 0.8f};
      }
      encoder.encode_block(plan, *tick, 2, block);
      ASSERT_TRUE(p.array().submit(block));
    }
    p.devices->pump();
  }
  p.devices->with_array([&](emulator::VirtualArray& a) { a.set_observer(nullptr); });
  ArrayStatus s;
  ASSERT_TRUE(p.array().status(s));
  EXPECT_EQ(s.underruns, 0u);
  EXPECT_EQ(s.rejected_blocks, 0u);
  ASSERT_GE(capture.samples.size(), 25u);
  const acoustics::FieldModel field(geometry, model);
  acoustics::Drive q(256), reference(256);
  for (const auto& [tick, bytes] : capture.samples) {
    for (int i = 0; i < 256; ++i)  // wire: phase 2 pi / 256, amplitude linear 0..255
      q[i] = std::polar(bytes[2 * i + 1] / 255.0f, 2 * std::numbers::pi_v<float> * bytes[2 * i] / 256.0f);
    const Vec3f f = focus_at(tick);
    const Eigen::Vector3f target(f.x, f.y, f.z);
    // Same phases as the acoustics reference solver, to within one 8-bit step.
    acoustics::focus_drive(field, target, reference);
    for (int i = 0; i < 256; ++i) {
      const float d = std::arg(q[i] / reference[i]);
      ASSERT_LT(std::abs(d), 2 * std::numbers::pi_v<float> / 256 + 1e-4f);
    }
    // The pressure peaks at the target: 5 mm to either side it is clearly lower.
    const float at = std::abs(field.pressure(target, q));
    for (const Eigen::Vector3f& off : {Eigen::Vector3f(0.005f, 0, 0), Eigen::Vector3f(0, 0.005f, 0)}) {
      EXPECT_LT(std::abs(field.pressure(target + off, q)), 0.8f * at);
    }
    // And reaches what a perfectly phased 0.8-amplitude drive gives (within 8-bit quantisation).
    EXPECT_GT(at, 0.95f * 0.8f * std::abs(field.pressure(target, reference)));
  }
}

TEST(DriveEncoder, SeveralFociAreSuperposedAndSilenceIsSilent) {
  const acoustics::ArrayGeometry g = acoustics::ArrayGeometry::grid({});
  const acoustics::TransducerModel model;
  const DriveEncoder encoder(g, model.wavenumber());
  std::vector<std::uint8_t> out(512);
  FocalSample silent;
  encoder.encode_sample(silent, out);
  for (std::uint8_t b : out) EXPECT_EQ(b, 0);
  FocalSample two;
  two.count = 2;
  two.foci[0] = {{-0.03f, 0, 0.15f}, 1.0f};
  two.foci[1] = {{0.03f, 0, 0.15f}, 1.0f};
  encoder.encode_sample(two, out);
  const acoustics::FieldModel field(g, model);
  acoustics::Drive q(256);
  for (int i = 0; i < 256; ++i)
    q[i] = std::polar(out[2 * i + 1] / 255.0f, 2 * std::numbers::pi_v<float> * out[2 * i] / 256.0f);
  const float a = std::abs(field.pressure({-0.03f, 0, 0.15f}, q));
  const float b = std::abs(field.pressure({0.03f, 0, 0.15f}, q));
  const float between = std::abs(field.pressure({0, 0, 0.15f}, q));
  EXPECT_NEAR(a / b, 1.0f, 0.1f);  // symmetric foci, equal pressure
  EXPECT_GT(a, 2.0f * between);
}

}  // namespace
}  // namespace sonoflow::drivers
