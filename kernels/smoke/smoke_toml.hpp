#pragma once
// A smoke scene's setup as TOML: the [smoke] table of a scene file (config/scenes/smoke-*.toml,
// which the daemon also reads as its configuration). Every field of SmokeConfig and every jet
// and plume has a key; unknown keys, wrong types and out-of-range values are errors that name
// the file, line and key. Missing keys keep SmokeConfig's defaults.
//
//   [smoke]
//   cells = [64, 64, 64]             # grid size
//   cell_size = 0.005                # m
//   origin = [-0.16, -0.16, 0.0]     # m, low corner; the array's wall is the low-z face
//   open_faces = ["+z"]              # any of -x +x -y +y -z +z; the rest are walls
//   substeps = 1
//   advection = "semi-lagrangian"    # or "maccormack"
//   solver = "multigrid-cg"          # or "red-black-sor"
//   tolerance = 0.5                  # 1/s, largest divergence left by the projection
//   max_iterations = 100
//   sor_omega = 0.0                  # 0: automatic
//   check_every = 4
//   air_density = 1.2                # kg/m^3
//   gravity = [0, 0, -9.81]          # m/s^2 (its direction orients buoyancy)
//   body_force = [0, 0, 0]           # m/s^2
//   smoke_weight = 0.0               # m/s^2 per unit density
//   heat_lift = 0.0335               # m/s^2 per K
//   vorticity = 10.0                 # 1/s, confinement (0: off)
//   smoke_decay = 0.0                # 1/s
//   heat_decay = 0.5                 # 1/s
//   max_hand_speed = 3.0             # m/s
//   teleport_distance = 0.15         # m
//   [[smoke.jet]]                    # any number of jets and plumes, at most 8 together
//   position = [0.0, 0.0, 0.03]
//   velocity = [0.0, 0.0, 1.5]
//   radius = 0.015
//   density = 1.0
//   temperature = 0.0
//   [[smoke.plume]]
//   position = [0.0, 0.0, 0.03]
//   radius = 0.02
//   density = 1.0
//   temperature = 40.0
#include <string>
#include <string_view>

#include "kernels/opencl/expected.hpp"
#include "kernels/smoke/smoke_config.hpp"
#include "kernels/smoke/smoke_scene.hpp"

namespace sonoflow::smoke {

struct SmokeSetup {
  SmokeConfig config;
  SmokeScene scene;
};

// The [smoke] table of a TOML document (defaults when it has none). `source` names it in errors.
opencl::Expected<SmokeSetup> parse_smoke_setup(std::string_view toml_text, std::string_view source);
// The same from a file (FileNotFound when it cannot be read).
opencl::Expected<SmokeSetup> load_smoke_setup(const std::string& path);

// Whether two setups describe the same simulation (the daemon restarts the engine when not).
bool same_setup(const SmokeSetup& a, const SmokeSetup& b);

// The setup as the [smoke] table it was read from (every key, one per line with a comment, then
// the [[smoke.jet]] and [[smoke.plume]] entries); parse_smoke_setup reads it back to the same.
std::string render_smoke_setup(const SmokeSetup& setup);

}  // namespace sonoflow::smoke
