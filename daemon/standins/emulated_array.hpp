#pragma once
// EmulatedArray: a stand-in for the phased array behind the ArrayLink seam, used by
// `sonoflowd --emulate` and the pipeline tests until the drivers layer's VirtualArray and
// in-process transport land on main (issue 3). It models what the pipeline's safety depends
// on: a 40 kHz tick from the given clock, a sample FIFO played one sample per 2 ticks, underrun
// counting, hold-then-fade when starved, link loss (unplug) and reconnect, and a record of what
// it emitted so tests can check the output (peak, last non-silent instant, a checksum).
//
// Threading: submit/status/arm/disarm on the stream thread; unplug/replug/reconnect and the
// emitted-output getters from any thread (atomics).
#include <atomic>
#include <cstdint>
#include <vector>

#include "daemon/pipeline/interfaces.hpp"
#include "rt/clock.hpp"

namespace sonoflow::daemon {

class EmulatedArray final : public ArrayLink {
 public:
  struct Options {
    std::uint32_t fifo_depth = 400;         // samples (20 ms)
    std::int64_t fade_ns = 5'000'000;       // device fade after the watchdog expires
  };
  EmulatedArray(rt::Clock& clock, Options options);
  explicit EmulatedArray(rt::Clock& clock) : EmulatedArray(clock, Options{}) {}

  bool submit(const FocalBlock& block, std::uint64_t start_tick) noexcept override;
  ArrayLinkStatus status() noexcept override;
  std::uint64_t host_to_tick(std::int64_t host_ns) const noexcept override;
  std::int64_t tick_to_host(std::uint64_t tick) const noexcept override;
  bool arm(std::uint8_t intensity_cap, std::uint16_t watchdog_ms) noexcept override;
  void disarm() noexcept override;
  bool reconnect() noexcept override;

  // Fault injection.
  void unplug() noexcept { plugged_.store(false, std::memory_order_release); }
  void replug() noexcept { plugged_.store(true, std::memory_order_release); }

  // What came out of the transducers (after the device's own hold/fade).
  float output_intensity() const noexcept { return output_.load(std::memory_order_acquire); }
  std::int64_t last_sound_host_ns() const noexcept {
    return last_sound_ns_.load(std::memory_order_acquire);
  }
  std::uint64_t samples_played() const noexcept { return played_.load(std::memory_order_acquire); }
  std::uint64_t sounding_samples() const noexcept { return sounding_.load(std::memory_order_acquire); }
  // FNV-1a over every played sample's foci (quantised to the wire's 25 um / 1/255 units).
  std::uint64_t output_checksum() const noexcept { return checksum_.load(std::memory_order_acquire); }
  float peak_intensity_and_reset() noexcept { return peak_.exchange(0, std::memory_order_acq_rel); }

 private:
  struct QueuedSample {
    std::uint64_t tick;
    FocalSample sample;
  };
  enum class State : std::uint32_t { Idle, Armed, Emitting, Holding, Fading };

  void advance() noexcept;  // plays every sample slot up to the clock's now
  void play(const FocalSample& s, float gain, std::uint64_t tick) noexcept;

  rt::Clock& clock_;
  Options options_;
  std::int64_t epoch_ns_;
  std::vector<QueuedSample> fifo_;  // ring, allocated once
  std::uint32_t head_ = 0, count_ = 0;
  std::uint64_t cursor_tick_ = 0;   // next sample slot to play
  State state_ = State::Idle;
  FocalSample held_{};
  std::uint64_t starved_since_tick_ = 0;
  float cap_ = 1.0f;
  std::uint32_t watchdog_ticks_ = 800;
  std::uint64_t underruns_ = 0, late_blocks_ = 0;
  bool was_plugged_ = true;
  std::uint32_t epoch_ = 0;

  std::atomic<bool> plugged_{true};
  std::atomic<bool> armed_{false};
  std::atomic<float> output_{0};
  std::atomic<float> peak_{0};
  std::atomic<std::int64_t> last_sound_ns_{-1};
  std::atomic<std::uint64_t> played_{0}, sounding_{0}, checksum_{14695981039346656037ull};
};

}  // namespace sonoflow::daemon
