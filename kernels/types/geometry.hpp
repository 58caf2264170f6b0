#pragma once
// Plain vector and rotation types that cross thread and layer boundaries. They are trivially
// copyable on purpose (rings, mailboxes and shared memory copy them bytewise); numerical code
// converts to Eigen at its edge with the helpers in kernels/types/eigen_bridge.hpp.
#include <type_traits>

namespace sonoflow {

// A point or direction in metres, array frame unless a name says otherwise.
struct Vec3f {
  float x = 0, y = 0, z = 0;
  friend bool operator==(const Vec3f&, const Vec3f&) = default;
};

// Unit quaternion (x, y, z, w), rotation from a local frame to the array frame.
struct Quatf {
  float x = 0, y = 0, z = 0, w = 1;
  friend bool operator==(const Quatf&, const Quatf&) = default;
};

static_assert(std::is_trivially_copyable_v<Vec3f>);
static_assert(std::is_trivially_copyable_v<Quatf>);

}  // namespace sonoflow
