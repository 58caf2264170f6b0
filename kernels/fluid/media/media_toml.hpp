#pragma once
// The media sections of a material preset (issue 7), read by parse_material (material.cpp):
//
//   [phases]       diffusion (sigma_dif; D = sigma h^2 / s)
//   [[phases.liquid]]   rest_density, viscosity, colour = [r, g, b]   (1 to 4 of them)
//   [viscosity]    viscosity (Pa s), iterations, hand (ghosts are no-slip partners)
//   [thermal]      conductivity, specific_heat, latent_heat, solidus, liquidus,
//                  initial_temperature, viscosity_ref, viscosity_ref_temperature,
//                  viscosity_slope, viscosity_min, mushy_viscosity, stiffness_exponent
//                  (a [thermal] table switches heat on)
//   [density]      solver = "pbf" | "spook" (spook: model = "water" only), method = "jacobi" | "cg",
//                  tau (substeps, > 0), epsilon, gamma, omega
//   [collision]    model = "anchor" | "impulse", friction = "dry" | "wet", restitution, mu,
//                  damping
//   [turbulence]   source = "octave" | "spectral", speed, scale, octaves, drag, force,
//                  grid_spacing, seed (a [turbulence] table switches the wind on)
//   [[regions]]    min = [x, y, z], max = [x, y, z], fractions = [...], temperature, remove
//                  (up to 8: the preset's layout of the pool, media_config.hpp RegionSpec)
//   [gun]          rate, temperature, speed, nozzle, standoff, aim = "down" | "finger",
//                  arc_power, arc_radius, arc_reach, fill_limit (a welding gun in the hand)
//
// Unknown keys, wrong types and values out of range are refused naming the key.
#include <optional>
#include <string>
#include <string_view>

#include <toml++/toml.h>

#include "kernels/fluid/expected.hpp"
#include "kernels/fluid/fluid_config.hpp"

namespace sonoflow::fluid {

bool is_media_table(std::string_view name);

// Reads one media table of a preset into m.media; the error names the key.
Status parse_media_table(std::string_view name, const toml::node& node, Material& m,
                         std::string_view source);

// Range and consistency checks of m.media; the error names the first bad key.
Status validate_media(const Material& m);

}  // namespace sonoflow::fluid
