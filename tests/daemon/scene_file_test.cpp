// The scene snapshot file (daemon/scene/): what a writer publishes a reader gets back whole,
// readers refuse files they cannot read with a message that says why, follow a daemon restart,
// and never see a torn copy while the writer keeps publishing (also run under TSan).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "daemon/scene/scene_file.hpp"

namespace sonoflow::daemon::scene {
namespace {

struct TempDir {
  TempDir() {
    char pattern[] = "/tmp/sonoflow-scene-test.XXXXXX";
    path = mkdtemp(pattern);
  }
  ~TempDir() { std::system(("rm -rf " + path).c_str()); }
  std::string path;
};

SceneCapacity small() {
  SceneCapacity c;
  c.max_particles = 100;
  c.max_samples = 50;
  c.max_trail = 20;
  return c;
}

TEST(SceneFile, PinnedLayout) {
  EXPECT_EQ(sizeof(SceneHeader), 4096u);
  EXPECT_EQ(offsetof(SceneHeader, layout_version), 8u);
  EXPECT_EQ(offsetof(SceneHeader, generation), 24u);
  EXPECT_EQ(sizeof(SceneHand), 16u + 27u * 16u);
  EXPECT_EQ(FluidPayload::particles_offset() % 16, 0u);
  EXPECT_EQ(HapticPayload::paths_offset() % 16, 0u);
}

TEST(SceneFile, RoundTripsBothSections) {
  TempDir dir;
  std::string error;
  auto writer = SceneWriter::create(dir.path + "/scene", small(), 123, error);
  ASSERT_TRUE(writer) << error;
  auto reader = SceneReader::attach(dir.path + "/scene", error);
  ASSERT_TRUE(reader) << error;
  FluidScene fluid;
  EXPECT_FALSE(reader->read_fluid(fluid));  // nothing published yet

  std::vector<SceneParticle> particles(150);  // more than the capacity: clipped to 100
  for (std::size_t i = 0; i < particles.size(); ++i)
    particles[i] = {float(i), 1, 2, std::uint8_t(i), 20, 30, 0};
  std::vector<SceneSample> samples{{0.1f, 0.2f, 0.3f, 42.0f}, {0.4f, 0.5f, 0.6f, 7.0f}};
  FluidSceneHead head;
  head.frame = 9;
  head.particles_total = 150;
  head.hand_count = 1;
  head.hands[0].valid_mask = 0x7FFFFFF;
  head.hands[0].joints[26] = {0.01f, 0.02f, 0.2f, 0.01f};
  writer->publish_fluid(head, particles, samples);
  ASSERT_TRUE(reader->read_fluid(fluid));
  EXPECT_EQ(fluid.head.frame, 9u);
  EXPECT_EQ(fluid.head.particles_total, 150u);
  ASSERT_EQ(fluid.particles.size(), 100u);
  EXPECT_EQ(fluid.particles[99].x, 99.0f);
  EXPECT_EQ(fluid.particles[99].r, 99);
  ASSERT_EQ(fluid.samples.size(), 2u);
  EXPECT_EQ(fluid.samples[0].pressure, 42.0f);
  EXPECT_EQ(fluid.head.hands[0].joints[26].z, 0.2f);

  HapticSceneHead haptic_head;
  haptic_head.mode = 2;
  haptic_head.path_count = 1;
  haptic_head.path_vertices[0] = 3;
  std::vector<SceneFocus> paths(kMaxPathVertices);
  paths[2] = {1, 2, 3, 4};
  std::vector<SceneFocus> trail(30, SceneFocus{0, 0, 0.2f, 0.5f});
  std::vector<SceneSample> targets(5, SceneSample{0, 0, 0.19f, 80});
  writer->publish_haptic(haptic_head, paths, trail, targets);
  HapticScene haptic;
  ASSERT_TRUE(reader->read_haptic(haptic));
  EXPECT_EQ(haptic.head.mode, 2u);
  ASSERT_EQ(haptic.head.path_count, 1u);
  EXPECT_EQ(haptic.head.path_vertices[0], 3u);
  EXPECT_EQ(haptic.paths[2].value, 4.0f);
  EXPECT_EQ(haptic.trail.size(), 20u);  // clipped to max_trail
  EXPECT_EQ(haptic.targets.size(), 5u);
  EXPECT_EQ(haptic.targets[4].pressure, 80.0f);
  EXPECT_EQ(reader->fluid_publications(), 1u);
  EXPECT_EQ(reader->haptic_publications(), 1u);
}

// A file whose layout this build does not know is refused, and the message names both
// versions and what to do.
TEST(SceneFile, RefusesAnUnknownLayoutVersionWithAClearMessage) {
  TempDir dir;
  const std::string path = dir.path + "/scene";
  std::string error;
  auto writer = SceneWriter::create(path, small(), 0, error);
  ASSERT_TRUE(writer) << error;
  const int fd = open(path.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::uint32_t future = kLayoutVersion + 1;
  ASSERT_EQ(pwrite(fd, &future, sizeof future, offsetof(SceneHeader, layout_version)), 4);
  close(fd);
  auto reader = SceneReader::attach(path, error);
  EXPECT_FALSE(reader);
  EXPECT_NE(error.find("scene layout version " + std::to_string(future) + " is unknown"), std::string::npos)
      << error;
  EXPECT_NE(error.find("reads version " + std::to_string(kLayoutVersion)), std::string::npos) << error;
}

TEST(SceneFile, RefusesFilesThatAreNotScenes) {
  TempDir dir;
  std::string error;
  const std::string path = dir.path + "/other";
  std::string zeros(8192, '\0');
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0600);
  ASSERT_EQ(write(fd, zeros.data(), zeros.size()), 8192);
  close(fd);
  EXPECT_FALSE(SceneReader::attach(path, error));
  EXPECT_NE(error.find("bad magic"), std::string::npos) << error;
  EXPECT_FALSE(SceneReader::attach(dir.path + "/missing", error));
  EXPECT_NE(error.find("cannot open"), std::string::npos) << error;

  // A real header cut short.
  auto writer = SceneWriter::create(dir.path + "/scene", small(), 0, error);
  ASSERT_TRUE(writer);
  ASSERT_EQ(truncate((dir.path + "/scene").c_str(), 5000), 0);
  EXPECT_FALSE(SceneReader::attach(dir.path + "/scene", error));
  EXPECT_NE(error.find("truncated"), std::string::npos) << error;
}

// A daemon that stops marks its scene stopped and removes it; the next one makes a new file
// with a new generation, which a reader notices and reattaches to.
TEST(SceneFile, ReaderSeesStopAndReplacement) {
  TempDir dir;
  const std::string path = dir.path + "/scene";
  std::string error;
  auto first = SceneWriter::create(path, small(), 0, error);
  first->set_state(SceneState::Running);
  auto reader = SceneReader::attach(path, error);
  ASSERT_TRUE(reader);
  EXPECT_EQ(reader->state(), SceneState::Running);
  EXPECT_FALSE(reader->replaced());
  const std::uint64_t generation = reader->header().generation;
  first.reset();
  EXPECT_EQ(reader->state(), SceneState::Stopped);
  EXPECT_TRUE(reader->replaced());
  auto second = SceneWriter::create(path, small(), 0, error);
  ASSERT_TRUE(second);
  auto again = SceneReader::attach(path, error);
  ASSERT_TRUE(again);
  EXPECT_NE(again->header().generation, generation);
  EXPECT_FALSE(again->replaced());
}

TEST(SceneFile, ScenePathBesideTheStatusFile) {
  EXPECT_EQ(scene_path_beside("/run/sonoflow/status"), "/run/sonoflow/scene");
  EXPECT_EQ(scene_path_beside("status"), "scene");
}

// One writer publishes as fast as it can, every record carrying the publication number; a reader
// in another thread must only ever see copies where all of them agree.
TEST(SceneFile, ConcurrentReadsAreNeverTorn) {
  TempDir dir;
  std::string error;
  SceneCapacity capacity = small();
  capacity.max_particles = 2000;
  auto writer = SceneWriter::create(dir.path + "/scene", capacity, 0, error);
  auto reader = SceneReader::attach(dir.path + "/scene", error);
  ASSERT_TRUE(writer && reader) << error;
  std::atomic<bool> done{false};
  std::atomic<int> consistent{0};
  std::uint64_t last = 0;
  std::thread producer([&] {
    std::vector<SceneParticle> particles(2000);
    // At least 3,000 publications, and on until the reader has completed a few reads (on a loaded
    // machine or under TSan the reader may otherwise never be scheduled while the writer runs);
    // the writer yields so that both threads interleave even on one core.
    std::uint64_t k = 1;
    for (; k <= 3000 || (consistent.load() < 5 && k <= 1000000); ++k) {
      for (auto& p : particles) p.x = static_cast<float>(k);
      FluidSceneHead head;
      head.frame = k;
      writer->publish_fluid(head, particles, {});
      std::this_thread::yield();
    }
    last = k - 1;
    done.store(true);
  });
  FluidScene scene;
  while (!done.load()) {
    if (!reader->read_fluid(scene)) continue;
    ASSERT_EQ(scene.particles.size(), 2000u);
    for (const auto& p : scene.particles) ASSERT_EQ(p.x, static_cast<float>(scene.head.frame));
    consistent.fetch_add(1);
  }
  producer.join();
  ASSERT_TRUE(reader->read_fluid(scene));
  EXPECT_EQ(scene.head.frame, last);
  EXPECT_GT(consistent.load(), 0);
}

}  // namespace
}  // namespace sonoflow::daemon::scene
