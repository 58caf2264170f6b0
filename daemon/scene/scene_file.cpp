#include "daemon/scene/scene_file.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <new>

#include "daemon/version.hpp"

namespace sonoflow::daemon::scene {
namespace {

// Sections follow the header, each on its own 64-byte boundary.
struct Geometry {
  SceneSectionInfo fluid, haptic;
  std::size_t total = 0;
};

Geometry geometry_of(const SceneCapacity& c) {
  Geometry g;
  g.fluid.offset = kHeaderSize;
  g.fluid.payload_bytes = FluidPayload::bytes(c.max_particles, c.max_samples);
  g.haptic.offset = static_cast<std::uint32_t>(g.fluid.offset + SlotPair::footprint(g.fluid.payload_bytes));
  g.haptic.payload_bytes = HapticPayload::bytes(c.max_trail, c.max_samples);
  g.total = g.haptic.offset + SlotPair::footprint(g.haptic.payload_bytes);
  return g;
}

template <typename T>
std::span<const T> clip(std::span<const T> s, std::size_t n) {
  return s.first(std::min(s.size(), n));
}

}  // namespace

std::unique_ptr<SceneWriter> SceneWriter::create(const std::string& path, const SceneCapacity& capacity,
                                                 std::int64_t start_ns, std::string& error) {
  const Geometry g = geometry_of(capacity);
  std::optional<shm::SharedFile> file = shm::SharedFile::create(path, g.total, "scene file", error);
  if (!file) return nullptr;
  void* memory = file->data();
  auto* h = new (memory) SceneHeader{};
  h->total_size = g.total;
  h->generation = shm::new_generation();
  h->writer_pid = getpid();
  h->start_monotonic_ns = start_ns;
  h->rate_hz = capacity.rate_hz;
  h->max_particles = capacity.max_particles;
  h->max_samples = capacity.max_samples;
  h->max_trail = capacity.max_trail;
  h->fluid = g.fluid;
  h->haptic = g.haptic;
  std::strncpy(h->version.data(), kVersion, h->version.size() - 1);
  std::unique_ptr<SceneWriter> writer(new SceneWriter(std::move(*file), capacity));
  writer->fluid_.initialise();
  writer->haptic_.initialise();
  if (!writer->file_.publish(error)) return nullptr;  // the temporary file goes with the writer
  return writer;
}

SceneWriter::SceneWriter(shm::SharedFile file, const SceneCapacity& capacity)
    : file_(std::move(file)), capacity_(capacity),
      fluid_(static_cast<std::byte*>(file_.data()) + header().fluid.offset, header().fluid.payload_bytes),
      haptic_(static_cast<std::byte*>(file_.data()) + header().haptic.offset, header().haptic.payload_bytes) {}

SceneWriter::~SceneWriter() {
  set_state(SceneState::Stopped);
  file_.unlink_if_ours(offsetof(SceneHeader, generation), header().generation);
}

std::int64_t SceneWriter::period_ns() const noexcept {
  return static_cast<std::int64_t>(std::llround(1e9 / std::max(capacity_.rate_hz, 0.1)));
}

void SceneWriter::set_state(SceneState state) noexcept {
  header().state.store(state, std::memory_order_release);
}

void SceneWriter::publish_fluid(FluidSceneHead head, std::span<const SceneParticle> particles,
                                std::span<const SceneSample> samples) noexcept {
  particles = clip(particles, capacity_.max_particles);
  samples = clip(samples, capacity_.max_samples);
  head.particles_shown = static_cast<std::uint32_t>(particles.size());
  head.samples_shown = static_cast<std::uint32_t>(samples.size());
  const SlotPair::Piece pieces[] = {
      {0, &head, sizeof head},
      {FluidPayload::particles_offset(), particles.data(), particles.size_bytes()},
      {FluidPayload::samples_offset(capacity_.max_particles), samples.data(), samples.size_bytes()},
  };
  fluid_.publish(pieces);
}

void SceneWriter::publish_haptic(HapticSceneHead head, std::span<const SceneFocus> paths,
                                 std::span<const SceneFocus> trail,
                                 std::span<const SceneSample> targets) noexcept {
  paths = clip(paths, static_cast<std::size_t>(kMaxPaths) * kMaxPathVertices);
  trail = clip(trail, capacity_.max_trail);
  targets = clip(targets, capacity_.max_samples);
  head.path_count = std::min<std::uint32_t>(head.path_count, static_cast<std::uint32_t>(paths.size() / kMaxPathVertices));
  for (std::uint32_t p = 0; p < kMaxPaths; ++p) {
    head.path_vertices[p] = p < head.path_count ? std::min<std::uint32_t>(head.path_vertices[p], kMaxPathVertices) : 0;
  }
  head.trail_count = static_cast<std::uint32_t>(trail.size());
  head.targets_shown = static_cast<std::uint32_t>(targets.size());
  const SlotPair::Piece pieces[] = {
      {0, &head, sizeof head},
      {HapticPayload::paths_offset(), paths.data(), head.path_count * kMaxPathVertices * sizeof(SceneFocus)},
      {HapticPayload::trail_offset(), trail.data(), trail.size_bytes()},
      {HapticPayload::targets_offset(capacity_.max_trail), targets.data(), targets.size_bytes()},
  };
  haptic_.publish(pieces);
}

std::string check_header(const SceneHeader& h, std::size_t size) {
  if (size < kHeaderSize) return "too small to be a sonoflow scene file";
  if (h.magic != kMagic) return "not a sonoflow scene file (bad magic)";
  if (h.layout_version != kLayoutVersion) {
    return "scene layout version " + std::to_string(h.layout_version) +
           " is unknown to this viewer, which reads version " + std::to_string(kLayoutVersion) +
           " only; use the sonoflow-view of the same release as the running sonoflowd";
  }
  const Geometry g = geometry_of({h.max_particles, h.max_samples, h.max_trail, h.rate_hz});
  if (h.header_size != kHeaderSize || h.total_size != g.total || h.fluid.offset != g.fluid.offset ||
      h.fluid.payload_bytes != g.fluid.payload_bytes || h.haptic.offset != g.haptic.offset ||
      h.haptic.payload_bytes != g.haptic.payload_bytes) {
    return "inconsistent scene header (sizes and offsets do not match its capacities)";
  }
  if (size < g.total) return "truncated scene file";
  return {};
}

std::unique_ptr<SceneReader> SceneReader::attach(const std::string& path, std::string& error) {
  std::optional<shm::SharedFile> file = shm::SharedFile::open_read_only(path, kHeaderSize, "scene file", error);
  if (!file) return nullptr;
  const std::string why = check_header(*static_cast<const SceneHeader*>(file->data()), file->size());
  if (!why.empty()) {
    error = path + ": " + why;
    return nullptr;
  }
  return std::unique_ptr<SceneReader>(new SceneReader(std::move(*file)));
}

SceneReader::SceneReader(shm::SharedFile file)
    : file_(std::move(file)),
      fluid_(static_cast<std::byte*>(file_.data()) + header().fluid.offset, header().fluid.payload_bytes),
      haptic_(static_cast<std::byte*>(file_.data()) + header().haptic.offset, header().haptic.payload_bytes) {}

bool SceneReader::read_fluid(FluidScene& out) const {
  if (fluid_.publications() == 0) return false;
  const SceneHeader& h = header();
  return fluid_.read([&](auto load) {
    if (!load(0, &out.head, sizeof out.head)) return false;
    out.head.particles_shown = std::min(out.head.particles_shown, h.max_particles);
    out.head.samples_shown = std::min(out.head.samples_shown, h.max_samples);
    out.head.hand_count = std::min<std::uint32_t>(out.head.hand_count, kMaxHands);
    out.head.shape_count = std::min<std::uint32_t>(out.head.shape_count, kMaxShapes);
    out.particles.resize(out.head.particles_shown);
    out.samples.resize(out.head.samples_shown);
    return load(FluidPayload::particles_offset(), out.particles.data(),
                out.particles.size() * sizeof(SceneParticle)) &&
           load(FluidPayload::samples_offset(h.max_particles), out.samples.data(),
                out.samples.size() * sizeof(SceneSample));
  });
}

bool SceneReader::read_haptic(HapticScene& out) const {
  if (haptic_.publications() == 0) return false;
  const SceneHeader& h = header();
  return haptic_.read([&](auto load) {
    if (!load(0, &out.head, sizeof out.head)) return false;
    out.head.path_count = std::min<std::uint32_t>(out.head.path_count, kMaxPaths);
    out.head.emitted_count = std::min<std::uint32_t>(out.head.emitted_count, kMaxFoci);
    out.head.solution_count = std::min<std::uint32_t>(out.head.solution_count, kMaxFoci);
    out.head.trail_count = std::min(out.head.trail_count, h.max_trail);
    out.head.targets_shown = std::min(out.head.targets_shown, h.max_samples);
    for (auto& n : out.head.path_vertices) n = std::min<std::uint32_t>(n, kMaxPathVertices);
    out.paths.resize(static_cast<std::size_t>(out.head.path_count) * kMaxPathVertices);
    out.trail.resize(out.head.trail_count);
    out.targets.resize(out.head.targets_shown);
    return load(HapticPayload::paths_offset(), out.paths.data(), out.paths.size() * sizeof(SceneFocus)) &&
           load(HapticPayload::trail_offset(), out.trail.data(), out.trail.size() * sizeof(SceneFocus)) &&
           load(HapticPayload::targets_offset(h.max_trail), out.targets.data(),
                out.targets.size() * sizeof(SceneSample));
  });
}

}  // namespace sonoflow::daemon::scene
