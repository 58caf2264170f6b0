// PRO-STM building blocks: plane fit, bicubic grid, clustering, 2-opt tours and the recursive
// split (seed000 oracles 17-19).
#include <algorithm>
#include <numeric>
#include <random>

#include <gtest/gtest.h>

#include "kernels/haptics/rigid_fit.hpp"
#include "kernels/haptics/stm/clustering.hpp"
#include "kernels/haptics/stm/plane_frame.hpp"
#include "kernels/haptics/stm/pressure_grid.hpp"
#include "kernels/haptics/stm/tour.hpp"
#include "tests/kernels/haptics/synthetic_hand.hpp"

namespace sonoflow::haptics::stm {
namespace {

TEST(PlaneFrame, RecoversATiltedPlaneAndRoundTrips) {
  const Eigen::Vector3f n = Eigen::Vector3f(0.2f, -0.3f, -1.0f).normalized();
  const Eigen::Vector3f a = n.unitOrthogonal(), b = n.cross(a);
  const Eigen::Vector3f c(0.01f, 0.02f, 0.2f);
  Eigen::Matrix3Xf points(3, 100);
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (int i = 0; i < 100; ++i) points.col(i) = c + u(rng) * a + u(rng) * b;
  const PlaneFrame frame = fit_plane(points);
  EXPECT_NEAR(std::abs(frame.normal.dot(n)), 1.0f, 1e-5f);
  EXPECT_GT(frame.normal.dot(-frame.origin), 0.0f);  // faces the array at the origin
  EXPECT_NEAR(frame.u.dot(frame.v), 0.0f, 1e-6f);
  for (int i = 0; i < 100; ++i) {
    const Eigen::Vector3f x = points.col(i);
    EXPECT_NEAR(frame.height(x), 0.0f, 1e-6f);
    EXPECT_LT((frame.lift(frame.project(x), frame.height(x)) - x).norm(), 1e-6f);
  }
}

TEST(PressureGrid, BicubicFollowsASmoothFieldAndItsGradient) {
  // A Gaussian hill sampled at 3 mm, rasterised at 4 mm.
  const float sigma = 0.02f;
  std::vector<Eigen::Vector2f> pts;
  std::vector<float> p;
  for (float y = -0.08f; y <= 0.08f; y += 0.003f)
    for (float x = -0.08f; x <= 0.08f; x += 0.003f) {
      pts.emplace_back(x, y);
      p.push_back(2.0f * test::gaussian(x, y, 0, 0, sigma));
    }
  Eigen::Matrix2Xf points(2, Eigen::Index(pts.size()));
  for (std::size_t i = 0; i < pts.size(); ++i) points.col(Eigen::Index(i)) = pts[i];
  const Eigen::ArrayXf pressure = Eigen::Map<Eigen::ArrayXf>(p.data(), Eigen::Index(p.size()));
  const Eigen::ArrayXf height = Eigen::ArrayXf::Constant(pressure.size(), 0.003f);
  PressureGrid grid;
  grid.build(points, pressure, height, 0.004f, 0.01f);
  EXPECT_NEAR(grid.max_pressure(), 2.0f, 0.1f);
  for (float x : {-0.03f, -0.011f, 0.0f, 0.017f, 0.04f}) {
    for (float y : {-0.025f, 0.0f, 0.013f}) {
      const Eigen::Vector2f q(x, y);
      Eigen::Vector2f g;
      const float value = grid.pressure(q, &g);
      EXPECT_NEAR(value, 2.0f * test::gaussian(x, y, 0, 0, sigma), 0.03f) << x << "," << y;
      EXPECT_NEAR(grid.height(q), 0.003f, 1e-4f);
      // Analytic gradient of the interpolant = its finite difference.
      const float h = 1e-4f;
      const float fx = (grid.pressure({x + h, y}) - grid.pressure({x - h, y})) / (2 * h);
      const float fy = (grid.pressure({x, y + h}) - grid.pressure({x, y - h})) / (2 * h);
      EXPECT_NEAR(g.x(), fx, 0.02f * (1 + std::abs(fx)));
      EXPECT_NEAR(g.y(), fy, 0.02f * (1 + std::abs(fy)));
    }
  }
  EXPECT_EQ(grid.pressure({1.0f, 1.0f}), 0.0f);  // off the grid: no pressure
}

TEST(WeightedKMeans, AtMostTheCapAndMassIsConserved) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-0.06f, 0.06f);
  const int n = 2000;
  Eigen::Matrix2Xf points(2, n);
  Eigen::ArrayXf w(n);
  for (int i = 0; i < n; ++i) {
    points.col(i) << u(rng), u(rng);
    w[i] = i % 7 == 0 ? 0.0f : 1.0f + points(0, i) * 10;  // some samples carry nothing
  }
  WeightedKMeans kmeans(n);
  kmeans.seed(points, w, 50);
  EXPECT_EQ(kmeans.count(), 50);
  for (int it = 0; it < 10; ++it) kmeans.iterate();
  EXPECT_LE(kmeans.count(), 50);
  double mass = 0;
  for (int k = 0; k < kmeans.count(); ++k) mass += kmeans.mass(k);
  EXPECT_NEAR(mass, w.sum(), 1e-3 * w.sum());
  // Fewer positive samples than clusters: one cluster each.
  Eigen::ArrayXf few = Eigen::ArrayXf::Zero(n);
  few.head(5) = 1;
  kmeans.seed(points, few, 50);
  EXPECT_EQ(kmeans.count(), 5);
}

bool segments_cross(const Eigen::Vector2f& a, const Eigen::Vector2f& b, const Eigen::Vector2f& c,
                    const Eigen::Vector2f& d) {
  auto orient = [](const Eigen::Vector2f& p, const Eigen::Vector2f& q, const Eigen::Vector2f& r) {
    return (q.x() - p.x()) * (r.y() - p.y()) - (q.y() - p.y()) * (r.x() - p.x());
  };
  return orient(a, b, c) * orient(a, b, d) < 0 && orient(c, d, a) * orient(c, d, b) < 0;
}

TEST(Tour, TwoOptGivesAClosedTourWithoutCrossings) {
  // Oracle 18, over many random sets of up to 50 points.
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 4 + trial;
    std::array<Eigen::Vector2f, 64> pts;
    std::array<int, 64> order;
    for (int i = 0; i < n; ++i) pts[std::size_t(i)] = {u(rng), u(rng)};
    std::iota(order.begin(), order.begin() + n, 0);
    const float random_length = tour_length(pts.data(), order.data(), n);
    long work = 0;
    const float length = closed_tour(pts.data(), order.data(), n, 100, &work);
    EXPECT_LE(length, random_length);
    EXPECT_NEAR(length, tour_length(pts.data(), order.data(), n), 1e-6f);
    std::array<int, 64> sorted = order;
    std::sort(sorted.begin(), sorted.begin() + n);
    for (int i = 0; i < n; ++i) ASSERT_EQ(sorted[std::size_t(i)], i);  // every point once
    for (int i = 0; i < n; ++i) {
      for (int j = i + 2; j < n; ++j) {
        if ((j + 1) % n == i) continue;
        EXPECT_FALSE(segments_cross(pts[std::size_t(order[std::size_t(i)])], pts[std::size_t(order[std::size_t(i + 1)])],
                                    pts[std::size_t(order[std::size_t(j)])], pts[std::size_t(order[std::size_t((j + 1) % n)])]))
            << "n " << n << " edges " << i << ", " << j;
      }
    }
  }
}

TEST(Tour, RecursiveSplitKeepsEveryTourWithinL) {
  // Oracles 17 and 19: 50 clusters over a 150 x 100 mm hand, L = 140 mm.
  std::mt19937 rng(2);
  std::uniform_real_distribution<float> ux(-0.075f, 0.075f), uy(-0.05f, 0.05f), um(0.1f, 1.0f);
  std::array<Eigen::Vector2f, 50> pts;
  std::array<float, 50> mass;
  std::array<int, 50> order;
  for (int i = 0; i < 50; ++i) {
    pts[std::size_t(i)] = {ux(rng), uy(rng)};
    mass[std::size_t(i)] = um(rng);
    order[std::size_t(i)] = i;
  }
  std::array<TourSegment, 50> segments;
  long work = 0;
  const int count = split_tours(pts.data(), mass.data(), order.data(), 50, 0.14f, 100,
                                segments.data(), 50, &work);
  ASSERT_GT(count, 1);  // one tour through 50 points of this hand is far longer than 140 mm
  int covered = 0;
  float total_mass = 0;
  for (int s = 0; s < count; ++s) {
    const TourSegment& seg = segments[std::size_t(s)];
    EXPECT_TRUE(seg.length <= 0.14f || seg.count == 1) << seg.length;
    EXPECT_NEAR(seg.length, tour_length(pts.data(), order.data() + seg.begin, seg.count), 1e-6f);
    covered += seg.count;
    total_mass += seg.mass;
  }
  EXPECT_EQ(covered, 50);
  EXPECT_NEAR(total_mass, std::accumulate(mass.begin(), mass.end(), 0.0f), 1e-4f);
}

TEST(RigidFit, RecoversAKnownMotionWithWeights) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  Eigen::Matrix3Xf from(3, 60), to(3, 60);
  const Eigen::Matrix3f r = Eigen::AngleAxisf(0.7f, Eigen::Vector3f(1, 2, -1).normalized()).toRotationMatrix();
  const Eigen::Vector3f t(0.01f, -0.02f, 0.03f);
  Eigen::ArrayXf w(60);
  for (int i = 0; i < 60; ++i) {
    from.col(i) << u(rng), u(rng), 0.2f + u(rng);
    to.col(i) = r * from.col(i) + t;
    w[i] = i < 30 ? 1.0f : 0.0f;
  }
  to.col(45) += Eigen::Vector3f(0.1f, 0, 0);  // an outlier with zero weight changes nothing
  const RigidMotion m = fit_rigid_motion(from, to, w);
  EXPECT_TRUE(m.rotation.isApprox(r, 1e-4f));
  EXPECT_TRUE(m.translation.isApprox(t, 1e-4f));
  const RigidMotion id = m.inverse() * m;
  EXPECT_TRUE(id.rotation.isIdentity(1e-5f));
  EXPECT_LT(id.translation.norm(), 1e-6f);
}

}  // namespace
}  // namespace sonoflow::haptics::stm
