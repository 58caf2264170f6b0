#pragma once
// The pressure the array puts back on the hand, under the renderer's own Gaussian model (the
// thesis's figures 4.2, 5.3 and 6.4 draw target next to this), computed by the viewer from what
// the haptic thread published, so the real-time thread never does it:
//
//   AM  (Eq. 4.1): p(x) = p_i phi(|x - x_i|), x_i the nearest focus (Voronoi, no summation)
//   STM (Eq. 5.1): p(x) = (1/gamma) p_i phi(|x - x_i|), x_i the nearest point of any path and
//                  p_i = gamma p*(x_i), p* interpolated along the path
// with phi(d) = exp(-d^2 / (2 sigma^2)).
#include <span>
#include <vector>

#include "daemon/scene/scene_file.hpp"

namespace sonoflow::daemon::view {

// Reconstructed pressure (Pa) at each target sample; zeros when nothing is rendered.
std::vector<float> reconstruct(const scene::HapticScene& haptic);

// Root mean square of reconstructed - target over the samples, divided by the largest target
// (0 when the target is all zero): the error the renderers are judged by.
float normalised_rmse(std::span<const scene::SceneSample> targets, std::span<const float> reconstructed);

}  // namespace sonoflow::daemon::view
