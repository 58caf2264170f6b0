#pragma once
// The scene snapshot sonoflowd exports at view.scene_path (default /run/sonoflow/scene) for live
// viewers (sonoflow-view): what the fluid and haptic threads see, ~30 times a second. Mapped
// read-only by viewers. This header is the ABI; tests/daemon/scene_test.cpp pins its sizes.
//
// Layout: a 4 KiB header, then two sections, each written by one thread:
//   fluid  (the fluid thread):  FluidSceneHead, then max_particles SceneParticle, then
//                               max_samples SceneSample (contact samples, decimated);
//   haptic (the haptic thread): HapticSceneHead, then kMaxPaths * kMaxPathVertices SceneFocus
//                               (STM paths), max_trail SceneFocus (emitted focus trail), then
//                               max_samples SceneSample (target samples re-posed on the hand).
// Each section is a double-buffered seqlock (slot_pair.hpp): the writer fills the slot readers
// are not pointed at and never waits; a reader copies the newest complete slot and retries on a
// torn copy. Counts in a head say how many records of each array are valid.
//
// Versioning: a reader knows exactly one layout_version and refuses any other with a message
// naming both (no partial compatibility: this is a view, not an archive). Like the status
// file, the region is created under a temporary name and renamed into place, gets a fresh
// generation on every start, and is unlinked on exit, so a viewer that kept an old mapping
// sees state "stopped" and reattaches when the path names a new file.
//
// Units: metres in the array frame, pascals, host CLOCK_MONOTONIC nanoseconds. All integers
// little-endian; nothing holds a pointer.
#include <array>
#include <atomic>
#include <cstdint>

#include "kernels/types/focal_plan.hpp"
#include "kernels/types/hand_pose.hpp"

namespace sonoflow::daemon::scene {

inline constexpr std::uint64_t kMagic = 0x454E454353465300ull;  // "\0SFSCENE" read backwards
inline constexpr std::uint32_t kLayoutVersion = 1;
inline constexpr std::uint32_t kHeaderSize = 4096;
inline constexpr int kMaxShapes = 8;
inline constexpr int kMaxPaths = 8;
inline constexpr int kMaxPathVertices = 64;

enum class SceneState : std::uint32_t { Starting = 0, Running = 1, Stopped = 2 };

// How the fluid thread coloured the particles (the page's legend says it).
enum class ColourBy : std::uint32_t { Material = 0, Fraction = 1, Temperature = 2 };

struct SceneParticle {
  float x = 0, y = 0, z = 0;
  std::uint8_t r = 0, g = 0, b = 0;  // sRGB
  std::uint8_t flags = 0;            // bit 0: solid (frozen metal)
};

// A pressure sample on the hand: contact samples (fluid) or target samples (haptic).
struct SceneSample {
  float x = 0, y = 0, z = 0;
  float pressure = 0;  // Pa
};

// A point with a value: emitted foci (value = intensity 0..1), renderer foci (value = p_i, Pa),
// STM path vertices (value = p* at the vertex, Pa), trail points (value = intensity).
struct SceneFocus {
  float x = 0, y = 0, z = 0;
  float value = 0;
};

struct SceneJoint {
  float x = 0, y = 0, z = 0;
  float radius = 0;  // capsule radius of the bone that ends here, m
};

struct SceneHand {
  std::uint32_t hand_id = 0;
  std::uint32_t valid_mask = 0;  // bit j: joint j valid
  std::uint32_t chirality = 0;   // 0 left, 1 right
  std::uint32_t reserved = 0;
  std::array<SceneJoint, kHandJointCount> joints{};
};

// A container wall, as kernels/fluid/scene.hpp Shape: kind 0 box (a = min, b = max corner),
// 1 plane (a = point, b = normal), 2 incline (a = point, angle), 3 bowl (a = centre, radius,
// thickness).
struct SceneShape {
  std::uint32_t kind = 0;
  float a[3] = {0, 0, 0};
  float b[3] = {0, 0, 0};
  float angle = 0, radius = 0, thickness = 0;
};

// Writer: the fluid thread, every 1/view.scene_rate_hz (after a fluid frame).
struct FluidSceneHead {
  std::int64_t time_ns = 0;          // monotonic time of the frame
  std::uint64_t frame = 0;           // fluid frames stepped
  std::uint32_t particles_total = 0; // live particles in the fluid
  std::uint32_t particles_shown = 0; // records that follow (every k-th particle)
  std::uint32_t samples_total = 0;   // samples in the contact field
  std::uint32_t samples_shown = 0;
  std::uint32_t hand_count = 0;
  std::uint32_t shape_count = 0;
  ColourBy colour_by = ColourBy::Material;
  float max_pressure = 0;            // Pa, largest contact sample pressure
  std::array<char, 32> material{};   // NUL-padded
  std::array<SceneHand, kMaxHands> hands{};
  std::array<SceneShape, kMaxShapes> shapes{};
};

// Writer: the haptic thread, every 1/view.scene_rate_hz.
struct HapticSceneHead {
  std::int64_t time_ns = 0;          // deadline of the tick
  std::uint64_t blocks = 0;          // FocalBlocks produced
  std::uint32_t mode = 0;            // HapticMode: 0 silent, 1 AM, 2 STM
  std::uint32_t emitted_count = 0;   // foci in the newest sample sent (after the safety gate)
  std::uint32_t solution_count = 0;  // AM: the optimiser's foci (renderer model)
  std::uint32_t path_count = 0;      // STM: paths of the playing plan
  std::uint32_t trail_count = 0;     // emitted focus positions, oldest first
  std::uint32_t targets_total = 0;   // array-facing samples of the newest field
  std::uint32_t targets_shown = 0;
  float sigma_m = 0;                 // focal fall-off of the renderer's pressure model
  float gamma = 0;                   // STM intensity factor (Eq. 5.1); 0 for AM
  std::uint32_t reserved = 0;
  std::array<SceneFocus, kMaxFoci> emitted{};
  std::array<SceneFocus, kMaxFoci> solution{};
  std::array<std::uint32_t, kMaxPaths> path_vertices{};
};

// Where a section lives and how big its arrays are.
struct SceneSectionInfo {
  std::uint32_t offset = 0;        // bytes from the start of the file to the section
  std::uint32_t payload_bytes = 0; // bytes of one slot's payload
};

struct SceneHeader {
  std::uint64_t magic = kMagic;
  std::uint32_t layout_version = kLayoutVersion;
  std::uint32_t header_size = kHeaderSize;
  std::uint64_t total_size = 0;
  std::uint64_t generation = 0;            // random, new every start
  std::int32_t writer_pid = 0;
  std::atomic<SceneState> state{SceneState::Starting};
  std::int64_t start_monotonic_ns = 0;
  double rate_hz = 0;                      // publication rate of each section
  std::uint32_t max_particles = 0;
  std::uint32_t max_samples = 0;
  std::uint32_t max_trail = 0;
  std::uint32_t reserved0 = 0;
  SceneSectionInfo fluid{}, haptic{};
  std::array<char, 32> version{};          // daemon version, NUL-padded
  std::array<std::uint8_t, kHeaderSize - 120> reserved{};
};

static_assert(sizeof(SceneHeader) == kHeaderSize);
static_assert(sizeof(SceneParticle) == 16 && sizeof(SceneSample) == 16 && sizeof(SceneFocus) == 16);
static_assert(std::atomic<SceneState>::is_always_lock_free);

// Byte offsets of a section payload's arrays (the head first, then each array 16-byte aligned).
struct FluidPayload {
  static constexpr std::uint32_t particles_offset() { return (sizeof(FluidSceneHead) + 15) / 16 * 16; }
  static std::uint32_t samples_offset(std::uint32_t max_particles) {
    return particles_offset() + max_particles * static_cast<std::uint32_t>(sizeof(SceneParticle));
  }
  static std::uint32_t bytes(std::uint32_t max_particles, std::uint32_t max_samples) {
    return samples_offset(max_particles) + max_samples * static_cast<std::uint32_t>(sizeof(SceneSample));
  }
};

struct HapticPayload {
  static constexpr std::uint32_t paths_offset() { return (sizeof(HapticSceneHead) + 15) / 16 * 16; }
  static constexpr std::uint32_t trail_offset() {
    return paths_offset() + kMaxPaths * kMaxPathVertices * static_cast<std::uint32_t>(sizeof(SceneFocus));
  }
  static std::uint32_t targets_offset(std::uint32_t max_trail) {
    return trail_offset() + max_trail * static_cast<std::uint32_t>(sizeof(SceneFocus));
  }
  static std::uint32_t bytes(std::uint32_t max_trail, std::uint32_t max_samples) {
    return targets_offset(max_trail) + max_samples * static_cast<std::uint32_t>(sizeof(SceneSample));
  }
};

}  // namespace sonoflow::daemon::scene
