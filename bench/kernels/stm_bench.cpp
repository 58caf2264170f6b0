// PRO-STM on one core, for the thesis's two scenarios (Table 5.1: 24.3 ms for one plume,
// 14.6 ms for four, 2016 laptop CPU): 2,000 target samples on a 120 x 147 mm hand
// (tests/kernels/haptics/plumes.hpp). Goals (issue 4): full replan under 11 ms (one fluid frame),
// incremental refinement under 0.3 ms per tick.
//   pro_stm_full_replan: ProStmPlanner::plan, everything from the samples to the lifted paths
//   pro_stm_stages:      the same, split by stage like Table 5.1 (mean thread-CPU us per stage)
//   pro_stm_incremental: refine_incremental (re-pose, Kabsch, grid rebuild, 2 steps) while the
//                        hand sways
//   stm_render_tick:     StmRenderer::render as the 1 kHz thread calls it: replan slices of the
//                        default budget, incremental refinement, hand-overs, 20 kHz streaming
//   stm_vs_am_tick:      the same ticks (fields every 11 ms, swaying hand) through an AmRenderer
//                        and a StmRenderer in one run: each one's mean thread-CPU us per tick
//                        and their ratio, what switching the daemon to STM costs its haptic thread
#include <benchmark/benchmark.h>

#include <time.h>

#include <chrono>
#include <cmath>
#include <memory>

#include "bench/kernels/timing.hpp"
#include "kernels/haptics/am_renderer.hpp"
#include "kernels/haptics/stm_renderer.hpp"
#include "tests/kernels/haptics/plumes.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::haptics;

using Field = float (*)(float, float);
Field scenario(int which) { return which == 1 ? test::one_plume : test::four_plumes; }

// A few fields of the scenario, the plumes drifting a little from field to field.
std::vector<std::unique_ptr<TargetSamples>> fields(int which, int count) {
  const HandFrame hand = test::flat_hand(0.2f);
  std::vector<std::unique_ptr<TargetSamples>> out;
  for (int f = 0; f < count; ++f) {
    const float dx = 0.004f * std::sin(0.9f * float(f)), dy = 0.004f * std::cos(1.3f * float(f));
    auto field = test::hand_field(hand, [&](float x, float y) { return scenario(which)(x - dx, y - dy); },
                                  std::uint64_t(f + 1));
    out.push_back(std::make_unique<TargetSamples>());
    out.back()->select(*field, {});
  }
  return out;
}

HandFrame swaying_hand(std::int64_t tick) {
  const float sway = 0.02f * std::sin(6.2831853f * float(tick) * 1e-3f);
  return test::flat_hand(0.2f, Eigen::Quaternionf(Eigen::AngleAxisf(0.2f * sway, Eigen::Vector3f::UnitZ())),
                         {sway, 0.3f * sway, 0});
}

void full_replan(benchmark::State& state) {
  const auto targets = fields(int(state.range(0)), 8);
  auto planner = std::make_unique<stm::ProStmPlanner>();
  bench::CallTimes times(1 << 16);
  int f = 0;
  double work = 0;
  for (auto _ : state) {
    const TargetSamples& t = *targets[std::size_t(f++ % 8)];
    times.time([&] { planner->plan(t, {}); });
    benchmark::DoNotOptimize(planner->result());
    work += double(planner->stats().work);
  }
  state.counters["us_p99"] = times.percentile(0.99);
  state.counters["us_p99_wall"] = times.wall_percentile(0.99);
  state.counters["work_units"] = work / double(state.iterations());
}

void stages(benchmark::State& state) {
  const auto targets = fields(int(state.range(0)), 8);
  auto planner = std::make_unique<stm::ProStmPlanner>();
  std::array<double, 8> us{};
  auto cpu_us = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e6 + double(ts.tv_nsec) * 1e-3;
  };
  int f = 0;
  double refinement_iterations = 0;
  for (auto _ : state) {
    planner->begin(*targets[std::size_t(f++ % 8)], {});
    while (!planner->done()) {
      const auto stage = static_cast<std::size_t>(planner->stage());
      const double t0 = cpu_us();
      planner->advance(1);  // one step
      us[stage] += cpu_us() - t0;
    }
    refinement_iterations += planner->stats().refinement_iterations;
  }
  const double n = double(state.iterations());
  using S = stm::PlanStage;
  state.counters["us_1_prepare"] = us[std::size_t(S::Prepare)] / n;
  state.counters["us_2_seed"] = us[std::size_t(S::Seed)] / n;
  state.counters["us_3_kmeans"] = us[std::size_t(S::Cluster)] / n;
  state.counters["us_4_tours_split_resample"] = us[std::size_t(S::Tour)] / n;
  state.counters["us_5_refine"] = us[std::size_t(S::Refine)] / n;
  state.counters["us_6_lift"] = us[std::size_t(S::Lift)] / n;
  state.counters["refinement_iterations"] = refinement_iterations / n;
}

void incremental(benchmark::State& state) {
  const auto targets = fields(int(state.range(0)), 1);
  auto planner = std::make_unique<stm::ProStmPlanner>();
  planner->plan(*targets[0], {});
  const StmConfig defaults;
  bench::CallTimes times(1 << 20);
  std::int64_t tick = 0;
  for (auto _ : state) {
    const HandFrame hand = swaying_hand(tick++);
    times.time([&] {
      benchmark::DoNotOptimize(planner->refine_incremental(hand, defaults.incremental_iterations,
                                                           defaults.incremental_max_move_m));
    });
  }
  state.counters["us_p99"] = times.percentile(0.99);
  state.counters["us_p99_wall"] = times.wall_percentile(0.99);
}

void render_tick(benchmark::State& state) {
  const auto targets = fields(int(state.range(0)), 8);
  auto renderer = std::make_unique<StmRenderer>(StmConfig{});
  FocalBlock block;
  bench::CallTimes times(1 << 20);
  std::int64_t tick = 0;
  for (auto _ : state) {
    const HandFrame hand = swaying_hand(tick);
    const TargetSamples* fresh = tick % 11 == 0 ? targets[std::size_t((tick / 11) % 8)].get() : nullptr;
    times.time([&] { renderer->render(fresh, hand, tick * 1'000'000, block); });
    benchmark::DoNotOptimize(block);
    ++tick;
  }
  state.counters["us_p99"] = times.percentile(0.99);
  state.counters["us_p99_wall"] = times.wall_percentile(0.99);
  state.counters["plans_per_s_of_ticks"] = double(renderer->plans_completed()) / (double(tick) * 1e-3);
  state.counters["handover_wait_ticks_per_plan"] =
      double(renderer->handover_wait_ticks()) / double(std::max<std::uint64_t>(renderer->plans_completed(), 1));
}

void stm_vs_am_tick(benchmark::State& state) {
  const auto targets = fields(int(state.range(0)), 8);
  // Defaults (the daemon's), with the field-age fade off: both keep rendering the fields.
  AmConfig am_config;
  am_config.max_field_age_ns = 0;
  StmConfig stm_config;
  stm_config.max_field_age_ns = 0;
  auto am = std::make_unique<AmRenderer>(am_config);
  auto stm = std::make_unique<StmRenderer>(stm_config);
  FocalBlock block;
  bench::CallTimes am_times(1 << 20), stm_times(1 << 20);
  std::int64_t tick = 0;
  for (auto _ : state) {
    const HandFrame hand = swaying_hand(tick);
    const TargetSamples* fresh = tick % 11 == 0 ? targets[std::size_t((tick / 11) % 8)].get() : nullptr;
    am_times.time([&] { am->render(fresh, hand, tick * 1'000'000, block); });
    benchmark::DoNotOptimize(block);
    stm_times.time([&] { stm->render(fresh, hand, tick * 1'000'000, block); });
    benchmark::DoNotOptimize(block);
    ++tick;
  }
  const double am_us = am_times.mean(), stm_us = stm_times.mean();
  state.counters["am_us"] = am_us;
  state.counters["stm_us"] = stm_us;
  state.counters["stm_over_am"] = am_us > 0 ? stm_us / am_us : 0;
}

void scenarios(benchmark::internal::Benchmark* b) {
  b->ArgName("plumes")->Arg(1)->Arg(4)->Unit(benchmark::kMicrosecond)->Repetitions(3)
      ->ReportAggregatesOnly(true);
}

}  // namespace

BENCHMARK(full_replan)->Name("pro_stm_full_replan_2000")->Apply(scenarios)->MinTime(1.0);
BENCHMARK(stages)->Name("pro_stm_stages_2000")->Apply(scenarios)->MinTime(1.0);
BENCHMARK(incremental)->Name("pro_stm_incremental_2000")->Apply(scenarios)->MinTime(1.0);
BENCHMARK(render_tick)->Name("stm_render_tick_2000")->Apply(scenarios)->MinTime(2.0);
BENCHMARK(stm_vs_am_tick)->Name("stm_vs_am_tick_2000")->Apply(scenarios)->MinTime(2.0);

BENCHMARK_MAIN();
