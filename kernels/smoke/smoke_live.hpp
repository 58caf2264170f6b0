#pragma once
// The part of a smoke setup that may change while the engine runs: what lives in the parameter
// block and the sources buffer, so a change needs no reallocation and no kernel rebuild -
// buoyancy, gravity's direction, the body force, vorticity confinement, decay, the hand-speed
// clamp, the pressure solve's tolerance, cap and SOR settings, the advection scheme (MacCormack's
// buffers exist either way) and the jets and plumes (up to kMaxSources). The grid, open faces,
// substeps, air density, teleport distance and the solver's kind stay fixed until a restart.
// Trivially copyable: the daemon carries it in its settings mailbox to the fluid thread.
#include "kernels/opencl/expected.hpp"
#include "kernels/smoke/smoke_config.hpp"
#include "kernels/smoke/smoke_scene.hpp"
#include "kernels/smoke/smoke_toml.hpp"

namespace sonoflow::smoke {

struct SmokeLive {
  Advection advection = Advection::SemiLagrangian;
  float tolerance = 0.5f;
  int max_iterations = 100;
  float sor_omega = 0.0f;
  int check_every = 4;
  Vec3f gravity{0, 0, -9.81f};
  Vec3f body_force{0, 0, 0};
  float smoke_weight = 0.0f;
  float heat_lift = 0.0f;
  float vorticity = 0.0f;
  float smoke_decay = 0.0f;
  float heat_decay = 0.0f;
  float max_hand_speed = 3.0f;
  int jet_count = 0, plume_count = 0;
  SmokeJet jets[kMaxSources]{};
  SmokePlume plumes[kMaxSources]{};

  friend bool operator==(const SmokeLive&, const SmokeLive&);
};

// The live part of a setup (sources beyond kMaxSources are left out: validate() rejects them).
SmokeLive live_part(const SmokeSetup& setup);
// `setup` with the live part replaced by `live` (allocates: config side only).
void apply_live(SmokeSetup& setup, const SmokeLive& live);
// The live values into a config (the engine's own, between frames; no allocation).
void apply_live(SmokeConfig& config, const SmokeLive& live);
// BadConfig or BadScene naming the first value out of range, or nothing; allocates only the
// message of an error.
opencl::Status validate(const SmokeLive& live);

}  // namespace sonoflow::smoke
