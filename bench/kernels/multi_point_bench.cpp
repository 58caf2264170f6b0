// Multi-point phase solve on one core: 256 transducers, M = 1..8 foci at ~200 mm, including the
// M propagation rows (what the stream thread pays per DRIVE-mode sample). Goal (issue 4): at
// least 20,000 solutions/s for M <= 8; GS-PAT reports 17,000/s on a GPU (anchors-haptics 2.2).
#include <benchmark/benchmark.h>

#include <array>
#include <cmath>

#include "kernels/acoustics/focus_solver.hpp"

namespace {

using namespace sonoflow::acoustics;

// M foci on a ring of radius 40 mm at 200 mm, equal targets: the thesis's N = 8 layout
// (seed000 1.4), and a spread of sizes for smaller M.
Eigen::Matrix3Xf ring(int m) {
  Eigen::Matrix3Xf points(3, m);
  for (int j = 0; j < m; ++j) {
    const float a = 6.2831853f * float(j) / float(m);
    points.col(j) << 0.04f * std::cos(a), 0.04f * std::sin(a), 0.2f;
  }
  return points;
}

void solve(benchmark::State& state, MultiPointMethod method, int iterations) {
  const int m = static_cast<int>(state.range(0));
  const FieldModel field(ArrayGeometry::grid({}), TransducerModel());
  MultiPointSolver solver(field);
  Drive q(field.transducer_count());
  const Eigen::Matrix3Xf points = ring(m);
  std::array<float, 8> targets{};
  targets.fill(1.0f);
  const MultiPointOptions options{method, iterations, AmplitudeConstraint::PhaseOnly};
  for (auto _ : state) {
    solver.solve(points, std::span<const float>(targets.data(), std::size_t(m)), options, q);
    benchmark::DoNotOptimize(q.data());
  }
  state.counters["solutions_per_s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}

void configure(benchmark::internal::Benchmark* b) {
  b->DenseRange(1, 8)->Unit(benchmark::kMicrosecond)->Repetitions(5)->ReportAggregatesOnly(true);
}

}  // namespace

BENCHMARK_CAPTURE(solve, gs_pat, MultiPointMethod::GSPAT, 20)->Name("multi_point_gs_pat")->Apply(configure);
BENCHMARK_CAPTURE(solve, gs, MultiPointMethod::GS, 20)->Name("multi_point_gs")->Apply(configure);
BENCHMARK_CAPTURE(solve, naive, MultiPointMethod::Naive, 0)->Name("multi_point_naive")->Apply(configure);

BENCHMARK_MAIN();
