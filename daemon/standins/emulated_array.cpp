#include "daemon/standins/emulated_array.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon {

EmulatedArray::EmulatedArray(rt::Clock& clock, Options options)
    : clock_(clock), options_(options), epoch_ns_(clock.now_ns()), fifo_(options.fifo_depth) {
  cursor_tick_ = 0;
}

std::uint64_t EmulatedArray::host_to_tick(std::int64_t host_ns) const noexcept {
  const std::int64_t dt = host_ns - epoch_ns_;
  if (dt <= 0) return 0;
  return static_cast<std::uint64_t>(dt / 25'000);  // 40 kHz = 25 us per tick
}

std::int64_t EmulatedArray::tick_to_host(std::uint64_t tick) const noexcept {
  return epoch_ns_ + static_cast<std::int64_t>(tick) * 25'000;
}

void EmulatedArray::play(const FocalSample& s, float gain, std::uint64_t tick) noexcept {
  float peak = 0;
  std::uint64_t h = checksum_.load(std::memory_order_relaxed);
  const auto mix = [&h](std::uint64_t v) {
    h ^= v;
    h *= 1099511628211ull;
  };
  for (int i = 0; i < s.count && i < kMaxFoci; ++i) {
    const Focus& f = s.foci[i];
    const float intensity = std::clamp(f.intensity * gain, 0.0f, cap_);
    peak = std::max(peak, intensity);
    mix(static_cast<std::uint64_t>(std::lround(f.position.x / 25e-6f)));
    mix(static_cast<std::uint64_t>(std::lround(f.position.y / 25e-6f)));
    mix(static_cast<std::uint64_t>(std::lround(f.position.z / 25e-6f)));
    mix(static_cast<std::uint64_t>(std::lround(intensity * 255.0f)));
  }
  mix(tick);
  checksum_.store(h, std::memory_order_relaxed);
  output_.store(peak, std::memory_order_release);
  if (peak > peak_.load(std::memory_order_relaxed)) peak_.store(peak, std::memory_order_relaxed);
  played_.fetch_add(1, std::memory_order_relaxed);
  if (peak > 0) {
    sounding_.fetch_add(1, std::memory_order_relaxed);
    last_sound_ns_.store(tick_to_host(tick), std::memory_order_release);
  }
}

void EmulatedArray::advance() noexcept {
  const bool plugged = plugged_.load(std::memory_order_acquire);
  if (plugged && !was_plugged_) {
    // Re-enumerated after a link loss: the device comes back reset, disarmed and silent.
    head_ = count_ = 0;
    state_ = State::Idle;
    ++epoch_;
    armed_.store(false, std::memory_order_release);
    output_.store(0, std::memory_order_release);
  }
  was_plugged_ = plugged;

  const std::uint64_t now_tick = host_to_tick(clock_.now_ns());
  if (state_ == State::Idle || (state_ == State::Armed && count_ == 0)) {
    cursor_tick_ = std::max(cursor_tick_, (now_tick + 1) & ~std::uint64_t{1});
    return;
  }
  for (; cursor_tick_ <= now_tick; cursor_tick_ += kTicksPerSample) {
    // Drop samples whose slot already passed (late blocks).
    while (count_ > 0 && fifo_[head_].tick < cursor_tick_) {
      head_ = (head_ + 1) % options_.fifo_depth;
      --count_;
    }
    if (count_ > 0 && fifo_[head_].tick == cursor_tick_) {
      held_ = fifo_[head_].sample;
      head_ = (head_ + 1) % options_.fifo_depth;
      --count_;
      state_ = State::Emitting;
      play(held_, 1.0f, cursor_tick_);
      continue;
    }
    if (state_ == State::Armed) {
      continue;  // nothing queued yet for this slot: silence, not an underrun
    }
    if (state_ == State::Emitting) {
      state_ = State::Holding;
      starved_since_tick_ = cursor_tick_;
    }
    ++underruns_;
    const std::uint64_t starved = cursor_tick_ - starved_since_tick_;
    const auto fade_ticks = static_cast<std::uint64_t>(options_.fade_ns / 25'000);
    if (starved < watchdog_ticks_) {
      play(held_, 1.0f, cursor_tick_);  // hold the last sample
    } else if (starved < watchdog_ticks_ + fade_ticks) {
      state_ = State::Fading;
      const float gain = 1.0f - static_cast<float>(starved - watchdog_ticks_) /
                                    static_cast<float>(std::max<std::uint64_t>(fade_ticks, 1));
      play(held_, gain, cursor_tick_);
    } else {
      state_ = State::Armed;  // faded out: silent until new samples arrive
      held_ = FocalSample{};
      output_.store(0, std::memory_order_release);
      --underruns_;  // the silent slot after the fade is not an underrun
    }
  }
}

bool EmulatedArray::submit(const FocalBlock& block, std::uint64_t start_tick) noexcept {
  advance();
  if (!plugged_.load(std::memory_order_acquire) || state_ == State::Idle) return false;
  if (count_ + kSamplesPerBlock > options_.fifo_depth) return false;
  if (start_tick < cursor_tick_) ++late_blocks_;
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    const std::uint64_t tick = start_tick + static_cast<std::uint64_t>(i) * kTicksPerSample;
    if (tick < cursor_tick_) continue;
    fifo_[(head_ + count_) % options_.fifo_depth] = QueuedSample{tick, block.samples[i]};
    ++count_;
  }
  return true;
}

ArrayLinkStatus EmulatedArray::status() noexcept {
  advance();
  ArrayLinkStatus s;
  s.connected = plugged_.load(std::memory_order_acquire);
  s.armed = state_ != State::Idle;
  s.device_state = static_cast<std::uint32_t>(state_);
  s.device_tick = host_to_tick(clock_.now_ns());
  s.fifo_level = count_;
  s.fifo_depth = options_.fifo_depth;
  s.underruns = underruns_;
  s.late_blocks = late_blocks_;
  s.epoch = epoch_;
  return s;
}

bool EmulatedArray::arm(std::uint8_t intensity_cap, std::uint16_t watchdog_ms) noexcept {
  advance();
  if (!plugged_.load(std::memory_order_acquire)) return false;
  cap_ = static_cast<float>(intensity_cap) / 255.0f;
  watchdog_ticks_ = static_cast<std::uint32_t>(watchdog_ms) * (kTickHz / 1000);
  if (state_ == State::Idle) state_ = State::Armed;
  armed_.store(true, std::memory_order_release);
  return true;
}

void EmulatedArray::disarm() noexcept {
  advance();
  head_ = count_ = 0;
  state_ = State::Idle;
  held_ = FocalSample{};
  armed_.store(false, std::memory_order_release);
  output_.store(0, std::memory_order_release);
}

bool EmulatedArray::reconnect() noexcept { return plugged_.load(std::memory_order_acquire); }

}  // namespace sonoflow::daemon
