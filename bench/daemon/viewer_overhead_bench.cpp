// Does watching the daemon disturb it? (issue 8) The whole pipeline on the real clock (emulated
// devices, the OpenCL particle fluid, the AM renderer, default RT priorities where permitted),
// run in three conditions, each for kPhaseNs after a 1 s warm-up, the sequence repeated
// kRounds times (ABCABC...) so slow drifts of this shared machine fall on every condition alike:
//
//   viewer     the scene export on, and sonoflow-view's reading side attached: its sampler
//              copying status and scene out of shared memory at 30 Hz and encoding them, its
//              HTTP server streaming every frame to one client reading /api/stream
//              (the browser itself, a separate process whose cost is not the viewer's, is not
//              run);
//   no_viewer  the scene export on (the default daemon), nobody reading it;
//   no_export  view.export_scene = false: the daemon before issue 8.
//
// Each figure is the median over the rounds; `make bench` tabulates <figure>/<condition> with
// `viewer` as ours (/sonoflow) and the other two as baselines.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "daemon/config/config.hpp"
#include "daemon/devices/device_binding.hpp"
#include "daemon/pipeline/kernel_fluid.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/scene/scene_file.hpp"
#include "daemon/standins/palm_drag_field.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/view/frame_hub.hpp"
#include "daemon/view/sampler.hpp"
#include "daemon/view/view_server.hpp"

// Last: <httplib.h> brings <resolv.h>, whose _res macro breaks Eigen headers included after it.
#include <httplib.h>

namespace {

using namespace sonoflow;
using namespace sonoflow::daemon;

constexpr std::int64_t kPhaseNs = 8'000'000'000;
constexpr int kRounds = 3;
enum Condition { kViewer, kNoViewer, kNoExport, kConditions };
const char* const kNames[] = {"sonoflow", "no_viewer", "no_export"};

struct Figures {
  double haptic_wake_p99_us = 0, haptic_wake_p999_us = 0, haptic_wake_max_us = 0, haptic_busy_p99_us = 0;
  double stream_wake_p99_us = 0, fluid_busy_p50_ms = 0, latency_p99_ms = 0, underruns = 0;
  double streamed_mib_s = 0;
};

Figures run_phase(Condition condition, const std::string& dir) {
  Config config;
  config.status.path = dir + "/status";
  config.view.export_scene = condition != kNoExport;
  rt::MonotonicClock clock;
  auto devices = DeviceBinding::emulated(clock, config, true);
  if (!devices->bring_up().empty()) std::abort();
  std::string error;
  MaterialPresets presets;
  if (!load_material_presets(config, SONOFLOW_SOURCE_DIR "/config/materials", presets, error)) std::abort();
  std::unique_ptr<FluidModel> fluid = KernelFluid::create(config, std::move(presets), error);
  if (!fluid) fluid = std::make_unique<PalmDragField>();  // no OpenCL device: the stand-in
  KernelRenderer renderer(config);
  auto status = status::StatusWriter::create(config.status.path, clock.now_ns(), error);
  std::unique_ptr<scene::SceneWriter> scene;
  if (config.view.export_scene) scene = scene::SceneWriter::create(dir + "/scene", {}, clock.now_ns(), error);
  if (!status || (config.view.export_scene && !scene)) std::abort();
  Pipeline pipeline(config, clock, PipelineParts{devices->hand_source(), *fluid, renderer, devices->array_link()},
                    &status->region());
  if (scene) pipeline.set_scene_export(*scene);
  if (!devices->start_tracker_stream().empty()) std::abort();
  pipeline.start_threads();
  status->set_state(status::DaemonState::Running);

  // The viewer's side: sampler, server, and one client draining the stream.
  std::unique_ptr<view::FrameHub> hub;
  std::unique_ptr<view::Sampler> sampler;
  std::unique_ptr<view::ViewServer> server;
  std::thread serving, client;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> bytes{0};
  if (condition == kViewer) {
    hub = std::make_unique<view::FrameHub>();
    sampler = std::make_unique<view::Sampler>(
        view::SamplerSettings{config.status.path, dir + "/scene", dir + "/no-control.sock", 30}, *hub);
    server = std::make_unique<view::ViewServer>(view::ServerSettings{"127.0.0.1", 0, ""}, *hub, *sampler);
    const int port = server->bind(error);
    if (port == 0) std::abort();
    serving = std::thread([&] { server->run(); });
    sampler->start();
    client = std::thread([&, port] {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(5, 0);
      c.Get("/api/stream", [&](const char*, std::size_t n) {
        bytes.fetch_add(n);
        return !stop.load();
      });
    });
  }

  const std::int64_t start = clock.now_ns();
  const std::int64_t end = start + 1'000'000'000 + kPhaseNs;
  while (clock.now_ns() < end) {
    clock.sleep_until(clock.now_ns() + 100'000'000);
    devices->maintain();
    pipeline.housekeeping(clock.now_ns());
    status->heartbeat(clock.now_ns());
  }
  const double seconds = static_cast<double>(clock.now_ns() - start) * 1e-9;
  if (condition == kViewer) {
    stop.store(true);
    server->stop();
    client.join();
    serving.join();
    sampler.reset();
  }
  pipeline.stop(500'000'000);
  Figures f;
  const auto wake = rt::LatencySummary::of(pipeline.loop(2).wakeup_latency());
  f.haptic_wake_p99_us = static_cast<double>(wake.p99_ns) / 1e3;
  f.haptic_wake_p999_us = static_cast<double>(wake.p999_ns) / 1e3;
  f.haptic_wake_max_us = static_cast<double>(wake.max_ns) / 1e3;
  f.haptic_busy_p99_us = static_cast<double>(pipeline.loop(2).stats().execution.p99_ns) / 1e3;
  f.stream_wake_p99_us = static_cast<double>(rt::LatencySummary::of(pipeline.loop(3).wakeup_latency()).p99_ns) / 1e3;
  f.fluid_busy_p50_ms = static_cast<double>(pipeline.loop(1).stats().execution.p50_ns) / 1e6;
  f.latency_p99_ms = static_cast<double>(rt::LatencySummary::of(pipeline.stream().latency()).p99_ns) / 1e6;
  f.underruns = static_cast<double>(pipeline.stream().underruns());
  f.streamed_mib_s = static_cast<double>(bytes.load()) / seconds / (1 << 20);
  return f;
}

const std::vector<Figures>& rounds(Condition condition) {
  static const auto all = [] {
    char pattern[] = "/tmp/sonoflow-viewer-bench.XXXXXX";
    const std::string dir = mkdtemp(pattern);
    std::array<std::vector<Figures>, kConditions> out;
    for (int r = 0; r < kRounds; ++r)
      for (int c = 0; c < kConditions; ++c) out[static_cast<std::size_t>(c)].push_back(run_phase(Condition(c), dir));
    std::system(("rm -rf " + dir).c_str());
    return out;
  }();
  return all[static_cast<std::size_t>(condition)];
}

double median(Condition condition, double Figures::*field) {
  std::vector<double> v;
  for (const Figures& f : rounds(condition)) v.push_back(f.*field);
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

void figure(benchmark::State& state, Condition condition, const char* counter, double Figures::*field) {
  const double value = median(condition, field);
  for (auto _ : state) benchmark::DoNotOptimize(value);
  state.counters[counter] = value;
}

void register_all() {
  struct Row {
    const char* figure;
    const char* counter;
    double Figures::*field;
  };
  const Row rows[] = {
      {"haptic_1khz_wake_p99", "us_wake_p99", &Figures::haptic_wake_p99_us},
      {"haptic_1khz_wake_p999", "us_wake_p999", &Figures::haptic_wake_p999_us},
      {"haptic_1khz_wake_max", "us_wake_max", &Figures::haptic_wake_max_us},
      {"haptic_1khz_busy_p99", "us_busy_p99", &Figures::haptic_busy_p99_us},
      {"stream_wake_p99", "us_wake_p99", &Figures::stream_wake_p99_us},
      {"fluid_busy_p50", "ms_busy_p50", &Figures::fluid_busy_p50_ms},
      {"hand_to_array_latency_p99", "ms_latency_p99", &Figures::latency_p99_ms},
      {"array_underruns_8s", "underruns", &Figures::underruns},
      {"viewer_stream", "MiB_per_s", &Figures::streamed_mib_s},
  };
  for (const Row& row : rows) {
    for (int c = 0; c < kConditions; ++c) {
      if (row.field == &Figures::streamed_mib_s && c != kViewer) continue;
      const std::string name = std::string("viewer_") + row.figure + "/" + kNames[c];
      benchmark::RegisterBenchmark(name.c_str(), [row, c](benchmark::State& s) {
        figure(s, Condition(c), row.counter, row.field);
      })->Iterations(1)->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
