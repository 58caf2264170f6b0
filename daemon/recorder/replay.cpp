#include "daemon/recorder/replay.hpp"

#include <map>
#include <memory>
#include <vector>

#include "daemon/config/config_loader.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/recorder/trace_reader.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/standins/emulated_array.hpp"

namespace sonoflow::daemon {
namespace {

// Recorded hand frames, each returned once the clock reaches the instant it was received.
class ReplayHandSource final : public HandSource {
 public:
  ReplayHandSource(rt::Clock& clock, std::vector<HandFrame> frames, double rate_hz)
      : clock_(clock), frames_(std::move(frames)), rate_hz_(rate_hz) {}
  bool poll(HandFrame& out) noexcept override {
    if (next_ >= frames_.size() || frames_[next_].receive_time_ns > clock_.now_ns()) return false;
    out = frames_[next_++];
    return true;
  }
  bool connected() const noexcept override { return true; }
  double nominal_rate_hz() const noexcept override { return rate_hz_; }

 private:
  rt::Clock& clock_;
  std::vector<HandFrame> frames_;
  std::size_t next_ = 0;
  double rate_hz_;
};

// Recorded contact fields, published for the hand frame they were computed from.
class ReplayFluid final : public FluidModel {
 public:
  explicit ReplayFluid(std::vector<std::unique_ptr<ContactField>> fields) : fields_(std::move(fields)) {}
  void step(const HandFrame& newest, double, ContactField& out, FluidStepInfo& info) noexcept override {
    while (next_ < fields_.size() && fields_[next_]->hand_frame_id <= newest.frame_id) current_ = next_++;
    info.ok = current_ < fields_.size() && fields_[current_]->hand_frame_id == newest.frame_id;
    if (info.ok) out = *fields_[current_];
  }
  void set_material(std::string_view, double, double) noexcept override {}

 private:
  std::vector<std::unique_ptr<ContactField>> fields_;
  std::size_t next_ = 0, current_ = SIZE_MAX;
};

bool same_output(const FocalBlock& a, const FocalBlock& b) {
  if (a.mode != b.mode) return false;
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    const FocalSample& x = a.samples[i];
    const FocalSample& y = b.samples[i];
    if (x.count != y.count) return false;
    for (int f = 0; f < x.count && f < kMaxFoci; ++f) {
      if (!(x.foci[f].position == y.foci[f].position) || x.foci[f].intensity != y.foci[f].intensity)
        return false;
    }
  }
  return true;
}

}  // namespace

ReplayResult replay_trace(const std::string& path, std::int64_t warmup_ns) {
  ReplayResult result;
  auto reader = trace::TraceReader::open(path, result.error);
  if (!reader) return result;
  std::string config_text;
  std::vector<HandFrame> hands;
  std::vector<std::unique_ptr<ContactField>> fields;
  std::map<std::int64_t, FocalBlock> recorded;  // by block start time
  trace::Record record;
  while (reader->next(record)) {
    switch (record.header.type) {
      case trace::RecordType::Config:
        config_text.assign(record.payload.begin(), record.payload.end());
        break;
      case trace::RecordType::HandFrame: {
        HandFrame h;
        if (trace::TraceReader::decode(record, h)) hands.push_back(h);
        break;
      }
      case trace::RecordType::ContactField: {
        auto f = std::make_unique<ContactField>();
        if (trace::TraceReader::decode(record, *f)) fields.push_back(std::move(f));
        break;
      }
      case trace::RecordType::Block: {
        auto b = std::make_unique<EmittedBlock>();
        if (trace::TraceReader::decode(record, *b)) recorded[b->block.start_time_ns] = b->block;
        break;
      }
      default:
        break;
    }
  }
  if (reader->damaged() && recorded.empty()) {
    result.error = path + ": damaged trace (no complete records)";
    return result;
  }
  const ConfigResult config = load_config_string(config_text, path + " (recorded config)");
  if (!config.ok()) {
    result.error = config.error_report();
    return result;
  }
  if (hands.empty() || recorded.empty()) {
    result.error = path + ": the trace holds no hand frames or no output blocks";
    return result;
  }
  result.recorded_blocks = recorded.size();

  rt::VirtualClock clock(reader->header().start_ns);
  ReplayHandSource source(clock, hands, config.config.tracker.rate_hz);
  ReplayFluid fluid(std::move(fields));
  KernelRenderer renderer(config.config);
  EmulatedArray array(clock);
  Pipeline pipeline(config.config, clock, PipelineParts{source, fluid, renderer, array}, nullptr);
  pipeline.links().recording.store(true);

  const std::int64_t compare_from = hands.front().capture_time_ns + warmup_ns;
  const std::int64_t end = recorded.rbegin()->first;
  auto replayed = std::make_unique<EmittedBlock>();
  HandFrame discard_hand;
  auto discard_field = std::make_unique<ContactField>();
  while (clock.now_ns() < end) {
    pipeline.run_virtual_until(clock, clock.now_ns() + 10'000'000);
    while (pipeline.links().trace_hands.ring.try_pop(discard_hand)) {}
    while (pipeline.links().trace_fields.ring.try_pop(*discard_field)) {}
    while (pipeline.links().trace_blocks.ring.try_pop(*replayed)) {
      const auto it = recorded.find(replayed->block.start_time_ns);
      if (it == recorded.end() || it->first < compare_from) continue;
      ++result.compared;
      if (same_output(it->second, replayed->block)) ++result.identical;
      else if (result.first_mismatch_ns < 0) result.first_mismatch_ns = it->first;
    }
  }
  pipeline.stop(100'000'000);
  result.summary_json = pipeline.summary_json(clock.now_ns());
  result.ok = result.compared > 0 && result.identical == result.compared;
  return result;
}

}  // namespace sonoflow::daemon
