// Wire protocol and DRIVE computation costs (issue 3):
//   - encode + CRC-32C of 1 ms FOCI blocks (4 and 8 foci) and DRIVE blocks (20 x 256
//     transducers), and their decode (what the firmware does per block);
//   - DRIVE sample computation (256 transducer phases per sample): DriveEncoder against the
//     general kernels/acoustics path it must agree with (phase conjugation through FieldModel
//     + 8-bit encoding). At 20 kHz one sample is due every 50 us; the budget is 25 % of a
//     core, i.e. 12.5 us per sample.
#include <benchmark/benchmark.h>

#include <cmath>
#include <numbers>
#include <vector>

#include "drivers/array/drive_encoder.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/crc32c.hpp"
#include "drivers/protocol/message.hpp"
#include "kernels/acoustics/encoding.hpp"
#include "kernels/acoustics/field.hpp"
#include "kernels/acoustics/focus_solver.hpp"

namespace {

using namespace sonoflow;
using namespace sonoflow::drivers;

// Microseconds per sample (the share of one core at 20 kHz is us_per_sample / 50).
void per_sample_counter(benchmark::State& state) {
  state.counters["us_per_sample"] = benchmark::Counter(
      double(state.iterations()) * 1e-6, benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

FociBlock foci_block(int n_foci) {
  FociBlock b;
  b.n_samples = 20;
  b.n_foci = std::uint8_t(n_foci);
  b.start_tick = 123'456;
  for (int s = 0; s < 20; ++s)
    for (int f = 0; f < n_foci; ++f) b.samples[s][f] = {std::int16_t(s * 10), std::int16_t(f), 6000, 200, 0};
  return b;
}

void BM_FociEncode(benchmark::State& state) {
  const FociBlock b = foci_block(int(state.range(0)));
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  FrameHeader h;
  std::size_t n = 0;
  for (auto _ : state) {
    ++h.seq;
    n = encode_message(std::span(buf), h, b);
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.counters["blocks_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FociEncode)->Name("foci_block_encode_crc")->Arg(4)->Arg(8)->Repetitions(5)->ReportAggregatesOnly();

void BM_FociDecode(benchmark::State& state) {
  const FociBlock b = foci_block(int(state.range(0)));
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  const std::size_t n = encode_message(std::span(buf), FrameHeader{}, b);
  FociBlock out;
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode_message(std::span(buf).first(n), {kArrayMagic, 0}, out));
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.counters["blocks_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_FociDecode)->Name("foci_block_decode_crc")->Arg(4)->Arg(8)->Repetitions(5)->ReportAggregatesOnly();

void BM_DriveEncode(benchmark::State& state) {
  static DriveBlock b;
  b.n_samples = 20;
  for (int s = 0; s < 20; ++s)
    for (int i = 0; i < 512; ++i) b.samples[s][i] = std::uint8_t(i * 7 + s);
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  FrameHeader h;
  std::size_t n = 0;
  for (auto _ : state) {
    ++h.seq;
    n = encode_message(std::span(buf), h, b);
    benchmark::DoNotOptimize(buf.data());
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.counters["blocks_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DriveEncode)->Name("drive_block_encode_crc")->Repetitions(5)->ReportAggregatesOnly();

void BM_DriveDecode(benchmark::State& state) {
  static DriveBlock b, out;
  b.n_samples = 20;
  std::vector<std::uint8_t> buf(kMaxFrameSize);
  const std::size_t n = encode_message(std::span(buf), FrameHeader{}, b);
  for (auto _ : state) {
    benchmark::DoNotOptimize(decode_message(std::span(buf).first(n), {kArrayMagic, 0}, out));
  }
  state.SetBytesProcessed(std::int64_t(state.iterations()) * std::int64_t(n));
  state.counters["blocks_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DriveDecode)->Name("drive_block_decode_crc")->Repetitions(5)->ReportAggregatesOnly();

void BM_Crc32c(benchmark::State& state) {
  std::vector<std::uint8_t> data(std::size_t(state.range(0)));
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::uint8_t(i * 31);
  for (auto _ : state) benchmark::DoNotOptimize(crc32c(data));
  state.SetBytesProcessed(std::int64_t(state.iterations()) * state.range(0));
  state.counters["bytes_per_s"] =
      benchmark::Counter(double(state.iterations()) * double(state.range(0)), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Crc32c)->Name("crc32c")->Arg(10'256)->Repetitions(5)->ReportAggregatesOnly();

// ---- DRIVE sample computation ----------------------------------------------------------------

struct DriveSetup {
  acoustics::ArrayGeometry geometry = acoustics::ArrayGeometry::grid({});
  acoustics::TransducerModel model;
  DriveSetup() {
    for (int i = 0; i < geometry.size(); ++i)  // calibrated phases, as a real table has
      geometry.phase_offset[i] = float(i % 32) * 2 * std::numbers::pi_v<float> / 256;
  }
};

FocalSample sample(int n_foci, int step) {
  FocalSample s;
  s.count = std::uint8_t(n_foci);
  for (int f = 0; f < n_foci; ++f) {
    const float a = 0.001f * float(step) + float(f) * 1.57f;
    s.foci[f] = {{0.03f * std::cos(a), 0.03f * std::sin(a), 0.15f}, 0.8f};
  }
  return s;
}

void BM_DriveSampleOurs(benchmark::State& state, int n_foci) {
  const DriveSetup setup;
  const DriveEncoder encoder(setup.geometry, setup.model.wavenumber());
  std::vector<std::uint8_t> out(512);
  int step = 0;
  for (auto _ : state) {
    encoder.encode_sample(sample(n_foci, step++), out);
    benchmark::DoNotOptimize(out.data());
  }
  per_sample_counter(state);
}

// The same output through the general model: a propagation row per focus from FieldModel,
// superposed, phase-only, then acoustics::encode per transducer.
void BM_DriveSampleReference(benchmark::State& state, int n_foci) {
  const DriveSetup setup;
  const acoustics::FieldModel field(setup.geometry, setup.model);
  acoustics::Drive q(256), one(256);
  std::vector<acoustics::EncodedDrive> encoded(256);
  int step = 0;
  for (auto _ : state) {
    const FocalSample s = sample(n_foci, step++);
    q.setZero();
    for (int f = 0; f < n_foci; ++f) {
      acoustics::focus_drive(field, {s.foci[f].position.x, s.foci[f].position.y, s.foci[f].position.z}, one);
      q += s.foci[f].intensity * one;
    }
    acoustics::apply_constraint(acoustics::AmplitudeConstraint::PhaseOnly, q);
    acoustics::encode(q, encoded.data());
    benchmark::DoNotOptimize(encoded.data());
  }
  per_sample_counter(state);
}

BENCHMARK_CAPTURE(BM_DriveSampleOurs, one, 1)->Name("drive_sample_1_focus/sonoflow")->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK_CAPTURE(BM_DriveSampleReference, one, 1)->Name("drive_sample_1_focus/acoustics_field_model")->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK_CAPTURE(BM_DriveSampleOurs, four, 4)->Name("drive_sample_4_foci/sonoflow")->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK_CAPTURE(BM_DriveSampleReference, four, 4)->Name("drive_sample_4_foci/acoustics_field_model")->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK_CAPTURE(BM_DriveSampleOurs, eight, 8)->Name("drive_sample_8_foci/sonoflow")->Repetitions(5)->ReportAggregatesOnly();
BENCHMARK_CAPTURE(BM_DriveSampleReference, eight, 8)->Name("drive_sample_8_foci/acoustics_field_model")->Repetitions(5)->ReportAggregatesOnly();

}  // namespace

BENCHMARK_MAIN();
