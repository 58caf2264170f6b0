#pragma once
// Linear blends of positions and rotations, for posing the hand and the tool between two
// timestamped samples (TimedHistory).
#include <cmath>

#include "kernels/types/geometry.hpp"

namespace sonoflow::daemon {

inline float lerp(float a, float b, float s) noexcept { return a + (b - a) * s; }

inline Vec3f lerp(const Vec3f& a, const Vec3f& b, float s) noexcept {
  return {lerp(a.x, b.x, s), lerp(a.y, b.y, s), lerp(a.z, b.z, s)};
}

// Normalised lerp along the shorter arc (q and -q are the same rotation); close to slerp for
// the small turns between two samples.
inline Quatf nlerp(const Quatf& a, Quatf b, float s) noexcept {
  if (a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w < 0) b = {-b.x, -b.y, -b.z, -b.w};
  const Quatf q{lerp(a.x, b.x, s), lerp(a.y, b.y, s), lerp(a.z, b.z, s), lerp(a.w, b.w, s)};
  const float n = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w);
  if (!(n > 0)) return b;
  return {q.x / n, q.y / n, q.z / n, q.w / n};
}

}  // namespace sonoflow::daemon
