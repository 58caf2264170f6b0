#pragma once
// Fluid stage (90 Hz): steps the fluid with the newest hand frame, the hand sweeping from its
// pose one period earlier (HandHistory), and publishes the contact field to the haptic thread.
// Applies live material and smoke changes between frames. With force feedback it poses the tool
// the same way before each frame, sweeping from its pose one period before the newest stylus
// pose to the newest (ToolHistory), and hands the fluid's force on the tool to the force stage
// after it: a fluid behind real time sees the hand and the tool at their real speed. The stage
// numbers the fields it publishes (ContactField::sequence, from 1), so the haptic stage's
// provenance records and the trace name each field unambiguously.
#include "daemon/pipeline/hand_history.hpp"
#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/scene_export.hpp"
#include "daemon/pipeline/stage.hpp"
#include "daemon/pipeline/tool_history.hpp"
#include "rt/clock.hpp"
#include "rt/histogram.hpp"

namespace sonoflow::daemon {

class FluidStage final : public Stage {
 public:
  FluidStage(FluidModel& model, Links& links, rt::Clock& clock, std::int64_t period_ns)
      : model_(model), links_(links), clock_(clock), period_ns_(period_ns) {}

  status::Stage id() const noexcept override { return status::Stage::Fluid; }
  std::int64_t period_ns() const noexcept override { return period_ns_; }
  std::int64_t phase_ns() const noexcept override { return 300'000; }
  // PoCL allocates per kernel launch from this thread (~370 KiB of arena in the first frames).
  std::size_t heap_bytes() const noexcept override { return 1 << 20; }
  void tick(const rt::LoopTick& tick) noexcept override;
  void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept override;

  std::uint64_t frames() const noexcept { return frames_; }
  // The first frame's step (ns; 0 before it): start-up work left to the first frame shows here.
  std::int64_t first_step_ns() const noexcept { return first_step_ns_; }
  // Before the thread starts: publish the scene for viewers after each frame (null: don't).
  void set_scene_export(FluidSceneExport* scene) noexcept { scene_ = scene; }

 private:
  FluidModel& model_;
  Links& links_;
  rt::Clock& clock_;
  std::int64_t period_ns_;
  HandFrame newest_{};
  HandHistory hands_;
  HandFrame previous_{};  // the hand one period before newest_ (scratch for each frame)
  ToolHistory tools_;
  ToolPoseSample tool_newest_{}, tool_previous_{};  // the newest stylus pose, and one period before
  bool have_hand_ = false, have_tool_ = false;
  FluidSettings settings_{};
  std::uint64_t frames_ = 0, errors_ = 0, published_ = 0;
  std::uint32_t particles_ = 0, samples_ = 0;
  FluidStepInfo last_{};  // the medium's figures of the newest frame
  rt::LatencyHistogram step_time_;
  std::int64_t first_step_ns_ = 0;
  FluidSceneExport* scene_ = nullptr;
};

}  // namespace sonoflow::daemon
