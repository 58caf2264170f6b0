#pragma once
// What the haptic thread hands the stream thread: one millisecond of output, 20 samples at
// 20 kHz, each sample a set of up to 8 simultaneous foci (AM: N modulated foci; STM: one
// moving focus). The stream thread stamps blocks with device ticks and encodes them.
#include <array>
#include <cstdint>
#include <type_traits>

#include "kernels/types/geometry.hpp"

namespace sonoflow {

inline constexpr int kMaxFoci = 8;
inline constexpr int kStreamRateHz = 20'000;
inline constexpr int kSamplesPerBlock = kStreamRateHz / 1000;  // one block = 1 ms

enum class HapticMode : std::uint8_t { Silent = 0, AM = 1, STM = 2 };

struct Focus {
  Vec3f position;        // m, array frame
  float intensity = 0;   // 0..1 of the array's maximum, after modulation and caps
};

struct FocalSample {
  std::uint8_t count = 0;  // foci in use
  std::array<Focus, kMaxFoci> foci{};
};

struct FocalBlock {
  std::uint64_t sequence = 0;       // increments per block; gaps are drops
  std::int64_t start_time_ns = 0;   // host CLOCK_MONOTONIC of samples[0]
  std::uint64_t hand_frame_id = 0;  // newest HandFrame that shaped this block (latency)
  std::int64_t hand_capture_time_ns = 0;
  HapticMode mode = HapticMode::Silent;
  std::array<FocalSample, kSamplesPerBlock> samples{};
};

static_assert(std::is_trivially_copyable_v<FocalBlock>);

}  // namespace sonoflow
