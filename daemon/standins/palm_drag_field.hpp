#pragma once
// PalmDragField: a stand-in fluid behind the FluidModel seam, used until the OpenCL fluid engine
// lands (issue 5). No particles: the medium is a layer of liquid above the array (surface at
// surface_z); where the palm is immersed, the pressure on it is hydrostatic (rho g depth) plus
// a drag term that grows with the palm's speed and the material's viscosity. It gives the
// haptic side a ContactField with the right shape and units (Pa, anchored to the palm joint).
//
// With a tool (force feedback), the force on the rod's immersed length: slender-body viscous
// drag (resistive-force theory, per unit length c_perp = 4 pi mu / (ln(2L/a) + 1/2) across the
// axis, c_par = 2 pi mu / (ln(2L/a) - 1/2) along it), form drag 1/2 rho C_d (2a) |v| v across
// it, and buoyancy rho g pi a^2 per unit length. A ladle counts as its handle.
#include <string>

#include "daemon/pipeline/interfaces.hpp"

namespace sonoflow::daemon {

class PalmDragField final : public FluidModel {
 public:
  static constexpr float kSurfaceZ = 0.16f;  // m above the array
  static constexpr int kGrid = 6;            // 6 x 6 samples on the palm

  void step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s, ContactField& out,
            FluidStepInfo& info) noexcept override;
  void set_material(std::string_view name, double tau_s, double alpha) noexcept override;

  // A rod of this radius and length (m) in the layer; without it the model has no tool.
  void set_tool(float radius_m, float length_m) noexcept;
  void set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept override;
  bool tool_force(ToolForceSample& out) noexcept override;

 private:
  void step_tool(double frame_dt_s) noexcept;

  float density_ = 1420.0f;    // kg/m^3, honey
  float viscosity_ = 10.0f;    // Pa s, honey
  std::uint64_t sequence_ = 0;
  bool has_tool_ = false, tool_posed_ = false, tool_moved_ = false;
  float tool_radius_ = 0.006f, tool_length_ = 0.12f;
  ToolPoseSample tool_pose_{}, tool_previous_{};
  Vec3f tool_force_{};
};

}  // namespace sonoflow::daemon
