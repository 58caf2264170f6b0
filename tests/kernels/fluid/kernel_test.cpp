// The smoothing kernels and the neighbour search, as the device runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>

#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

FluidConfig small_config(SmoothingKernel k) {
  FluidConfig c;
  c.max_particles = 3000;
  c.particle_spacing = 0.01f;
  c.kernel = k;
  c.domain_min = {-0.1f, -0.1f, 0.0f};
  c.domain_max = {0.1f, 0.1f, 0.2f};
  return c;
}

class KernelTest : public ::testing::TestWithParam<SmoothingKernel> {};

// Integrals over a fine grid: int W dV = 1 (normalised), int grad W dV = 0 (odd), and
// int grad W (x) r dV = -I (the gradient belongs to a normalised kernel: integration by parts).
TEST_P(KernelTest, NormalisedWithConsistentGradient) {
  auto e = make_engine(small_config(GetParam()));
  ASSERT_TRUE(e);
  const float h = e->support_radius();
  constexpr int m = 48;  // samples per half axis
  const double step = h / m;
  std::vector<Vec3f> r;
  for (int z = -m; z <= m; ++z)
    for (int y = -m; y <= m; ++y)
      for (int x = -m; x <= m; ++x)
        r.push_back({static_cast<float>((x + 0.5) * step), static_cast<float>((y + 0.5) * step),
                     static_cast<float>((z + 0.5) * step)});
  const auto k = e->evaluate_kernel(r);
  const double dv = step * step * step;
  double integral = 0, gx = 0, gy = 0, gz = 0, xx = 0, yy = 0, zz = 0, xy = 0;
  for (std::size_t i = 0; i < r.size(); ++i) {
    ASSERT_GE(k[i].w, 0.0f);
    const double len = std::sqrt(r[i].x * r[i].x + r[i].y * r[i].y + r[i].z * r[i].z);
    if (len >= h) {
      ASSERT_EQ(k[i].w, 0.0f);
      ASSERT_EQ(k[i].grad.x, 0.0f);
    }
    integral += k[i].w * dv;
    gx += k[i].grad.x * dv;
    gy += k[i].grad.y * dv;
    gz += k[i].grad.z * dv;
    xx += k[i].grad.x * r[i].x * dv;
    yy += k[i].grad.y * r[i].y * dv;
    zz += k[i].grad.z * r[i].z * dv;
    xy += k[i].grad.x * r[i].y * dv;
    // The gradient points back to the centre.
    ASSERT_LE(k[i].grad.x * r[i].x + k[i].grad.y * r[i].y + k[i].grad.z * r[i].z, 0.0f);
  }
  EXPECT_NEAR(integral, 1.0, 2e-3);
  EXPECT_NEAR(gx, 0.0, 1e-3 / h);
  EXPECT_NEAR(gy, 0.0, 1e-3 / h);
  EXPECT_NEAR(gz, 0.0, 1e-3 / h);
  EXPECT_NEAR(xx, -1.0, 5e-3);
  EXPECT_NEAR(yy, -1.0, 5e-3);
  EXPECT_NEAR(zz, -1.0, 5e-3);
  EXPECT_NEAR(xy, 0.0, 1e-3);
}

// With the cubic spline, W and grad W are the same function: grad W = finite difference of W.
TEST(KernelTest, CubicGradientIsTheDerivativeOfW) {
  auto e = make_engine(small_config(SmoothingKernel::CubicSpline));
  ASSERT_TRUE(e);
  const float h = e->support_radius();
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-0.7f * h, 0.7f * h);
  const float eps = 2e-3f * h;
  std::vector<Vec3f> r;
  for (int k = 0; k < 200; ++k) {
    const Vec3f p{u(rng), u(rng), u(rng)};
    r.push_back(p);
    for (int axis = 0; axis < 3; ++axis) {
      Vec3f a = p, b = p;
      (axis == 0 ? a.x : axis == 1 ? a.y : a.z) += eps;
      (axis == 0 ? b.x : axis == 1 ? b.y : b.z) -= eps;
      r.push_back(a);
      r.push_back(b);
    }
  }
  const auto k = e->evaluate_kernel(r);
  float scale = 0;  // largest gradient component: the tolerance scale
  for (const auto& v : k) scale = std::max({scale, std::fabs(v.grad.x), std::fabs(v.grad.y), std::fabs(v.grad.z)});
  for (std::size_t s = 0; s < r.size(); s += 7) {
    const float fd[3] = {(k[s + 1].w - k[s + 2].w) / (2 * eps), (k[s + 3].w - k[s + 4].w) / (2 * eps),
                         (k[s + 5].w - k[s + 6].w) / (2 * eps)};
    EXPECT_NEAR(k[s].grad.x, fd[0], 0.005f * scale);
    EXPECT_NEAR(k[s].grad.y, fd[1], 0.005f * scale);
    EXPECT_NEAR(k[s].grad.z, fd[2], 0.005f * scale);
  }
}

// Against the closed forms in double at the same float offsets, the device's W and grad W
// (built with -cl-unsafe-math-optimizations; PoCL may turn 1/r into an rsqrt estimate and a
// Newton step) agree to some ulps wherever h - r is not itself a few ulps (there the error is
// absolute, a small share of the peak), and r = 0 gives W(0) and a zero gradient, finite.
TEST_P(KernelTest, MatchesTheClosedFormAcrossTheSupport) {
  auto e = make_engine(small_config(GetParam()));
  ASSERT_TRUE(e);
  const bool cubic = GetParam() == SmoothingKernel::CubicSpline;
  const double h = e->support_radius();
  const double pi = 3.14159265358979323846;
  // W and dW/dr as the sources write them (Monaghan 1992; Mueller et al. 2003).
  auto exact = [&](double r, double* w, double* dw) {
    const double q = r / h;
    if (cubic) {
      const double s = 8.0 / (pi * h * h * h);
      *w = q <= 0.5 ? s * (6 * q * q * (q - 1) + 1) : s * 2 * std::pow(1 - q, 3);
      *dw = q <= 0.5 ? s * 6 * q * (3 * q - 2) / h : -s * 6 * (1 - q) * (1 - q) / h;
    } else {
      *w = 315.0 / (64.0 * pi * std::pow(h, 9)) * std::pow(h * h - r * r, 3);
      *dw = -45.0 / (pi * std::pow(h, 6)) * (h - r) * (h - r);
    }
  };
  std::mt19937 rng(11);
  std::normal_distribution<double> g(0.0, 1.0);
  std::vector<Vec3f> r{{0.0f, 0.0f, 0.0f}};
  constexpr int steps = 2000;
  for (int k = 1; k < steps; ++k) {  // r = k h / steps along random directions
    double d[3] = {g(rng), g(rng), g(rng)};
    const double n = std::sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    const double len = h * k / steps;
    r.push_back({static_cast<float>(d[0] / n * len), static_cast<float>(d[1] / n * len),
                 static_cast<float>(d[2] / n * len)});
  }
  const auto out = e->evaluate_kernel(r);
  double w0 = 0, dw0 = 0;
  exact(0.0, &w0, &dw0);
  EXPECT_NEAR(out[0].w, w0, 1e-6 * w0);
  EXPECT_EQ(out[0].grad.x, 0.0f);
  EXPECT_EQ(out[0].grad.y, 0.0f);
  EXPECT_EQ(out[0].grad.z, 0.0f);
  double peak_w = 0, peak_g = 0;  // tolerance scales near the support's edge
  for (int k = 0; k <= steps; ++k) {
    double w = 0, dw = 0;
    exact(h * k / steps, &w, &dw);
    peak_w = std::max(peak_w, std::fabs(w));
    peak_g = std::max(peak_g, std::fabs(dw));
  }
  double worst_w = 0, worst_g = 0;  // largest relative errors where h - r > 5 % of h
  for (std::size_t i = 1; i < r.size(); ++i) {
    const double x = r[i].x, y = r[i].y, z = r[i].z;
    const double len = std::sqrt(x * x + y * y + z * z);
    double w = 0, dw = 0;
    exact(len, &w, &dw);
    const double gx = dw * x / len, gy = dw * y / len, gz = dw * z / len;
    const double err_g = std::max({std::fabs(out[i].grad.x - gx), std::fabs(out[i].grad.y - gy),
                                   std::fabs(out[i].grad.z - gz)});
    const double err_w = std::fabs(out[i].w - w);
    ASSERT_LE(err_w, 1e-5 * std::fabs(w) + 1e-6 * peak_w) << "r/h " << len / h;
    ASSERT_LE(err_g, 1e-5 * std::fabs(dw) + 1e-6 * peak_g) << "r/h " << len / h;
    if (len < 0.95 * h) {
      worst_w = std::max(worst_w, err_w / std::fabs(w));
      worst_g = std::max(worst_g, err_g / std::fabs(dw));
    }
  }
  // About 80 float ulps (measured 2e-6 to 6e-6: cancellation in h^2 - r^2 and h - r); an
  // rsqrt estimate without a Newton step (12-14 bits) would fail.
  EXPECT_LT(worst_w, 1e-5);
  EXPECT_LT(worst_g, 1e-5);
  std::printf("max relative error for r < 0.95 h: W %.2e, grad W %.2e\n", worst_w, worst_g);
}

INSTANTIATE_TEST_SUITE_P(Both, KernelTest,
                         ::testing::Values(SmoothingKernel::Poly6Spiky, SmoothingKernel::CubicSpline),
                         [](const auto& param_info) {
                           return param_info.param == SmoothingKernel::CubicSpline ? "CubicSpline" : "Poly6Spiky";
                         });

// The device's neighbour lists (counting sort, reorder, 27-cell search) hold exactly the pairs a
// brute-force search finds, for a disordered fluid after a few steps.
TEST(NeighbourSearch, ListsEqualBruteForce) {
  auto e = make_engine(small_config(SmoothingKernel::Poly6Spiky));
  ASSERT_TRUE(e);
  Scene s;
  s.shapes.push_back(Shape::box({-0.08f, -0.08f, 0.0f}, {0.08f, 0.08f, 0.19f}));
  s.blocks.push_back({{-0.08f, -0.08f, 0.0f}, {0.0f, 0.04f, 0.12f}, {0.5f, -0.3f, 0.0f}});
  ASSERT_FALSE(e->load_scene(s));
  run(*e, 20);
  ParticleSnapshot p;
  std::vector<std::vector<std::uint32_t>> lists;
  e->neighbour_lists(p, lists);
  ASSERT_GT(p.id.size(), 900u);
  const double h = e->support_radius();
  std::size_t pairs = 0;
  for (std::size_t i = 0; i < p.id.size(); ++i) {
    std::set<std::uint32_t> got(lists[i].begin(), lists[i].end());
    ASSERT_EQ(got.size(), lists[i].size()) << "duplicate neighbour";
    for (std::size_t j = 0; j < p.id.size(); ++j) {
      if (i == j) continue;
      const double dx = p.position[i].x - p.position[j].x, dy = p.position[i].y - p.position[j].y,
                   dz = p.position[i].z - p.position[j].z;
      const double r = std::sqrt(dx * dx + dy * dy + dz * dz);
      if (std::fabs(r - h) < 1e-5 * h) continue;  // on the sphere: float rounding decides
      const bool listed = got.count(p.id[j]) > 0;
      ASSERT_EQ(listed, r < h) << "particle " << p.id[i] << " and " << p.id[j] << " at r/h = " << r / h;
      pairs += listed;
    }
  }
  EXPECT_GT(pairs, 20u * p.id.size());
}

}  // namespace
}  // namespace sonoflow::fluid::test

namespace sonoflow::fluid::test {
namespace {

// Set-up errors come back as values that say what is wrong.
TEST(EngineSetup, RefusesUnknownDevicesAndBadConfigs) {
  FluidConfig c = small_config(SmoothingKernel::Poly6Spiky);
  c.device.device = "no such accelerator";
  auto e = FluidEngine::create(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, FluidErrc::NoDevice);
  EXPECT_NE(e.error().message.find("no such accelerator"), std::string::npos) << e.error().message;
  EXPECT_NE(e.error().message.find("available:"), std::string::npos) << "lists what there is";

  c = small_config(SmoothingKernel::Poly6Spiky);
  c.device.compute_units = 4096;  // more than any CPU here has
  e = FluidEngine::create(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, FluidErrc::BadConfig);
  EXPECT_NE(e.error().message.find("asked for 4096 compute units"), std::string::npos) << e.error().message;

  c = small_config(SmoothingKernel::Poly6Spiky);
  c.particle_spacing = -0.01f;
  e = FluidEngine::create(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, FluidErrc::BadConfig);
  EXPECT_NE(e.error().message.find("particle_spacing"), std::string::npos);

  c = small_config(SmoothingKernel::Poly6Spiky);
  c.hand.capsule_blend = -0.001f;  // would shrink the capsule masks below the surface they hold
  e = FluidEngine::create(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, FluidErrc::BadConfig);
  EXPECT_NE(e.error().message.find("capsule_blend"), std::string::npos) << e.error().message;

  c = small_config(SmoothingKernel::Poly6Spiky);
  c.material.alpha = -1;
  e = FluidEngine::create(c);
  ASSERT_FALSE(e);
  EXPECT_EQ(e.error().code, FluidErrc::BadMaterial);

  c = small_config(SmoothingKernel::Poly6Spiky);
  c.device.type = DeviceType::Cpu;  // PoCL in CI; chosen by type, not by an index
  c.device.compute_units = 1;       // a sub-device of one (PoCL: one worker thread)
  e = FluidEngine::create(c);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_NE(e.value()->device_name().find(", 1 compute unit)"), std::string::npos) << e.value()->device_name();
  Scene big;
  big.blocks.push_back({{-0.1f, -0.1f, 0.0f}, {0.1f, 0.1f, 0.2f}});  // 8,000 > max_particles
  const auto err = e.value()->load_scene(big);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->code, FluidErrc::CapacityExceeded);
}

}  // namespace
}  // namespace sonoflow::fluid::test
