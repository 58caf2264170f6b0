#pragma once
// The media passes of a substep (issue 7): what the engine runs around its position solve when
// a material carries phases, heat, per-particle viscosity, impulse collisions or a wind.
//
//   predict, sort, neighbour lists
//   begin_substep     media_weights: inverse-mass weights (phases, solids) and viscosities
//   velocity_phase    collision_save (impulse collisions: the predicted velocity)
//   ... density and constraint sweeps (read the weights) ..., finalize
//   end_substep       viscosity sweeps (+ ghost reaction), collision_response,
//                     phase_diffuse, heat_conduct + thermal_phase, wind_apply
//
// It owns the media kernels and scratch buffers; the per-particle media fields live in
// DeviceState (they are reordered with the particles). Host staging for emitted particles and
// the statistics read-back are sized at create: nothing here allocates per frame.
#include <array>
#include <memory>
#include <span>
#include <vector>

#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/device_state.hpp"
#include "kernels/fluid/fluid_config.hpp"
#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "kernels/fluid/media/media_params.hpp"

namespace sonoflow::fluid {

class MediaSystem {
 public:
  static Expected<std::unique_ptr<MediaSystem>> create(ClRuntime& rt, DeviceState& s,
                                                       const FluidConfig& config);

  // Fills the media parameter block for a material at substep dt (between frames).
  // rest_volume and laplacian_scale come from the engine's calibration.
  // rest_diagonal is the rest-state sum |grad C|^2 (the engine's PBF epsilon scale).
  void configure(const Material& m, float h, float rest_volume, float rest_diagonal, float dt);
  const MediaParams& params() const { return params_; }
  bool active() const { return active_; }  // any media pass runs
  // Whether per-particle fractions / thermal state are in use (and so reordered).
  bool fields_active() const { return fields_; }

  // Laplacian calibration from the probe on the rest lattice: lattice offsets and the kernel
  // gradients there (FluidEngine::Impl::calibrate).
  static float calibrate_laplacian(std::span<const Float4> offsets, std::span<const Float4> probe,
                                   float rest_volume, float h);
  void set_laplacian_scale(float scale) { laplacian_scale_ = scale; }

  void set_heat_source(const HeatSource& source);
  // The preset's layout regions apply again at the next frame (material switch, scene load).
  void restart_regions() { regions_pending_ = true; }

  // Emission staging: the state of emitted particle e (index into this frame's emissions).
  void stage(std::size_t e, const ParticleMedia& media);
  // Writes the staged state of `count` particles emitted at slots [first, first + count).
  void upload(Launcher& launch, int first, int count);

  // Substep passes (see the file comment); `material` is the engine's current one.
  void begin_substep(Launcher& launch, DeviceState& s);
  void velocity_phase(Launcher& launch, DeviceState& s);
  void end_substep(Launcher& launch, DeviceState& s);
  // Once per frame before the substeps: parameters, deferred resets after a material switch.
  void begin_frame(Launcher& launch, DeviceState& s);

  // Statistics: enqueue at the end of the frame, read after the queue finished.
  void enqueue_stats(Launcher& launch, DeviceState& s);
  void read_stats(MediaStats& out) const;

  // Diagnostics (tests; allocate, block): the wind at points.
  std::vector<Vec3f> wind_at(ClRuntime& rt, Launcher& launch, std::span<const Vec3f> points);

  cl::Buffer& params_buffer() { return params_buf_; }
  cl::Buffer& viscosity_buffer() { return mu_; }

 private:
  MediaSystem() = default;
  void sample_wind(const Material& m);
  void write_heat_source();

  FluidConfig cfg_;
  DeviceState* s_ = nullptr;
  MediaParams params_{};
  MediaParams uploaded_{};
  MediaSpec spec_;
  float laplacian_scale_ = 1.0f;
  bool active_ = false;
  bool fields_ = false;
  bool configured_ = false;
  bool thermal_pending_ = false;   // reset every particle's enthalpy at the next frame
  bool clear_solids_ = false;      // clear FLAG_SOLID at the next frame
  bool weights_uniform_ = false;   // media_weight holds (1, 1) everywhere
  bool params_dirty_ = true;
  HeatSource source_;

  cl::Kernel weights_k_, reset_k_, clear_k_, stats_k_, diffuse_k_, conduct_k_, phase_k_,
      visc_k_, visc_reaction_k_, wind_k_, wind_probe_k_, save_k_, collide_k_, init_k_, regions_k_;
  cl::Buffer params_buf_, mu_, ustar_, vpred_, wind_grid_, stats_buf_, regions_buf_;
  std::array<Float4, 3 * kMaxRegions> regions_host_{};
  int region_count_ = 0;
  bool regions_pending_ = false;
  int wind_capacity_ = 0;  // grid points the wind buffer holds
  int wind_points_ = 0;
  float wind_spacing_ = 0;
  std::array<int, 3> wind_dim_{0, 0, 0};
  bool wind_upload_ = false;
  std::vector<Float4> wind_host_;
  std::vector<Float4> stage_phase_, stage_heat_;
  std::vector<float> stats_host_;
};

}  // namespace sonoflow::fluid
