#include "daemon/scene/particle_colour.hpp"

#include <algorithm>
#include <cmath>

namespace sonoflow::daemon::scene {
namespace {

std::uint8_t to_byte(float v) noexcept {
  return static_cast<std::uint8_t>(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f));
}

float srgb_encode(float c) noexcept {
  c = std::clamp(c, 0.0f, 1.0f);
  return c <= 0.0031308f ? 12.92f * c : 1.055f * std::pow(c, 1.0f / 2.4f) - 0.055f;
}

Rgb8 mix(const Rgb8& a, const Rgb8& b, float t) noexcept {
  t = std::clamp(t, 0.0f, 1.0f);
  Rgb8 out{};
  for (std::size_t i = 0; i < 3; ++i)
    out[i] = static_cast<std::uint8_t>(std::lround(a[i] + (b[i] - a[i]) * t));
  return out;
}

// Preset names use '_' where configs may say '-' (runny-cream is runny_cream).
bool same_preset(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const char x = a[i] == '-' ? '_' : a[i], y = b[i] == '-' ? '_' : b[i];
    if (x != y) return false;
  }
  return true;
}

}  // namespace

Rgb8 srgb_from_linear(const std::array<float, 3>& linear) noexcept {
  return {to_byte(srgb_encode(linear[0])), to_byte(srgb_encode(linear[1])), to_byte(srgb_encode(linear[2]))};
}

Rgb8 temperature_colour(float kelvin, float solidus, float liquidus) noexcept {
  constexpr Rgb8 steel{110, 115, 125}, dull_red{120, 20, 10}, red{200, 40, 10}, orange{255, 140, 20},
      yellow{255, 230, 90}, white{255, 255, 235};
  if (!std::isfinite(kelvin)) return steel;
  if (kelvin < solidus) return mix(steel, dull_red, 1.0f - (solidus - kelvin) / 300.0f);
  const float span = std::max(liquidus + 600.0f - solidus, 1.0f);
  const float t = (kelvin - solidus) / span;  // 0 at the solidus, 1 at liquidus + 600 K
  if (t < 0.15f) return mix(red, orange, t / 0.15f);
  if (t < 0.5f) return mix(orange, yellow, (t - 0.15f) / 0.35f);
  return mix(yellow, white, (t - 0.5f) / 0.5f);
}

Rgb8 material_colour(std::string_view name) noexcept {
  struct Entry {
    std::string_view name;
    Rgb8 rgb;
  };
  static constexpr Entry kTable[] = {
      {"water", {40, 120, 230}},         {"constraint_water", {40, 120, 230}},
      {"windy_water", {60, 140, 235}},   {"droplets", {80, 160, 240}},
      {"honey", {235, 160, 30}},         {"strawberry_syrup", {200, 30, 60}},
      {"ice_cream", {250, 235, 200}},    {"runny_cream", {245, 235, 210}},
      {"thick_cream", {245, 240, 225}},  {"clay", {170, 100, 70}},
  };
  for (const Entry& e : kTable)
    if (same_preset(e.name, name)) return e.rgb;
  return {70, 150, 220};
}

}  // namespace sonoflow::daemon::scene
