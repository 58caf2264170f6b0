// Curl-noise turbulence in the engine (issue 7; notes 004 section 3.1): the wind the device
// reads is the CurlNoise field (kernels/noise), still divergence-free after the grid
// interpolation, and it stirs a fluid at rest without compressing it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <random>

#include "kernels/noise/curl_noise.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kD = 0.01f;

Material windy(NoiseSource source) {
  Material m;
  m.name = "windy";
  m.substeps = 2;
  m.iterations = 4;
  TurbulenceSpec& t = m.media.turbulence;
  t.enabled = true;
  t.source = source;
  t.speed = 0.2f;
  t.scale = 0.08f;
  t.octaves = 2;
  t.force = 5.0f;
  t.grid_spacing = 0.005f;
  return m;
}

FluidConfig box_config(const Material& m) {
  FluidConfig c;
  c.max_particles = 3000;
  c.particle_spacing = kD;
  c.domain_min = {-0.1f, -0.1f, -0.1f};
  c.domain_max = {0.1f, 0.1f, 0.1f};
  c.gravity = {0, 0, 0};
  c.material = m;
  return c;
}

// The device's trilinear wind against the host's curl noise, and its divergence (central
// differences of the device field) against its curl.
TEST(Turbulence, DeviceWindIsTheCurlNoiseFieldAndStaysDivergenceFree) {
  for (NoiseSource source : {NoiseSource::Octave, NoiseSource::Spectral}) {
    const Material m = windy(source);
    auto e = make_engine(box_config(m));
    ASSERT_TRUE(e);
    noise::CurlNoiseConfig nc;
    nc.speed_m_per_s = m.media.turbulence.speed;
    if (source == NoiseSource::Octave) {
      noise::OctaveConfig o;
      o.largest_scale_m = m.media.turbulence.scale;
      o.octaves = m.media.turbulence.octaves;
      o.seed = m.media.turbulence.seed;
      nc.source = o;
    } else {
      noise::SpectralConfig sc;
      sc.largest_scale_m = m.media.turbulence.scale;
      sc.smallest_scale_m = std::max(2.0f * m.media.turbulence.grid_spacing, m.media.turbulence.scale / 8.0f);
      sc.period_m = std::max(4.0 * m.media.turbulence.scale, 0.2);
      sc.seed = m.media.turbulence.seed;
      nc.source = sc;
    }
    const noise::CurlNoise host(nc);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-0.08f, 0.08f);
    std::vector<Vec3f> points;
    const float step = 0.002f;
    for (int k = 0; k < 200; ++k) {
      const Vec3f p{u(rng), u(rng), u(rng)};
      points.push_back(p);
      for (int a = 0; a < 3; ++a)
        for (float sgn : {-1.0f, 1.0f}) {
          Vec3f q = p;
          (a == 0 ? q.x : a == 1 ? q.y : q.z) += sgn * step;
          points.push_back(q);
        }
    }
    const auto w = e->wind_at(points);
    double err2 = 0, ref2 = 0, div2 = 0, curl2 = 0;
    for (std::size_t k = 0; k < points.size(); k += 7) {
      const Vec3f& p = points[k];
      const Eigen::Vector3d h = host.velocity({p.x, p.y, p.z}, 0.0);
      const Eigen::Vector3d d(w[k].x, w[k].y, w[k].z);
      err2 += (h - d).squaredNorm();
      ref2 += h.squaredNorm();
      // Jacobian J(r, c) = dw_r / dx_c by central differences of the device field.
      Eigen::Matrix3d J;
      for (int c = 0; c < 3; ++c) {
        const Vec3f& lo = w[k + 1 + 2 * static_cast<std::size_t>(c)];
        const Vec3f& hi = w[k + 2 + 2 * static_cast<std::size_t>(c)];
        J(0, c) = (hi.x - lo.x) / (2 * step);
        J(1, c) = (hi.y - lo.y) / (2 * step);
        J(2, c) = (hi.z - lo.z) / (2 * step);
      }
      const double div = J.trace();
      const Eigen::Vector3d curl(J(2, 1) - J(1, 2), J(0, 2) - J(2, 0), J(1, 0) - J(0, 1));
      div2 += div * div;
      curl2 += curl.squaredNorm();
    }
    const double rel_err = std::sqrt(err2 / ref2), rel_div = std::sqrt(div2 / curl2);
    std::printf("%s: rms wind %.3f m/s, device vs host %.2f %%, |div| / |curl| = %.4f\n",
                source == NoiseSource::Octave ? "octave" : "spectral", std::sqrt(ref2 / 200),
                100 * rel_err, rel_div);
    EXPECT_GT(std::sqrt(ref2 / 200), 0.02) << "no wind";
    EXPECT_LT(rel_err, 0.08);  // trilinear interpolation of a field with 1-2 cm features
    EXPECT_LT(rel_div, 0.05);
  }
}

// A closed box of water at rest without gravity: the wind sets it moving (kinetic energy from
// nothing but the wind), and the solver keeps it incompressible meanwhile; without the wind it
// stays at rest.
TEST(Turbulence, WindStirsAFluidAtRest) {
  auto stir = [](bool wind) {
    Material m = windy(NoiseSource::Octave);
    m.media.turbulence.enabled = wind;
    auto e = make_engine(box_config(m));
    if (!e) return FluidStats{};
    Scene s;
    s.shapes.push_back(Shape::box({-0.06f, -0.06f, -0.06f}, {0.06f, 0.06f, 0.06f}));
    s.blocks.push_back({{-0.06f, -0.06f, -0.06f}, {0.06f, 0.06f, 0.06f}});
    EXPECT_FALSE(e->load_scene(s));
    return run(*e, 90);
  };
  const FluidStats calm = stir(false), windy_box = stir(true);
  std::printf("after 1 s: kinetic energy %.3e J with wind, %.3e J without; compression %.4f\n",
              windy_box.kinetic_energy, calm.kinetic_energy, windy_box.mean_compression);
  EXPECT_GT(windy_box.kinetic_energy, 100.0f * calm.kinetic_energy + 1e-6f);
  EXPECT_GT(windy_box.max_speed, 0.01f);
  EXPECT_LT(windy_box.mean_compression, 0.02f);
  EXPECT_EQ(windy_box.non_finite, 0);
}

}  // namespace
}  // namespace sonoflow::fluid::test
