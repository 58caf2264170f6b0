#pragma once
// The haptic renderers the daemon runs, from kernels/haptics (issue 4), behind the pipeline's
// HapticRenderer seam: AmRenderer (AM optimiser, 200 Hz modulation) and StmRenderer (PRO-STM,
// replans spread over ticks). Only the active one is fed; a live mode switch resets both, and
// the new one starts from the next contact field (within one fluid frame, ~11 ms).
//
// The AM renderer fixes its modulation frequency and focus count at construction (it
// preallocates for them), so haptic.am_frequency_hz and haptic.max_foci are restart keys; the
// mode and the STM speed are live. Real-time safe: select() and render() do not allocate.
#include "daemon/config/config.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "kernels/haptics/am_renderer.hpp"
#include "kernels/haptics/stm_renderer.hpp"
#include "kernels/haptics/target_samples.hpp"

namespace sonoflow::daemon {

haptics::AmConfig am_config_from(const Config& config);
haptics::StmConfig stm_config_from(const Config& config);

class KernelRenderer final : public HapticRenderer {
 public:
  explicit KernelRenderer(const Config& config);

  void render(const ContactField* field, const HandFrame& pose, std::int64_t block_time_ns,
              FocalBlock& out) noexcept override;
  void set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                double stm_speed_m_s) noexcept override;
  void describe(RendererView& out) const noexcept override;

 private:
  HapticMode mode_;
  haptics::TargetSelection selection_;
  haptics::TargetSamples staging_;
  haptics::AmRenderer am_;
  haptics::StmRenderer stm_;
};

}  // namespace sonoflow::daemon
