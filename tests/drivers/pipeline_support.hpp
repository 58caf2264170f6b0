#pragma once
// Helpers for pipeline tests on emulated devices and a virtual clock: the test plays the
// daemon's stream thread (pacer + submit, one step per millisecond) and supervisor (maintain),
// and pumps the in-process transports between clock steps.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "drivers/array/stream_pacer.hpp"
#include "drivers/devices.hpp"
#include "rt/clock.hpp"

namespace sonoflow::drivers::test {

// Sample content that encodes its own tick, so an observer can tell whether each sample
// played at the tick it was stamped with: x = tick mod 30000 (25 um units), y = tick / 30000,
// intensity = 1 + tick mod 250 (wire units).
inline Focus focus_for_tick(std::uint64_t tick) {
  Focus f;
  f.position = {float(tick % 30000) * kFocusUnitM, float((tick / 30000) % 30000) * kFocusUnitM, 0.15f};
  f.intensity = float(1 + tick % 250) / 255.0f;
  return f;
}
inline bool focus_matches_tick(const WireFocus& w, std::uint64_t tick) {
  return w.x == std::int16_t(tick % 30000) && w.y == std::int16_t((tick / 30000) % 30000) &&
         w.intensity == std::uint8_t(1 + tick % 250);
}

// Records what the virtual array emitted and checks the tick-encoded content on the fly.
struct EmissionLog final : emulator::EmissionObserver {
  std::uint64_t played = 0, held = 0, faded = 0, mismatches = 0, out_of_order = 0;
  std::uint64_t last_tick = 0;
  std::uint64_t first_held_tick = 0, last_held_tick = 0, first_fade_tick = 0, last_fade_tick = 0;
  std::vector<float> fade_gains;
  std::vector<std::uint64_t> resume_ticks;  // first Played tick after a hold or fade
  bool check_content = true;
  emulator::EmissionKind previous = emulator::EmissionKind::Played;

  void on_emit(const emulator::EmittedSample& s) override {
    if (s.tick <= last_tick && played + held + faded > 0) ++out_of_order;
    last_tick = s.tick;
    switch (s.kind) {
      case emulator::EmissionKind::Played:
        ++played;
        if (check_content && (s.n_foci < 1 || !focus_matches_tick(s.foci[0], s.tick))) ++mismatches;
        if (previous != emulator::EmissionKind::Played) resume_ticks.push_back(s.tick);
        break;
      case emulator::EmissionKind::Held:
        if (held++ == 0) first_held_tick = s.tick;
        last_held_tick = s.tick;
        break;
      case emulator::EmissionKind::Fading:
        if (faded++ == 0) first_fade_tick = s.tick;
        last_fade_tick = s.tick;
        fade_gains.push_back(s.gain);
        break;
    }
    previous = s.kind;
  }
};

// One emulated pipeline on a virtual clock, without service threads.
struct Pipeline {
  rt::VirtualClock clock{1'000'000'000};
  std::unique_ptr<EmulatedDevices> devices;
  StreamPacer pacer;
  std::uint32_t epoch = 0;
  std::uint64_t statuses_seen = 0;
  std::int64_t last_maintain_ns = 0;
  // The tracker consumer: every frame popped after each step lands here (when collecting).
  bool collect_frames = true;
  std::vector<HandFrame> frames;

  explicit Pipeline(EmulatedDevicesConfig config = {}, PacerConfig pacer_config = {})
      : pacer(pacer_config) {
    config.service_threads = false;
    devices = make_emulated_devices(clock, config);
  }
  ArrayDriver& array() { return devices->array(); }
  TrackerDriver& tracker() { return devices->tracker(); }

  // The stream thread's work for one wake-up: submit every block the pacer asks for.
  // Returns the number of blocks submitted.
  int stream_step() {
    ArrayDriver& a = array();
    if (a.link_state() != LinkState::Streaming) return 0;
    if (a.stream_epoch() != epoch) {
      epoch = a.stream_epoch();
      pacer.restart();
    }
    if (a.status_count() != statuses_seen) {
      statuses_seen = a.status_count();
      ArrayStatus s;
      if (a.status(s)) pacer.observe_status(s);
    }
    const ClockMap map = a.clock_map();
    const std::uint8_t div = a.tick_div();
    int sent = 0;
    while (auto tick = pacer.next_block(map.device_at(clock.now_ns()))) {
      FocalBlock b;
      b.mode = HapticMode::STM;
      b.start_time_ns = map.host_at(double(*tick));
      for (int i = 0; i < kSamplesPerBlock; ++i) {
        b.samples[i].count = 1;
        b.samples[i].foci[0] = focus_for_tick(*tick + std::uint64_t(i) * div);
      }
      if (a.submit(b, *tick)) ++sent;
    }
    return sent;
  }

  // Advances virtual time by `ms` milliseconds in 1 ms steps; the stream thread runs each step
  // unless `stalled`, the supervisor every 100 ms.
  void run_ms(int ms, bool stalled = false) {
    for (int i = 0; i < ms; ++i) {
      clock.advance(rt::kNsPerMs);
      if (!stalled) stream_step();
      devices->pump();
      HandFrame f;
      while (collect_frames && tracker().try_pop_frame(f)) frames.push_back(f);
      if (clock.now_ns() - last_maintain_ns >= 100 * rt::kNsPerMs) {
        last_maintain_ns = clock.now_ns();
        array().maintain();
        tracker().maintain();
      }
    }
  }

  void start_array(const StreamConfig& config) {
    ASSERT_EQ(array().connect(), DriverError::Ok);
    ASSERT_EQ(array().configure(config), DriverError::Ok);
    ASSERT_EQ(array().arm(), DriverError::Ok);
    ASSERT_EQ(array().start_streaming(), DriverError::Ok);
  }
};

}  // namespace sonoflow::drivers::test
