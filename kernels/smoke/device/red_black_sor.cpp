#include "kernels/smoke/device/red_black_sor.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace sonoflow::smoke {

opencl::Expected<std::unique_ptr<PoissonSolver>> RedBlackSor::create(opencl::ClRuntime& rt,
                                                                     const GridGeometry& geometry,
                                                                     const GridReduce& reduce) {
  std::unique_ptr<RedBlackSor> s(new RedBlackSor(geometry, reduce));
  for (auto [k, name] : {std::pair{&s->coefficients_, "pressure_coefficients"},
                         std::pair{&s->sweep_, "sor_colour"}, std::pair{&s->residual_, "pressure_residual"}}) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  return std::unique_ptr<PoissonSolver>(std::move(s));
}

float RedBlackSor::optimal_omega(int n) {
  return 2.0f / (1.0f + std::sin(std::numbers::pi_v<float> / static_cast<float>(std::max(n, 2))));
}

PressureReport RedBlackSor::solve(opencl::Launcher& launch, GridBuffers& g, const PressureSettings& settings,
                                  float divergence_scale) {
  launch.record(opencl::set_args(coefficients_, g.params, g.type, g.inv_diag, g.pressure));
  launch(coefficients_, cl::NullRange, geo_.cells, geo_.local);
  const float omega = settings.sor_omega > 0 ? settings.sor_omega
                                             : optimal_omega(std::max({geo_.nx, geo_.ny, geo_.nz}));
  PressureReport report;
  const int every = std::max(settings.check_every, 1);
  // First check at half the last solve's count: no later than needed when the flow settles, and
  // the count it reports halves towards the true one.
  int next_check = last_iterations_ > 0 ? std::max(last_iterations_ / 2, 1) : 0;
  if (next_check == 0) {
    report.residual = measure_residual(launch, g, geo_, reduce_, residual_, divergence_scale);
    report.converged = report.residual <= settings.tolerance;
    next_check = every;
  }
  while (!report.converged && report.iterations < settings.max_iterations) {
    for (int colour = 0; colour < 2; ++colour) {
      launch.record(opencl::set_args(sweep_, g.params, g.pressure, g.rhs, g.inv_diag, colour, omega));
      launch(sweep_, cl::NullRange, geo_.half_rows, geo_.half_local);
    }
    ++report.iterations;
    if (report.iterations >= next_check || report.iterations == settings.max_iterations) {
      report.residual = measure_residual(launch, g, geo_, reduce_, residual_, divergence_scale);
      report.converged = report.residual <= settings.tolerance;
      next_check = report.iterations + every;
    }
  }
  last_iterations_ = report.iterations;
  return report;
}

}  // namespace sonoflow::smoke
