#include "kernels/smoke/smoke_live.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

namespace sonoflow::smoke {

namespace {

bool finite(const Vec3f& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

// Every live field of the config with its SmokeLive twin, named once for both directions:
// `copy(config_field, live_field)` (either may be const).
template <class Config, class Live, class Copy>
void each_live_field(Config& c, Live& l, Copy copy) {
  copy(c.advection, l.advection);
  copy(c.pressure.tolerance, l.tolerance);
  copy(c.pressure.max_iterations, l.max_iterations);
  copy(c.pressure.sor_omega, l.sor_omega);
  copy(c.pressure.check_every, l.check_every);
  copy(c.gravity, l.gravity);
  copy(c.body_force, l.body_force);
  copy(c.smoke_weight, l.smoke_weight);
  copy(c.heat_lift, l.heat_lift);
  copy(c.vorticity, l.vorticity);
  copy(c.smoke_decay, l.smoke_decay);
  copy(c.heat_decay, l.heat_decay);
  copy(c.max_hand_speed, l.max_hand_speed);
}

}  // namespace

bool operator==(const SmokeLive& a, const SmokeLive& b) {
  // Value-initialised, every member 4 bytes wide: no padding to compare.
  return std::memcmp(&a, &b, sizeof(SmokeLive)) == 0;
}

SmokeLive live_part(const SmokeSetup& setup) {
  const SmokeConfig& c = setup.config;
  SmokeLive l{};
  each_live_field(c, l, [](const auto& from, auto& to) { to = from; });
  l.jet_count = static_cast<int>(std::min<std::size_t>(setup.scene.jets.size(), kMaxSources));
  std::copy_n(setup.scene.jets.begin(), l.jet_count, l.jets);
  l.plume_count = static_cast<int>(
      std::min<std::size_t>(setup.scene.plumes.size(), static_cast<std::size_t>(kMaxSources - l.jet_count)));
  std::copy_n(setup.scene.plumes.begin(), l.plume_count, l.plumes);
  return l;
}

void apply_live(SmokeConfig& c, const SmokeLive& l) {
  each_live_field(c, l, [](auto& to, const auto& from) { to = from; });
}

void apply_live(SmokeSetup& setup, const SmokeLive& l) {
  apply_live(setup.config, l);
  setup.scene.jets.assign(l.jets, l.jets + std::clamp(l.jet_count, 0, kMaxSources));
  setup.scene.plumes.assign(l.plumes, l.plumes + std::clamp(l.plume_count, 0, kMaxSources));
}

opencl::Status validate(const SmokeLive& l) {
  auto bad = [](const char* what) { return opencl::Error{opencl::Errc::BadConfig, what}; };
  if (l.advection != Advection::SemiLagrangian && l.advection != Advection::MacCormack)
    return bad("unknown advection scheme");
  if (!(l.tolerance > 0) || !std::isfinite(l.tolerance)) return bad("pressure tolerance must be > 0");
  if (l.max_iterations < 1 || l.max_iterations > 100000) return bad("pressure max_iterations must be in [1, 100000]");
  if (!(l.sor_omega == 0.0f || (l.sor_omega > 0.0f && l.sor_omega < 2.0f)))
    return bad("sor_omega must be 0 (automatic) or in (0, 2)");
  if (l.check_every < 1) return bad("check_every must be >= 1");
  if (!finite(l.gravity) || !finite(l.body_force)) return bad("gravity and body_force must be finite");
  if (!(l.gravity.x * l.gravity.x + l.gravity.y * l.gravity.y + l.gravity.z * l.gravity.z > 0))
    return bad("gravity must be non-zero (it gives buoyancy its direction)");
  for (float v : {l.smoke_weight, l.heat_lift, l.vorticity, l.smoke_decay, l.heat_decay})
    if (!(v >= 0) || !std::isfinite(v)) return bad("smoke_weight, heat_lift, vorticity and the decay rates must be >= 0");
  if (!(l.max_hand_speed > 0) || !std::isfinite(l.max_hand_speed)) return bad("max_hand_speed must be > 0");
  if (l.jet_count < 0 || l.plume_count < 0 || l.jet_count + l.plume_count > kMaxSources)
    return opencl::Error{opencl::Errc::BadScene, "a smoke scene holds at most " + std::to_string(kMaxSources) +
                                                     " jets and plumes"};
  for (int k = 0; k < l.jet_count; ++k)
    if (!valid(l.jets[k])) return opencl::Error{opencl::Errc::BadScene, "jet " + std::to_string(k) + " is out of range"};
  for (int k = 0; k < l.plume_count; ++k)
    if (!valid(l.plumes[k]))
      return opencl::Error{opencl::Errc::BadScene, "plume " + std::to_string(k) + " is out of range"};
  return std::nullopt;
}

}  // namespace sonoflow::smoke
