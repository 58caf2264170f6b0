#pragma once
// The scene objects of a smoke scene (thesis Ch. 4 and 5): jets that blow smoke with a set
// velocity (the smoke jet of Table 4.1 a), and plumes that release warm smoke which buoyancy
// lifts (the one- and four-plume scenes of Table 5.1). SI units, array frame.
#include <vector>

#include "kernels/opencl/expected.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::smoke {

inline constexpr int kMaxSources = 8;  // jets and plumes together

struct SmokeJet {
  Vec3f position;                 // m, centre of the nozzle's sphere
  Vec3f velocity{0, 0, 1.0f};     // m/s, prescribed on the faces inside the sphere
  float radius = 0.015f;          // m
  float density = 1.0f;           // smoke density kept at least this high inside the sphere
  float temperature = 0.0f;       // K above ambient
};

struct SmokePlume {
  Vec3f position;                 // m
  float radius = 0.02f;           // m
  float density = 1.0f;
  float temperature = 40.0f;      // K above ambient: what lifts it
};

struct SmokeScene {
  std::vector<SmokeJet> jets;
  std::vector<SmokePlume> plumes;
};

// BadScene naming the first bad object, or nothing.
opencl::Status validate(const SmokeScene& scene);
// Finite positions and velocities, radius > 0, density >= 0.
bool valid(const SmokeJet& jet);
bool valid(const SmokePlume& plume);

}  // namespace sonoflow::smoke
