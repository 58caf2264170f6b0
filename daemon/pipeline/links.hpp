#pragma once
// The links between the pipeline's threads (DESIGN.md section 2). Every link has one producer
// thread and one consumer thread: a ring where every item matters, a mailbox where only the
// newest value does. All memory is allocated once, with the Pipeline.
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>

#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/trace_items.hpp"
#include "kernels/smoke/smoke_live.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"
#include "rt/mailbox.hpp"
#include "rt/spsc_ring.hpp"

namespace sonoflow::daemon {

// Fluid settings that may change while running (HapticSettings: trace_items.hpp).
struct FluidSettings {
  std::array<char, 32> material{};
  double tau_s = 0;
  double alpha = 0;
  smoke::SmokeLive smoke{};  // the [smoke] table's live part (the smoke medium only)
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

// The force stage hands the fluid a stylus pose when at least this much stylus time passed
// since the last one it handed over: every pose of a 1 kHz servo, every 5th at 10 kHz. Finer
// than the fluid needs to sweep the tool, and it bounds the poses per fluid period.
inline constexpr std::int64_t kToolPoseSpacingNs = 500'000;

struct Links {
  // tracker -> fluid: every frame (the fluid interpolates across them).
  CountedRing<HandFrame, 32> hands_to_fluid;
  // tracker -> haptic: the newest pose.
  rt::Mailbox<HandFrame> hand_to_haptic;
  // fluid -> haptic: the newest contact field.
  rt::Mailbox<ContactField> field_to_haptic;
  // haptic -> stream: 1 ms blocks, in order.
  CountedRing<FocalBlock, 64> blocks_to_stream;
  // force -> fluid: the stylus poses, at most one per kToolPoseSpacingNs (force feedback); the
  // fluid sweeps the tool over the last period of them. 256 poses: 128 ms or more of a stalled
  // fluid before the force stage drops (and counts) poses.
  CountedRing<ToolPoseSample, 256> tool_poses_to_fluid;
  // fluid -> force: the fluid's force on the tool, once per frame.
  rt::Mailbox<ToolForceSample> tool_force_to_servo;
  // supervisor -> stages: live settings.
  rt::Mailbox<HapticSettings> haptic_settings;
  rt::Mailbox<FluidSettings> fluid_settings;
  // stages -> recorder (telemetry; only pushed while recording). A full ring drops the item
  // and counts it; the items' own sequence numbers show the gap in the trace.
  CountedRing<HandFrame, 256> trace_hands;          // tracker
  CountedRing<ContactField, 16> trace_fields;       // fluid
  CountedRing<HapticTickRecord, 1024> trace_ticks;  // haptic
  CountedRing<HapticSettingsRecord, 16> trace_settings;  // haptic
  CountedRing<EmittedBlock, 256> trace_blocks;      // stream
  CountedRing<ForceTickRecord, 1024> trace_force;   // force
  std::atomic<bool> recording{false};
  // The force servo's settings (set when the force stage is built, before any thread starts;
  // the recorder writes them at the start of each recording).
  std::optional<ForceServoRecord> force_servo;
};

}  // namespace sonoflow::daemon
