#include "kernels/haptics/am_renderer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::haptics {

float am_modulation(std::int64_t time_ns, float frequency_hz, float depth) {
  const float d = std::isfinite(depth) ? std::clamp(depth, 0.0f, 1.0f) : 0.0f;
  if (d == 0 || !std::isfinite(frequency_hz) || frequency_hz <= 0) return 1.0f;
  // Cycles since time zero, reduced in double so the phase stays exact for years of uptime.
  const double cycles = std::fmod(double(time_ns) * 1e-9 * double(frequency_hz), 1.0);
  const float s = static_cast<float>(std::sin(2.0 * std::numbers::pi * cycles));
  return 1.0f - d * 0.5f * (1.0f - s);
}

AmRenderer::AmRenderer(const AmConfig& config)
    : config_(config),
      samples_(),
      optimizer_(samples_.capacity()),
      lloyd_weight_(samples_.capacity()) {}

void AmRenderer::reset() noexcept {
  samples_.clear();
  have_solution_ = false;
  solution_.count = 0;
  tracker_.reset();
  have_time_ = false;
  stats_ = {};
}

void AmRenderer::set_max_foci(int n) noexcept {
  config_.optimizer.max_foci = std::clamp(n, 1, kMaxFoci);
}

void AmRenderer::set_modulation_hz(float hz) noexcept {
  if (std::isfinite(hz) && hz > 0) config_.modulation_hz = std::min(hz, 1000.0f);
}

void AmRenderer::optimise(const HandFrame& frame) {
  const int n = samples_.size();
  perceptual_weights(samples_, frame, config_.weight_map, lloyd_weight_.head(n));
  lloyd_weight_.head(n) *= samples_.pressure();  // Eq. 6.8: weights alpha p*
  const auto x = samples_.positions();
  const auto p = samples_.pressure();
  const auto w = lloyd_weight_.head(n);

  stats_.reseeded = false;
  if (!have_solution_ || !reseed_pending_) {
    optimizer_.solve(x, p, w, config_.optimizer, have_solution_ ? &solution_ : nullptr, candidate_);
    stats_.lloyd_iterations = optimizer_.iterations();
  } else {
    // The thesis seeds every frame greedily; we keep the warm solution unless the fresh one is
    // clearly better, so foci do not hop between equally good optima at the field rate. The
    // warm solution is last tick's; re-score it on this tick's samples without moving it.
    reseed_pending_ = false;
    AmOptimizerConfig score_only = config_.optimizer;
    score_only.max_iterations = 0;
    optimizer_.solve(x, p, w, score_only, &solution_, candidate_);
    const float warm_objective = optimizer_.objective();
    FocalSet fresh;
    optimizer_.solve(x, p, w, config_.optimizer, nullptr, fresh);
    stats_.lloyd_iterations = optimizer_.iterations();
    if (optimizer_.objective() < (1.0f - config_.reseed_gain) * warm_objective) {
      candidate_ = fresh;
      stats_.reseeded = true;
    }
  }
  solution_ = candidate_;
  have_solution_ = solution_.count > 0;
  stats_.foci = solution_.count;
}

void AmRenderer::render(const TargetSamples* new_samples, const HandFrame& frame,
                        std::int64_t block_time_ns, FocalBlock& out) noexcept {
  float dt = 1e-3f;
  if (have_time_) {
    dt = std::clamp(float(block_time_ns - last_block_time_ns_) * 1e-9f, 0.0f, 0.05f);
  }
  last_block_time_ns_ = block_time_ns;
  have_time_ = true;

  if (new_samples != nullptr) {
    samples_.copy_from(*new_samples);
    reseed_pending_ = true;
  }
  const bool stale = config_.max_field_age_ns > 0 &&
                     block_time_ns - samples_.field_time_ns() > config_.max_field_age_ns;
  std::array<Eigen::Vector3f, kMaxFoci> positions;
  std::array<float, kMaxFoci> intensities;
  int count = 0;
  if (frame.hand_count > 0 && !samples_.empty() && !stale) {
    samples_.repose(frame);
    optimise(frame);
    for (int k = 0; k < solution_.count; ++k) {
      positions[std::size_t(k)] = solution_.points[std::size_t(k)].position;
      intensities[std::size_t(k)] =
          to_intensity(solution_.points[std::size_t(k)].pressure, config_.intensity);
    }
    count = solution_.count;
    apply_power_cap(std::span<float>(intensities.data(), std::size_t(count)), config_.intensity);
  } else {
    have_solution_ = false;
    stats_ = {};
  }
  tracker_.update(std::span<const Eigen::Vector3f>(positions.data(), std::size_t(count)),
                  std::span<const float>(intensities.data(), std::size_t(count)), dt,
                  config_.glide);

  std::array<RenderedFocus, kMaxFoci> foci;
  const int active = tracker_.active(foci);
  out.sequence = ++sequence_;
  out.start_time_ns = block_time_ns;
  out.hand_frame_id = frame.frame_id;
  out.hand_capture_time_ns = frame.capture_time_ns;
  out.mode = active > 0 ? HapticMode::AM : HapticMode::Silent;
  constexpr std::int64_t kSamplePeriodNs = 1'000'000'000 / kStreamRateHz;
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    FocalSample& sample = out.samples[std::size_t(i)];
    const float m = am_modulation(block_time_ns + i * kSamplePeriodNs, config_.modulation_hz,
                                  config_.modulation_depth);
    sample.count = static_cast<std::uint8_t>(active);
    for (int k = 0; k < kMaxFoci; ++k) {
      Focus& f = sample.foci[std::size_t(k)];
      if (k < active) {
        const RenderedFocus& r = foci[std::size_t(k)];
        f.position = {r.position.x(), r.position.y(), r.position.z()};
        f.intensity = r.intensity * m;
      } else {
        f = Focus{};
      }
    }
  }
}

}  // namespace sonoflow::haptics
