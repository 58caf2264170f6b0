#pragma once
// SmokeEngine: air and smoke on an Eulerian MAC grid (thesis 4.2.1, the medium of its AM and STM
// experiments), on an OpenCL device (PoCL on the CPU, or any GPU ICD). It owns no threads; the
// daemon's 90 Hz fluid thread calls it, as it calls the particle FluidEngine.
//
//   auto engine = SmokeEngine::create(config);          // picks the device, builds the kernels,
//   if (!engine) log(engine.error().message);           // allocates every buffer once
//   engine.value()->load_scene(scene);                  // jets and plumes; still air
//   every frame:
//     engine->step_frame(newest, &previous, 1.0 / 90, contact_field, stats);
//
// One step (config.substeps per frame): rasterise the hand (signed distance + velocity of its
// capsules, interpolated from `previous` to `newest` across the frame), advect velocity and smoke
// (semi-Lagrangian or MacCormack), apply the sources, buoyancy, body force and vorticity
// confinement, prescribe the velocity of every face on a wall or the hand (free slip), and
// project: solve the pressure Poisson problem (red-black SOR or multigrid-preconditioned CG, to
// config.pressure.tolerance or its iteration cap) and subtract its gradient. After the frame's
// last step, targets are extracted from the array's wall (the low-z face) and the ones with
// pressure written to `out` as samples anchored to hand joints. step_frame does not allocate, lock or throw; it blocks for
// its own device work (the pressure solver's residual checks, the read-back of targets and
// statistics).
#include <array>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/opencl/expected.hpp"
#include "kernels/opencl/kernel_time.hpp"
#include "kernels/smoke/smoke_config.hpp"
#include "kernels/smoke/smoke_live.hpp"
#include "kernels/smoke/smoke_scene.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::smoke {

using SmokeError = opencl::Error;
template <class T>
using Expected = opencl::Expected<T>;
using Status = opencl::Status;

struct SmokeStats {
  std::uint64_t frame = 0;         // frames stepped since create
  std::array<int, 3> cells{};      // grid size
  int hand_cells = 0;              // cells inside the hand after the frame
  int pressure_iterations = 0;     // of the frame's last step (SOR sweeps or CG iterations)
  int pressure_iterations_max = 0; // largest over the frame's steps
  float pressure_residual = 0;     // 1/s, the solver's residual after the last step
  bool pressure_converged = true;  // every step of the frame reached the tolerance
  float max_divergence = 0;        // 1/s, |div u| measured over the fluid after the last step
  float incompatible_divergence = 0;  // 1/s, the uniform divergence a closed box cannot remove
                                      // (a hand crossing its walls changes the air's volume)
  float kinetic_energy = 0;        // J
  float smoke = 0;                 // smoke amount (density x m^3)
  float heat = 0;                  // K m^3 above ambient
  float max_speed = 0;             // m/s
  float max_smoke_density = 0;
  int hand_columns = 0;            // wall columns whose march met the hand
  int contact_samples = 0;         // of those, the ones with pressure (p* > 0) in the field
  int samples_dropped = 0;         // samples with pressure that did not fit the field
  float max_contact_pressure = 0;  // Pa
  int device_errors = 0;           // failed OpenCL calls this frame (should stay 0)
};

// The whole grid, for tests and tools (allocates, blocks). Interior cells only; index
// cell(i, j, k) with 0-based i < nx; faces: u has nx + 1 entries along x (face i is the low face
// of cell i), v ny + 1 along y, w nz + 1 along z.
struct GridSnapshot {
  int nx = 0, ny = 0, nz = 0;
  float h = 0;
  Vec3f origin;
  std::vector<float> u, v, w;               // m/s
  std::vector<float> pressure;              // Pa (0 outside the fluid)
  std::vector<float> density, temperature;  // smoke density, K above ambient
  std::vector<float> sdf;                   // m to the hand (negative inside)
  std::vector<std::uint8_t> solid;          // 1 inside the hand

  std::size_t cell(int i, int j, int k) const {
    return std::size_t(i) + std::size_t(nx) * (std::size_t(j) + std::size_t(ny) * std::size_t(k));
  }
  std::size_t u_at(int i, int j, int k) const {
    return std::size_t(i) + std::size_t(nx + 1) * (std::size_t(j) + std::size_t(ny) * std::size_t(k));
  }
  std::size_t v_at(int i, int j, int k) const {
    return std::size_t(i) + std::size_t(nx) * (std::size_t(j) + std::size_t(ny + 1) * std::size_t(k));
  }
  std::size_t w_at(int i, int j, int k) const {
    return std::size_t(i) + std::size_t(nx) * (std::size_t(j) + std::size_t(ny) * std::size_t(k));
  }
  Vec3f centre(int i, int j, int k) const {
    return {origin.x + (float(i) + 0.5f) * h, origin.y + (float(j) + 0.5f) * h, origin.z + (float(k) + 0.5f) * h};
  }
  // |div u| of cell (i, j, k), 1/s.
  float divergence(int i, int j, int k) const {
    return ((u[u_at(i + 1, j, k)] - u[u_at(i, j, k)]) + (v[v_at(i, j + 1, k)] - v[v_at(i, j, k)]) +
            (w[w_at(i, j, k + 1)] - w[w_at(i, j, k)])) / h;
  }
};

class SmokeEngine {
 public:
  static Expected<std::unique_ptr<SmokeEngine>> create(const SmokeConfig& config);
  ~SmokeEngine();
  SmokeEngine(const SmokeEngine&) = delete;
  SmokeEngine& operator=(const SmokeEngine&) = delete;

  // Still air, no smoke, the scene's sources from the next frame on (set-up time).
  Status load_scene(const SmokeScene& scene);
  // Replaces the jets and plumes from the next frame on, keeping the flow (between frames).
  Status set_sources(const SmokeScene& scene);

  // One frame; see the file comment.
  void step_frame(const HandFrame& newest, const HandFrame* previous, double frame_dt,
                  ContactField& out, SmokeStats& stats);

  // Live settings between frames (smoke_live.hpp: buoyancy, confinement, decay, the pressure
  // solve's limits, the advection scheme, the jets and plumes), keeping the flow. Allocates
  // nothing unless the settings are out of range (BadConfig or BadScene, nothing applied);
  // waits for the device's queue.
  Status apply_live(const SmokeLive& live);

  const SmokeConfig& config() const;
  std::string device_name() const;

  // For live viewers (the fluid thread, between frames, a few times a second): up to out.size()
  // cells holding smoke (density >= min_density), evenly thinned, at their centres. Blocks for
  // the read-back of the smoke field; allocates nothing. Returns how many it wrote.
  struct SmokePoint {
    Vec3f position;
    float density = 0;
  };
  int read_smoke(std::span<SmokePoint> out, float min_density);

  // Diagnostics (allocate, block):
  void read_grid(GridSnapshot& out);
  // Solves A p = rhs with the configured solver on the current cell types, from p = 0:
  // `rhs` per interior cell in the snapshot's cell order (Pa: pressure.cl's b), `pressure` the
  // solution in the same order. Overwrites the engine's pressure.
  struct PoissonReport {
    int iterations = 0;
    float residual = 0;  // 1/s, as SmokeStats::pressure_residual (with the last frame's dt)
    bool converged = false;
  };
  PoissonReport solve_poisson(const std::vector<float>& rhs, std::vector<float>& pressure);
  // With config.profile: device milliseconds per kernel since the last call.
  std::vector<opencl::KernelTime> kernel_profile();

  struct Impl;

 private:
  explicit SmokeEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sonoflow::smoke
