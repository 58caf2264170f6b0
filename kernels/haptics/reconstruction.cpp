#include "kernels/haptics/reconstruction.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace sonoflow::haptics {
namespace {

float normalised_rmse(double squared_error, Eigen::Index n, float peak) {
  if (n == 0 || !(peak > 0)) return 0.0f;
  return static_cast<float>(std::sqrt(squared_error / double(n)) / double(peak));
}

}  // namespace

float am_reconstruction_rmse(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
                             const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                             const FocalSet& foci, float sigma_m) {
  const float inv_two_s2 = 0.5f / (sigma_m * sigma_m);
  double error = 0;
  for (Eigen::Index i = 0; i < positions.cols(); ++i) {
    float best = std::numeric_limits<float>::max(), rendered = 0;
    for (int k = 0; k < foci.count; ++k) {
      const float d2 = (positions.col(i) - foci.points[std::size_t(k)].position).squaredNorm();
      if (d2 < best) {
        best = d2;
        rendered = foci.points[std::size_t(k)].pressure * std::exp(-d2 * inv_two_s2);
      }
    }
    const double e = double(rendered) - double(std::max(pressure[i], 0.0f));
    error += e * e;
  }
  return normalised_rmse(error, positions.cols(), pressure.size() ? pressure.maxCoeff() : 0.0f);
}

float stm_reconstruction_rmse(const Eigen::Ref<const Eigen::Matrix3Xf>& positions,
                              const Eigen::Ref<const Eigen::ArrayXf>& pressure,
                              std::span<const ReconstructionPath> paths, float gamma,
                              float sigma_m) {
  const float inv_two_s2 = 0.5f / (sigma_m * sigma_m);
  double error = 0;
  for (Eigen::Index i = 0; i < positions.cols(); ++i) {
    const Eigen::Vector3f x = positions.col(i);
    float best = std::numeric_limits<float>::max(), rendered_at_best = 0;
    for (const ReconstructionPath& path : paths) {
      const Eigen::Index v = path.vertices.cols();
      for (Eigen::Index a = 0; a < v; ++a) {
        const Eigen::Index b = (a + 1) % v;
        const Eigen::Vector3f p0 = path.vertices.col(a), p1 = path.vertices.col(b);
        const Eigen::Vector3f edge = p1 - p0;
        const float len2 = edge.squaredNorm();
        const float t = len2 > 0 ? std::clamp((x - p0).dot(edge) / len2, 0.0f, 1.0f) : 0.0f;
        const float d2 = (x - (p0 + t * edge)).squaredNorm();
        if (d2 < best) {
          best = d2;
          rendered_at_best = (1 - t) * path.rendered[a] + t * path.rendered[b];
        }
      }
    }
    const float rendered = paths.empty() ? 0.0f : rendered_at_best / gamma * std::exp(-best * inv_two_s2);
    const double e = double(rendered) - double(std::max(pressure[i], 0.0f));
    error += e * e;
  }
  return normalised_rmse(error, positions.cols(), pressure.size() ? pressure.maxCoeff() : 0.0f);
}

}  // namespace sonoflow::haptics
