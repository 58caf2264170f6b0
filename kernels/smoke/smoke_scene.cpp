#include "kernels/smoke/smoke_scene.hpp"

#include <cmath>
#include <string>

namespace sonoflow::smoke {

namespace {

opencl::Error bad_scene(const std::string& what) { return {opencl::Errc::BadScene, what}; }

bool finite(const Vec3f& v) { return std::isfinite(v.x) && std::isfinite(v.y) && std::isfinite(v.z); }

}  // namespace

bool valid(const SmokeJet& j) {
  return finite(j.position) && finite(j.velocity) && j.radius > 0 && std::isfinite(j.radius) &&
         j.density >= 0 && std::isfinite(j.density) && std::isfinite(j.temperature);
}

bool valid(const SmokePlume& p) {
  return finite(p.position) && p.radius > 0 && std::isfinite(p.radius) && p.density >= 0 &&
         std::isfinite(p.density) && std::isfinite(p.temperature);
}

opencl::Status validate(const SmokeScene& s) {
  if (s.jets.size() + s.plumes.size() > static_cast<std::size_t>(kMaxSources))
    return bad_scene("a smoke scene holds at most " + std::to_string(kMaxSources) + " jets and plumes");
  for (std::size_t k = 0; k < s.jets.size(); ++k) {
    if (!valid(s.jets[k]))
      return bad_scene("jet " + std::to_string(k) + ": position and velocity finite, radius > 0, density >= 0");
  }
  for (std::size_t k = 0; k < s.plumes.size(); ++k) {
    if (!valid(s.plumes[k]))
      return bad_scene("plume " + std::to_string(k) + ": position finite, radius > 0, density >= 0");
  }
  return std::nullopt;
}

}  // namespace sonoflow::smoke
