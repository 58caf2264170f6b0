#pragma once
// Complex acoustic field of the array at arbitrary points (thesis Eq. 2.12), vectorised over
// transducers, plus the acoustic radiation pressure on skin (Hoshi et al. 2010, seed000 1.3).
//
// Convention: p(x) = sum_i A_i(x) q_i with the propagation factor
//   A_i(x) = P_ref g_i D(theta_i) / r_i * exp(-beta r_i) * exp(-j k r_i + j phi_cal_i)
// and q_i the complex drive, |q_i| <= 1. A single focus at x_f is phase conjugation:
// q_i = exp(j (k r_i - phi_cal_i)).
//
// Not thread-safe: one FieldModel per thread (it owns scratch buffers so that evaluation does
// not allocate).
#include <cmath>
#include <complex>

#include <Eigen/Core>

#include "kernels/acoustics/array_geometry.hpp"
#include "kernels/acoustics/transducer_model.hpp"

namespace sonoflow::acoustics {

using Complex = std::complex<float>;

// |z|^2 and |z| without the overflow-safe hypot that std::abs and (in libstdc++) std::norm use:
// field values are far from the float range limits, and these sit in the solvers' inner loops.
inline float magnitude_squared(Complex z) { return z.real() * z.real() + z.imag() * z.imag(); }
inline float magnitude(Complex z) { return std::sqrt(magnitude_squared(z)); }
using Drive = Eigen::VectorXcf;  // one complex command per transducer
// Rows: points; columns: transducers. Row-major so each point's row is contiguous.
using PropagationMatrix =
    Eigen::Matrix<Complex, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

class FieldModel {
 public:
  FieldModel(ArrayGeometry geometry, TransducerModel model);

  const ArrayGeometry& geometry() const { return geometry_; }
  const TransducerModel& model() const { return model_; }
  int transducer_count() const { return geometry_.size(); }

  // Row j of `out` = propagation factors from every transducer to point j. `out` must already
  // be points.cols() x transducer_count() (resize it once, outside the real-time path).
  void propagation(const Eigen::Ref<const Eigen::Matrix3Xf>& points, PropagationMatrix& out) const;
  void propagation_row(const Eigen::Vector3f& x, Eigen::Ref<Eigen::RowVectorXcf> row) const;

  // Complex pressure (Pa, peak amplitude and phase) at x for drive q.
  Complex pressure(const Eigen::Vector3f& x, const Drive& q) const;
  // The same at every column of `points`; `out` must already hold points.cols() entries.
  void pressures(const Eigen::Ref<const Eigen::Matrix3Xf>& points, const Drive& q,
                 Eigen::Ref<Eigen::VectorXcf> out) const;

  // Acoustic radiation pressure on a reflecting surface: P = alpha p_rms^2 / (rho c^2) with
  // p_rms^2 = |p|^2 / 2 and alpha = 1 + R^2 ~ 2 for skin.
  float radiation_pressure(Complex p, float alpha = 2.0f) const;

  // Radiation pressure on a planar grid: point (a, b) = origin + (a - (na-1)/2) * spacing * u
  // + (b - (nb-1)/2) * spacing * v. Allocates (analysis and tests, not the real-time path).
  Eigen::MatrixXf radiation_pressure_slice(const Drive& q, const Eigen::Vector3f& origin,
                                           const Eigen::Vector3f& u, const Eigen::Vector3f& v,
                                           int na, int nb, float spacing) const;

 private:
  void compute_factors(const Eigen::Vector3f& x) const;

  ArrayGeometry geometry_;
  TransducerModel model_;
  // Contiguous copies of the geometry rows (a row of a 3 x T matrix is strided and would not
  // vectorise), and the per-transducer constant factor P_ref * g_i.
  Eigen::ArrayXf px_, py_, pz_, nx_, ny_, nz_, gain_;
  // Scratch, one entry per transducer.
  mutable Eigen::ArrayXf dx_, dy_, dz_, r_, magnitude_, phase_;
};

}  // namespace sonoflow::acoustics
