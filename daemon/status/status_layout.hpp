#pragma once
// The live status sonoflowd exports at status.path (default /run/sonoflow/status), mapped
// read-only by monitors (sonoflow-top, sonoflowctl, scripts). This header is the ABI: sizes and
// offsets are pinned by tests/daemon/status_test.cpp (StatusLayout.SizesAndOffsetsArePinned).
//
// Layout: a 4 KiB header, then one rt::SeqLock section per writer, each on its own cache lines.
// All integers are little-endian and naturally aligned; nothing holds a pointer.
//   - The header's magic/abi/compat fields never change meaning. A reader needs
//     compat_major <= the major it understands. New fields go at the end of a section (its
//     size in the directory grows, abi_minor increments); readers ignore trailing bytes. A
//     section that would outgrow its cache lines (moving every later section) gets a new
//     section at the end of the region instead (2.2: tracker_late).
//   - generation is new on every daemon start; the daemon writes the file under a temporary name
//     and renames it over status.path, and unlinks it on exit, so a monitor that kept an old
//     mapping sees the old inode and the daemon_state "stopped", never a mix of two runs.
//   - Each section is written by exactly one thread (named per struct) with SeqLock::store;
//     readers copy with SeqLock::load and retry on a torn read. They never write.
//
// Times: "monotonic" means host CLOCK_MONOTONIC nanoseconds (the pipeline's clock; a replay's
// virtual clock in --replay). Durations are nanoseconds (_ns), rates Hz (_hz).
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

#include "rt/seqlock.hpp"

namespace sonoflow::daemon::status {

inline constexpr std::uint64_t kMagic = 0x574F4C464F4E4F53ull;  // "SONOFLOW" in file byte order
// 2: a loop row for the force-feedback servo (every section after the loops moved) and the
// force_feedback section at the end. 2.1: FluidStatus medium, grid and pressure solve.
// 2.2: the tracker_late section at the end (stale_frames). TrackerStatus fills its section's
// cache line (8-byte sequence + 56 bytes), so a field at its end would move every later section.
inline constexpr std::uint16_t kAbiMajor = 2;
inline constexpr std::uint16_t kAbiMinor = 2;
inline constexpr std::uint16_t kCompatMajor = 2;  // oldest reader major that understands this file
inline constexpr std::uint32_t kHeaderSize = 4096;

// One row per pipeline thread.
// Force: the force-feedback servo (a row only while force_feedback.enabled).
enum class Stage : std::uint32_t { Tracker, Fluid, Haptic, Stream, Usb, Recorder, Supervisor, Force };
inline constexpr int kStageCount = 8;
inline constexpr std::array<const char*, kStageCount> kStageNames{
    "tracker", "fluid", "haptic", "stream", "usb", "recorder", "supervisor", "force"};

enum class LoopState : std::uint32_t { Stopped = 0, Running = 1, Degraded = 2, Error = 3 };
enum class DaemonState : std::uint32_t { Starting = 0, Running = 1, Stopping = 2, Stopped = 3 };

// Per-thread loop figures. Writer: that stage's own thread, every 1/status.update_hz.
struct LoopStatus {
  std::int64_t updated_ns = 0;          // monotonic time of this publication
  std::int64_t period_target_ns = 0;    // configured period; 0 for event-driven threads
  std::uint64_t ticks = 0;              // iterations since start
  std::uint64_t overruns = 0;           // iterations that ended after the next deadline
  std::uint64_t skipped_periods = 0;    // deadlines skipped because of overruns
  std::uint32_t consecutive_overruns = 0;
  LoopState state = LoopState::Stopped; // Degraded: running without the asked RT scheduling
  std::int32_t sched_priority = 0;      // granted SCHED_FIFO priority; 0 = SCHED_OTHER
  std::int32_t cpu = -1;                // pinned CPU; -1 = not pinned
  double rate_hz = 0;                   // ticks per second over the last publication window
  std::int64_t wake_p50_ns = 0, wake_p99_ns = 0, wake_max_ns = 0;       // wake - deadline
  std::int64_t period_p50_ns = 0, period_p99_ns = 0, period_max_ns = 0; // wake - previous wake
  std::int64_t exec_p50_ns = 0, exec_p99_ns = 0, exec_max_ns = 0;       // body run time
};

enum class TrackerState : std::uint32_t { Absent = 0, Connecting = 1, Streaming = 2, Lost = 3 };

// Writer: the tracker I/O thread.
struct TrackerStatus {
  TrackerState state = TrackerState::Absent;
  std::uint32_t hands_visible = 0;
  double frame_rate_hz = 0;             // frames received per second, last window
  std::uint64_t frames = 0;             // frames received since start
  std::uint64_t dropped_frames = 0;     // gaps in frame ids plus frames the ring refused
  std::uint64_t tracking_losses = 0;    // times the hand left tracking
  std::uint64_t last_frame_id = 0;
  std::int64_t last_capture_ns = 0;     // monotonic capture time of the newest frame
};

// abi_minor 2: the tracker's fields added after TrackerStatus filled its cache line; a section
// of its own at the end of the region, so no earlier offset moved. Writer: the tracker I/O
// thread, right after its TrackerStatus (a reader may see one publication apart).
struct TrackerLateStatus {
  std::uint64_t stale_frames = 0;       // frames received but older than safety.stale_after_ms
                                        // when the stage read them (a stall): not rendered
};

// Writer: the fluid thread.
struct FluidStatus {
  std::array<char, 16> material{};      // preset name, NUL-padded
  double tau_s = 0, alpha = 0;
  std::uint32_t particles = 0;
  std::uint32_t contact_samples = 0;    // samples in the newest ContactField
  std::uint64_t frames = 0;             // fluid frames stepped
  std::int64_t step_p50_ns = 0, step_p99_ns = 0, step_max_ns = 0;  // one frame's step time
  std::uint64_t engine_errors = 0;
  // abi_minor 1: the medium (0 particles, 1 smoke) and, for smoke, its grid and the pressure
  // solve of the newest frame (iterations of its slowest step, residual as divergence in 1/s).
  std::uint32_t medium = 0;
  std::array<std::uint32_t, 3> grid{};
  std::uint32_t pressure_iterations = 0;
  float pressure_residual = 0;
};

enum class SafetyState : std::uint32_t { Silent = 0, Active = 1, Fading = 2 };

// Writer: the haptic thread.
struct HapticStatus {
  std::uint32_t mode = 0;               // kernels/types HapticMode: 0 silent, 1 AM, 2 STM
  SafetyState safety = SafetyState::Silent;
  std::uint32_t focal_points = 0;       // foci in the newest block
  std::uint32_t reserved = 0;
  float peak_intensity = 0;             // largest focus intensity in the newest block, 0..1
  float total_power = 0;                // largest sum of squared intensities in that block
  std::uint64_t blocks = 0;             // FocalBlocks produced
  std::uint64_t capped_samples = 0;     // samples scaled down by the intensity/power caps
  std::uint64_t stale_fades = 0;        // fades started because hand data went stale
  std::int64_t solve_p50_ns = 0, solve_p99_ns = 0, solve_max_ns = 0;  // renderer time per tick
};

// Writer: the stream thread.
struct ArrayStatus {
  std::uint32_t connected = 0;          // 1 while the array is present
  std::uint32_t device_state = 0;       // drivers ArrayState: 0 idle .. 4 fading
  std::uint32_t fifo_level = 0;         // samples queued in the device
  std::uint32_t fifo_depth = 0;         // device FIFO capacity, samples
  std::int64_t lookahead_ns = 0;        // queued audio ahead of the play head
  std::uint64_t device_tick = 0;        // array 40 kHz tick at the last status
  std::uint64_t blocks_sent = 0;
  std::uint64_t underruns = 0;          // sample slots the device had nothing to play
  std::uint64_t late_blocks = 0;        // blocks whose start had already played
  std::uint64_t usb_errors = 0;
  std::uint64_t reconnects = 0;
  std::uint64_t silent_blocks = 0;      // blocks of silence sent (no plan, fade, stopped)
  float emitted_peak_intensity = 0;     // largest intensity sent in the last window
  std::uint32_t reserved = 0;
};

inline constexpr int kRingCount = 4;
// Writer: the supervisor, sampling every ring's fill level.
struct RingStatus {
  struct Ring {
    std::array<char, 16> name{};
    std::uint32_t depth = 0, capacity = 0, high_water = 0, reserved = 0;
    std::uint64_t drops = 0;            // pushes refused because the ring was full
  };
  std::array<Ring, kRingCount> rings{};
};

// Hand-to-array latency: from a HandFrame's capture time to the first emitted sample that used
// it (device tick mapped to host time). Writer: the stream thread.
inline constexpr int kLatencyBuckets = 64;
inline constexpr std::int64_t kLatencyBucketNs = 500'000;  // bucket i: [i, i+1) * 0.5 ms
struct LatencyStatus {
  std::uint64_t count = 0;
  std::int64_t p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
  std::uint64_t overflow = 0;           // samples >= kLatencyBuckets * kLatencyBucketNs
  std::array<std::uint32_t, kLatencyBuckets> buckets{};
};

enum class RecorderIo : std::uint32_t { None = 0, IoUring = 1, Pwrite = 2 };
// Writer: the recorder thread.
struct RecorderStatus {
  std::uint32_t recording = 0;
  RecorderIo io = RecorderIo::None;
  std::uint64_t session = 0;            // number of the current or last recording
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
  std::uint64_t gaps = 0;               // records lost because a telemetry ring was full
  std::array<char, 64> path{};          // file of the current or last recording (truncated)
};

enum class ForceOutput : std::uint32_t { Off = 0, Released = 1, Rendering = 2, Ramping = 3 };
// Force feedback (issue 7): the tool in the fluid and the force the device renders. Writer: the
// force thread; all zero (enabled 0, output Off) when force_feedback.enabled is false.
struct ForceFeedbackStatus {
  std::uint32_t enabled = 0;
  ForceOutput output = ForceOutput::Off;  // Ramping: on its way to zero before a release
  std::uint32_t stylus = 0;               // 1 while the stylus pose is read
  std::uint32_t touching = 0;             // tool particles touching the fluid, newest frame
  std::array<float, 3> stylus_position{}; // m, array frame
  std::array<float, 3> fluid_force{};     // N, the newest fluid force on the tool
  std::array<float, 3> commanded{};       // N, the force the device was last commanded
  float max_force_n = 0;                  // magnitude cap in force (config and device peak)
  float max_step_n = 0;                   // largest change allowed between two servo ticks
  float largest_step_n = 0;               // largest change commanded since start
  float peak_force_n = 0;                 // largest magnitude commanded since start
  std::uint32_t reserved = 0;
  std::int64_t force_age_ns = -1;         // age of the newest fluid force at the last tick
  std::uint64_t fluid_forces = 0;         // fluid forces received (one per fluid frame)
  std::uint64_t releases = 0;             // times the device was released after rendering
  std::uint64_t stale_releases = 0;       // times the fluid force went stale while rendering
  std::uint64_t stylus_losses = 0;        // times the stylus pose was lost
};

// Directory entry: where a section lives, so readers need no compiled-in offsets.
enum class SectionId : std::uint32_t {
  Loops = 1, Tracker, Fluid, Haptic, Array, Rings, Latency, Recorder, ForceFeedback, TrackerLate
};
struct SectionEntry {
  SectionId id{};
  std::uint16_t version = 1;
  std::uint16_t count = 1;              // array length (Loops: kStageCount)
  std::uint32_t offset = 0;             // bytes from the start of the file
  std::uint32_t size = 0;               // bytes of one element
};
inline constexpr int kMaxSections = 16;

// Writer: the supervisor (heartbeat at status.update_hz, state on start/stop).
struct StatusHeader {
  std::uint64_t magic = kMagic;
  std::uint16_t abi_major = kAbiMajor, abi_minor = kAbiMinor;
  std::uint16_t compat_major = kCompatMajor, reserved0 = 0;
  std::uint32_t header_size = kHeaderSize;
  std::uint32_t total_size = 0;
  std::uint64_t generation = 0;                     // random, new every start
  std::int32_t writer_pid = 0;
  std::atomic<std::uint32_t> degraded{0};           // 1 if any loop runs without asked RT
  std::int64_t start_monotonic_ns = 0;
  std::atomic<std::int64_t> heartbeat_monotonic_ns{0};
  std::atomic<DaemonState> daemon_state{DaemonState::Starting};
  std::uint32_t section_count = 0;
  std::array<SectionEntry, kMaxSections> sections{};
  std::array<char, 32> version{};                   // daemon version, NUL-padded
  std::array<std::uint8_t, kHeaderSize - 352> reserved{};
};

// A cache-line aligned seqlock section, so two writers never share a line.
template <typename T>
struct alignas(64) Section {
  rt::SeqLock<T> lock;
};

struct StatusRegion {
  StatusHeader header;
  std::array<Section<LoopStatus>, kStageCount> loops;
  Section<TrackerStatus> tracker;
  Section<FluidStatus> fluid;
  Section<HapticStatus> haptic;
  Section<ArrayStatus> array;
  Section<RingStatus> rings;
  Section<LatencyStatus> latency;
  Section<RecorderStatus> recorder;
  Section<ForceFeedbackStatus> force_feedback;
  Section<TrackerLateStatus> tracker_late;  // abi_minor 2
};

static_assert(sizeof(StatusHeader) == kHeaderSize);
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<DaemonState>::is_always_lock_free);

}  // namespace sonoflow::daemon::status
