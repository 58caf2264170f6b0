#pragma once
// The items the stages hand the recorder besides raw hand frames and contact fields: what the
// haptic stage did each tick, the live settings it used, and what became of each block.
//
// Provenance: on the real clock the tracker, fluid and haptic threads interleave differently in
// every run, so a replay cannot re-create a recorded session by re-running the threads. Instead
// the haptic stage records, per tick, the inputs that tick used (its deadline and wake time, the
// hand frame and contact field it read, the settings generation in force), and each settings
// generation once; a replay feeds exactly those to a haptic stage of its own. Plain
// fixed-layout structs: they go into the trace as they are (trace_format.hpp).
#include <cstdint>
#include <type_traits>

#include "kernels/types/focal_plan.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::daemon {

// Settings that may change while running (SIGHUP, sonoflowctl set), as plain values the
// real-time threads read from a mailbox.
struct HapticSettings {
  HapticMode mode = HapticMode::AM;
  double am_frequency_hz = 200;
  int max_foci = 4;
  double stm_speed_m_s = 7;
  float max_intensity = 0.8f;
  float max_total_power = 1.0f;
};

// One haptic tick. `tick` numbers the ticks from 1 at the pipeline's start and is also the
// FocalBlock::sequence of the block the tick made, so a gap in either shows a lost record.
struct HapticTickRecord {
  std::uint64_t tick = 0;
  std::int64_t deadline_ns = 0;           // the loop's grid instant (block start = this + lookahead)
  std::int64_t wake_ns = 0;               // when the loop woke (freshness is judged from it)
  std::uint64_t hand_frame_id = 0;        // the HandFrame the tick read; 0 = none yet
  std::int64_t hand_receive_ns = 0;       // with the id, that frame's key in the trace
  std::uint64_t field_sequence = 0;       // the ContactField delivered this tick; 0 = none new
  std::uint64_t settings_generation = 0;  // the HapticSettingsRecord in force (1 = the first)
  std::uint8_t stopping = 0;              // 1: the fade to silence for shutdown was requested
  std::uint8_t queued = 0;                // 1: the block went to the stream; 0: ring full, lost
  std::uint8_t reserved[6] = {};
};
static_assert(sizeof(HapticTickRecord) == 64 && std::is_trivially_copyable_v<HapticTickRecord>);

// The live settings as the haptic stage fetched them, numbered by generation (1, 2, ...).
struct HapticSettingsRecord {
  std::uint64_t generation = 0;
  double am_frequency_hz = 0;
  double stm_speed_m_s = 0;
  float max_intensity = 0;
  float max_total_power = 0;
  std::int32_t max_foci = 0;
  std::uint8_t mode = 0;  // HapticMode
  std::uint8_t reserved[3] = {};
};
static_assert(sizeof(HapticSettingsRecord) == 40 && std::is_trivially_copyable_v<HapticSettingsRecord>);

inline HapticSettingsRecord record_of(const HapticSettings& s, std::uint64_t generation) noexcept {
  HapticSettingsRecord r;
  r.generation = generation;
  r.am_frequency_hz = s.am_frequency_hz;
  r.stm_speed_m_s = s.stm_speed_m_s;
  r.max_intensity = s.max_intensity;
  r.max_total_power = s.max_total_power;
  r.max_foci = s.max_foci;
  r.mode = static_cast<std::uint8_t>(s.mode);
  return r;
}

inline HapticSettings settings_of(const HapticSettingsRecord& r) noexcept {
  HapticSettings s;
  s.mode = static_cast<HapticMode>(r.mode);
  s.am_frequency_hz = r.am_frequency_hz;
  s.max_foci = r.max_foci;
  s.stm_speed_m_s = r.stm_speed_m_s;
  s.max_intensity = r.max_intensity;
  s.max_total_power = r.max_total_power;
  return s;
}

// What became of a block the stream stage took from the haptic ring. All three are recorded:
// a refused or discarded block is still the haptic stage's output, and the replay compares it.
enum class BlockFate : std::uint32_t {
  Sent = 0,       // queued to the array at start_tick
  Refused = 1,    // the array refused it (FIFO full, not armed)
  Discarded = 2,  // the array was lost or would not arm: dropped unsent
};

// A block as the stream stage handled it: what the recorder stores and replay compares.
struct EmittedBlock {
  std::uint64_t start_tick = 0;  // device tick of samples[0] (Sent only)
  BlockFate fate = BlockFate::Sent;
  std::uint32_t reserved = 0;
  FocalBlock block;
};
static_assert(std::is_trivially_copyable_v<EmittedBlock>);

// One force-servo tick (force feedback): the stylus pose it read, the fluid force it held and
// the force it commanded. `tick` numbers the force stage's ticks from 1.
struct ForceTickRecord {
  std::uint64_t tick = 0;
  std::int64_t deadline_ns = 0;      // the loop's grid instant
  std::int64_t wake_ns = 0;          // when the loop woke (the force's freshness is judged from it)
  std::uint64_t force_frame = 0;     // fluid frame whose force arrived this tick; 0 = none new
  Vec3f stylus_position;             // m, array frame (the last valid pose)
  Quatf stylus_orientation;
  Vec3f fluid_force;                 // N, the newest fluid force on the tool
  Vec3f commanded;                   // N, the servo's output this tick
  std::uint8_t stylus_ok = 0;        // 1: the pose was read this tick
  std::uint8_t output = 0;           // 0 released, 1 rendering, 2 ramping to zero
  std::uint8_t stopping = 0;         // 1: stop requested
  std::uint8_t reserved = 0;
};
static_assert(sizeof(ForceTickRecord) == 88 && std::is_trivially_copyable_v<ForceTickRecord>);

// The force servo as the force stage runs it (the config's servo settings with the device's own
// force cap applied, and the staleness limit), recorded once at the start of a recording so a
// replay re-runs the same servo.
struct ForceServoRecord {
  double frame_rate_hz = 0;   // fluid frames per second (the FIR's input rate)
  double servo_rate_hz = 0;
  double force_scale = 0;
  double max_force_n = 0;     // the smaller of the config's and the device's cap
  double max_step_n = 0;
  std::int64_t force_stale_after_ns = 0;
};
static_assert(sizeof(ForceServoRecord) == 48 && std::is_trivially_copyable_v<ForceServoRecord>);

}  // namespace sonoflow::daemon
