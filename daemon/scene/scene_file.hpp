#pragma once
// The scene file's two ends: SceneWriter (sonoflowd creates it and its fluid and haptic threads
// publish into it) and SceneReader (viewers attach read-only). See scene_layout.hpp.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <sys/types.h>
#include <vector>

#include "daemon/scene/scene_layout.hpp"
#include "daemon/shm/shared_file.hpp"
#include "daemon/scene/slot_pair.hpp"

namespace sonoflow::daemon::scene {

// The scene file of a daemon whose view.scene_path is empty: "scene" beside its status file.
inline std::string scene_path_beside(const std::string& status_path) {
  const auto slash = status_path.rfind('/');
  return (slash == std::string::npos ? std::string() : status_path.substr(0, slash + 1)) + "scene";
}

struct SceneCapacity {
  std::uint32_t max_particles = 4096;  // particles shown (every k-th when there are more)
  std::uint32_t max_samples = 1024;    // contact / target samples shown
  std::uint32_t max_trail = 400;       // emitted focus positions kept (20 ms at 20 kHz)
  double rate_hz = 30;                 // publications per second of each section
};

class SceneWriter {
 public:
  // Creates `path` (mode 0640) under a temporary name and renames it into place. Null and
  // `error` set on failure.
  static std::unique_ptr<SceneWriter> create(const std::string& path, const SceneCapacity& capacity,
                                             std::int64_t start_ns, std::string& error);
  ~SceneWriter();  // marks the region stopped and unlinks the file if it is still ours
  SceneWriter(const SceneWriter&) = delete;
  SceneWriter& operator=(const SceneWriter&) = delete;

  const SceneCapacity& capacity() const noexcept { return capacity_; }
  std::int64_t period_ns() const noexcept;
  std::uint64_t generation() const noexcept { return header().generation; }
  void set_state(SceneState state) noexcept;

  // The fluid thread. The shown counts in `head` are set from the spans (clipped to capacity).
  // Never allocates, locks or blocks.
  void publish_fluid(FluidSceneHead head, std::span<const SceneParticle> particles,
                     std::span<const SceneSample> samples) noexcept;
  // The haptic thread. `paths` holds path p's vertices at [p * kMaxPathVertices, ...), counts
  // in head.path_vertices. Never allocates, locks or blocks.
  void publish_haptic(HapticSceneHead head, std::span<const SceneFocus> paths,
                      std::span<const SceneFocus> trail, std::span<const SceneSample> targets) noexcept;

 private:
  SceneWriter(shm::SharedFile file, const SceneCapacity& capacity);
  SceneHeader& header() const noexcept { return *static_cast<SceneHeader*>(file_.data()); }
  shm::SharedFile file_;
  SceneCapacity capacity_;
  SlotPair fluid_, haptic_;
};

// What a viewer copies out (allocates: viewers are not real-time).
struct FluidScene {
  FluidSceneHead head;
  std::vector<SceneParticle> particles;
  std::vector<SceneSample> samples;
};
struct HapticScene {
  HapticSceneHead head;
  std::vector<SceneFocus> paths;  // path p at [p * kMaxPathVertices, + head.path_vertices[p])
  std::vector<SceneFocus> trail;
  std::vector<SceneSample> targets;
};

// Why a mapped header cannot be read by this build (empty: it can). `size` is the file size.
std::string check_header(const SceneHeader& header, std::size_t size);

class SceneReader {
 public:
  // Opens read-only and maps PROT_READ. Refuses files that are too small, not scene files, or
  // of a layout version this build does not know, with a message that says which.
  static std::unique_ptr<SceneReader> attach(const std::string& path, std::string& error);
  SceneReader(const SceneReader&) = delete;
  SceneReader& operator=(const SceneReader&) = delete;

  const SceneHeader& header() const noexcept { return *static_cast<const SceneHeader*>(file_.data()); }
  SceneState state() const noexcept { return header().state.load(std::memory_order_acquire); }
  // True when the daemon restarted or the file went away: detach and attach again.
  bool replaced() const noexcept { return file_.replaced(); }

  std::uint64_t fluid_publications() const noexcept { return fluid_.publications(); }
  std::uint64_t haptic_publications() const noexcept { return haptic_.publications(); }
  // The newest section contents. False when nothing was published yet or every copy was torn.
  bool read_fluid(FluidScene& out) const;
  bool read_haptic(HapticScene& out) const;

 private:
  explicit SceneReader(shm::SharedFile file);
  shm::SharedFile file_;
  SlotPair fluid_, haptic_;
};

}  // namespace sonoflow::daemon::scene
