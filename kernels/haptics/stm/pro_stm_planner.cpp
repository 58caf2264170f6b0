#include "kernels/haptics/stm/pro_stm_planner.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::haptics::stm {
namespace {

constexpr float kTwoPi = 2.0f * std::numbers::pi_v<float>;

// Ramanujan's approximation of an ellipse's perimeter.
float ellipse_perimeter(float a, float b) {
  return std::numbers::pi_v<float> * (3 * (a + b) - std::sqrt((3 * a + b) * (a + 3 * b)));
}

// N samples at equal arc length on the ellipse centre + a cos t axis + b sin t normal(axis).
template <typename Out>
void sample_ellipse(const Eigen::Vector2f& centre, const Eigen::Vector2f& axis, float a, float b,
                    int n, Out&& out) {
  constexpr int kSteps = 256;
  std::array<float, kSteps + 1> arc{};
  const Eigen::Vector2f normal(-axis.y(), axis.x());
  auto at = [&](float t) { return Eigen::Vector2f(centre + a * std::cos(t) * axis + b * std::sin(t) * normal); };
  for (int i = 1; i <= kSteps; ++i) {
    arc[std::size_t(i)] = arc[std::size_t(i - 1)] +
                          (at(kTwoPi * float(i) / kSteps) - at(kTwoPi * float(i - 1) / kSteps)).norm();
  }
  int step = 0;
  for (int k = 0; k < n; ++k) {
    const float s = arc[kSteps] * float(k) / float(n);
    while (step < kSteps - 1 && arc[std::size_t(step + 1)] < s) ++step;
    const float span = arc[std::size_t(step + 1)] - arc[std::size_t(step)];
    const float f = span > 0 ? (s - arc[std::size_t(step)]) / span : 0.0f;
    out(k, at(kTwoPi * (float(step) + f) / kSteps));
  }
}

}  // namespace

ProStmPlanner::ProStmPlanner(int capacity)
    : samples_(capacity),
      projected_(2, capacity),
      height_(capacity),
      cluster_weight_(capacity),
      grid_(96),
      kmeans_(capacity),
      refiner_(std::make_unique<PathRefiner>()) {}

RefinementParams ProStmPlanner::refinement_params() const {
  RefinementParams params;
  const int n = std::clamp(config_.samples_per_path, 3, kMaxSamplesPerPath);
  params.segment_m = std::max(config_.path_length_m, 1e-3f) / float(n);
  params.sigma_m = config_.sigma_m;
  params.weights = config_.weights;
  params.max_move_m = params.segment_m;
  return params;
}

void ProStmPlanner::begin(const TargetSamples& samples, const ProStmConfig& config) {
  config_ = config;
  samples_.copy_from(samples);
  samples_.reset_pose();
  stats_ = {};
  stats_.samples = samples_.size();
  plan_.path_count = 0;
  plan_.field_sequence = samples.field_sequence();
  stage_ = PlanStage::Prepare;
}

void ProStmPlanner::project_into_plan_frame(const RigidMotion& inverse_motion) {
  const int n = samples_.size();
  const auto now = samples_.positions();
  for (int i = 0; i < n; ++i) {
    const Eigen::Vector3f x = inverse_motion.apply(now.col(i));
    projected_.col(i) = plane_.project(x);
    height_[i] = plane_.height(x);
  }
  grid_.build(projected_.leftCols(n), samples_.pressure(), height_.head(n), config_.grid_cell_m,
              config_.sigma_m);
}

void ProStmPlanner::prepare() {
  const int n = samples_.size();
  plane_ = fit_plane(samples_.field_positions());
  project_into_plan_frame(RigidMotion{});
  // Only pressure worth a path takes part in the clustering.
  const float floor = std::max(config_.min_relative_pressure, 0.0f) *
                      (n > 0 ? samples_.pressure().maxCoeff() : 0.0f);
  cluster_weight_.head(n) = (samples_.pressure() > floor).select(samples_.pressure(), 0.0f);
}

long ProStmPlanner::make_tours() {
  const int clusters = kmeans_.count();
  for (int c = 0; c < clusters; ++c) {
    centroids_[std::size_t(c)] = kmeans_.centroid(c);
    masses_[std::size_t(c)] = kmeans_.mass(c);
    order_[std::size_t(c)] = c;
  }
  const float length = std::max(config_.path_length_m, 1e-3f);
  long work = 0;
  const int tours = split_tours(centroids_.data(), masses_.data(), order_.data(), clusters, length,
                                std::max(config_.two_opt_passes, 1), segments_.data(),
                                kMaxClusters, &work);
  stats_.tours = tours;
  // The best max_paths by integrated pressure (partial selection sort; at most 50 tours).
  const int keep = std::min({tours, std::clamp(config_.max_paths, 0, kMaxRefinedPaths)});
  for (int a = 0; a < keep; ++a) {
    int best = a;
    for (int b = a + 1; b < tours; ++b) {
      if (segments_[std::size_t(b)].mass > segments_[std::size_t(best)].mass) best = b;
    }
    std::swap(segments_[std::size_t(a)], segments_[std::size_t(best)]);
  }
  stats_.paths = keep;

  // Resample each kept tour to N samples.
  const int n = std::clamp(config_.samples_per_path, 3, kMaxSamplesPerPath);
  PathRefiner& refiner = *refiner_;
  refiner.reset(keep, n);
  for (int p = 0; p < keep; ++p) {
    const TourSegment& seg = segments_[std::size_t(p)];
    const int* idx = order_.data() + seg.begin;
    Eigen::Vector2f centre = Eigen::Vector2f::Zero();
    float mass = 0;
    for (int i = 0; i < seg.count; ++i) {
      const float w = std::max(masses_[std::size_t(idx[i])], 1e-12f);
      centre += w * centroids_[std::size_t(idx[i])];
      mass += w;
    }
    centre /= mass;
    float area = 0;  // shoelace, of the tour polygon
    for (int i = 0; i < seg.count; ++i) {
      const Eigen::Vector2f& a = centroids_[std::size_t(idx[i])];
      const Eigen::Vector2f& b = centroids_[std::size_t(idx[(i + 1) % seg.count])];
      area += 0.5f * (a.x() * b.y() - a.y() * b.x());
    }
    const bool thin = seg.count < 3 || std::abs(area) < 0.02f * seg.length * seg.length;
    if (thin) {
      // An ellipse of perimeter L along the clusters' principal direction.
      double sxx = 0, sxy = 0, syy = 0;
      for (int i = 0; i < seg.count; ++i) {
        const Eigen::Vector2f d = centroids_[std::size_t(idx[i])] - centre;
        const double w = std::max(double(masses_[std::size_t(idx[i])]), 1e-12);
        sxx += w * d.x() * d.x();
        sxy += w * d.x() * d.y();
        syy += w * d.y() * d.y();
      }
      const float angle = 0.5f * float(std::atan2(2 * sxy, sxx - syy));
      const Eigen::Vector2f axis(std::cos(angle), std::sin(angle));
      float half = 0;
      for (int i = 0; i < seg.count; ++i) {
        half = std::max(half, std::abs((centroids_[std::size_t(idx[i])] - centre).dot(axis)));
      }
      // Perimeter: the tour's, but at least a circle of radius sigma; the length term grows
      // it towards L during refinement without pushing into neighbouring paths at the start.
      const float perimeter = std::clamp(seg.length, kTwoPi * config_.sigma_m, length);
      float a = std::min(half, 0.249f * perimeter), b = a;
      if (a <= perimeter / kTwoPi) {
        a = b = perimeter / kTwoPi;  // small: a circle
      } else {
        float lo = 0, hi = a;        // find b with perimeter(a, b) = perimeter
        for (int it = 0; it < 40; ++it) {
          b = 0.5f * (lo + hi);
          (ellipse_perimeter(a, b) < perimeter ? lo : hi) = b;
        }
      }
      sample_ellipse(centre, axis, a, b, n, [&](int k, const Eigen::Vector2f& x) { refiner.set_sample(p, k, x); });
    } else {
      // Equal arc steps along the tour polygon (refinement stretches it towards L).
      const float scale = 1.0f;
      int edge = 0;
      float edge_start = 0;
      for (int k = 0; k < n; ++k) {
        const float s = seg.length * float(k) / float(n);
        auto vertex = [&](int i) { return centroids_[std::size_t(idx[i % seg.count])]; };
        float edge_len = (vertex(edge + 1) - vertex(edge)).norm();
        while (edge < seg.count - 1 && edge_start + edge_len < s) {
          edge_start += edge_len;
          ++edge;
          edge_len = (vertex(edge + 1) - vertex(edge)).norm();
        }
        const float f = edge_len > 0 ? std::clamp((s - edge_start) / edge_len, 0.0f, 1.0f) : 0.0f;
        const Eigen::Vector2f x = (1 - f) * vertex(edge) + f * vertex(edge + 1);
        refiner.set_sample(p, k, centre + scale * (x - centre));
      }
    }
    plan_.paths[std::size_t(p)].mass = seg.mass;
  }
  stats_.initial = refiner.cost(grid_, refinement_params());
  return work + 64L * kMaxSamplesPerPath * keep;
}

void ProStmPlanner::lift() {
  const PathRefiner& refiner = *refiner_;
  plan_.path_count = refiner.paths();
  for (int p = 0; p < refiner.paths(); ++p) {
    StmPath& path = plan_.paths[std::size_t(p)];
    path.count = refiner.samples_per_path();
    for (int i = 0; i < path.count; ++i) {
      const Eigen::Vector2f q = refiner.sample(p, i);
      path.vertex[std::size_t(i)] = plane_.lift(q, grid_.height(q));
      path.pressure[std::size_t(i)] = std::max(grid_.pressure(q), 0.0f);
    }
    path.update_arc();
  }
}

long ProStmPlanner::step() {
  switch (stage_) {
    case PlanStage::Idle:
    case PlanStage::Done:
      return 0;
    case PlanStage::Prepare:
      prepare();
      stage_ = PlanStage::Seed;
      return 24L * samples_.size();
    case PlanStage::Seed:
      kmeans_.seed(projected_.leftCols(samples_.size()), cluster_weight_.head(samples_.size()),
                   std::min(config_.max_clusters, kMaxClusters));
      stage_ = kmeans_.count() > 0 ? PlanStage::Cluster : PlanStage::Lift;
      return kmeans_.last_work();
    case PlanStage::Cluster: {
      const float moved = kmeans_.iterate();
      ++stats_.kmeans_iterations;
      if (moved <= config_.kmeans_tolerance_m || stats_.kmeans_iterations >= std::max(config_.kmeans_iterations, 1)) {
        stats_.clusters = kmeans_.count();
        stage_ = PlanStage::Tour;
      }
      return kmeans_.last_work();
    }
    case PlanStage::Tour: {
      const long work = make_tours();
      stage_ = PlanStage::Refine;
      return work;
    }
    case PlanStage::Refine: {
      const bool progressed = stats_.refinement_iterations < config_.refinement_iterations &&
                              refiner_->step(grid_, refinement_params());
      if (progressed) ++stats_.refinement_iterations;
      if (!progressed || stats_.refinement_iterations >= config_.refinement_iterations) {
        stats_.final = refiner_->cost(grid_, refinement_params());
        stage_ = PlanStage::Lift;
      }
      return std::max(refiner_->last_work(), 1L);
    }
    case PlanStage::Lift:
      lift();
      stage_ = PlanStage::Done;
      return 64L * kMaxSamplesPerPath;
  }
  return 0;
}

bool ProStmPlanner::advance(long work_budget) {
  long spent = 0;
  while (stage_ != PlanStage::Done && stage_ != PlanStage::Idle) {
    const long work = step();
    spent += work;
    stats_.work += work;
    if (spent >= work_budget) break;
  }
  return stage_ == PlanStage::Done;
}

int ProStmPlanner::motion_stride() const {
  constexpr int kMotionSamples = 256;
  return std::max(1, (samples_.size() + kMotionSamples - 1) / kMotionSamples);
}

RigidMotion ProStmPlanner::motion(const HandFrame& frame) {
  const int stride = motion_stride();
  samples_.repose(frame, stride);
  const int n = samples_.size();
  const int m = (n + stride - 1) / stride;
  if (m == 0) return {};
  using Strided = Eigen::Map<const Eigen::Matrix3Xf, 0, Eigen::OuterStride<>>;
  const Strided from(samples_.field_positions().data(), 3, m, Eigen::OuterStride<>(3 * stride));
  const Strided to(samples_.positions().data(), 3, m, Eigen::OuterStride<>(3 * stride));
  const Eigen::Map<const Eigen::ArrayXf, 0, Eigen::InnerStride<>> weight(
      samples_.pressure().data(), m, Eigen::InnerStride<>(stride));
  // Pressure-weighted: the part of the hand that is being rendered decides the motion.
  return fit_rigid_motion(from, to, weight);
}

RigidMotion ProStmPlanner::refine_incremental(const HandFrame& frame, int iterations,
                                              float max_move_m) {
  if (!done()) return {};
  const RigidMotion m = motion(frame);
  if (plan_.path_count == 0) return m;
  // Has the hand deformed since the grid was built? Compare the re-posed subset, carried back
  // into the plan's frame, with where the grid has it.
  const RigidMotion back = m.inverse();
  const int stride = motion_stride();
  const auto now = samples_.positions();
  const float limit2 = config_.rebuild_threshold_m * config_.rebuild_threshold_m;
  bool deformed = false;
  for (int i = 0; i < samples_.size() && !deformed; i += stride) {
    const Eigen::Vector3f x = back.apply(now.col(i));
    const float dh = plane_.height(x) - height_[i];
    deformed = (plane_.project(x) - projected_.col(i)).squaredNorm() + dh * dh > limit2;
  }
  if (deformed) {
    samples_.repose(frame);
    project_into_plan_frame(back);
    ++stats_.grid_rebuilds;
  }
  if (iterations <= 0) return m;
  // The curvature pairs of the last steps stay good enough while the grid moves a little (a bad
  // direction falls back to the gradient inside step()).
  RefinementParams params = refinement_params();
  params.max_move_m = std::max(max_move_m, 0.0f);
  bool moved = false;
  for (int it = 0; it < iterations; ++it) {
    if (!refiner_->step(grid_, params)) break;
    moved = true;
  }
  if (moved || deformed) lift();
  return m;
}

}  // namespace sonoflow::haptics::stm
