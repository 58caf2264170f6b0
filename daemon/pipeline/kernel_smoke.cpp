#include "daemon/pipeline/kernel_smoke.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sonoflow::daemon {

std::unique_ptr<KernelSmoke> KernelSmoke::create(const Config& config, std::string& error) {
  std::unique_ptr<KernelSmoke> s(new KernelSmoke());
  smoke::SmokeConfig c = config.smoke.config;
  c.device.device = config.fluid.device;
  c.substeps = std::max(c.substeps, 1);
  auto engine = smoke::SmokeEngine::create(c);
  if (!engine) {
    error = "smoke engine: " + engine.error().message;
    return nullptr;
  }
  s->engine_ = std::move(*engine);
  if (auto failed = s->engine_->load_scene(config.smoke.scene)) {
    error = "smoke scene: " + failed->message;
    return nullptr;
  }
  s->scene_ = std::to_string(config.smoke.scene.jets.size()) + " jets, " +
              std::to_string(config.smoke.scene.plumes.size()) + " plumes";
  return s;
}

void KernelSmoke::set_material(std::string_view, double, double) noexcept {}

void KernelSmoke::step(const HandFrame& newest, double frame_dt_s, ContactField& out,
                       FluidStepInfo& info) noexcept {
  engine_->step_frame(newest, have_previous_ ? &previous_ : nullptr, frame_dt_s, out, stats_);
  previous_ = newest;
  have_previous_ = true;
  info.particles = 0;
  info.medium = Medium::Smoke;
  for (std::size_t d = 0; d < 3; ++d) info.grid[d] = static_cast<std::uint32_t>(stats_.cells[d]);
  info.pressure_iterations = static_cast<std::uint32_t>(stats_.pressure_iterations_max);
  info.pressure_residual = stats_.pressure_residual;
  info.ok = stats_.device_errors == 0 && std::isfinite(stats_.kinetic_energy);
}

std::string KernelSmoke::describe() const {
  const smoke::SmokeConfig& c = engine_->config();
  char grid[96];
  std::snprintf(grid, sizeof grid, "%dx%dx%d cells of %.1f mm", c.cells[0], c.cells[1], c.cells[2],
                1e3 * static_cast<double>(c.cell_size));
  return "smoke engine on " + engine_->device_name() + ": " + grid + ", " + scene_ + ", " +
         smoke::to_string(c.advection) + " advection, " + smoke::to_string(c.pressure.solver) +
         " pressure to " + std::to_string(c.pressure.tolerance).substr(0, 5) + " 1/s (at most " +
         std::to_string(c.pressure.max_iterations) + ")";
}

}  // namespace sonoflow::daemon
