#pragma once
// Private to kernels/fluid (nothing outside it includes this): FluidEngine's state, shared by
// the fluid_*.cpp files that implement FluidEngine (the Layout table in README.md).
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/fluid/constraints/constraint_set.hpp"
#include "kernels/fluid/device/device_state.hpp"
#include "kernels/fluid/device/neighbour_search.hpp"
#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/sim_params.hpp"
#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "kernels/fluid/media/media_system.hpp"
#include "kernels/fluid/media/tool_ghosts.hpp"
#include "kernels/fluid/media/welding_gun.hpp"

namespace sonoflow::fluid {

constexpr int kStatLanes = 64;   // cl/stats.cl
constexpr int kStatWords = 24;

// A read-write buffer of at least 16 bytes; the first failure is kept in err.
inline cl::Buffer make_buffer(cl::Context& ctx, std::size_t bytes, cl_int& err) {
  cl_int e = CL_SUCCESS;
  cl::Buffer b(ctx, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 16), nullptr, &e);
  if (e != CL_SUCCESS && err == CL_SUCCESS) err = e;
  return b;
}

struct FluidEngine::Impl {
  FluidConfig cfg;
  Material material;
  std::unique_ptr<ClRuntime> rt;
  DeviceState s;
  std::unique_ptr<Launcher> launch;
  NeighbourSearch search;
  ConstraintSets sets;
  std::unique_ptr<MediaSystem> media;  // issue 7: phases, heat, viscosity, collisions, wind
  HandGhosts ghosts;
  ToolGhosts tool;         // issue 7: a force-feedback tool, ghosts after the hand's
  ToolForce tool_force{};  // its force over the last frame
  int hand_ghosts = 0;     // hand ghosts this frame (the tool's follow)
  WeldingGun gun;          // issue 7: hot filler from the hand, when the material has a [gun]
  std::array<Vec3f, 64> gun_x{}, gun_v{};
  SimParams params{};
  SimParams uploaded{};  // the copy the device reads (kept alive for non-blocking writes)
  bool params_dirty = true;
  float h = 0;
  float epsilon_scale = 0;  // rest-state sum |grad C|^2 (PBF denominator scale)
  float rest_neighbours = 1;
  float laplacian_scale = 1;  // media: SPH Laplacian calibration on the rest lattice
  // The top layer of a flat lattice at rest (calibrate): its neighbours below as (W, V0 dW/dz),
  // and the cohesion's inward pull on it at unit strength.
  std::vector<std::pair<double, double>> surface_below;
  double surface_pull = 0;
  int num_cells = 0;
  std::uint64_t frame = 0;
  bool has_hand_lists = false;

  cl::Kernel predict, finalize, vorticity, xsph, stats_kernel, pose, init_particles, mark_removed,
      inelastic_reaction;
  cl::Buffer remove_buf;

  // Host staging, sized at create.
  std::vector<std::uint32_t> free_ids;  // stack of unused stable ids
  std::vector<Float4> emit_x, emit_v;
  std::vector<std::uint32_t> emit_id;
  int emit_count = 0;
  std::vector<std::uint32_t> remove_ids;
  int remove_count = 0;
  int dead_pending = 0;  // dead particles not yet compacted (from the last stats)
  std::vector<std::uint32_t> dead_ids;
  std::vector<float> stats_host;
  std::vector<Float4> impulse_host;
  std::vector<Float4> display_x, display_phase, display_heat;  // read_display
  std::vector<std::uint32_t> display_flags;

  Impl(const FluidConfig& c)
      : cfg(c),
        material(c.material),
        ghosts(c.max_ghosts,
               c.hand.ghost_spacing > 0 ? c.hand.ghost_spacing : c.particle_spacing, -1.0f,
               c.hand.capsule_contact ? c.hand.capsule_blend : 0.0f),
        tool(c.tool, c.hand.ghost_spacing > 0 ? c.hand.ghost_spacing : c.particle_spacing) {
    material.name.reserve(64);  // set_material copies names without allocating
  }

  void fill_params(double dt);
  Status allocate();
  Status calibrate();
  float balancing_cohesion() const;
  void upload_params();
  void compact();
  void apply_emissions();
  void substep(float s0, float s1);
  // Fields that carry state for the current material (the others are reset when they start to).
  NeighbourSearch::Travel travel() const {
    return {material.model == MaterialModel::Viscoelastic && material.tau > 0,
            material.wall_friction > 0, material.model == MaterialModel::Clay};
  }
  void reset_conformation() {
    const cl_float8 identity = {{1, 1, 1, 0, 0, 0, 0, 0}};
    launch->record(rt->queue().enqueueFillBuffer(s.conf.a, identity, 0,
                                                 static_cast<std::size_t>(cfg.max_particles) * 32));
  }
  void read_stats(FluidStats& st);
};

}  // namespace sonoflow::fluid
