#include "kernels/acoustics/field.hpp"

#include <utility>

namespace sonoflow::acoustics {

FieldModel::FieldModel(ArrayGeometry geometry, TransducerModel model)
    : geometry_(std::move(geometry)), model_(std::move(model)) {
  const int n = geometry_.size();
  px_ = geometry_.positions.row(0).transpose().array();
  py_ = geometry_.positions.row(1).transpose().array();
  pz_ = geometry_.positions.row(2).transpose().array();
  nx_ = geometry_.normals.row(0).transpose().array();
  ny_ = geometry_.normals.row(1).transpose().array();
  nz_ = geometry_.normals.row(2).transpose().array();
  gain_ = model_.reference_pressure() * geometry_.amplitude_gain;
  dx_.resize(n); dy_.resize(n); dz_.resize(n); r_.resize(n);
  magnitude_.resize(n); phase_.resize(n);
}

// Fills re_ (dx_) and im_ (dy_) with the propagation factors from every transducer to x.
void FieldModel::compute_factors(const Eigen::Vector3f& x) const {
  const int n = geometry_.size();
  dx_ = x.x() - px_;
  dy_ = x.y() - py_;
  dz_ = x.z() - pz_;
  r_ = (dx_.square() + dy_.square() + dz_.square()).sqrt().max(1e-6f);
  // cos(theta_i) = (x - t_i) . n_i / r_i, reusing phase_ as scratch.
  phase_ = (dx_ * nx_ + dy_ * ny_ + dz_ * nz_) / r_;
  for (int i = 0; i < n; ++i) magnitude_[i] = model_.directivity(phase_[i]);
  // Spherical spreading and attenuation (Eq. 2.12): D / r * exp(-beta r).
  magnitude_ *= gain_ * (-model_.attenuation() * r_).exp() / r_;
  phase_ = geometry_.phase_offset - model_.wavenumber() * r_;
  dx_ = magnitude_ * phase_.cos();
  dy_ = magnitude_ * phase_.sin();
}

void FieldModel::propagation_row(const Eigen::Vector3f& x,
                                 Eigen::Ref<Eigen::RowVectorXcf> row) const {
  compute_factors(x);
  for (int i = 0; i < geometry_.size(); ++i) row[i] = Complex(dx_[i], dy_[i]);
}

void FieldModel::propagation(const Eigen::Ref<const Eigen::Matrix3Xf>& points,
                             PropagationMatrix& out) const {
  for (Eigen::Index j = 0; j < points.cols(); ++j) {
    propagation_row(points.col(j), out.row(j));
  }
}

Complex FieldModel::pressure(const Eigen::Vector3f& x, const Drive& q) const {
  compute_factors(x);
  const float re = (dx_ * q.real().array() - dy_ * q.imag().array()).sum();
  const float im = (dx_ * q.imag().array() + dy_ * q.real().array()).sum();
  return {re, im};
}

void FieldModel::pressures(const Eigen::Ref<const Eigen::Matrix3Xf>& points, const Drive& q,
                           Eigen::Ref<Eigen::VectorXcf> out) const {
  for (Eigen::Index j = 0; j < points.cols(); ++j) out[j] = pressure(points.col(j), q);
}

float FieldModel::radiation_pressure(Complex p, float alpha) const {
  const float c = model_.speed_of_sound();
  return alpha * 0.5f * std::norm(p) / (model_.density() * c * c);
}

Eigen::MatrixXf FieldModel::radiation_pressure_slice(const Drive& q, const Eigen::Vector3f& origin,
                                                     const Eigen::Vector3f& u,
                                                     const Eigen::Vector3f& v, int na, int nb,
                                                     float spacing) const {
  Eigen::MatrixXf out(na, nb);
  for (int a = 0; a < na; ++a) {
    for (int b = 0; b < nb; ++b) {
      const Eigen::Vector3f x = origin + (float(a) - 0.5f * float(na - 1)) * spacing * u +
                                (float(b) - 0.5f * float(nb - 1)) * spacing * v;
      out(a, b) = radiation_pressure(pressure(x, q));
    }
  }
  return out;
}

}  // namespace sonoflow::acoustics
