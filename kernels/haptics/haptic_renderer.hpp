#pragma once
// The one face the daemon's 1 kHz haptic thread calls, every millisecond:
//
//   HapticRenderer renderer(config);                  // allocates everything, once
//   ...each tick:
//   renderer.render(mailbox_has_new_field ? &field : nullptr, newest_hand_frame,
//                   start_time_of_the_block, block);  // no allocation, lock or exception
//
// It keeps the array-facing samples of each new ContactField (TargetSelection) and passes them
// to the renderer of the current mode: AM (am_renderer.hpp) or STM with PRO-STM
// (stm_renderer.hpp, whose replan is time-sliced across ticks; see there). set_mode() switches
// at the next tick, and the new renderer starts at once from the newest field. Silent mode and
// every renderer's silence give blocks with count 0 and mode Silent.
#include <cstdint>
#include <memory>

#include "kernels/haptics/am_renderer.hpp"
#include "kernels/haptics/stm_renderer.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics {

struct HapticConfig {
  HapticMode mode = HapticMode::AM;
  TargetSelection selection;
  AmConfig am;
  StmConfig stm;
};

class HapticRenderer {
 public:
  explicit HapticRenderer(const HapticConfig& config);

  // newest_field: a ContactField that arrived since the last call, or nullptr. newest_pose:
  // the newest (predicted) hand frame. block_time_ns: host time of out.samples[0].
  void render(const ContactField* newest_field, const HandFrame& newest_pose,
              std::int64_t block_time_ns, FocalBlock& out) noexcept;
  void set_mode(HapticMode mode) noexcept;
  // The daemon's live controls in one call (daemon/pipeline/interfaces.hpp): mode, AM modulation
  // frequency, the most simultaneous foci (AM focal points, STM paths; STM keeps at most its
  // configured max_paths) and the STM focus speed. Out-of-range values are clamped.
  void set_mode(HapticMode mode, double am_frequency_hz, int max_foci, double stm_speed_m_s) noexcept;

  HapticMode mode() const { return config_.mode; }
  // Samples of the last field dropped as malformed (non-finite values, bad joint index).
  int malformed_samples() const { return malformed_; }
  const AmRenderer& am() const { return *am_; }
  const StmRenderer& stm() const { return *stm_; }

 private:
  HapticConfig config_;
  std::unique_ptr<TargetSamples> samples_;
  std::unique_ptr<AmRenderer> am_;
  std::unique_ptr<StmRenderer> stm_;
  bool have_field_ = false, mode_changed_ = false;
  int malformed_ = 0;
  std::uint64_t silent_sequence_ = 0;
};

}  // namespace sonoflow::haptics
