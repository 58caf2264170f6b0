// The smoke scenes drive the haptic side unchanged (kernels/haptics): the thesis's Table 4.1
// trends (AM reconstruction error falls as the number of foci N and their radius sigma grow, in
// the jet scene and the stirring scene) and Chapter 5's comparison (PRO-STM reconstructs the
// extended target of a broad plume better than AM). The scenes are config/scenes/smoke-*.toml,
// run at a coarser grid (8 mm cells over the same box) with their scripted hand motions.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "kernels/haptics/am_optimizer.hpp"
#include "kernels/haptics/reconstruction.hpp"
#include "kernels/haptics/stm/pro_stm_planner.hpp"
#include "kernels/haptics/target_samples.hpp"
#include "kernels/smoke/smoke_toml.hpp"
#include "tests/kernels/smoke/smoke_test_support.hpp"

namespace sonoflow::smoke {
namespace {

using test::Motion;

struct Recorded {
  std::vector<std::unique_ptr<ContactField>> fields;
};

// Runs a scene file for `frames` frames of its hand motion and keeps every `every`-th field
// from `from` on.
Recorded record(const std::string& scene, Motion motion, float height, float amplitude, float period,
                int frames, int from, int every) {
  Recorded r;
  auto setup = load_smoke_setup(std::string(SONOFLOW_SCENES_DIR) + "/" + scene);
  if (!setup) {
    ADD_FAILURE() << setup.error().message;
    return r;
  }
  SmokeConfig c = setup->config;
  const float size = c.cell_size * static_cast<float>(c.cells[0]);
  c.cells = {40, 40, 40};
  c.cell_size = size / 40.0f;
  auto e = test::make_engine(c, setup->scene);
  if (!e) return r;
  const double dt = 1.0 / 90.0;
  auto field = std::make_unique<ContactField>();
  SmokeStats stats;
  HandFrame previous = test::forward_hand(test::palm_at(motion, {0, 0, height}, amplitude, period, 0), 0);
  for (int f = 1; f <= frames; ++f) {
    const HandFrame now = test::forward_hand(test::palm_at(motion, {0, 0, height}, amplitude, period, f * dt),
                                             std::uint64_t(f), std::int64_t(f * dt * 1e9));
    e->step_frame(now, &previous, dt, *field, stats);
    previous = now;
    EXPECT_EQ(stats.device_errors, 0);
    if (f >= from && (f - from) % every == 0 && field->count > 0) {
      r.fields.push_back(std::make_unique<ContactField>(*field));
    }
  }
  return r;
}

std::unique_ptr<haptics::TargetSamples> targets(const ContactField& field) {
  auto t = std::make_unique<haptics::TargetSamples>();
  t->select(field, haptics::TargetSelection{});
  return t;
}

// Table 4.1: mean RMSE over the recorded fields for N = 2, 4, 8 and sigma = 8, 16, 24, 32 mm.
// The error must fall as N grows at every sigma, and as sigma grows for N up to
// `sigma_trend_up_to`, each step allowed to stall within 0.01 (the seed's oracle 14: a weak
// trend; the thesis's own rows flatten to within 0.01 at the widest sigma).
void expect_table41_trends(const Recorded& r, const char* name, int sigma_trend_up_to) {
  ASSERT_GE(r.fields.size(), 4u) << name;
  const int ns[3] = {2, 4, 8};
  const float sigmas[4] = {0.008f, 0.016f, 0.024f, 0.032f};
  double rmse[3][4] = {};
  haptics::AmOptimizer am(static_cast<int>(kMaxContactSamples));
  int used = 0;
  for (const auto& field : r.fields) {
    const auto t = targets(*field);
    if (t->empty() || t->pressure().maxCoeff() <= 0) continue;
    ++used;
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b) {
        haptics::AmOptimizerConfig config;
        config.max_foci = ns[a];
        config.sigma_m = sigmas[b];
        haptics::FocalSet foci;
        am.solve(t->positions(), t->pressure(), t->pressure(), config, nullptr, foci);
        rmse[a][b] += haptics::am_reconstruction_rmse(t->positions(), t->pressure(), foci, sigmas[b]);
      }
  }
  ASSERT_GE(used, 4) << name;
  for (auto& row : rmse)
    for (double& v : row) v /= used;
  std::printf("%s (%d fields): RMSE rows N = 2, 4, 8; columns sigma = 8, 16, 24, 32 mm\n", name, used);
  for (int a = 0; a < 3; ++a)
    std::printf("  N=%d  %.3f %.3f %.3f %.3f\n", ns[a], rmse[a][0], rmse[a][1], rmse[a][2], rmse[a][3]);
  for (int a = 0; a < 3 && ns[a] <= sigma_trend_up_to; ++a)
    for (int b = 1; b < 4; ++b) EXPECT_LE(rmse[a][b], rmse[a][b - 1] + 0.01) << name << " N " << ns[a];
  for (int b = 0; b < 4; ++b)
    for (int a = 1; a < 3; ++a) EXPECT_LE(rmse[a][b], rmse[a - 1][b] + 0.01) << name << " sigma " << b;
  EXPECT_LT(rmse[2][3], 0.75 * rmse[0][0]) << name;  // corner to corner (thesis: 0.157 vs 0.357)
}

TEST(SmokeHaptics, AmErrorFallsAsFociAndRadiusGrowInTheJetScene) {
  // Table 4.1 a: the hand circles through the smoke jet. The jet's stagnation patch (about 3 cm)
  // is narrower than the widest Gaussians, so with eight foci the error stops falling beyond
  // sigma = 16 mm; with two and four it falls across the table, as in the thesis.
  const Recorded r = record("smoke-jet.toml", Motion::Stir, 0.13f, 0.04f, 1.0f, 100, 40, 10);
  expect_table41_trends(r, "smoke jet (4.1 a)", 4);
}

TEST(SmokeHaptics, AmErrorFallsAsFociAndRadiusGrowInTheStirringScene) {
  // Table 4.1 b: the hand stirs the air, no emitter.
  const Recorded r = record("smoke-stir.toml", Motion::Stir, 0.13f, 0.04f, 1.0f, 100, 40, 10);
  expect_table41_trends(r, "smoke stirring (4.1 b)", 8);
}

TEST(SmokeHaptics, ProStmReconstructsTheBroadPlumeBetterThanAm) {
  // Table 5.1's one-plume scene: an extended patch of pressure under the palm. Thesis 5.3.3:
  // AM's four foci render it less faithfully than STM's paths (both sigma = 8.6 mm).
  const Recorded r = record("smoke-plume.toml", Motion::Hover, 0.14f, 0.0f, 1.0f, 110, 70, 10);
  ASSERT_GE(r.fields.size(), 3u);
  double stm_sum = 0, am_sum = 0;
  int used = 0;
  auto planner = std::make_unique<haptics::stm::ProStmPlanner>();
  haptics::AmOptimizer am(static_cast<int>(kMaxContactSamples));
  for (const auto& field : r.fields) {
    const auto t = targets(*field);
    if (t->empty() || t->pressure().maxCoeff() <= 0) continue;
    planner->plan(*t, {});
    const haptics::stm::StmPlan& plan = planner->result();
    if (plan.path_count == 0) continue;
    std::vector<Eigen::Matrix3Xf> vertices;
    std::vector<Eigen::ArrayXf> rendered;
    for (int p = 0; p < plan.path_count; ++p) {
      const haptics::stm::StmPath& path = plan.paths[std::size_t(p)];
      vertices.emplace_back(3, path.count);
      rendered.emplace_back(path.count);
      for (int i = 0; i < path.count; ++i) {
        vertices.back().col(i) = path.vertex[std::size_t(i)];
        rendered.back()[i] = 1.4f * path.pressure[std::size_t(i)];  // p_i = gamma p*
      }
    }
    std::vector<haptics::ReconstructionPath> paths;
    for (std::size_t p = 0; p < vertices.size(); ++p) paths.push_back({vertices[p], rendered[p]});
    stm_sum += haptics::stm_reconstruction_rmse(t->positions(), t->pressure(), paths, 1.4f, 8.6e-3f);
    haptics::AmOptimizerConfig config;
    config.max_foci = 4;
    config.sigma_m = 8.6e-3f;
    haptics::FocalSet foci;
    am.solve(t->positions(), t->pressure(), t->pressure(), config, nullptr, foci);
    am_sum += haptics::am_reconstruction_rmse(t->positions(), t->pressure(), foci, 8.6e-3f);
    ++used;
  }
  ASSERT_GE(used, 3);
  std::printf("one plume (%d fields): RMSE PRO-STM %.3f, AM (N = 4) %.3f\n", used, stm_sum / used, am_sum / used);
  EXPECT_LT(stm_sum, 0.9 * am_sum);
}

}  // namespace
}  // namespace sonoflow::smoke
