// What a cheaper DC-PBD schedule costs physically: the honey preset (tau = 0, alpha = 0.005)
// at 1/90 s frames in S substeps x (V velocity + P position sweeps), against the thesis'
// interactive schedule 3 x (8 + 8). Frame times of the same schedules: fluid_frame_bench
// honey_schedule. One run per row; the figures are counters:
//   rotating_block/S/V/P  an 8 cm block spinning at 2 rad/s without gravity (thesis fig. 3.6):
//                         L_ratio = angular momentum after 1 s / initial (1: no numerical
//                         damping of the rigid rotation)
//   resting_cube/S/V/P    an 8 cm cube set on a floor from rest, after 2 s: slump_mm (drop of
//                         its top, 95th percentile of height; honey flows, so the thesis
//                         schedule slumps too),
//                         drift_mm (RMS distance from the initial shape after removing the
//                         centroid's motion), max_speed (m/s, at the end: a resting cube
//                         should be nearly still)
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/material.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::fluid;

FluidConfig honey_config(const benchmark::State& state, Vec3f gravity) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  FluidConfig c;
  if (lib) c.material = *lib->find("honey");
  c.material.substeps = static_cast<int>(state.range(0));
  c.material.velocity_iterations = static_cast<int>(state.range(1));
  c.material.iterations = static_cast<int>(state.range(2));
  c.max_particles = 2000;
  c.particle_spacing = 0.01f;
  c.domain_min = {-0.3f, -0.3f, -0.05f};
  c.domain_max = {0.3f, 0.3f, 0.5f};
  c.gravity = gravity;
  return c;
}

void step(FluidEngine& e, int frames, FluidStats& st) {
  static ContactField field;
  const HandFrame none;
  for (int k = 0; k < frames; ++k) e.step_frame(none, nullptr, 1.0 / 90.0, field, st);
}

void rotating_block(benchmark::State& state) {
  auto created = FluidEngine::create(honey_config(state, {0, 0, 0}));
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = *created.value();
  Scene s;
  s.blocks.push_back({{-0.04f, -0.04f, 0.16f}, {0.04f, 0.04f, 0.24f}, {0, 0, 0}, {0, 0, 2.0f}});
  if (auto err = e.load_scene(s)) {
    state.SkipWithError(err->message.c_str());
    return;
  }
  ParticleSnapshot p0;
  e.read_particles(p0);
  double l0 = 0;
  for (std::size_t i = 0; i < p0.id.size(); ++i)
    l0 += e.particle_mass() * (p0.position[i].x * p0.velocity[i].y - p0.position[i].y * p0.velocity[i].x);
  FluidStats st;
  for (auto _ : state) step(e, 90, st);
  state.counters["L_ratio"] = st.angular_momentum.z / l0;
}

void resting_cube(benchmark::State& state) {
  auto created = FluidEngine::create(honey_config(state, {0, 0, -9.81f}));
  if (!created) {
    state.SkipWithError(created.error().message.c_str());
    return;
  }
  FluidEngine& e = *created.value();
  Scene s;
  s.shapes.push_back(Shape::plane({0, 0, 0}, {0, 0, 1}));
  s.blocks.push_back({{-0.04f, -0.04f, 0.0f}, {0.04f, 0.04f, 0.08f}});
  if (auto err = e.load_scene(s)) {
    state.SkipWithError(err->message.c_str());
    return;
  }
  ParticleSnapshot a;
  e.read_particles(a);
  FluidStats st;
  for (auto _ : state) step(e, 180, st);
  ParticleSnapshot b;
  e.read_particles(b);
  if (a.id != b.id) {
    state.SkipWithError("particles were lost");
    return;
  }
  auto top = [](const ParticleSnapshot& p) {  // 95th percentile of height: robust to a splash
    std::vector<float> z;
    for (const Vec3f& q : p.position) z.push_back(q.z);
    std::nth_element(z.begin(), z.begin() + static_cast<long>(0.95 * static_cast<double>(z.size())), z.end());
    return z[static_cast<std::size_t>(0.95 * static_cast<double>(z.size()))];
  };
  double ca[3] = {0, 0, 0}, cb[3] = {0, 0, 0};
  const auto n = static_cast<double>(a.id.size());
  for (std::size_t i = 0; i < a.id.size(); ++i) {
    ca[0] += a.position[i].x / n, ca[1] += a.position[i].y / n, ca[2] += a.position[i].z / n;
    cb[0] += b.position[i].x / n, cb[1] += b.position[i].y / n, cb[2] += b.position[i].z / n;
  }
  double sum = 0;
  for (std::size_t i = 0; i < a.id.size(); ++i) {
    const double dx = (b.position[i].x - cb[0]) - (a.position[i].x - ca[0]);
    const double dy = (b.position[i].y - cb[1]) - (a.position[i].y - ca[1]);
    const double dz = (b.position[i].z - cb[2]) - (a.position[i].z - ca[2]);
    sum += dx * dx + dy * dy + dz * dz;
  }
  state.counters["slump_mm"] = 1e3 * (top(a) - top(b));
  state.counters["drift_mm"] = 1e3 * std::sqrt(sum / n);
  state.counters["max_speed"] = st.max_speed;
}

// substeps x (velocity + position sweeps): the thesis' 3 x (8 + 8) first.
void schedules(benchmark::internal::Benchmark* b) {
  for (auto [s, v, p] : {std::array{3, 8, 8}, std::array{2, 8, 8}, std::array{3, 4, 8},
                         std::array{2, 4, 8}, std::array{1, 8, 8}, std::array{3, 8, 4}}) {
    b->Args({s, v, p});
  }
}

}  // namespace

BENCHMARK(rotating_block)->Apply(schedules)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(resting_cube)->Apply(schedules)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
