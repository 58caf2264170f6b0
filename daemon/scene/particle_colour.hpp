#pragma once
// How the scene export colours particles: by mixture (the fraction-weighted colours of the
// liquids, for materials with [phases]), by temperature (materials with [thermal]: dark red at
// the solidus through orange and yellow to white well above the liquidus, grey steel below), or
// by material (one colour per preset name).
#include <array>
#include <cstdint>
#include <string_view>

namespace sonoflow::daemon::scene {

using Rgb8 = std::array<std::uint8_t, 3>;

// Linear RGB 0..1 (the presets' phase colours) to 8-bit sRGB, clamped.
Rgb8 srgb_from_linear(const std::array<float, 3>& linear) noexcept;
// Incandescence ramp over [solidus - 300 K, liquidus + 600 K]; solid particles below the
// solidus are steel grey with a red glow that fades out 300 K below it.
Rgb8 temperature_colour(float kelvin, float solidus, float liquidus) noexcept;
// A colour per known preset (honey amber, water blue, ...); a neutral blue for others.
Rgb8 material_colour(std::string_view material) noexcept;

}  // namespace sonoflow::daemon::scene
