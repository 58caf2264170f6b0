// The host's share of the hand in the 90 Hz fluid thread: HandGhosts::layout (ghosts on the
// capsules, each one's area on the hand's surface) and HandGhosts::contact_field (the patch
// pressure reading over a cell grid), for one and two hands at the default ghost spacing, with
// every downward ghost pushed (a hand in a pool). patch_radius 0 is the per-ghost reading.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "kernels/fluid/hand/hand_ghosts.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::fluid {
namespace {

constexpr float kSpacing = 0.01f;  // m, the default (the particle spacing)
constexpr int kCapacity = 4096;    // FluidConfig::max_ghosts

HandFrame hands(int count) {
  HandFrame f = test::flat_hand({0, 0, 0.15f}, 1, 0);
  if (count > 1) {  // a second hand 25 cm beside the first
    const HandFrame other = test::flat_hand({0, 0.25f, 0.15f}, 1, 0);
    f.hands[1] = other.hands[0];
    f.hands[1].hand_id = 9;
    f.hand_count = 2;
  }
  return f;
}

void BM_Layout(benchmark::State& state) {
  const HandFrame f = hands(static_cast<int>(state.range(0)));
  HandGhosts g(kCapacity, kSpacing);
  for (auto _ : state) {
    g.layout(f);
    benchmark::DoNotOptimize(g.count());
  }
  state.counters["ghosts"] = g.count();
}
BENCHMARK(BM_Layout)->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond);

void BM_ContactField(benchmark::State& state) {
  const HandFrame f = hands(static_cast<int>(state.range(0)));
  HandGhosts g(kCapacity, kSpacing, state.range(1) ? -1.0f : 0.0f);
  g.layout(f);
  std::vector<Float4> impulse(static_cast<std::size_t>(g.count()));
  for (std::size_t k = 0; k < impulse.size(); ++k) {
    const Float4& n = g.normal()[k];  // joint frames are the array's for the flat hand
    if (n.z < 0) impulse[k] = {0.0f, 0.0f, -300.0f * g.area()[k] * n.z / 90.0f, 0.0f};
  }
  auto field = std::make_unique<ContactField>();
  Vec3f total;
  float max_pressure = 0;
  for (auto _ : state) {
    g.contact_field(f, impulse, 1.0 / 90.0, Vec3f{0, 0, 0}, *field, total, max_pressure);
    benchmark::DoNotOptimize(field->count);
  }
  state.counters["ghosts"] = g.count();
  state.counters["samples"] = field->count;
}
BENCHMARK(BM_ContactField)
    ->ArgsProduct({{1, 2}, {0, 1}})
    ->ArgNames({"hands", "patch"})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace sonoflow::fluid
BENCHMARK_MAIN();
