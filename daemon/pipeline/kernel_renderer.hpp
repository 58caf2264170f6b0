#pragma once
// The haptic renderer the daemon runs: kernels/haptics' AmRenderer for AM (issue 4), behind
// the pipeline's HapticRenderer seam. STM still comes from the CentroidRenderer stand-in until
// the PRO-STM planner lands on main.
//
// The AM renderer fixes its modulation frequency and focus count at construction (it
// preallocates for them), so haptic.am_frequency_hz and haptic.max_foci are restart keys;
// mode switches are live. Real-time safe: select() and render() do not allocate.
#include "daemon/config/config.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "daemon/standins/centroid_renderer.hpp"
#include "kernels/haptics/am_renderer.hpp"
#include "kernels/haptics/target_samples.hpp"

namespace sonoflow::daemon {

haptics::AmConfig am_config_from(const Config& config);

class KernelRenderer final : public HapticRenderer {
 public:
  explicit KernelRenderer(const Config& config);

  void render(const ContactField* field, const HandFrame& pose, std::int64_t block_time_ns,
              FocalBlock& out) noexcept override;
  void set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                double stm_speed_m_s) noexcept override;

 private:
  HapticMode mode_;
  haptics::TargetSelection selection_;
  haptics::TargetSamples staging_;
  haptics::AmRenderer am_;
  CentroidRenderer stm_standin_;
  FocalBlock scratch_{};  // output of the renderer not in use (it still follows the field)
};

}  // namespace sonoflow::daemon
