#pragma once
// The smoke the daemon runs when fluid.medium = "smoke": kernels/smoke's OpenCL SmokeEngine
// behind the pipeline's FluidModel seam, set up from the config's [smoke] table (grid, schemes,
// jets and plumes). create() picks the OpenCL device (fluid.device), builds the kernels and
// allocates the grid; it is called before the threads start. Liquid material names do not apply
// to air: live `material` changes are ignored; the [smoke] table's live part (smoke_live.hpp)
// applies between frames, keeping the flow, and the grid's size and the solver's kind wait for a
// restart (the config reload names them).
#include <memory>
#include <string>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "kernels/smoke/smoke_engine.hpp"

namespace sonoflow::daemon {

class KernelSmoke final : public FluidModel {
 public:
  // Null and `error` set on failure.
  static std::unique_ptr<KernelSmoke> create(const Config& config, std::string& error);

  void step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s, ContactField& out,
            FluidStepInfo& info) noexcept override;
  void set_material(std::string_view name, double tau_s, double alpha) noexcept override;
  void set_smoke(const smoke::SmokeLive& live) noexcept override;
  // Live settings the engine refused (out of range; the config loader checks them first).
  std::uint64_t refused_settings() const noexcept { return refused_; }
  // Viewers see the smoke as grey points (cells holding smoke) and the grid's box as the container.
  std::uint32_t view_particles(std::span<scene::SceneParticle> out,
                               scene::ColourBy& colour_by) noexcept override;
  std::uint32_t view_container(std::span<scene::SceneShape> out) const noexcept override;

  std::string describe() const;
  const smoke::SmokeStats& last_stats() const noexcept { return stats_; }

 private:
  KernelSmoke() = default;
  std::unique_ptr<smoke::SmokeEngine> engine_;
  smoke::SmokeStats stats_{};
  smoke::SmokeLive live_{};  // as applied (create: the config's)
  std::uint64_t refused_ = 0;
  std::string scene_;
  std::vector<smoke::SmokeEngine::SmokePoint> display_;  // view_particles staging, sized at create
};

}  // namespace sonoflow::daemon
