#pragma once
// A constraint set is one family of constraints the position solver projects (PBF density,
// conformation, clay bonds, ...). The engine calls the sets of the active material in registry
// order (constraints/registry.cpp) at fixed points of every substep:
//
//   predict, sort, neighbour lists
//   begin_substep   (every active set)      per-substep set-up (e.g. bond creation)
//   velocity_phase  (every active set)      DC-PBD velocity projection (thesis alg. 2)
//   iterations x project (every active set) one Jacobi sweep each, staggered
//   finalize velocities, post-processing
//   end_substep     (every active set)      per-substep updates (e.g. conformation tensor)
//
// A set owns its kernels and scratch buffers (allocated at create) and reads/writes the shared
// particle state in DeviceState; a Jacobi sweep writes positions to x.b and swaps.
#include <memory>
#include <vector>

#include "kernels/fluid/device/opencl.hpp"
#include "kernels/fluid/device/device_state.hpp"
#include "kernels/fluid/fluid_config.hpp"

namespace sonoflow::fluid {

struct SolverContext {
  DeviceState& s;
  Launcher& launch;
  const Material& material;
  // The ghosts' reaction to the last density sweep, not launched yet (PbfDensity leaves it here;
  // it reads that sweep's start positions, x.b, until the next sweep writes them). The next set
  // carries it in its first launch if it can (carries_density_reaction), otherwise the engine
  // launches it alone before that set: a launch, i.e. a device-wide barrier, less per sweep.
  cl::Kernel* pending_density_reaction = nullptr;
};

class ConstraintSet {
 public:
  virtual ~ConstraintSet() = default;
  virtual const char* name() const = 0;
  virtual bool active(const Material& m) const = 0;
  virtual void begin_substep(SolverContext&) {}
  virtual void velocity_phase(SolverContext&) {}
  virtual void project(SolverContext& ctx) = 0;
  // Whether project() carries ctx.pending_density_reaction in its first launch (and clears it).
  virtual bool carries_density_reaction() const { return false; }
  virtual void end_substep(SolverContext&) {}
};

using ConstraintSets = std::vector<std::unique_ptr<ConstraintSet>>;

// Launches ctx.pending_density_reaction on its own and clears it (pbf_density.cpp).
void launch_pending_density_reaction(SolverContext& ctx);

// Every constraint set the engine knows, in projection order (registry.cpp).
Expected<ConstraintSets> create_constraint_sets(ClRuntime& rt, DeviceState& s);

}  // namespace sonoflow::fluid
