#include "daemon/pipeline/kernel_smoke.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sonoflow::daemon {

std::unique_ptr<KernelSmoke> KernelSmoke::create(const Config& config, std::string& error) {
  std::unique_ptr<KernelSmoke> s(new KernelSmoke());
  smoke::SmokeConfig c = config.smoke.config;
  c.device.device = config.fluid.device;
  c.device.compute_units = config.fluid.compute_units;
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
  s->live_ = smoke::live_part(config.smoke);
  s->display_.resize(static_cast<std::size_t>(config.view.max_particles));
  s->scene_ = std::to_string(config.smoke.scene.jets.size()) + " jets, " +
              std::to_string(config.smoke.scene.plumes.size()) + " plumes";
  return s;
}

void KernelSmoke::set_material(std::string_view, double, double) noexcept {}

void KernelSmoke::set_smoke(const smoke::SmokeLive& live) noexcept {
  if (live == live_) return;  // another live key changed; the smoke's did not
  if (engine_->apply_live(live)) {
    ++refused_;
    return;
  }
  live_ = live;
}

void KernelSmoke::step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s, ContactField& out,
                       FluidStepInfo& info) noexcept {
  engine_->step_frame(newest, previous, frame_dt_s, out, stats_);
  info.particles = 0;
  info.medium = Medium::Smoke;
  for (std::size_t d = 0; d < 3; ++d) info.grid[d] = static_cast<std::uint32_t>(stats_.cells[d]);
  info.pressure_iterations = static_cast<std::uint32_t>(stats_.pressure_iterations_max);
  info.pressure_residual = stats_.pressure_residual;
  info.ok = stats_.device_errors == 0 && std::isfinite(stats_.kinetic_energy);
}

std::uint32_t KernelSmoke::view_particles(std::span<scene::SceneParticle> out,
                                          scene::ColourBy& colour_by) noexcept {
  colour_by = scene::ColourBy::Material;
  constexpr float kVisible = 0.05f;  // smoke density below this is not drawn
  const std::size_t wanted = std::min(out.size(), display_.size());
  const int n = engine_->read_smoke(std::span(display_).first(wanted), kVisible);
  for (int i = 0; i < n; ++i) {
    const auto& p = display_[static_cast<std::size_t>(i)];
    // Denser smoke is lighter grey.
    const auto grey = static_cast<std::uint8_t>(90.0f + 150.0f * std::min(p.density, 1.0f));
    out[static_cast<std::size_t>(i)] = {p.position.x, p.position.y, p.position.z, grey, grey, grey, 0};
  }
  return static_cast<std::uint32_t>(n);
}

std::uint32_t KernelSmoke::view_container(std::span<scene::SceneShape> out) const noexcept {
  if (out.empty()) return 0;
  const smoke::SmokeConfig& c = engine_->config();
  const Vec3f hi = c.domain_max();
  scene::SceneShape& box = out[0];
  box.kind = 0;  // a box: min and max corner
  box.a[0] = c.origin.x, box.a[1] = c.origin.y, box.a[2] = c.origin.z;
  box.b[0] = hi.x, box.b[1] = hi.y, box.b[2] = hi.z;
  return 1;
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
