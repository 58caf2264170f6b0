#pragma once
// CentroidRenderer: a stand-in haptic renderer behind the HapticRenderer seam, used until the
// AM optimiser and PRO-STM planner land (issue 4). AM: one focus at the pressure-weighted
// centroid of the contact samples, re-posed onto the newest palm pose, intensity from the mean
// pressure, modulated at the AM frequency. STM: one focus circling that centroid at the STM
// speed. Allocation-free.
#include "daemon/pipeline/interfaces.hpp"

namespace sonoflow::daemon {

class CentroidRenderer final : public HapticRenderer {
 public:
  static constexpr float kFullScalePa = 400.0f;  // mean pressure rendered at full intensity

  void render(const ContactField* field, const HandFrame& pose, std::int64_t block_time_ns,
              FocalBlock& out) noexcept override;
  void set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                double stm_speed_m_s) noexcept override;

 private:
  HapticMode mode_ = HapticMode::AM;
  double am_frequency_hz_ = 200;
  double stm_speed_m_s_ = 7;
  // From the newest field: centroid offset in the palm frame and the intensity it asks for.
  Vec3f centroid_offset_{};
  float intensity_ = 0;
  bool have_field_ = false;
};

}  // namespace sonoflow::daemon
