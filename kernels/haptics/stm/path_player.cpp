#include "kernels/haptics/stm/path_player.hpp"

#include <algorithm>
#include <cmath>

#include "kernels/haptics/assignment.hpp"

namespace sonoflow::haptics::stm {
namespace {

float smoothstep(float t) {
  t = std::clamp(t, 0.0f, 1.0f);
  return t * t * (3 - 2 * t);
}

}  // namespace

void PathPlayer::stop() {
  current_.path_count = 0;
  previous_.path_count = 0;
  blend_duration_s_ = blend_elapsed_s_ = 0;
  gain_ = 0;
}

void PathPlayer::update_current(const StmPlan& plan, const RigidMotion& motion) {
  // Each focus keeps its place within its segment (segment index and fraction), so it moves
  // only as far as that segment's vertices; keeping the arc length instead would slide it by
  // every length change upstream on the loop.
  const int keep = std::min(plan.path_count, current_.path_count);
  std::array<float, kMaxRefinedPaths> fraction{};
  for (int k = 0; k < keep; ++k) {
    Voice& v = voice_[std::size_t(k)];
    const StmPath& old = current_.paths[std::size_t(k)];
    old.point_at(v.s, v.segment);
    float s_in = std::fmod(v.s, old.length > 0 ? old.length : 1.0f);
    if (s_in < 0) s_in += old.length;
    const float span = old.arc[std::size_t(v.segment + 1)] - old.arc[std::size_t(v.segment)];
    fraction[std::size_t(k)] = span > 0 ? std::clamp((s_in - old.arc[std::size_t(v.segment)]) / span, 0.0f, 1.0f) : 0.0f;
  }
  current_ = plan;
  current_.path_count = keep;
  for (int k = 0; k < keep; ++k) {
    StmPath& path = current_.paths[std::size_t(k)];
    path.update_arc();
    Voice& v = voice_[std::size_t(k)];
    v.segment = std::min(v.segment, std::max(path.count - 1, 0));
    v.s = path.arc[std::size_t(v.segment)] +
          fraction[std::size_t(k)] * (path.arc[std::size_t(v.segment + 1)] - path.arc[std::size_t(v.segment)]);
  }
  motion_ = motion;
}

void PathPlayer::hand_over(const StmPlan& plan, const RigidMotion& motion,
                           const PlayerConfig& config) {
  // The old plan, re-expressed in the new plan's frame: both ride on the new motion from now.
  const bool had_plan = current_.path_count > 0;
  previous_ = current_;
  previous_voice_ = voice_;
  previous_slot_ = slot_;
  const RigidMotion to_new = motion.inverse() * motion_;
  for (int j = 0; j < previous_.path_count; ++j) {
    StmPath& p = previous_.paths[std::size_t(j)];
    for (int i = 0; i < p.count; ++i) p.vertex[std::size_t(i)] = to_new.apply(p.vertex[std::size_t(i)]);
    p.update_arc();
  }
  current_ = plan;
  current_.path_count = std::min(plan.path_count, kMaxRefinedPaths);
  for (int k = 0; k < current_.path_count; ++k) current_.paths[std::size_t(k)].update_arc();
  motion_ = motion;
  partner_.fill(-1);
  previous_matched_.fill(false);
  voice_ = {};
  if (!had_plan) previous_.path_count = 0;

  // Where each old focus is now, and where it is heading.
  const int np = previous_.path_count, nc = current_.path_count;
  std::array<Eigen::Vector3f, kMaxRefinedPaths> old_position, old_heading;
  for (int j = 0; j < np; ++j) {
    Voice& v = previous_voice_[std::size_t(j)];
    const StmPath& p = previous_.paths[std::size_t(j)];
    old_position[std::size_t(j)] = p.point_at(v.s, v.segment);
    old_heading[std::size_t(j)] = v.dir * p.tangent_at(v.s);
  }
  // Match old foci to new paths by distance (the smaller set is matched completely).
  CostMatrix cost{};
  const bool old_rows = np <= nc;
  const int rows = old_rows ? np : nc, cols = old_rows ? nc : np;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      const int j = old_rows ? r : c, k = old_rows ? c : r;
      float d = 0;
      current_.paths[std::size_t(k)].nearest_arc(old_position[std::size_t(j)], &d);
      cost[std::size_t(r)][std::size_t(c)] = d;
    }
  }
  std::array<int, kMaxAssignment> pick{};
  min_cost_assignment(cost, rows, cols, pick);
  for (int r = 0; r < rows; ++r) {
    const int j = old_rows ? r : pick[std::size_t(r)], k = old_rows ? pick[std::size_t(r)] : r;
    partner_[std::size_t(k)] = j;
    previous_matched_[std::size_t(j)] = true;
    const StmPath& path = current_.paths[std::size_t(k)];
    Voice& v = voice_[std::size_t(k)];
    v.s = path.nearest_arc(old_position[std::size_t(j)]);
    v.dir = path.tangent_at(v.s).dot(old_heading[std::size_t(j)]) >= 0 ? 1.0f : -1.0f;
  }
  // Slots: a matched path inherits its partner's, old paths fading out keep theirs, new ones
  // take the lowest free slots.
  std::array<bool, kMaxFoci> taken{};
  for (int j = 0; j < np; ++j) taken[std::size_t(previous_slot_[std::size_t(j)])] = true;
  for (int k = 0; k < nc; ++k) {
    const int j = partner_[std::size_t(k)];
    if (j >= 0) {
      slot_[std::size_t(k)] = previous_slot_[std::size_t(j)];
      continue;
    }
    int free = 0;
    while (free < kMaxFoci - 1 && taken[std::size_t(free)]) ++free;
    taken[std::size_t(free)] = true;
    slot_[std::size_t(k)] = free;
  }
  // Blend time: the rendered point moves at v + beta' * gap at most, and a smoothstep's slope
  // peaks at 1.5 / T, so T must be at least 1.5 * (largest gap during the blend) / v_extra. The
  // gap is found by running each matched pair of foci forward over the candidate T (every
  // 0.5 ms); T grows until it covers its own gap, or reaches handover_max_s.
  const float extra = std::max(config.handover_extra_speed_m_s, 1e-3f);
  const float t_min = std::max(config.handover_min_s, 1e-4f);
  const float t_max = std::max(config.handover_max_s, t_min);
  const float speed = std::isfinite(config.speed_m_s) ? std::max(config.speed_m_s, 0.0f) : 0.0f;
  float duration = t_min;
  for (int round = 0; round < 6; ++round) {
    float gap = 0;
    for (int k = 0; k < nc; ++k) {
      const int j = partner_[std::size_t(k)];
      if (j < 0) continue;
      Voice a = previous_voice_[std::size_t(j)], b = voice_[std::size_t(k)];
      for (float t = 0; t <= duration + 1e-6f; t += 0.5e-3f) {
        const Eigen::Vector3f pa = previous_.paths[std::size_t(j)].point_at(a.s + a.dir * speed * t, a.segment);
        const Eigen::Vector3f pb = current_.paths[std::size_t(k)].point_at(b.s + b.dir * speed * t, b.segment);
        gap = std::max(gap, (pa - pb).norm());
      }
    }
    const float needed = 1.5f * gap / extra;
    if (needed <= duration) break;
    duration = std::min(needed * 1.05f, t_max);
    if (duration >= t_max) break;
  }
  blend_duration_s_ = duration;
  blend_elapsed_s_ = 0;
}

void PathPlayer::play(bool audible, const PlayerConfig& config, FocalBlock& out) {
  constexpr float kDt = 1.0f / float(kStreamRateHz);
  const float speed = std::isfinite(config.speed_m_s) ? std::max(config.speed_m_s, 0.0f) : 0.0f;
  const float fade_step = std::max(config.fade_rate_per_s, 0.0f) * kDt;
  const int nc = current_.path_count;
  const bool blend = blend_duration_s_ > 0;
  const int np = blend ? previous_.path_count : 0;
  auto rendered = [&](float p) { return to_intensity(config.gamma * p, config.intensity); };

  for (int i = 0; i < kSamplesPerBlock; ++i) {
    FocalSample& sample = out.samples[std::size_t(i)];
    const float beta = blend ? smoothstep(blend_elapsed_s_ / blend_duration_s_) : 1.0f;
    gain_ = audible ? std::min(1.0f, gain_ + fade_step) : std::max(0.0f, gain_ - fade_step);
    std::array<float, kMaxFoci> intensity{};
    std::array<bool, kMaxFoci> used{};
    int count = 0;
    auto emit = [&](int slot, const Eigen::Vector3f& x, float level) {
      slot_position_[std::size_t(slot)] = motion_.apply(x);
      intensity[std::size_t(slot)] = level;
      used[std::size_t(slot)] = true;
      count = std::max(count, slot + 1);
    };
    std::array<Eigen::Vector3f, kMaxRefinedPaths> old_position;
    std::array<float, kMaxRefinedPaths> old_intensity{};
    for (int j = 0; j < np; ++j) {
      Voice& v = previous_voice_[std::size_t(j)];
      float p = 0;
      old_position[std::size_t(j)] = previous_.paths[std::size_t(j)].point_at(v.s, v.segment, &p);
      old_intensity[std::size_t(j)] = rendered(p);
      v.s += v.dir * speed * kDt;
    }
    for (int k = 0; k < nc; ++k) {
      Voice& v = voice_[std::size_t(k)];
      float p = 0;
      Eigen::Vector3f x = current_.paths[std::size_t(k)].point_at(v.s, v.segment, &p);
      float level = rendered(p);
      const int j = blend ? partner_[std::size_t(k)] : -1;
      if (j >= 0) {
        x = (1 - beta) * old_position[std::size_t(j)] + beta * x;
        level = (1 - beta) * old_intensity[std::size_t(j)] + beta * level;
      } else if (blend) {
        level *= beta;  // a new path fades in
      }
      emit(slot_[std::size_t(k)], x, level);
      v.s += v.dir * speed * kDt;
    }
    for (int j = 0; j < np; ++j) {
      if (previous_matched_[std::size_t(j)]) continue;  // an old path with no partner fades out
      emit(previous_slot_[std::size_t(j)], old_position[std::size_t(j)], (1 - beta) * old_intensity[std::size_t(j)]);
    }
    apply_power_cap(std::span<float>(intensity.data(), std::size_t(count)), config.intensity);
    sample.count = static_cast<std::uint8_t>(count);
    for (int k = 0; k < kMaxFoci; ++k) {
      Focus& f = sample.foci[std::size_t(k)];
      if (k < count) {
        const Eigen::Vector3f& x = slot_position_[std::size_t(k)];
        f.position = {x.x(), x.y(), x.z()};
        f.intensity = used[std::size_t(k)] ? gain_ * intensity[std::size_t(k)] : 0.0f;
      } else {
        f = Focus{};
      }
    }
    if (blend) blend_elapsed_s_ += kDt;
  }
  // Blends end on a block boundary so the focus count of a block never changes mid-block.
  if (blend && blend_elapsed_s_ >= blend_duration_s_) {
    blend_duration_s_ = blend_elapsed_s_ = 0;
    previous_.path_count = 0;
  }
  // Keep arc positions small so float precision does not erode over hours of play.
  for (int k = 0; k < nc; ++k) {
    const float len = current_.paths[std::size_t(k)].length;
    if (len > 0) voice_[std::size_t(k)].s = std::fmod(voice_[std::size_t(k)].s, len);
  }
}

}  // namespace sonoflow::haptics::stm
