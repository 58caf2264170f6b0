#include "kernels/smoke/device/multigrid_cg.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

namespace sonoflow::smoke {

namespace {

using opencl::Launcher;
using opencl::set_args;

constexpr int kSlotUpdate = kSlotResidual;  // max |r| after the CG update
constexpr int kSlotDq = 3;                  // d . q
constexpr int kSlotRz[2] = {4, 5};          // r . z of this and the last iteration, alternating

}  // namespace

opencl::Expected<std::unique_ptr<PoissonSolver>> MultigridCg::create(opencl::ClRuntime& rt,
                                                                     const GridGeometry& geometry,
                                                                     const GridReduce& reduce,
                                                                     const SmokeParams& fine) {
  std::unique_ptr<MultigridCg> s(new MultigridCg(geometry, reduce));
  for (auto [k, name] : {std::pair{&s->coarsen_, "mg_coarsen_types"},
                         std::pair{&s->coefficients_, "pressure_coefficients"},
                         std::pair{&s->sweep_, "sor_colour"}, std::pair{&s->residual_, "mg_residual"}, std::pair{&s->restrict_, "mg_restrict"},
                         std::pair{&s->start_, "mg_start"}, std::pair{&s->jacobi_, "mg_jacobi"},
                         std::pair{&s->jacobi_start_, "mg_jacobi_start"},
                         std::pair{&s->prolong_, "mg_prolong"},
                         std::pair{&s->cg_residual_, "cg_residual"}, std::pair{&s->cg_apply_, "cg_apply"},
                         std::pair{&s->cg_update_, "cg_update"}, std::pair{&s->cg_dot_, "cg_dot"},
                         std::pair{&s->cg_direction_, "cg_direction"}}) {
    auto kernel = rt.kernel(name);
    if (!kernel) return kernel.error();
    *k = kernel.value();
  }
  auto ghost_kernel = rt.kernel("mg_level_ghosts");
  if (!ghost_kernel) return ghost_kernel.error();
  cl::Kernel ghosts = ghost_kernel.value();
  cl::Context& ctx = rt.context();
  cl_int err = CL_SUCCESS;
  auto buffer = [&](std::size_t bytes) {
    cl_int e = CL_SUCCESS;
    cl::Buffer b(ctx, CL_MEM_READ_WRITE, std::max<std::size_t>(bytes, 16), nullptr, &e);
    if (e != CL_SUCCESS && err == CL_SUCCESS) err = e;
    return b;
  };
  cl::CommandQueue& q = rt.queue();
  auto zero = [&](cl::Buffer& b, std::size_t bytes) {
    if (cl_int e = q.enqueueFillBuffer(b, cl_uint{0}, 0, bytes); e != CL_SUCCESS && err == CL_SUCCESS) err = e;
  };
  const auto cells = static_cast<std::size_t>(geometry.padded);
  for (cl::Buffer* b : {&s->r_, &s->z_, &s->d_, &s->q_, &s->fine_residual_, &s->jacobi_out_}) {
    *b = buffer(cells * 4);
    zero(*b, cells * 4);
  }
  // Level 0 is the engine's grid; coarser levels halve it until the longest axis is at most 8.
  s->levels_.push_back(Level{geometry, fine, {}, {}, {}, {}, {}, {}});
  std::array<int, 3> n{geometry.nx, geometry.ny, geometry.nz};
  while (std::max({n[0], n[1], n[2]}) > 8 && std::min({n[0], n[1], n[2]}) >= 4) {
    for (int& v : n) v = (v + 1) / 2;
    Level level;
    level.geo = GridGeometry::make(n, geometry.cell_per_item);
    level.params = fine;
    for (std::size_t d = 0; d < 3; ++d) level.params.n[d] = n[d];
    level.params.n[3] = n[0] * n[1] * n[2];
    level.params.stride[1] = level.geo.sy;
    level.params.stride[2] = level.geo.sz;
    level.params.stride[3] = level.geo.padded;
    const auto lc = static_cast<std::size_t>(level.geo.padded);
    level.params_buffer = buffer(sizeof(SmokeParams));
    if (cl_int e = q.enqueueWriteBuffer(level.params_buffer, CL_TRUE, 0, sizeof(SmokeParams), &level.params);
        e != CL_SUCCESS && err == CL_SUCCESS)
      err = e;
    level.type = buffer(lc);
    if (err == CL_SUCCESS) {
      cl_int e = set_args(ghosts, level.params_buffer, level.type);
      if (e == CL_SUCCESS) e = q.enqueueNDRangeKernel(ghosts, cl::NullRange, level.geo.all_cells, cl::NullRange);
      if (e != CL_SUCCESS) err = e;
    }
    for (cl::Buffer* b : {&level.inv_diag, &level.x, &level.b, &level.r}) {
      *b = buffer(lc * 4);
      zero(*b, lc * 4);
    }
    s->levels_.push_back(std::move(level));
  }
  if (cl_int e = q.finish(); e != CL_SUCCESS && err == CL_SUCCESS) err = e;
  if (err != CL_SUCCESS) {
    return opencl::Error{opencl::Errc::OpenClError,
                         "allocating the multigrid levels failed: " + opencl::cl_error_name(err)};
  }
  return std::unique_ptr<PoissonSolver>(std::move(s));
}

// kSmoothingPairs red-black Gauss-Seidel pairs, red first (colour 0) or black first; `from_zero`
// (red first only): the first red half-sweep, from a zero correction, is already done (mg_start,
// mg_restrict).
void MultigridCg::smooth(Launcher& launch, Level& level, cl::Buffer& params, int first_colour, bool from_zero) {
  for (int k = from_zero ? 1 : 0; k < 2 * kSmoothingPairs; ++k) {
    const int colour = k % 2 == 0 ? first_colour : 1 - first_colour;
    launch.record(set_args(sweep_, params, level.x, level.b, level.inv_diag, colour, 1.0f));
    launch(sweep_, cl::NullRange, level.geo.colour, level.geo.colour_local);
  }
}

// One weighted Jacobi sweep on the finest level: z into jacobi_out_, then the two swap roles.
void MultigridCg::jacobi_sweep(Launcher& launch, cl::Buffer& params) {
  Level& top = levels_[0];
  launch.record(set_args(jacobi_, params, z_, top.b, top.inv_diag, jacobi_out_, kJacobiWeight));
  launch(jacobi_, cl::NullRange, top.geo.cells, top.geo.local);
  std::swap(z_, jacobi_out_);
  top.x = z_;
}

void MultigridCg::precondition(Launcher& launch, GridBuffers& g) {
  Level& top = levels_[0];
  const int last = levels() - 1;
  if (last == 0) {
    // One level: z = 0 and its first red half-sweep in one pass, then the palindrome below.
    launch.record(set_args(start_, g.params, top.b, top.inv_diag, top.x));
    launch(start_, cl::NullRange, top.geo.cells, top.geo.local);
  }
  // Down: smooth, restrict the residual (which starts the coarse correction's red half-sweep).
  for (int l = 0; l < last; ++l) {
    Level& f = levels_[static_cast<std::size_t>(l)];
    Level& c = levels_[static_cast<std::size_t>(l) + 1];
    cl::Buffer& fp = l == 0 ? g.params : f.params_buffer;
    if (l == 0) {
      launch.record(set_args(jacobi_start_, fp, top.b, top.inv_diag, z_, kJacobiWeight));
      launch(jacobi_start_, cl::NullRange, top.geo.cells, top.geo.local);
      for (int k = 1; k < kJacobiSweeps; ++k) jacobi_sweep(launch, fp);
    } else {
      smooth(launch, f, fp, 0, true);
    }
    launch.record(set_args(residual_, fp, f.x, f.b, f.inv_diag, f.r));
    launch(residual_, cl::NullRange, f.geo.cells, f.geo.local);
    launch.record(set_args(restrict_, fp, c.params_buffer, f.r, c.inv_diag, c.b, c.x));
    launch(restrict_, cl::NullRange, c.geo.cells, c.geo.local);
  }
  // Coarsest: a palindrome of colour sweeps (red, then black-red pairs), symmetric as a whole;
  // its first red is done.
  {
    Level& c = levels_[static_cast<std::size_t>(last)];
    cl::Buffer& cp = last == 0 ? g.params : c.params_buffer;
    for (int k = 1; k <= 2 * kCoarsestPairs; ++k) {
      launch.record(set_args(sweep_, cp, c.x, c.b, c.inv_diag, k % 2, 1.0f));
      launch(sweep_, cl::NullRange, c.geo.colour, c.geo.colour_local);
    }
  }
  // Up: prolong the correction, smooth in the mirrored order (as many Jacobi sweeps as before).
  for (int l = last - 1; l >= 0; --l) {
    Level& f = levels_[static_cast<std::size_t>(l)];
    Level& c = levels_[static_cast<std::size_t>(l) + 1];
    cl::Buffer& fp = l == 0 ? g.params : f.params_buffer;
    launch.record(set_args(prolong_, fp, c.params_buffer, c.x, f.inv_diag, f.x));
    launch(prolong_, cl::NullRange, f.geo.cells, f.geo.local);
    if (l == 0) {
      for (int k = 0; k < kJacobiSweeps; ++k) jacobi_sweep(launch, fp);
    } else {
      smooth(launch, f, fp, 1, false);
    }
  }
}

PressureReport MultigridCg::solve(Launcher& launch, GridBuffers& g, const PressureSettings& settings,
                                  float divergence_scale) {
  // Level 0 works on the engine's grid: the preconditioner solves M z = r.
  Level& top = levels_[0];
  top.type = g.type;
  top.inv_diag = g.inv_diag;
  top.x = z_;
  top.b = r_;
  top.r = fine_residual_;
  launch.record(set_args(coefficients_, g.params, g.type, g.inv_diag, g.pressure));
  launch(coefficients_, cl::NullRange, geo_.cells, geo_.local);
  for (std::size_t l = 1; l < levels_.size(); ++l) {
    Level& f = levels_[l - 1];
    Level& c = levels_[l];
    launch.record(set_args(coarsen_, l == 1 ? g.params : f.params_buffer, c.params_buffer, f.type, c.type));
    launch(coarsen_, cl::NullRange, c.geo.cells, c.geo.local);
    launch.record(set_args(coefficients_, c.params_buffer, c.type, c.inv_diag, c.x));
    launch(coefficients_, cl::NullRange, c.geo.cells, c.geo.local);
  }
  const cl::LocalSpaceArg scratch = cl::Local(sizeof(float) * 8 * geo_.reduce_group);

  PressureReport report;
  launch.record(set_args(cg_residual_, g.params, g.pressure, g.rhs, g.inv_diag, r_, g.partials, scratch));
  launch(cg_residual_, cl::NullRange, geo_.reduce, geo_.reduce_local);
  reduce_.fold(launch, g, geo_.groups, kSlotUpdate);
  report.residual = reduce_.read(launch, g, kSlotUpdate)[4] * divergence_scale;
  report.converged = report.residual <= settings.tolerance;
  if (report.converged) return report;

  // z = M r, d = z; then per iteration q = A d, x += alpha d, r -= alpha q, z = M r, d = z + beta d,
  // with alpha and beta computed on the device from the reductions; one wait, for the residual.
  int now = 0;
  precondition(launch, g);
  launch.record(set_args(cg_dot_, g.params, r_, z_, g.partials, scratch));
  launch(cg_dot_, cl::NullRange, geo_.reduce, geo_.reduce_local);
  reduce_.fold(launch, g, geo_.groups, kSlotRz[now]);
  launch.record(set_args(cg_direction_, g.params, g.results, kSlotRz[now], -1, z_, d_));
  launch(cg_direction_, cl::NullRange, geo_.cells, geo_.local);
  while (report.iterations < settings.max_iterations) {
    launch.record(set_args(cg_apply_, g.params, d_, g.inv_diag, q_, g.partials, scratch));
    launch(cg_apply_, cl::NullRange, geo_.reduce, geo_.reduce_local);
    reduce_.fold(launch, g, geo_.groups, kSlotDq);
    launch.record(set_args(cg_update_, g.params, g.results, kSlotRz[now], kSlotDq, d_, q_, g.pressure, r_,
                           g.partials, scratch));
    launch(cg_update_, cl::NullRange, geo_.reduce, geo_.reduce_local);
    reduce_.fold(launch, g, geo_.groups, kSlotUpdate);
    ++report.iterations;
    report.residual = reduce_.read(launch, g, kSlotUpdate)[4] * divergence_scale;
    report.converged = report.residual <= settings.tolerance;
    if (report.converged || !std::isfinite(report.residual)) break;
    precondition(launch, g);
    launch.record(set_args(cg_dot_, g.params, r_, z_, g.partials, scratch));
    launch(cg_dot_, cl::NullRange, geo_.reduce, geo_.reduce_local);
    reduce_.fold(launch, g, geo_.groups, kSlotRz[1 - now]);
    launch.record(set_args(cg_direction_, g.params, g.results, kSlotRz[1 - now], kSlotRz[now], z_, d_));
    launch(cg_direction_, cl::NullRange, geo_.cells, geo_.local);
    now = 1 - now;
  }
  return report;
}

}  // namespace sonoflow::smoke
