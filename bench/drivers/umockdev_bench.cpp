// URBs per second through the real libusb path under umockdev (issue 3): LibusbTransport keeps
// k bulk OUT transfers of one 1 ms FOCI block (4 foci, 684 bytes) in flight to a VirtualArray on
// the emulated bus (tests/drivers/umockdev). The daemon needs 1,000 blocks/s for 20 kHz in
// real time; the probe (../shared/research/umockdev-probe.md) measured 1,700-2,500/s for its C
// harness on this kind of machine. Runs itself under umockdev-wrapper.
#include <benchmark/benchmark.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "drivers/emulator/virtual_array.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/message.hpp"
#include "drivers/usb/libusb_transport.hpp"
#include "tests/drivers/umockdev/usb_testbed.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::drivers;

// Always has the next block ready; counts completions (libusb event thread).
struct Flood final : usb::StreamHandler {
  std::vector<std::uint8_t> frame;
  std::atomic<std::uint64_t> completed{0}, errors{0};
  std::size_t next_out(std::span<std::uint8_t> buffer) noexcept override {
    std::copy(frame.begin(), frame.end(), buffer.begin());
    return frame.size();
  }
  void out_done(usb::TransferStatus s, std::size_t) noexcept override {
    (s == usb::TransferStatus::Ok ? completed : errors).fetch_add(1, std::memory_order_relaxed);
  }
  void in_done(std::uint8_t, usb::TransferStatus, std::span<const std::uint8_t>) noexcept override {}
  void link_lost() noexcept override {}
};

void BM_UmockdevBulkOut(benchmark::State& state) {
  if (!test::UsbTestbed::preloaded()) {
    state.SkipWithError("needs the umockdev preload");
    return;
  }
  rt::VirtualClock clock;
  emulator::VirtualArray device(clock);
  test::UsbTestbed bus;
  bus.plug(1, device);
  {
    auto transport = usb::LibusbTransport::create({kArrayVid, kArrayPid, ""});
    if (!transport || transport->open() != usb::TransferStatus::Ok) {
      state.SkipWithError("cannot open the emulated array");
      return;
    }
    Flood flood;
    FociBlock block;
    block.n_samples = 20;
    block.n_foci = 4;
    flood.frame.resize(kMaxFrameSize);
    flood.frame.resize(encode_message(std::span(flood.frame), FrameHeader{}, block));
    usb::StreamSetup setup;
    setup.handler = &flood;
    setup.out_endpoint = kArrayEpStreamOut;
    setup.out_transfers = int(state.range(0));
    setup.out_buffer_bytes = kMaxFrameSize;
    transport->start_streams(setup);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // warm up
    std::uint64_t total = 0;
    for (auto _ : state) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::uint64_t c0 = flood.completed.load();
      std::this_thread::sleep_for(std::chrono::seconds(1));
      const std::uint64_t c1 = flood.completed.load();
      state.SetIterationTime(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      total += c1 - c0;
    }
    transport->close();
    state.counters["urbs_per_s"] = benchmark::Counter(double(total), benchmark::Counter::kIsRate);
    state.counters["errors"] = double(flood.errors.load());
  }
}
BENCHMARK(BM_UmockdevBulkOut)->Name("umockdev_bulk_out_urbs/in_flight")->Arg(1)->Arg(4)->Arg(8)
    ->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  sonoflow::drivers::test::UsbTestbed::ensure_preloaded(argc, argv);  // may re-exec
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
