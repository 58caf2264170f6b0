#pragma once
// Material presets: validation of a Material and its TOML form (config/materials/*.toml).
//
//   name = "honey"
//   model = "viscoelastic"          # water | viscoelastic | clay
//   rest_density = 1420.0           # kg/m^3
//   [solver]        substeps, iterations
//   [pbf]           relaxation, scorr_k, scorr_dq, scorr_n, xsph, vorticity
//   [conformation]  tau, alpha, beta, velocity_iterations, corotation, chebyshev
//   [clay]          viscosity, bonds, bond_radius, bond_on_speed, bond_off_speed,
//                   bond_stretch, bond_stiffness
//   [contact]       wall_friction, wall_restitution, hand_friction
//
// Keys left out keep the defaults of Material (water). Unknown keys, wrong types and values out
// of range are refused with a BadMaterial error that names the key (and the file).
#include <string>
#include <string_view>

#include "kernels/fluid/expected.hpp"
#include "kernels/fluid/fluid_config.hpp"

namespace sonoflow::fluid {

// Checks every field's range; the error names the first offending field.
Status validate_material(const Material& m);

// Parses a preset from TOML text; `source` names it in error messages.
Expected<Material> parse_material(std::string_view toml_text, std::string_view source = "material");

// Reads and parses a preset file.
Expected<Material> load_material(const std::string& path);

std::string_view to_string(MaterialModel model);

}  // namespace sonoflow::fluid
