#pragma once
// Phased-array geometry and per-transducer calibration, in the array frame (metres, origin at
// the centre of the transducer surface, +z away from the array).
//
// The default is the 16x16 grid at 10.47 mm pitch of the thesis's device (seed000 section 1.2).
// A device reports its own table (GET_TRANSDUCER_TABLE); `TransducerTable` is the plain form a
// driver fills in, and `ArrayGeometry::from_table` turns it into the structure-of-arrays the
// field code uses.
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "kernels/types/geometry.hpp"

namespace sonoflow::acoustics {

// One transducer as a device describes it. Plain and trivially copyable on purpose.
struct TransducerEntry {
  Vec3f position;            // m
  Vec3f normal{0, 0, 1};     // unit, direction of emission
  float phase_offset = 0;    // rad, added to every commanded phase (measured calibration)
  float amplitude_gain = 1;  // relative output at full drive (measured calibration), 0..~1.2
};

struct TransducerTable {
  std::vector<TransducerEntry> entries;
};

struct GridConfig {
  int columns = 16;
  int rows = 16;
  float pitch_m = 10.47e-3f;  // Ultraleap Dragonfly/USX layout (seed000 1.2)
};

// Structure of arrays: one column per transducer, so the field code vectorises over transducers.
struct ArrayGeometry {
  Eigen::Matrix3Xf positions;       // 3 x T, m
  Eigen::Matrix3Xf normals;         // 3 x T, unit
  Eigen::ArrayXf phase_offset;      // T, rad
  Eigen::ArrayXf amplitude_gain;    // T

  int size() const { return static_cast<int>(positions.cols()); }

  // Centred grid in the z = 0 plane, normals +z, no calibration. Index = row * columns + column.
  static ArrayGeometry grid(const GridConfig& config);
  // From a device's transducer table; normals are re-normalised.
  static ArrayGeometry from_table(const TransducerTable& table);
  TransducerTable to_table() const;
};

}  // namespace sonoflow::acoustics
