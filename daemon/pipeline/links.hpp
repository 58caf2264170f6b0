#pragma once
// The links between the pipeline's threads (DESIGN.md section 2). Every link has one producer
// thread and one consumer thread: a ring where every item matters, a mailbox where only the
// newest value does. All memory is allocated once, with the Pipeline.
#include <array>
#include <atomic>
#include <cstdint>

#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"
#include "rt/mailbox.hpp"
#include "rt/spsc_ring.hpp"

namespace sonoflow::daemon {

// Settings that may change while running (SIGHUP, sonoflowctl set), as plain values the real-time
// threads read from a mailbox.
struct HapticSettings {
  HapticMode mode = HapticMode::AM;
  double am_frequency_hz = 200;
  int max_foci = 4;
  double stm_speed_m_s = 7;
  float max_intensity = 0.8f;
  float max_total_power = 1.0f;
};

struct FluidSettings {
  std::array<char, 32> material{};
  double tau_s = 0;
  double alpha = 0;
};

// A block as it was handed to the array: what the recorder stores and replay compares.
struct EmittedBlock {
  std::uint64_t start_tick = 0;
  FocalBlock block;
};

// A ring with a drop counter and a high-water mark the supervisor exports.
template <typename T, std::size_t N>
struct CountedRing {
  rt::SpscRing<T, N> ring;
  std::atomic<std::uint64_t> drops{0};
  std::atomic<std::uint32_t> high_water{0};

  bool push(const T& item) noexcept {
    if (!ring.try_push(item)) {
      drops.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    const auto depth = static_cast<std::uint32_t>(ring.size_estimate());
    if (depth > high_water.load(std::memory_order_relaxed))
      high_water.store(depth, std::memory_order_relaxed);
    return true;
  }
};

struct Links {
  // tracker -> fluid: every frame (the fluid interpolates across them).
  CountedRing<HandFrame, 32> hands_to_fluid;
  // tracker -> haptic: the newest pose.
  rt::Mailbox<HandFrame> hand_to_haptic;
  // fluid -> haptic: the newest contact field.
  rt::Mailbox<ContactField> field_to_haptic;
  // haptic -> stream: 1 ms blocks, in order.
  CountedRing<FocalBlock, 64> blocks_to_stream;
  // supervisor -> stages: live settings.
  rt::Mailbox<HapticSettings> haptic_settings;
  rt::Mailbox<FluidSettings> fluid_settings;
  // stages -> recorder (telemetry; only pushed while recording).
  CountedRing<HandFrame, 256> trace_hands;
  CountedRing<EmittedBlock, 256> trace_blocks;
  CountedRing<ContactField, 16> trace_fields;
  std::atomic<bool> recording{false};
};

}  // namespace sonoflow::daemon
