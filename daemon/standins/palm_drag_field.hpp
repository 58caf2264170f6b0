#pragma once
// PalmDragField: a stand-in fluid behind the FluidModel seam, used until the OpenCL fluid engine
// lands (issue 5). No particles: the medium is a layer of liquid above the array (surface at
// surface_z); where the palm is immersed, the pressure on it is hydrostatic (rho g depth) plus
// a drag term that grows with the palm's speed and the material's viscosity. It gives the
// haptic side a ContactField with the right shape and units (Pa, anchored to the palm joint).
#include <string>

#include "daemon/pipeline/interfaces.hpp"

namespace sonoflow::daemon {

class PalmDragField final : public FluidModel {
 public:
  static constexpr float kSurfaceZ = 0.16f;  // m above the array
  static constexpr int kGrid = 6;            // 6 x 6 samples on the palm

  void step(const HandFrame& newest, double frame_dt_s, ContactField& out,
            FluidStepInfo& info) noexcept override;
  void set_material(std::string_view name, double tau_s, double alpha) noexcept override;

 private:
  float density_ = 1420.0f;    // kg/m^3, honey
  float viscosity_ = 10.0f;    // Pa s, honey
  std::uint64_t sequence_ = 0;
};

}  // namespace sonoflow::daemon
