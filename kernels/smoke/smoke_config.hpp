#pragma once
// Configuration of the grid smoke solver: which OpenCL device, the grid (cubic cells over a box
// in the array frame: origin at the centre of the transducer surface, +z away from the array;
// the array sits on the box's low-z wall), the numerical schemes, and the air's physics. SI
// units throughout. The defaults are the thesis's setting (seed000-haptics 2.5) scaled to a 64^3
// grid of 5 mm cells.
#include <array>
#include <cstdint>

#include "kernels/opencl/device_selector.hpp"
#include "kernels/opencl/expected.hpp"
#include "kernels/types/geometry.hpp"

namespace sonoflow::smoke {

enum class Advection {
  SemiLagrangian,  // Stam 1999: first order, the thesis's scheme
  MacCormack,      // Selle et al. 2008: second order, limited; two more advections per step
};

enum class PressureSolver {
  RedBlackSor,  // Gauss-Seidel in red-black order with over-relaxation, warm-started
  MultigridCg,  // conjugate gradients preconditioned by a geometric multigrid V-cycle
};

struct PressureSettings {
  PressureSolver solver = PressureSolver::MultigridCg;
  float tolerance = 0.5f;    // 1/s: largest |div u| left in any fluid cell after the projection
  int max_iterations = 100;  // SOR sweeps (red + black) or CG iterations per step
  float sor_omega = 0.0f;    // over-relaxation; 0: 2 / (1 + sin(pi / n)) for the grid's size
  int check_every = 4;       // SOR: sweeps between residual checks (each check waits for the device)
};

// Faces of the domain (bit set in SmokeConfig::open_faces: pressure 0, air flows through).
enum OpenFace : unsigned { kOpenLowX = 1u, kOpenHighX = 2u, kOpenLowY = 4u, kOpenHighY = 8u,
                           kOpenLowZ = 16u, kOpenHighZ = 32u };

struct SmokeConfig {
  opencl::DeviceSelector device;
  std::array<int, 3> cells{64, 64, 64};
  float cell_size = 0.005f;                 // m (the thesis: 0.5 m / 100 cells)
  Vec3f origin{-0.16f, -0.16f, 0.0f};       // m, the domain's low corner
  unsigned open_faces = 0;                  // OpenFace bits; closed faces are walls (Neumann)
  int substeps = 1;                         // steps per frame (the thesis: one per 90 Hz frame)
  Advection advection = Advection::SemiLagrangian;
  PressureSettings pressure;

  float air_density = 1.2f;                 // kg/m^3 (pressures come out in Pa)
  Vec3f gravity{0, 0, -9.81f};              // buoyancy acts against its direction
  Vec3f body_force{0, 0, 0};                // m/s^2, e.g. a steady draught
  float smoke_weight = 0.0f;                // m/s^2 per unit smoke density (Fedkiw's alpha)
  float heat_lift = 0.0335f;                // m/s^2 per K above ambient (Boussinesq: g / T0 at 293 K)
  float vorticity = 10.0f;                  // 1/s, confinement strength epsilon: the force is
                                            // eps h |omega| at a vortex core; 0 switches it off
  float smoke_decay = 0.0f;                 // 1/s, exponential fading of the smoke density
  float heat_decay = 0.5f;                  // 1/s, of the temperature excess

  float max_hand_speed = 3.0f;              // m/s, clamp on the rasterised hand velocity
  float teleport_distance = 0.15f;          // m; a joint jumping farther between frames is
                                            // re-placed, not swept through the air
  bool profile = false;                     // OpenCL profiling per kernel (benchmarks)

  Vec3f domain_max() const {
    return {origin.x + cell_size * static_cast<float>(cells[0]),
            origin.y + cell_size * static_cast<float>(cells[1]),
            origin.z + cell_size * static_cast<float>(cells[2])};
  }
};

// BadConfig naming the first field out of range, or nothing.
opencl::Status validate(const SmokeConfig& config);

const char* to_string(Advection a);
const char* to_string(PressureSolver s);

}  // namespace sonoflow::smoke
