#include "kernels/smoke/smoke_config.hpp"

#include <cmath>
#include <string>

namespace sonoflow::smoke {

namespace {

opencl::Error bad(const std::string& what) { return {opencl::Errc::BadConfig, what}; }

bool finite(const Vec3f& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

opencl::Status validate(const SmokeConfig& c) {
  for (int n : c.cells)
    if (n < 4 || n > 512) return bad("cells must be in [4, 512] on every axis");
  if (static_cast<double>(c.cells[0] + 2) * (c.cells[1] + 2) * (c.cells[2] + 2) > double(1 << 27))
    return bad("the grid holds more than 2^27 cells");
  if (!(c.cell_size > 0) || !std::isfinite(c.cell_size)) return bad("cell_size must be > 0");
  if (!finite(c.origin) || !finite(c.gravity) || !finite(c.body_force))
    return bad("origin, gravity and body_force must be finite");
  if (c.open_faces > 63u) return bad("open_faces has bits beyond the six faces");
  if (c.substeps < 1 || c.substeps > 16) return bad("substeps must be in [1, 16]");
  const PressureSettings& p = c.pressure;
  if (!(p.tolerance > 0) || !std::isfinite(p.tolerance)) return bad("pressure tolerance must be > 0");
  if (p.max_iterations < 1 || p.max_iterations > 100000)
    return bad("pressure max_iterations must be in [1, 100000]");
  if (!(p.sor_omega == 0.0f || (p.sor_omega > 0.0f && p.sor_omega < 2.0f)))
    return bad("sor_omega must be 0 (automatic) or in (0, 2)");
  if (p.check_every < 1) return bad("check_every must be >= 1");
  if (!(c.air_density > 0) || !std::isfinite(c.air_density)) return bad("air_density must be > 0");
  const float g = std::sqrt(c.gravity.x * c.gravity.x + c.gravity.y * c.gravity.y + c.gravity.z * c.gravity.z);
  if (!(g > 0)) return bad("gravity must be non-zero (it gives buoyancy its direction)");
  for (float v : {c.smoke_weight, c.heat_lift, c.vorticity, c.smoke_decay, c.heat_decay})
    if (!(v >= 0) || !std::isfinite(v))
      return bad("smoke_weight, heat_lift, vorticity and the decay rates must be >= 0");
  if (!(c.max_hand_speed > 0) || !(c.teleport_distance > 0))
    return bad("max_hand_speed and teleport_distance must be > 0");
  return std::nullopt;
}

const char* to_string(Advection a) {
  return a == Advection::MacCormack ? "maccormack" : "semi-lagrangian";
}

const char* to_string(PressureSolver s) {
  return s == PressureSolver::MultigridCg ? "multigrid-cg" : "red-black-sor";
}

}  // namespace sonoflow::smoke
