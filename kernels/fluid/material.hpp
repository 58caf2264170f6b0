#pragma once
// Material presets: validation of a Material and its TOML form (config/materials/*.toml).
//
//   name = "honey"
//   model = "viscoelastic"          # water | viscoelastic | clay
//   rest_density = 1420.0           # kg/m^3
//   [solver]        substeps, iterations
//   [pbf]           relaxation, scorr_k, scorr_dq, cohesion, xsph, vorticity
//   [conformation]  tau, alpha, beta, velocity_iterations, corotation, chebyshev, yield
//   [clay]          viscosity, bonds, bond_radius, bond_on_speed, bond_off_speed,
//                   bond_stretch, bond_stiffness, yield_stress, plastic_fraction,
//                   wall_adhesion
//   [contact]       wall_friction, wall_restitution, hand_friction
//   [phases] [[phases.liquid]] [viscosity] [thermal] [density] [collision] [turbulence]
//                   issue 7 media, see media/media_toml.hpp
//
// Keys left out keep the defaults of Material (water). Unknown keys, wrong types and values out
// of range are refused with a BadMaterial error that names the key (and the file).
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/fluid/expected.hpp"
#include "kernels/fluid/fluid_config.hpp"

namespace sonoflow::fluid {

// The largest conformation.chebyshev (the spectral radius estimate of the accelerated velocity
// sweeps) accepted. Above it the weights approach 2 and the sweeps fling a stiff viscous block
// off a wall it hits: tau = alpha = 0, 6 cm, thrown at 3-9 m/s, 0.93 and 0.94 sent particles
// back at 6-10 m/s and lost up to 24 of 216; 0.9 and 0.92 never (bench/RESULTS.md, chebygate).
inline constexpr float kMaxChebyshev = 0.9f;

// Checks every field's range; the error names the first offending field.
Status validate_material(const Material& m);

// Parses a preset from TOML text; `source` names it in error messages.
Expected<Material> parse_material(std::string_view toml_text, std::string_view source = "material");

// Reads and parses a preset file.
Expected<Material> load_material(const std::string& path);

std::string_view to_string(MaterialModel model);

// Every preset of a directory (config/materials), loaded once at start-up so that switching
// material on the fluid thread is a lookup: find() does not allocate.
class MaterialLibrary {
 public:
  // Loads every *.toml of `directory`; a preset without `name` is named after its file.
  // Fails on the first bad file (the error names it), or when two presets share a name.
  static Expected<MaterialLibrary> load(const std::string& directory);

  const Material* find(std::string_view name) const;
  std::span<const Material> materials() const { return materials_; }

 private:
  std::vector<Material> materials_;  // sorted by name
};

}  // namespace sonoflow::fluid
