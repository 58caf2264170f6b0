#pragma once
// Haptic stage (1 kHz): each tick renders the millisecond that will play `lookahead` from now,
// from the newest hand pose and contact field, passes it through the safety gate, and queues
// it for the stream thread. Silence within 100 ms of tracking loss: a hand frame older than
// stale_after (or a frame with no hand) starts a fade of fade_ms, and stale_after + fade_ms
// <= 100 ms is enforced by the config. A contact field older than field_stale_after (the fluid
// stopped) fades too. Real-time safe.
//
// While recording, each tick also records its provenance (trace_items.hpp): the inputs it
// used, so a replay can feed the same inputs to a stage of its own and compare the blocks.
#include <atomic>

#include "daemon/pipeline/interfaces.hpp"
#include "daemon/pipeline/links.hpp"
#include "daemon/pipeline/output_safety.hpp"
#include "daemon/pipeline/scene_export.hpp"
#include "daemon/pipeline/stage.hpp"
#include "rt/clock.hpp"
#include "rt/histogram.hpp"

namespace sonoflow::daemon {

struct HapticTiming {
  std::int64_t period_ns = 1'000'000;
  std::int64_t lookahead_ns = 3'000'000;  // block start = tick deadline + lookahead
  std::int64_t stale_after_ns = 50'000'000;         // hand frames
  std::int64_t field_stale_after_ns = 200'000'000;  // contact fields (the fluid may run < 90 Hz)
  std::int64_t fade_ns = 20'000'000;
};

class HapticStage final : public Stage {
 public:
  HapticStage(HapticRenderer& renderer, Links& links, rt::Clock& clock, HapticTiming timing);

  status::Stage id() const noexcept override { return status::Stage::Haptic; }
  std::int64_t period_ns() const noexcept override { return timing_.period_ns; }
  void tick(const rt::LoopTick& tick) noexcept override;
  void publish(status::StatusRegion& region, std::int64_t now_ns) noexcept override;

  // From the supervisor: fade to silence and stay silent.
  void request_stop() noexcept { stopping_.store(true, std::memory_order_release); }
  // True once stopping and the output has reached silence.
  bool faded_out() const noexcept { return faded_out_.load(std::memory_order_acquire); }
  std::uint64_t blocks() const noexcept { return blocks_; }
  std::uint64_t settings_generation() const noexcept { return settings_generation_; }
  // Before the thread starts: publish the scene for viewers (null: don't).
  void set_scene_export(HapticSceneExport* scene) noexcept { scene_ = scene; }

 private:
  HapticRenderer& renderer_;
  Links& links_;
  rt::Clock& clock_;
  HapticTiming timing_;
  OutputSafety safety_;
  FocalBlock block_{};
  HapticSettings settings_{};
  std::uint64_t settings_generation_ = 0;   // settings fetched so far
  std::uint64_t settings_recorded_ = 0;     // newest generation handed to the recorder
  bool was_recording_ = false;
  std::int64_t field_arrival_ns_ = -1;
  bool have_hand_ = false;
  std::uint64_t blocks_ = 0, capped_ = 0, stale_fades_ = 0;
  bool was_fresh_ = false;
  std::uint32_t focal_points_ = 0;
  rt::LatencyHistogram solve_time_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> faded_out_{false};
  HapticSceneExport* scene_ = nullptr;
};

}  // namespace sonoflow::daemon
