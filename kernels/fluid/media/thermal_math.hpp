#pragma once
// The enthalpy formulation of melting on the host (mirrors thermal_state in cl/media_common.cl):
// specific enthalpy H (J/kg) from 0 K, constant specific heat c, latent heat L taken in linearly
// between solidus and liquidus (the mushy zone).
#include "kernels/fluid/media/media_config.hpp"

namespace sonoflow::fluid {

struct ThermalPoint {
  float temperature = 0;      // K
  float liquid_fraction = 0;  // 0 solid .. 1 liquid
};

inline float solidus_enthalpy(const ThermalSpec& t) { return t.specific_heat * t.solidus; }
inline float liquidus_enthalpy(const ThermalSpec& t) {
  return solidus_enthalpy(t) + t.specific_heat * (t.liquidus - t.solidus) + t.latent_heat;
}

inline ThermalPoint state_at(const ThermalSpec& t, float H) {
  const float hs = solidus_enthalpy(t), hl = liquidus_enthalpy(t);
  if (H <= hs) return {H / t.specific_heat, 0.0f};
  if (H >= hl) return {t.liquidus + (H - hl) / t.specific_heat, 1.0f};
  const float f = (H - hs) / (hl - hs);
  return {t.solidus + f * (t.liquidus - t.solidus), f};
}

// Enthalpy of a particle at temperature T (in the mushy zone: the equilibrium fraction).
inline float enthalpy_at(const ThermalSpec& t, float T) {
  if (T <= t.solidus) return t.specific_heat * T;
  if (T >= t.liquidus) return liquidus_enthalpy(t) + t.specific_heat * (T - t.liquidus);
  const float f = (T - t.solidus) / (t.liquidus - t.solidus);
  return solidus_enthalpy(t) + f * (liquidus_enthalpy(t) - solidus_enthalpy(t));
}

}  // namespace sonoflow::fluid
