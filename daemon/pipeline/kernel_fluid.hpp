#pragma once
// The fluid the daemon runs: kernels/fluid's OpenCL FluidEngine (issue 5) behind the pipeline's
// FluidModel seam. create() picks the OpenCL device, builds the kernels, allocates, loads the
// material preset and the default scene (a pool under the hand); it may take seconds (PoCL
// compiles the kernels on first use and caches them) and is called before the threads start.
//
// Material presets are read once at start from the materials directory (`<name>.toml`, the
// fluid layer's format), so a live `material NAME` only switches between loaded presets; tau
// and alpha then override the preset's, as the config says. A configured material with no
// preset, an unreadable directory or a preset the fluid layer refuses stops the start with the
// key to fix (load_material_presets): the daemon never runs another fluid than the one asked for.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "kernels/fluid/fluid_engine.hpp"
#include "kernels/fluid/pool_scene.hpp"

namespace sonoflow::daemon {

// The pool the hand stirs is the fluid layer's (kernels/fluid/pool_scene.hpp, shared with the
// benchmarks): floor 11 cm above the array, 4 cm deep, 16 x 16 cm, filled at the spacing whose
// lattice holds the count nearest to fluid.particles.

// The presets a daemon runs with: every <name>.toml of the materials directory, by file name
// (runny_cream; the config may write runny-cream).
using MaterialPresets = std::map<std::string, fluid::Material, std::less<>>;

// Loads every preset in `dir` and checks that the configured fluid.material is one of them. On
// failure false, with `error` naming what to fix: 'fluid.materials_dir' (unreadable), the preset
// file the fluid layer refused (and its key), or 'fluid.material' (no such preset; those found
// are listed). Start-up only.
bool load_material_presets(const Config& config, const std::string& dir, MaterialPresets& out,
                           std::string& error);

class KernelFluid final : public FluidModel {
 public:
  // `presets` from load_material_presets (they must hold fluid.material). Null and `error` set on
  // failure (the OpenCL device, the kernels' build, the scene).
  static std::unique_ptr<KernelFluid> create(const Config& config, MaterialPresets presets, std::string& error);

  void step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s, ContactField& out,
            FluidStepInfo& info) noexcept override;
  void set_material(std::string_view name, double tau_s, double alpha) noexcept override;
  // With force_feedback.enabled the engine carries the tool (a rod or ladle as ghost particles).
  void set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept override;
  bool tool_force(ToolForceSample& out) noexcept override;
  std::uint32_t view_particles(std::span<scene::SceneParticle> out,
                               scene::ColourBy& colour_by) noexcept override;
  std::uint32_t view_container(std::span<scene::SceneShape> out) const noexcept override;

  std::string describe() const;
  const fluid::FluidStats& last_stats() const noexcept { return stats_; }
  const fluid::Material& material() const noexcept { return engine_->material(); }
  // The presets loaded at start (their file names without .toml), sorted.
  std::vector<std::string> preset_names() const;

 private:
  KernelFluid() = default;
  std::unique_ptr<fluid::FluidEngine> engine_;
  MaterialPresets presets_;
  std::string material_;
  bool has_tool_ = false;
  fluid::FluidStats stats_{};
  fluid::Scene scene_;                          // the container the viewer draws
  std::vector<fluid::DisplayParticle> display_; // view_particles staging, sized at create
};

}  // namespace sonoflow::daemon
