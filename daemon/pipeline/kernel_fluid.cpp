#include "daemon/pipeline/kernel_fluid.hpp"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "daemon/scene/particle_colour.hpp"
#include "kernels/fluid/material.hpp"

namespace sonoflow::daemon {
namespace {

// Presets name files with '_' where the config may say '-' (runny-cream / runny_cream).
std::string preset_key(std::string_view name) {
  std::string key(name);
  for (char& c : key) if (c == '-') c = '_';
  return key;
}

}  // namespace

std::vector<std::string> KernelFluid::preset_names() const {
  std::vector<std::string> names;
  for (const auto& [name, material] : presets_) names.push_back(name);
  return names;
}

bool load_material_presets(const Config& config, const std::string& dir, MaterialPresets& out,
                           std::string& error) {
  out.clear();
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    error = "'fluid.materials_dir': cannot read the material presets in " + dir + " (" + std::strerror(errno) + ")";
    return false;
  }
  std::vector<std::string> files;
  while (const dirent* e = readdir(d)) {
    const std::string file = e->d_name;
    if (file.size() > 5 && file.substr(file.size() - 5) == ".toml") files.push_back(file);
  }
  closedir(d);
  std::sort(files.begin(), files.end());  // the first refused file is the same on every run
  for (const std::string& file : files) {
    auto m = fluid::load_material(dir + "/" + file);
    if (!m) {
      error = "material preset " + dir + "/" + file + ": " + m.error().message;
      return false;
    }
    out.emplace(file.substr(0, file.size() - 5), std::move(*m));
  }
  if (out.find(preset_key(config.fluid.material)) == out.end()) {
    std::string names;
    for (const auto& [name, material] : out) names += (names.empty() ? "" : ", ") + name;
    error = "'fluid.material' = \"" + config.fluid.material + "\": no preset " + preset_key(config.fluid.material) +
            ".toml in " + dir + (names.empty() ? " (none there; see 'fluid.materials_dir')" : " (presets: " + names + ")");
    return false;
  }
  return true;
}

std::unique_ptr<KernelFluid> KernelFluid::create(const Config& config, MaterialPresets presets, std::string& error) {
  const auto configured = presets.find(preset_key(config.fluid.material));
  if (configured == presets.end()) {
    error = "no preset for 'fluid.material' = \"" + config.fluid.material + "\"";
    return nullptr;
  }
  std::unique_ptr<KernelFluid> f(new KernelFluid());
  // fluid.substeps > 0 replaces every preset's own schedule (the thesis' 3 substeps for the
  // viscoelastic presets need a GPU; one holds 90 Hz on a small CPU, bench/RESULTS.md).
  if (config.fluid.substeps > 0) {
    for (auto& [name, material] : presets) material.substeps = config.fluid.substeps;
  }
  fluid::FluidConfig fc;
  fc.device.device = config.fluid.device;
  fc.device.compute_units = config.fluid.compute_units;
  fc.max_particles = config.fluid.max_particles;
  fluid::fit_pool(fc, config.fluid.particles);
  fc.material = configured->second;
  f->presets_ = std::move(presets);
  fc.material.tau = static_cast<float>(config.fluid.tau_s);
  fc.material.alpha = static_cast<float>(config.fluid.alpha);
  const auto& ff = config.force_feedback;
  if (ff.enabled) {
    fc.tool.kind = ff.ladle ? fluid::ToolKind::Ladle : fluid::ToolKind::Rod;
    fc.tool.radius = static_cast<float>(ff.tool_radius_m);
    fc.tool.length = static_cast<float>(ff.tool_length_m);
    fc.tool.bowl_radius = static_cast<float>(ff.bowl_radius_m);
  }
  auto engine = fluid::FluidEngine::create(fc);
  if (!engine) {
    error = "fluid engine: " + engine.error().message;
    return nullptr;
  }
  f->engine_ = std::move(*engine);
  f->scene_ = fluid::pool_scene();
  f->display_.resize(static_cast<std::size_t>(config.view.max_particles));
  if (auto failed = f->engine_->load_scene(f->scene_)) {
    error = "fluid scene: " + failed->message;
    return nullptr;
  }
  f->material_ = config.fluid.material;
  f->has_tool_ = ff.enabled;
  return f;
}

void KernelFluid::set_material(std::string_view name, double tau_s, double alpha) noexcept {
  if (name != material_) {
    const auto preset = presets_.find(preset_key(name));
    if (preset != presets_.end() && !engine_->set_material(preset->second)) material_ = std::string(name);
  }
  engine_->set_tau(static_cast<float>(tau_s));
  engine_->set_alpha(static_cast<float>(alpha));
}

void KernelFluid::step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s, ContactField& out,
                       FluidStepInfo& info) noexcept {
  engine_->step_frame(newest, previous, frame_dt_s, out, stats_);
  info.particles = static_cast<std::uint32_t>(stats_.particles);
  info.ok = stats_.device_errors == 0 && stats_.non_finite == 0;
}

void KernelFluid::set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept {
  if (!has_tool_) return;
  const fluid::ToolPose start{previous != nullptr ? previous->position : newest.position,
                              previous != nullptr ? previous->orientation : newest.orientation};
  engine_->set_tool_pose({newest.position, newest.orientation}, previous != nullptr ? &start : nullptr);
}

bool KernelFluid::tool_force(ToolForceSample& out) noexcept {
  if (!has_tool_) return false;
  const fluid::ToolForce f = engine_->tool_force();
  out.force = f.force;
  out.torque = f.torque;
  out.touching = f.touching;
  return true;
}

std::uint32_t KernelFluid::view_particles(std::span<scene::SceneParticle> out,
                                          scene::ColourBy& colour_by) noexcept {
  const fluid::Material& material = engine_->material();
  const bool phases = material.media.phases.count > 0;
  const bool heat = material.media.thermal.enabled;
  colour_by = heat ? scene::ColourBy::Temperature : phases ? scene::ColourBy::Fraction : scene::ColourBy::Material;
  const scene::Rgb8 plain = scene::material_colour(material_);
  const std::size_t wanted = std::min(out.size(), display_.size());
  const int n = engine_->read_display(std::span(display_).first(wanted));
  for (int i = 0; i < n; ++i) {
    const fluid::DisplayParticle& d = display_[static_cast<std::size_t>(i)];
    const scene::Rgb8 rgb = heat ? scene::temperature_colour(d.temperature, material.media.thermal.solidus,
                                                             material.media.thermal.liquidus)
                            : phases ? scene::srgb_from_linear(d.colour)
                                     : plain;
    out[static_cast<std::size_t>(i)] = {d.position.x, d.position.y, d.position.z, rgb[0], rgb[1], rgb[2],
                                        static_cast<std::uint8_t>(d.solid ? 1 : 0)};
  }
  return static_cast<std::uint32_t>(n);
}

std::uint32_t KernelFluid::view_container(std::span<scene::SceneShape> out) const noexcept {
  std::uint32_t n = 0;
  for (const fluid::Shape& shape : scene_.shapes) {
    if (n >= out.size()) break;
    scene::SceneShape& s = out[n++];
    s.kind = static_cast<std::uint32_t>(shape.kind);
    s.a[0] = shape.point.x, s.a[1] = shape.point.y, s.a[2] = shape.point.z;
    s.b[0] = shape.normal.x, s.b[1] = shape.normal.y, s.b[2] = shape.normal.z;
    s.angle = shape.angle;
    s.radius = shape.radius;
    s.thickness = shape.thickness;
  }
  return n;
}

std::string KernelFluid::describe() const {
  std::string s = "fluid engine on " + engine_->device_name() + ": " +
                  std::to_string(engine_->particle_count()) + " particles of " +
                  std::string(engine_->material().name) + " (" +
                  std::string(fluid::to_string(engine_->material().model)) + ", " +
                  std::to_string(engine_->material().substeps) + " substep(s) per frame)";
  const fluid::ToolSpec& tool = engine_->config().tool;
  if (tool.kind != fluid::ToolKind::None) {
    s += tool.kind == fluid::ToolKind::Rod ? ", a rod" : ", a ladle";
    s += " of " + std::to_string(static_cast<int>(std::lround(tool.length * 1000))) + " mm for force feedback";
  }
  return s;
}

}  // namespace sonoflow::daemon
