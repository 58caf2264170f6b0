#pragma once
// The stages' halves of the scene export (daemon/scene/): what the fluid and haptic threads
// publish for live viewers, at view.scene_rate_hz, into the SceneWriter's shared memory. Each
// object belongs to one stage thread; all staging is allocated at construction, so publishing
// never allocates, locks or makes a system call (the haptic half runs in the 1 kHz loop).
#include <cstdint>
#include <vector>

#include "daemon/pipeline/interfaces.hpp"
#include "daemon/scene/scene_file.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon {

// The fluid thread's half: particles, container, hand, contact samples.
class FluidSceneExport {
 public:
  explicit FluidSceneExport(scene::SceneWriter& writer);

  // After a fluid frame stepped at `now_ns`; publishes when a scene period has passed.
  void after_frame(std::int64_t now_ns, FluidModel& model, const HandFrame& hand,
                   const ContactField& field, const char* material, std::uint64_t frames,
                   std::uint32_t particles) noexcept;
  std::uint64_t published() const noexcept { return published_; }

 private:
  scene::SceneWriter& writer_;
  std::int64_t next_ns_ = 0;
  std::uint64_t published_ = 0;
  std::vector<scene::SceneParticle> particles_;
  std::vector<scene::SceneSample> samples_;
  std::vector<scene::SceneShape> shapes_;
};

// The haptic thread's half: the foci sent, the renderer's model (AM foci or STM paths), the
// trail of emitted focus positions, and the target samples re-posed onto the newest hand.
class HapticSceneExport {
 public:
  explicit HapticSceneExport(scene::SceneWriter& writer);

  // Every tick, with the block just queued: keeps the trail of emitted focus positions.
  void record(const FocalBlock& block) noexcept;
  // Every tick; publishes when a scene period has passed. `field` is the newest contact field
  // (null before the first), `hand` the newest hand frame.
  void after_tick(std::int64_t now_ns, const HapticRenderer& renderer, const FocalBlock& block,
                  const HandFrame& hand, const ContactField* field, std::uint64_t blocks) noexcept;
  std::uint64_t published() const noexcept { return published_; }

 private:
  scene::SceneWriter& writer_;
  std::int64_t next_ns_ = 0;
  std::uint64_t published_ = 0;
  RendererView view_;
  std::vector<scene::SceneFocus> trail_;  // ring, capacity max_trail
  std::size_t trail_next_ = 0, trail_size_ = 0;
  std::vector<scene::SceneFocus> trail_ordered_;
  std::vector<scene::SceneSample> targets_;
};

}  // namespace sonoflow::daemon
