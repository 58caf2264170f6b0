// PROBE (not kept; reverted in the next commit): velocity_probe SCENE MATERIAL RHO SWEEPS [FRAMES]
// With SONOFLOW_VEL_PROBE=<z, m> every velocity phase is compared with 256 plain sweeps from the
// same state (SONOFLOW_REF_RELEASE: 256 of the accelerated path at omega 1, the complementary
// push; SONOFLOW_PROBE_NOGATE: the tau / alpha gate lifted); stderr at exit.
//   SCENE palette (the 8 cm cube dropped 2 cm) | rest (8 cm cube set on the floor)
//   MATERIAL honey | runny_cream | strawberry_syrup | honey0 (alpha 0) | visc (tau = alpha = 0) | alpha=<a>
//   thrown: at THROW m/s (3) at a wall; SONOFLOW_PROBE_RHO overrides rho past the loader's cap
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/material.hpp"

using namespace sonoflow;
using namespace sonoflow::fluid;

int main(int argc, char** argv) {
  if (argc < 5) return 2;
  const std::string scene = argv[1], mat = argv[2];
  Material m;
  if (mat == "honey0") {
    m = *MaterialLibrary::load(SONOFLOW_MATERIALS_DIR)->find("honey");
    m.alpha = 0;
  } else if (mat == "honey" || mat == "runny_cream" || mat == "strawberry_syrup") {
    m = *MaterialLibrary::load(SONOFLOW_MATERIALS_DIR)->find(mat);
  } else {
    m.name = "test";
    m.model = MaterialModel::Viscoelastic;
    m.tau = 0;
    m.alpha = mat == "visc" ? 0.0f : std::strtof(mat.c_str() + 6, nullptr);
    m.substeps = 3;
    m.iterations = 8;
  }
  m.chebyshev = std::strtof(argv[3], nullptr);
  m.velocity_iterations = std::atoi(argv[4]);
  FluidConfig c;
  c.max_particles = 2000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.3f, -0.3f, -0.05f};
  c.domain_max = {0.3f, 0.3f, 0.5f};
  c.material = m;
  if (scene == "thrown") c.gravity = {0, 0, 0};
  auto e = FluidEngine::create(c);
  if (!e) return 1;
  Scene s;
  s.shapes.push_back(Shape::plane({0, 0, 0}, {0, 0, 1}));
  const bool palette = scene == "palette";
  const bool thrown = scene == "thrown";  // at 3 m/s at a wall, no gravity (the tests' scene)
  if (thrown) {
    s.shapes.clear();
    s.shapes.push_back(Shape::plane({0.1f, 0, 0}, {-1, 0, 0}));
    s.blocks.push_back({{-0.03f, -0.03f, 0.17f}, {0.03f, 0.03f, 0.23f}, {std::getenv("THROW") ? std::strtof(std::getenv("THROW"), nullptr) : 3.0f, 0, 0}, {0, 0, 0}});
  } else if (palette) {
    s.blocks.push_back({{-0.04f, -0.04f, 0.02f}, {0.04f, 0.04f, 0.10f}});
  } else {
    s.blocks.push_back({{-0.04f, -0.04f, 0.0f}, {0.04f, 0.04f, 0.08f}});
  }
  if (e.value()->load_scene(s)) return 1;
  const int frames = argc > 5 ? std::atoi(argv[5]) : (thrown ? 27 : palette ? 135 : 180);
  static ContactField field;
  FluidStats st;
  float rebound = 0;
  bool landed = false;
  for (int k = 0; k < frames; ++k) {
    e.value()->step_frame(HandFrame{}, nullptr, 1.0 / 90.0, field, st);
    const float vz = st.momentum.z / (e.value()->particle_mass() * static_cast<float>(std::max(st.particles, 1)));
    if (vz > -0.05f && k > 3) landed = true;
    if (landed) rebound = std::max(rebound, vz);
    if (thrown && k >= 2) {
      ParticleSnapshot q;
      e.value()->read_particles(q);
      for (const Vec3f& v : q.velocity) rebound = std::max(rebound, std::sqrt(v.x * v.x + v.y * v.y + v.z * v.z));
    }
  }
  ParticleSnapshot p;
  e.value()->read_particles(p);
  float lo = 1e9f, hi = -1e9f, top = 0;
  double r2 = 0, zc = 0;
  for (const Vec3f& q : p.position) {
    r2 += q.x * q.x + q.y * q.y;
    zc += q.z;
    lo = std::min(lo, q.x);
    hi = std::max(hi, q.x);
    top = std::max(top, q.z);
  }
  const double np = static_cast<double>(p.id.size());
  std::printf("%s %s rho %.2f sweeps %d: %.4f x %.4f m, rebound %.3f, max speed %.3f, kept %zu, rms r %.2f mm, mean z %.2f mm\n",
              scene.c_str(), mat.c_str(), m.chebyshev, m.velocity_iterations, hi - lo, top, rebound,
              st.max_speed, p.id.size(), 1e3 * std::sqrt(r2 / np), 1e3 * zc / np);
  return 0;
}
