#pragma once
// Conversions between the plain interface types and Eigen, for code inside kernels/.
#include <Eigen/Geometry>

#include "kernels/types/geometry.hpp"

namespace sonoflow {

inline Eigen::Vector3f to_eigen(const Vec3f& v) { return {v.x, v.y, v.z}; }
inline Vec3f to_vec3f(const Eigen::Vector3f& v) { return {v.x(), v.y(), v.z()}; }
inline Eigen::Quaternionf to_eigen(const Quatf& q) { return {q.w, q.x, q.y, q.z}; }
inline Quatf to_quatf(const Eigen::Quaternionf& q) { return {q.x(), q.y(), q.z(), q.w()}; }

}  // namespace sonoflow
