#pragma once
// Perceptual weight map (thesis 6.2.2): alpha = 1 at the finger pads, decaying smoothly with
// the distance to the closest pad, "following roughly mechanoreceptor densities" (Corniani &
// Saal 2020). The thesis gives neither the law nor its scale; we use
//   alpha(d) = floor + (1 - floor) * exp(-d^2 / (2 l^2))
// with d the distance to the nearest pad centre (midway between a finger's distal joint and its
// tip), l = 25 mm and floor = 0.25 (fingertip receptor density is several times the palm's).
// The weights multiply the field's own sample weights and steer the AM Lloyd step (Eq. 6.8).
#include <array>

#include <Eigen/Core>

#include "kernels/haptics/target_samples.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::haptics {

struct WeightMapConfig {
  bool enabled = false;
  float decay_length_m = 0.025f;  // l
  float floor = 0.25f;            // alpha far from every pad, 0..1
};

// Pad centres of every tracked finger with valid joints; returns how many were written.
int finger_pads(const HandFrame& frame, std::array<Eigen::Vector3f, 5 * kMaxHands>& pads);

// out[i] = base_weight[i] * alpha(positions[i]); with the map disabled or no pads,
// out[i] = base_weight[i]. `out` has samples.size() entries.
void perceptual_weights(const TargetSamples& samples, const HandFrame& frame,
                        const WeightMapConfig& config, Eigen::Ref<Eigen::ArrayXf> out);

}  // namespace sonoflow::haptics
