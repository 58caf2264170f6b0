// sonoflow-view's parts without a browser: the reconstructed pressure agrees with the haptics
// layer's own model (thesis Eq. 4.1 and 5.1), the page's frame is laid out as documented, only
// the listed control verbs pass, and a scene of an unknown layout is refused with a message that
// says so while the status still attaches.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>

#include "daemon/scene/scene_file.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/view/control_client.hpp"
#include "daemon/view/daemon_link.hpp"
#include "daemon/view/reconstruction.hpp"
#include "daemon/view/scene_frame.hpp"
#include "kernels/haptics/reconstruction.hpp"

namespace sonoflow::daemon::view {
namespace {

scene::HapticScene random_targets(int n, std::uint32_t mode, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> xy(-0.04f, 0.04f), p(0.0f, 300.0f);
  scene::HapticScene h;
  h.head.mode = mode;
  h.head.sigma_m = 8.6e-3f;
  for (int i = 0; i < n; ++i) h.targets.push_back({xy(rng), xy(rng), 0.2f, p(rng)});
  return h;
}

// AM: a focus renders p_i at its centre and falls off as a Gaussian; over many samples the error
// equals kernels/haptics' am_reconstruction_rmse for the same foci.
TEST(Reconstruction, AmMatchesTheHapticsModel) {
  scene::HapticScene h = random_targets(200, 1, 7);
  h.head.solution_count = 3;
  h.head.solution[0] = {0.01f, 0.0f, 0.2f, 250.0f};
  h.head.solution[1] = {-0.02f, 0.02f, 0.2f, 120.0f};
  h.head.solution[2] = {0.0f, -0.03f, 0.21f, 80.0f};
  h.targets.push_back({0.01f, 0.0f, 0.2f, 250.0f});  // exactly at focus 0
  const std::vector<float> r = reconstruct(h);
  EXPECT_NEAR(r.back(), 250.0f, 1e-3f);

  Eigen::Matrix3Xf positions(3, h.targets.size());
  Eigen::ArrayXf pressure(static_cast<Eigen::Index>(h.targets.size()));
  for (std::size_t i = 0; i < h.targets.size(); ++i) {
    positions.col(static_cast<Eigen::Index>(i)) << h.targets[i].x, h.targets[i].y, h.targets[i].z;
    pressure[static_cast<Eigen::Index>(i)] = h.targets[i].pressure;
  }
  haptics::FocalSet foci;
  foci.count = 3;
  for (int k = 0; k < 3; ++k) {
    const auto& f = h.head.solution[static_cast<std::size_t>(k)];
    foci.points[static_cast<std::size_t>(k)] = {Eigen::Vector3f(f.x, f.y, f.z), f.value};
  }
  EXPECT_NEAR(normalised_rmse(h.targets, r), haptics::am_reconstruction_rmse(positions, pressure, foci, 8.6e-3f), 1e-4f);
}

// STM: the published path carries p* at its vertices; rendered gamma p* divided by gamma gives p*
// on the path, so the error equals stm_reconstruction_rmse with rendered = gamma p*.
TEST(Reconstruction, StmMatchesTheHapticsModel) {
  scene::HapticScene h = random_targets(150, 2, 11);
  const float gamma = 1.4f;
  h.head.gamma = gamma;
  h.head.path_count = 1;
  h.head.path_vertices[0] = 12;
  h.paths.resize(scene::kMaxPathVertices);
  Eigen::Matrix3Xf vertices(3, 12);
  Eigen::ArrayXf rendered(12);
  for (int v = 0; v < 12; ++v) {
    const float a = 2.0f * 3.14159265f * static_cast<float>(v) / 12.0f;
    const float pstar = 100.0f + 10.0f * static_cast<float>(v);
    h.paths[static_cast<std::size_t>(v)] = {0.02f * std::cos(a), 0.02f * std::sin(a), 0.2f, pstar};
    vertices.col(v) << 0.02f * std::cos(a), 0.02f * std::sin(a), 0.2f;
    rendered[v] = gamma * pstar;
  }
  const std::vector<float> r = reconstruct(h);
  Eigen::Matrix3Xf positions(3, h.targets.size());
  Eigen::ArrayXf pressure(static_cast<Eigen::Index>(h.targets.size()));
  for (std::size_t i = 0; i < h.targets.size(); ++i) {
    positions.col(static_cast<Eigen::Index>(i)) << h.targets[i].x, h.targets[i].y, h.targets[i].z;
    pressure[static_cast<Eigen::Index>(i)] = h.targets[i].pressure;
  }
  const haptics::ReconstructionPath path{vertices, rendered};
  EXPECT_NEAR(normalised_rmse(h.targets, r),
              haptics::stm_reconstruction_rmse(positions, pressure, std::span(&path, 1), gamma, 8.6e-3f), 1e-4f);
}

TEST(Reconstruction, NothingRenderedIsZero) {
  const scene::HapticScene h = random_targets(10, 1, 3);  // AM without foci
  for (float v : reconstruct(h)) EXPECT_EQ(v, 0.0f);
}

// The frame: [u32 meta bytes][JSON padded to 4][arrays], arrays 4-byte aligned with the
// offsets and counts the JSON gives.
TEST(SceneFrame, LayoutIsAsDocumented) {
  scene::FluidScene fluid;
  fluid.head.particles_total = 3;
  fluid.particles = {{1, 2, 3, 10, 20, 30, 0}, {4, 5, 6, 40, 50, 60, 1}, {7, 8, 9, 70, 80, 90, 0}};
  fluid.samples = {{0.1f, 0.2f, 0.3f, 55.0f}};
  std::strcpy(fluid.head.material.data(), "honey");
  const std::string frame = encode_scene_frame(&fluid, nullptr);
  std::uint32_t meta_bytes = 0;
  std::memcpy(&meta_bytes, frame.data(), 4);
  ASSERT_EQ(meta_bytes % 4, 0u);
  const std::string meta = frame.substr(4, meta_bytes);
  EXPECT_NE(meta.find("\"material\":\"honey\""), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"particle_positions\":{\"offset\":0,\"count\":3}"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"particle_colours\":{\"offset\":36,\"count\":3}"), std::string::npos) << meta;
  EXPECT_NE(meta.find("\"contact_samples\":{\"offset\":48,\"count\":1}"), std::string::npos) << meta;
  const char* arrays = frame.data() + 4 + meta_bytes;
  float z = 0;
  std::memcpy(&z, arrays + 8 * 4, 4);  // third particle's z
  EXPECT_EQ(z, 9.0f);
  EXPECT_EQ(static_cast<unsigned char>(arrays[36 + 4 + 1]), 50);  // second particle's green
  float p = 0;
  std::memcpy(&p, arrays + 48 + 12, 4);
  EXPECT_EQ(p, 55.0f);
  EXPECT_EQ(frame.size(), 4 + meta_bytes + 64u);
}

TEST(ControlClient, OnlyTheListedVerbsPass) {
  EXPECT_TRUE(allowed_request("material water"));
  EXPECT_TRUE(allowed_request("mode stm"));
  EXPECT_TRUE(allowed_request("tau 0.25"));
  EXPECT_TRUE(allowed_request("alpha 0.005"));
  EXPECT_FALSE(allowed_request("mode loud"));
  EXPECT_FALSE(allowed_request("record start"));
  EXPECT_FALSE(allowed_request("set safety.max_intensity 1"));
  EXPECT_FALSE(allowed_request("material water; reload"));
  EXPECT_FALSE(allowed_request("material"));
  EXPECT_FALSE(allowed_request("scene /etc/passwd"));
}

// A daemon whose scene layout this viewer does not know: the status attaches, the scene is
// refused, and the problem the page shows says which versions and what to do.
TEST(ControlClient, MaterialListReadsTheDaemonsReply) {
  EXPECT_EQ(material_list(R"({"ok":true,"materials":["honey","runny_cream","water"]})"),
            (std::vector<std::string>{"honey", "runny_cream", "water"}));
  EXPECT_TRUE(material_list(R"({"ok":true,"materials":[]})").empty());
  EXPECT_TRUE(material_list(R"({"ok":false,"code":"unknown_verb","message":"unknown verb 'materials'"})").empty());
  EXPECT_TRUE(material_list("").empty());
}

TEST(DaemonLink, RefusesAnUnknownSceneLayoutAndSaysSo) {
  char pattern[] = "/tmp/sonoflow-view-test.XXXXXX";
  const std::string dir = mkdtemp(pattern);
  std::string error;
  auto status = status::StatusWriter::create(dir + "/status", 0, error);
  auto scene = scene::SceneWriter::create(dir + "/scene", {}, 0, error);
  ASSERT_TRUE(status && scene) << error;
  const int fd = open((dir + "/scene").c_str(), O_WRONLY);
  const std::uint32_t future = scene::kLayoutVersion + 1;
  ASSERT_EQ(pwrite(fd, &future, 4, offsetof(scene::SceneHeader, layout_version)), 4);
  close(fd);
  DaemonLink link(dir + "/status", dir + "/scene");
  EXPECT_TRUE(link.refresh());
  EXPECT_NE(link.status(), nullptr);
  EXPECT_EQ(link.scene(), nullptr);
  EXPECT_NE(link.problem().find("scene layout version " + std::to_string(future) + " is unknown"), std::string::npos)
      << link.problem();
  EXPECT_NE(link.problem().find("same release"), std::string::npos) << link.problem();
  scene.reset();
  status.reset();
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
}  // namespace sonoflow::daemon::view
