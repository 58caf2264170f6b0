#pragma once
// FluidEngine: the particle fluid the hand touches, on an OpenCL device (PoCL on the CPU, or any
// GPU ICD). It owns no threads; the daemon's 90 Hz fluid thread calls it.
//
//   auto engine = FluidEngine::create(config);          // picks the device, builds the kernels,
//   if (!engine) log(engine.error().message);           // allocates every buffer once
//   engine.value()->load_scene(scene);                  // walls + initial particles
//   every frame:
//     engine->step_frame(newest, &previous, 1.0 / 90, contact_field, stats);
//
// step_frame advances the fluid by frame_dt in material.substeps substeps. The hand is posed
// from `previous` (at the start of the frame) to `newest` (at its end), interpolated per
// substep; with previous == nullptr it stands still at `newest`. It writes the pressure on the
// array-facing hand surface to `out` (samples anchored to joints) and fills `stats`. It does
// not allocate, lock or throw; it blocks only for its own device work (the read-back of the
// contact field and statistics at the end of the frame).
//
// Between frames the caller may: set_tau / set_alpha (live editing, thesis fig. 3.8),
// set_material (switches model and every coefficient), emit particles (pouring), remove
// particles by id. Particles are reordered on the device every substep for locality; their
// stable ids never change, so read_particles and remove see no reordering.
#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/fluid/expected.hpp"
#include "kernels/fluid/fluid_config.hpp"
#include "kernels/fluid/media/media_config.hpp"
#include "kernels/fluid/media/tool_ghosts.hpp"
#include "kernels/fluid/scene.hpp"
#include "kernels/opencl/kernel_time.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::fluid {

struct FluidStats {
  std::uint64_t frame = 0;          // frames stepped since create
  int particles = 0;                // live fluid particles after the frame
  int ghosts = 0;                   // hand ghost particles this frame
  int removed = 0;                  // removed this frame: left the domain or became non-finite
  int non_finite = 0;               // of those, non-finite (a NaN sentinel: should stay 0)
  int neighbour_overflow = 0;       // particles with more neighbours than max_neighbours
  int ghost_list_overflow = 0;      // fluid particles with more hand/tool ghosts within h than
                                    // max_neighbours, and ghosts with more fluid particles (the
                                    // dropped pairs neither push nor react); last substep
  int wall_contacts = 0;            // particles the walls corrected in the last substep
  Vec3f wall_force;                 // N, force of the fluid on the walls in the last substep
  float mean_compression = 0;       // mean of max(rho / rho0 - 1, 0) over the particles
  float mean_abs_density_error = 0; // mean |rho / rho0 - 1| (free-surface deficit included)
  float max_density_error = 0;      // max rho / rho0 - 1
  float max_speed = 0;              // m/s
  float kinetic_energy = 0;         // J
  float max_pressure = 0;           // Pa, from the density multipliers of the last substep
  Vec3f momentum;                   // kg m/s
  Vec3f angular_momentum;           // kg m^2/s about the origin
  Vec3f centroid;                   // m
  Vec3f hand_force;                 // N, mean force of the fluid on the hands over the frame
  float max_contact_pressure = 0;   // Pa, largest sample pressure in the contact field
  int contact_samples = 0;
  int device_errors = 0;            // failed OpenCL calls this frame (should stay 0)
  MediaStats media;                 // phases and heat (zero unless the material has them)
};

// Every particle, ordered by stable id (tests, recorder; allocates, not for the 90 Hz path).
struct ParticleSnapshot {
  std::vector<std::uint32_t> id;
  std::vector<Vec3f> position;
  std::vector<Vec3f> velocity;
  std::vector<float> density;   // kg/m^3 (last density sweep)
  std::vector<float> pressure;  // Pa, -rho0 sum(kappa lambda) / dt^2 of the last substep
  // Media (only when the material has phases or heat; empty otherwise):
  std::vector<std::array<float, kMaxPhases>> fractions;  // volume fraction of each liquid
  std::vector<std::array<float, 3>> colour;            // fraction-weighted liquid colours (RGB)
  std::vector<float> temperature;      // K
  std::vector<float> liquid_fraction;  // 0 solid .. 1 liquid
  std::vector<bool> solid;             // frozen below the solidus
};

// One particle as a live view draws it (read_display): where it is and what its colour is made
// from.
struct DisplayParticle {
  Vec3f position;
  std::array<float, 3> colour{};  // fraction-weighted liquid colour (materials with [phases])
  float temperature = 0;          // K (materials with [thermal]); 0 otherwise
  bool solid = false;             // frozen below the solidus
};

class FluidEngine {
 public:
  static Expected<std::unique_ptr<FluidEngine>> create(const FluidConfig& config);
  ~FluidEngine();
  FluidEngine(const FluidEngine&) = delete;
  FluidEngine& operator=(const FluidEngine&) = delete;

  // Replaces walls and particles (set-up time). Fails with BadScene or CapacityExceeded.
  Status load_scene(const Scene& scene);

  // One frame; see the file comment.
  void step_frame(const HandFrame& newest, const HandFrame* previous, double frame_dt,
                  ContactField& out, FluidStats& stats);

  // Validates and applies a material (model, coefficients, schedule). BadMaterial if invalid.
  Status set_material(const Material& material);
  const Material& material() const;
  void set_tau(float tau);      // s, >= 0 (clamped)
  void set_alpha(float alpha);  // >= 0 (clamped)

  // Queues particles for the next frame; returns how many fit (the rest are dropped).
  int emit(std::span<const Vec3f> positions, std::span<const Vec3f> velocities);
  // The same with the media state of the new particles (liquid fractions, temperature): the
  // welding gun emits hot filler this way.
  int emit(std::span<const Vec3f> positions, std::span<const Vec3f> velocities,
           const ParticleMedia& media);
  // Removes particles by stable id at the next frame; unknown ids are ignored.
  void remove(std::span<const std::uint32_t> ids);

  // The Gaussian surface heat source of thermal materials (the welding arc), from the next
  // frame on; power 0 switches it off.
  void set_heat_source(const HeatSource& source);

  // The force-feedback tool (config.tool), before a frame: the next frame sweeps it from
  // `previous` (its pose one frame_dt before `newest`; null: at rest at `newest`) to `newest`, as
  // step_frame does the hand, with the same teleport rule. A frame with no call before it holds
  // the tool still at its last pose; until the first pose the tool is not in the fluid.
  // tool_force() is the fluid's force on it over the last frame (pressure and viscous drag,
  // applied back to the fluid: the 1 kHz force servo renders it).
  void set_tool_pose(const ToolPose& newest, const ToolPose* previous);
  ToolForce tool_force() const;

  int particle_count() const;
  float particle_mass() const;  // kg (rest density x calibrated rest volume)
  const FluidConfig& config() const;
  std::string device_name() const;

  void read_particles(ParticleSnapshot& out);
  // For live views (the daemon's scene export, a few times a second on the fluid thread, between
  // frames): every k-th live particle, k = ceil(particles / out.size()), in device order (not by
  // id). Returns how many it wrote. Does not allocate (its host staging is sized at create);
  // blocks for its own read-back.
  int read_display(std::span<DisplayParticle> out);

  // Diagnostics for tests (allocate, block):
  // The smoothing kernel as the device evaluates it at offsets r = x_i - x_j.
  struct KernelSample {
    float w = 0;
    Vec3f grad;
  };
  std::vector<KernelSample> evaluate_kernel(std::span<const Vec3f> offsets);
  // A fresh neighbour search at the current positions: for each particle (by stable id, as in
  // read_particles) the stable ids of its fluid neighbours, in list order, and the positions
  // the search used. Reorders the particles on the device (ids are unaffected).
  void neighbour_lists(ParticleSnapshot& particles, std::vector<std::vector<std::uint32_t>>& lists);
  float support_radius() const;  // h, m
  // The turbulence wind at points as the device samples it (m/s).
  std::vector<Vec3f> wind_at(std::span<const Vec3f> points);
  // The hands' ghosts after the last frame, with the fluid's impulse on each over that frame (the
  // raw read-back the contact field is made from): a test can sum the force on a part of the hand
  // apart from the pressure reading. Position and normal on the frame's newest pose (array frame).
  struct GhostImpulse {
    Vec3f position;  // m
    Vec3f normal;    // unit, out of the hand's surface
    float area = 0;  // m^2, the ghost's share of the hand's surface (HandGhosts::area)
    Vec3f impulse;   // N s, of the fluid on the ghost over the frame
    int hand = 0;    // index into the frame's hands
    int joint = 0;   // HandJoint the ghost rides on
  };
  std::vector<GhostImpulse> hand_ghost_impulses() const;

  // With config.profile: device milliseconds per kernel since the last call.
  std::vector<opencl::KernelTime> kernel_profile();

  struct Impl;

 private:
  explicit FluidEngine(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace sonoflow::fluid
