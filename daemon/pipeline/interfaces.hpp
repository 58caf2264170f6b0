#pragma once
// The seams between the pipeline's stages and the components they drive. Each stage thread
// owns one component and calls it only from that thread; the calls marked real-time safe must
// not allocate, lock or block (they run in the 1 kHz haptic and the stream loops).
//
// Until the drivers (issue 3), fluid (issue 5) and haptics (issue 4) layers land, the daemon
// runs stand-ins from daemon/standins/ behind these same seams; the pipeline does not know
// which implementation it drives.
#include <array>
#include <cstdint>
#include <span>
#include <string_view>

#include "daemon/scene/scene_layout.hpp"
#include "kernels/smoke/smoke_live.hpp"
#include "kernels/types/contact_field.hpp"
#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon {

// Tracker side, called by the tracker I/O thread.
class HandSource {
 public:
  virtual ~HandSource() = default;
  // Real-time safe, non-blocking: the next frame that arrived, if any.
  virtual bool poll(HandFrame& out) noexcept = 0;
  virtual bool connected() const noexcept = 0;
  virtual double nominal_rate_hz() const noexcept = 0;
};

// Force feedback (issue 7): the tool's pose as the force stage read it from the stylus, and the
// fluid's force on the tool over one frame. Plain values for the mailboxes between the two.
struct ToolPoseSample {
  std::int64_t time_ns = 0;   // when the stylus was read (pipeline clock)
  Vec3f position;             // m, array frame: the tool's origin (its centroid)
  Quatf orientation;          // tool frame -> array frame
};

struct ToolForceSample {
  std::uint64_t frame = 0;    // the fluid frame that produced it (the fluid stage's count)
  std::int64_t time_ns = 0;   // when that frame ended (pipeline clock)
  Vec3f force;                // N, the fluid's force on the tool, array frame
  Vec3f torque;               // N m about the tool's origin
  std::int32_t touching = 0;  // tool particles that touched the fluid in the frame
};

enum class Medium : std::uint32_t { Particles = 0, Smoke = 1 };

struct FluidStepInfo {
  std::uint32_t particles = 0;
  bool ok = true;  // false: the engine failed this frame (the field is not published)
  // A grid medium (smoke): its size and the pressure solve of the frame's last step.
  Medium medium = Medium::Particles;
  std::array<std::uint32_t, 3> grid{};
  std::uint32_t pressure_iterations = 0;
  float pressure_residual = 0;  // 1/s, divergence left by the projection
};

// Fluid side, called by the fluid thread at fluid.rate_hz (not real-time critical, but it
// must not block on anything but its own compute). The medium (particles or smoke) is chosen
// at start (fluid.medium); the stage drives either through this seam.
class FluidModel {
 public:
  virtual ~FluidModel() = default;
  // Steps one frame of frame_dt_s, the hand moving from `previous` (its pose frame_dt_s before
  // `newest`; null: it stands still at `newest`) to `newest`, and fills `out` (out.count samples).
  virtual void step(const HandFrame& newest, const HandFrame* previous, double frame_dt_s,
                    ContactField& out, FluidStepInfo& info) noexcept = 0;
  virtual void set_material(std::string_view name, double tau_s, double alpha) noexcept = 0;
  // The [smoke] table's live part (reload, scene loads), between frames; a medium other than
  // smoke ignores it.
  virtual void set_smoke(const smoke::SmokeLive& live) noexcept { (void)live; }
  // Force feedback, before a frame: the next frame sweeps the tool from `previous` (its pose
  // frame_dt_s before `newest`; null: it stands still at `newest`) to `newest`, as step() does
  // the hand; a frame with no call before it holds the tool still. tool_force(): the fluid's
  // force on it over the last frame (false: the model has no tool). The defaults are a model
  // without a tool.
  virtual void set_tool_pose(const ToolPoseSample& newest, const ToolPoseSample* previous) noexcept {
    (void)newest;
    (void)previous;
  }
  virtual bool tool_force(ToolForceSample& out) noexcept {
    (void)out;
    return false;
  }

  // For the scene export (live viewers), on the fluid thread a few times a second between
  // frames: up to out.size() particles (every k-th), coloured as `colour_by` says; returns how
  // many it wrote. Default: none (a model without particles).
  virtual std::uint32_t view_particles(std::span<scene::SceneParticle> out,
                                       scene::ColourBy& colour_by) noexcept {
    (void)out;
    colour_by = scene::ColourBy::Material;
    return 0;
  }
  // The container walls, for the same export; returns how many it wrote. Default: none.
  virtual std::uint32_t view_container(std::span<scene::SceneShape> out) const noexcept {
    (void)out;
    return 0;
  }
};

// What a renderer aims at, for live viewers: the model its output is judged by (thesis Eq. 4.1
// and 5.1), so a viewer can draw the pressure it reconstructs on the hand.
struct RendererView {
  HapticMode mode = HapticMode::Silent;
  float sigma_m = 0;                // focal fall-off phi(d) = exp(-d^2 / (2 sigma^2))
  float gamma = 0;                  // STM: rendered intensity gamma p* (0 for AM)
  std::uint32_t focus_count = 0;    // AM: the optimiser's foci, value = p_i (Pa)
  std::array<scene::SceneFocus, kMaxFoci> foci{};
  std::uint32_t path_count = 0;     // STM: the playing plan's loops in the array frame now,
  std::array<std::uint32_t, scene::kMaxPaths> path_vertices{};  // value = p* (Pa)
  std::array<scene::SceneFocus, scene::kMaxPaths * scene::kMaxPathVertices> paths{};
};

// Haptic side, called by the 1 kHz haptic thread. Real-time safe.
class HapticRenderer {
 public:
  virtual ~HapticRenderer() = default;
  // Fills out.samples for the millisecond starting at block_time_ns (sample i plays at
  // block_time_ns + i * 50 us). `field` is the newest ContactField, or null when none arrived
  // since the last call; `pose` the newest hand frame. Sets out.mode. Intensities are before
  // the pipeline's safety caps.
  virtual void render(const ContactField* field, const HandFrame& pose, std::int64_t block_time_ns,
                      FocalBlock& out) noexcept = 0;
  virtual void set_mode(HapticMode mode, double am_frequency_hz, int max_foci,
                        double stm_speed_m_s) noexcept = 0;
  // For live viewers (a few times a second, haptic thread). Real-time safe. Default: nothing.
  virtual void describe(RendererView& out) const noexcept { out.focus_count = out.path_count = 0; }
};

// What the stream thread knows about the array after its latest STATUS.
struct ArrayLinkStatus {
  bool connected = false;
  bool armed = false;
  std::uint32_t device_state = 0;     // drivers ArrayState (0 idle .. 4 fading)
  std::uint64_t device_tick = 0;      // 40 kHz
  std::uint32_t fifo_level = 0;       // samples queued
  std::uint32_t fifo_depth = 0;
  std::uint64_t underruns = 0;
  std::uint64_t late_blocks = 0;
  std::uint32_t epoch = 0;            // changes when the device restarted (reconnect): resync ticks
};

inline constexpr std::uint32_t kTicksPerSample = 2;  // 40 kHz ticks, 20 kHz samples
inline constexpr std::uint32_t kTickHz = 40'000;

// Array side, called by the stream thread. submit/status/mapping are real-time safe;
// arm/disarm/reconnect may block and are called at start, stop and by the supervisor.
class ArrayLink {
 public:
  virtual ~ArrayLink() = default;
  // Queues one block of 20 samples to play from device tick start_tick. False when refused
  // (not connected, not armed, or the FIFO is full); the caller counts it.
  virtual bool submit(const FocalBlock& block, std::uint64_t start_tick) noexcept = 0;
  virtual ArrayLinkStatus status() noexcept = 0;
  // Host CLOCK_MONOTONIC <-> device tick, from the link's time sync.
  virtual std::uint64_t host_to_tick(std::int64_t host_ns) const noexcept = 0;
  virtual std::int64_t tick_to_host(std::uint64_t tick) const noexcept = 0;

  // True when the array is armed and ready for blocks (arming it if the link does that
  // without blocking).
  virtual bool arm(std::uint8_t intensity_cap, std::uint16_t watchdog_ms) noexcept = 0;
  virtual void disarm() noexcept = 0;  // silent at once (supervisor thread, at stop)
  virtual bool reconnect() noexcept = 0;  // true when the device is back (then disarmed)
};

}  // namespace sonoflow::daemon
