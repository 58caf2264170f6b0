#include "kernels/acoustics/array_geometry.hpp"

#include <cstddef>

namespace sonoflow::acoustics {

ArrayGeometry ArrayGeometry::grid(const GridConfig& config) {
  const int count = config.columns * config.rows;
  ArrayGeometry g;
  g.positions.resize(3, count);
  g.normals.resize(3, count);
  g.phase_offset = Eigen::ArrayXf::Zero(count);
  g.amplitude_gain = Eigen::ArrayXf::Ones(count);
  const float cx = 0.5f * static_cast<float>(config.columns - 1);
  const float cy = 0.5f * static_cast<float>(config.rows - 1);
  for (int row = 0; row < config.rows; ++row) {
    for (int col = 0; col < config.columns; ++col) {
      const int i = row * config.columns + col;
      g.positions.col(i) << (static_cast<float>(col) - cx) * config.pitch_m,
          (static_cast<float>(row) - cy) * config.pitch_m, 0.0f;
      g.normals.col(i) << 0.0f, 0.0f, 1.0f;
    }
  }
  return g;
}

ArrayGeometry ArrayGeometry::from_table(const TransducerTable& table) {
  const int count = static_cast<int>(table.entries.size());
  ArrayGeometry g;
  g.positions.resize(3, count);
  g.normals.resize(3, count);
  g.phase_offset.resize(count);
  g.amplitude_gain.resize(count);
  for (int i = 0; i < count; ++i) {
    const TransducerEntry& e = table.entries[static_cast<std::size_t>(i)];
    g.positions.col(i) << e.position.x, e.position.y, e.position.z;
    Eigen::Vector3f n(e.normal.x, e.normal.y, e.normal.z);
    const float len = n.norm();
    g.normals.col(i) = len > 0 ? Eigen::Vector3f(n / len) : Eigen::Vector3f::UnitZ();
    g.phase_offset[i] = e.phase_offset;
    g.amplitude_gain[i] = e.amplitude_gain;
  }
  return g;
}

TransducerTable ArrayGeometry::to_table() const {
  TransducerTable t;
  t.entries.resize(static_cast<std::size_t>(size()));
  for (int i = 0; i < size(); ++i) {
    TransducerEntry& e = t.entries[static_cast<std::size_t>(i)];
    e.position = {positions(0, i), positions(1, i), positions(2, i)};
    e.normal = {normals(0, i), normals(1, i), normals(2, i)};
    e.phase_offset = phase_offset[i];
    e.amplitude_gain = amplitude_gain[i];
  }
  return t;
}

}  // namespace sonoflow::acoustics
