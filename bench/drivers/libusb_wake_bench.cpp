// What the libusb event thread costs the machine, through real libusb under umockdev
// (LibusbTransport -> usbfs ioctls -> umockdev preload -> the harness -> VirtualArray), in real
// time (MonotonicClock everywhere):
//   - idle: the array opened, no streams;
//   - stream: the array driver streaming 1 ms FOCI blocks at the array's rate, as the daemon's
//     stream thread does (pacer, 3 ms look-ahead), STATUS coming back every 1 ms, a time ping
//     every 100 ms;
// counted on the event thread itself: its voluntary context switches (wake-ups, from
// /proc/self/task/<tid>/status) and its CPU time (/proc/self/task/<tid>/schedstat), per second
// of wall time. Under umockdev every usbfs ioctl is a socket round trip to the harness, so each
// also costs the calling thread a voluntary switch (real usbfs ioctls do not sleep): the
// emulated bus's ioctls per second are reported beside, and what the event thread saves is the
// difference between versions. And:
//   - queue_to_submit: a block queued every 1 ms (the handler's one-slot queue, then
//     out_queued()) until the event thread takes it for an OUT transfer (next_out), p50/p99/max.
// (The polling version it was compared against is measured in bench/RESULTS.md, drivers.)
// Runs itself under umockdev-wrapper. Compare streaming variants each in its own process
// (--benchmark_filter): a second umockdev testbed in one process streams worse.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "drivers/array/array_driver.hpp"
#include "drivers/array/stream_pacer.hpp"
#include "drivers/emulator/virtual_array.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/usb/libusb_transport.hpp"
#include "rt/clock.hpp"
#include "tests/drivers/umockdev/usb_testbed.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::drivers;
using SteadyClock = std::chrono::steady_clock;

constexpr const char* kThreadName = "sf-usb-bench";

// The event thread, found by the name apply_thread_config() gave it.
struct ThreadProbe {
  std::string dir;  // /proc/self/task/<tid>

  static std::optional<ThreadProbe> find(const char* name) {
    DIR* d = opendir("/proc/self/task");
    if (d == nullptr) return std::nullopt;
    std::optional<ThreadProbe> found;
    while (dirent* e = readdir(d)) {
      const std::string dir = std::string("/proc/self/task/") + e->d_name;
      std::ifstream comm(dir + "/comm");
      std::string c;
      if (std::getline(comm, c) && c == name) found = ThreadProbe{dir};
    }
    closedir(d);
    return found;
  }
  std::uint64_t wakeups() const {  // voluntary context switches: sleeps ended by a wake-up
    std::ifstream status(dir + "/status");
    std::string key;
    while (status >> key) {
      std::uint64_t v = 0;
      if (key == "voluntary_ctxt_switches:" && status >> v) return v;
    }
    return 0;
  }
  std::uint64_t cpu_ns() const {
    std::ifstream schedstat(dir + "/schedstat");
    std::uint64_t ns = 0;
    schedstat >> ns;
    return ns;
  }
};

struct ThreadSample {
  std::uint64_t wakeups, cpu_ns;
  SteadyClock::time_point at;
  static ThreadSample of(const ThreadProbe& p) { return {p.wakeups(), p.cpu_ns(), SteadyClock::now()}; }
};

struct Sample {
  ThreadSample thread;
  std::uint64_t ioctls;  // on the whole emulated bus
  static Sample of(const ThreadProbe& p, test::UsbTestbed& bus) {
    return {ThreadSample::of(p), bus.counters().ioctls};
  }
};

void report(benchmark::State& state, const Sample& a, const Sample& b) {
  const double s = std::chrono::duration<double>(b.thread.at - a.thread.at).count();
  state.counters["wakeups_per_s"] = double(b.thread.wakeups - a.thread.wakeups) / s;
  state.counters["cpu_pct"] = 100.0 * double(b.thread.cpu_ns - a.thread.cpu_ns) * 1e-9 / s;
  state.counters["ioctls_per_s"] = double(b.ioctls - a.ioctls) / s;
}

// Event thread passes per second between two samples.
void report_passes(benchmark::State& state, const usb::LibusbTransport& transport,
                   std::uint64_t before, double s) {
  state.counters["passes_per_s"] = double(transport.event_passes() - before) / s;
}

// The emulated array's transport, its event thread named for ThreadProbe, opened unless
// `open` is false (the array driver opens it itself).
std::unique_ptr<usb::LibusbTransport> named_transport(benchmark::State& state,
                                                      usb::LibusbOptions options = {},
                                                      bool open = true) {
  auto transport = usb::LibusbTransport::create({kArrayVid, kArrayPid, ""}, options);
  if (!transport || (open && transport->open() != usb::TransferStatus::Ok)) {
    state.SkipWithError("cannot open the emulated array");
    return nullptr;
  }
  rt::RtThreadConfig config;
  config.name = kThreadName;
  transport->apply_thread_config(config);
  return transport;
}

// Each iteration: `seconds` of wall time, measured on the event thread.
void BM_Idle(benchmark::State& state) {
  if (!test::UsbTestbed::preloaded()) return state.SkipWithError("needs the umockdev preload");
  rt::MonotonicClock clock;
  emulator::VirtualArray device(clock);
  test::UsbTestbed bus;
  bus.plug(1, device);
  {
    auto transport = named_transport(state);
    if (!transport) return;
    const auto probe = ThreadProbe::find(kThreadName);
    if (!probe) return state.SkipWithError("event thread not found");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const Sample a = Sample::of(*probe, bus);
    const std::uint64_t passes = transport->event_passes();
    for (auto _ : state) std::this_thread::sleep_for(std::chrono::seconds(2));
    const Sample b = Sample::of(*probe, bus);
    report(state, a, b);
    report_passes(state, *transport, passes,
                  std::chrono::duration<double>(b.thread.at - a.thread.at).count());
    transport->close();
  }
}
BENCHMARK(BM_Idle)->Name("libusb_event_thread/idle")->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_ArrayStream(benchmark::State& state) {
  if (!test::UsbTestbed::preloaded()) return state.SkipWithError("needs the umockdev preload");
  rt::MonotonicClock clock;
  emulator::VirtualArray device(clock);
  test::UsbTestbed bus;
  bus.plug(1, device);
  {
    usb::LibusbOptions options;
    if (state.range(0) >= 0) options.max_out_wait_us = unsigned(state.range(0));
    auto transport = named_transport(state, options, false);
    if (!transport) return;
    ArrayDriver array(*transport, clock);
    if (array.connect() != DriverError::Ok || array.configure(StreamConfig{}) != DriverError::Ok ||
        array.arm() != DriverError::Ok || array.start_streaming() != DriverError::Ok)
      return state.SkipWithError("cannot start the array stream");
    const auto probe = ThreadProbe::find(kThreadName);
    if (!probe) return state.SkipWithError("event thread not found");

    // The stream thread: every 1 ms of host time, the blocks the pacer asks for.
    std::atomic<bool> stop{false};
    std::thread stream([&] {
      StreamPacer pacer;
      std::uint32_t epoch = array.stream_epoch();
      std::int64_t next = clock.now_ns();
      while (!stop.load(std::memory_order_acquire)) {
        if (array.stream_epoch() != epoch) {
          epoch = array.stream_epoch();
          pacer.restart();
        }
        const ClockMap map = array.clock_map();
        while (auto tick = pacer.next_block(map.device_at(clock.now_ns()))) {
          FocalBlock b;
          for (FocalSample& s : b.samples) {
            s.count = 1;
            s.foci[0].position = {0.0f, 0.0f, 0.15f};
            s.foci[0].intensity = 1.0f;
          }
          array.submit(b, *tick);
        }
        next += rt::kNsPerMs;
        clock.sleep_until(next);
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the stream settles
    const Sample a = Sample::of(*probe, bus);
    const std::uint64_t passes = transport->event_passes();
    ArrayStatus before{};
    bus.with_lock([&] { before = device.status(); });
    for (auto _ : state) {
      for (int i = 0; i < 30; ++i) {  // 3 s, a time ping every 100 ms as the supervisor does
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        array.maintain();
      }
    }
    const Sample b = Sample::of(*probe, bus);
    stop.store(true, std::memory_order_release);
    stream.join();
    ArrayStatus after{};
    bus.with_lock([&] { after = device.status(); });
    report(state, a, b);
    report_passes(state, *transport, passes,
                  std::chrono::duration<double>(b.thread.at - a.thread.at).count());
    state.counters["underruns"] = double(after.underruns - before.underruns);
    state.counters["late_blocks"] = double(after.late_blocks - before.late_blocks);
    array.disconnect();
  }
}
// Argument: max_out_wait_us (-1: the default; 0: every block wakes the thread).
BENCHMARK(BM_ArrayStream)->Name("libusb_event_thread/array_stream/out_wait_us")->Arg(-1)->Arg(0)
    ->Arg(2000)->Iterations(1)->Unit(benchmark::kMillisecond);

// One queued block at a time; next_out() stamps when the event thread takes it.
struct OneSlot final : usb::StreamHandler {
  std::vector<std::uint8_t> frame;
  std::atomic<std::int64_t> queued_at{0};  // 0: empty
  std::atomic<std::int64_t> taken_after{-1};
  const rt::Clock* clock = nullptr;
  std::size_t next_out(std::span<std::uint8_t> buffer) noexcept override {
    const std::int64_t t = queued_at.load(std::memory_order_acquire);
    if (t == 0) return 0;
    std::copy(frame.begin(), frame.end(), buffer.begin());
    taken_after.store(clock->now_ns() - t, std::memory_order_release);
    queued_at.store(0, std::memory_order_release);
    return frame.size();
  }
  void out_done(usb::TransferStatus, std::size_t) noexcept override {}
  void in_done(std::uint8_t, usb::TransferStatus, std::span<const std::uint8_t>) noexcept override {}
  void link_lost() noexcept override {}
};

void BM_QueueToSubmit(benchmark::State& state) {
  if (!test::UsbTestbed::preloaded()) return state.SkipWithError("needs the umockdev preload");
  rt::MonotonicClock clock;
  emulator::VirtualArray device(clock);
  test::UsbTestbed bus;
  bus.plug(1, device);
  {
    auto transport = named_transport(state);
    if (!transport) return;
    OneSlot slot;
    slot.clock = &clock;
    FociBlock block;
    block.n_samples = 20;
    block.n_foci = 4;
    slot.frame.resize(kMaxFrameSize);
    slot.frame.resize(encode_message(std::span(slot.frame), FrameHeader{}, block));
    usb::StreamSetup setup;
    setup.handler = &slot;
    setup.out_endpoint = kArrayEpStreamOut;
    setup.out_transfers = 4;
    setup.out_buffer_bytes = kMaxFrameSize;
    transport->start_streams(setup);
    std::vector<double> us;
    std::int64_t next = clock.now_ns();
    for (auto _ : state) {
      for (int i = 0; i < 2000; ++i) {  // 2 s at 1 kHz
        next += rt::kNsPerMs;
        clock.sleep_until(next);
        if (slot.queued_at.load(std::memory_order_acquire) != 0) continue;  // still waiting
        const std::int64_t d = slot.taken_after.exchange(-1, std::memory_order_acq_rel);
        if (d >= 0) us.push_back(double(d) * 1e-3);
        slot.queued_at.store(clock.now_ns(), std::memory_order_release);
        transport->out_queued(clock.now_ns() + 3 * rt::kNsPerMs);
      }
    }
    transport->close();
    if (us.empty()) return state.SkipWithError("no block was taken");
    std::sort(us.begin(), us.end());
    state.counters["p50_us"] = us[us.size() / 2];
    state.counters["p99_us"] = us[us.size() * 99 / 100];
    state.counters["max_us"] = us.back();
    state.counters["blocks"] = double(us.size());
  }
}
BENCHMARK(BM_QueueToSubmit)->Name("libusb_out/queue_to_submit")->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  sonoflow::drivers::test::UsbTestbed::ensure_preloaded(argc, argv);  // may re-exec
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
