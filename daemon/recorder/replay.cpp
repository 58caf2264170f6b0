#include "daemon/recorder/replay.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <utility>

#include "daemon/config/config_loader.hpp"
#include "daemon/pipeline/haptic_stage.hpp"
#include "daemon/pipeline/kernel_renderer.hpp"
#include "daemon/pipeline/pipeline.hpp"
#include "daemon/recorder/force_replay.hpp"
#include "daemon/recorder/trace_reader.hpp"
#include "daemon/status/json_writer.hpp"

namespace sonoflow::daemon {
namespace {

using HandKey = std::pair<std::uint64_t, std::int64_t>;  // frame id, receive time

// Pass 1: the tick records in order, and where every record a tick may need lies in the file
// (contact fields and blocks are large: they are read again only when a tick uses them).
struct TraceIndex {
  std::string config_text;
  std::vector<HapticTickRecord> ticks;
  std::map<HandKey, std::uint64_t> hands;
  std::map<std::uint64_t, std::uint64_t> fields;            // by ContactField::sequence
  std::map<std::uint64_t, HapticSettingsRecord> settings;   // by generation
  std::map<std::uint64_t, std::uint64_t> blocks;            // by FocalBlock::sequence (= tick)
  std::vector<ForceTickRecord> force_ticks;                  // force feedback only
  std::optional<ForceServoRecord> force_servo;
};

bool index_trace(trace::TraceReader& reader, TraceIndex& index, std::string& error) {
  trace::Record r;
  while (reader.next(r)) {
    switch (r.header.type) {
      case trace::RecordType::Config:
        index.config_text.assign(r.payload.begin(), r.payload.end());
        break;
      case trace::RecordType::HandFrame: {
        HandFrame h;
        if (trace::TraceReader::decode(r, h)) index.hands[{h.frame_id, h.receive_time_ns}] = r.offset;
        break;
      }
      case trace::RecordType::ContactField: {
        std::uint64_t sequence = 0;
        if (r.payload.size() >= 8) std::memcpy(&sequence, r.payload.data(), 8);
        index.fields[sequence] = r.offset;
        break;
      }
      case trace::RecordType::Block: {  // the reader checked the size
        std::uint64_t sequence = 0;
        std::memcpy(&sequence, r.payload.data() + offsetof(EmittedBlock, block) + offsetof(FocalBlock, sequence), 8);
        index.blocks[sequence] = r.offset;
        break;
      }
      case trace::RecordType::HapticTick: {
        HapticTickRecord t;
        if (trace::TraceReader::decode(r, t)) index.ticks.push_back(t);
        break;
      }
      case trace::RecordType::HapticSettings: {
        HapticSettingsRecord s;
        if (trace::TraceReader::decode(r, s)) index.settings[s.generation] = s;
        break;
      }
      case trace::RecordType::ForceTick: {
        ForceTickRecord t;
        if (trace::TraceReader::decode(r, t)) index.force_ticks.push_back(t);
        break;
      }
      case trace::RecordType::ForceServo: {
        ForceServoRecord s;
        if (trace::TraceReader::decode(r, s)) index.force_servo = s;
        break;
      }
      default:
        break;
    }
  }
  std::stable_sort(index.ticks.begin(), index.ticks.end(),
                   [](const HapticTickRecord& a, const HapticTickRecord& b) { return a.tick < b.tick; });
  std::stable_sort(index.force_ticks.begin(), index.force_ticks.end(),
                   [](const ForceTickRecord& a, const ForceTickRecord& b) { return a.tick < b.tick; });
  if (index.ticks.empty()) {
    error = "the trace holds no haptic tick records (the recording stopped before the pipeline ticked)";
    return false;
  }
  return true;
}

bool same_output(const FocalBlock& a, const FocalBlock& b) {
  if (a.start_time_ns != b.start_time_ns || a.hand_frame_id != b.hand_frame_id ||
      a.hand_capture_time_ns != b.hand_capture_time_ns || a.mode != b.mode)
    return false;
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    const FocalSample& x = a.samples[i];
    const FocalSample& y = b.samples[i];
    if (x.count != y.count) return false;
    const std::size_t n = std::min<std::size_t>(x.count, kMaxFoci);
    if (std::memcmp(x.foci.data(), y.foci.data(), n * sizeof(Focus)) != 0) return false;  // bit for bit
  }
  return true;
}

// Not-compared blocks by reason, in the order the reasons first occurred.
class Tally {
 public:
  void add(const std::string& reason, bool expected, std::uint64_t tick) {
    for (auto& n : list_) {
      if (n.reason == reason) {
        ++n.blocks;
        n.first_tick = std::min(n.first_tick, tick);
        return;
      }
    }
    list_.push_back({reason, expected, 1, tick});
  }
  std::vector<ReplayNotCompared> take() { return std::move(list_); }

 private:
  std::vector<ReplayNotCompared> list_;
};

const char* verdict_name(ReplayVerdict v) {
  switch (v) {
    case ReplayVerdict::Identical: return "identical";
    case ReplayVerdict::Different: return "different";
    case ReplayVerdict::Incomplete: return "incomplete";
    case ReplayVerdict::Unreadable: return "unreadable";
  }
  return "?";
}

// Pass 2: the replay's own haptic stage (renderer and safety gate as live), fed one recorded
// tick at a time through links of its own.
class TickReplayer {
 public:
  TickReplayer(const Config& config, trace::TraceReader& reader, const TraceIndex& index)
      : reader_(reader), index_(index), links_(std::make_unique<Links>()), renderer_(config),
        clock_(index.ticks.front().wake_ns),
        stage_(renderer_, *links_, clock_, haptic_timing_from(config)) {}

  // Loads what tick `t` used into the stage's links. "" when done, else the missing input.
  std::string load_inputs(const HapticTickRecord& t) {
    if (t.settings_generation != settings_) {
      const auto it = index_.settings.find(t.settings_generation);
      if (it == index_.settings.end()) return "settings generation " + std::to_string(t.settings_generation);
      links_->haptic_settings.write(settings_of(it->second));
      settings_ = t.settings_generation;
    }
    const HandKey hand{t.hand_frame_id, t.hand_receive_ns};
    if (t.hand_frame_id != 0 && hand != hand_) {
      const auto it = index_.hands.find(hand);
      HandFrame& frame = links_->hand_to_haptic.write_slot();
      if (it == index_.hands.end() || !reader_.read_at(it->second, record_) ||
          !trace::TraceReader::decode(record_, frame))
        return "hand frame " + std::to_string(t.hand_frame_id);
      links_->hand_to_haptic.publish();
      hand_ = hand;
    }
    if (t.field_sequence != 0) {
      const auto it = index_.fields.find(t.field_sequence);
      ContactField& field = links_->field_to_haptic.write_slot();
      if (it == index_.fields.end() || !reader_.read_at(it->second, record_) ||
          !trace::TraceReader::decode(record_, field))
        return "contact field " + std::to_string(t.field_sequence);
      links_->field_to_haptic.publish();
    }
    return {};
  }

  // An input of tick `t` is missing: is it newer than every record of its kind, i.e. did it
  // arrive after the recording stopped (rather than being lost from the middle)?
  bool after_recording(const HapticTickRecord& t) const {
    const HandKey hand{t.hand_frame_id, t.hand_receive_ns};
    const bool hand_late = t.hand_frame_id != 0 && !index_.hands.contains(hand) &&
                           (index_.hands.empty() || hand > index_.hands.rbegin()->first);
    const bool field_late = t.field_sequence != 0 && !index_.fields.contains(t.field_sequence) &&
                            (index_.fields.empty() || t.field_sequence > index_.fields.rbegin()->first);
    const bool settings_late = !index_.settings.contains(t.settings_generation) &&
                               (index_.settings.empty() || t.settings_generation > index_.settings.rbegin()->first);
    return hand_late || field_late || settings_late;
  }

  const FocalBlock& run(const HapticTickRecord& t) {
    if (t.stopping) stage_.request_stop();
    if (clock_.now_ns() < t.wake_ns) clock_.set(t.wake_ns);
    stage_.tick(rt::LoopTick{t.tick - 1, t.deadline_ns, t.wake_ns});
    while (links_->blocks_to_stream.ring.try_pop(block_)) {}
    return block_;
  }

  bool recorded_block(std::uint64_t tick, EmittedBlock& out) {
    const auto it = index_.blocks.find(tick);
    return it != index_.blocks.end() && reader_.read_at(it->second, record_) &&
           trace::TraceReader::decode(record_, out);
  }

 private:
  trace::TraceReader& reader_;
  const TraceIndex& index_;
  std::unique_ptr<Links> links_;
  KernelRenderer renderer_;
  rt::VirtualClock clock_;
  HapticStage stage_;
  trace::Record record_;
  std::uint64_t settings_ = 0;
  HandKey hand_{0, 0};
  FocalBlock block_{};
};

}  // namespace

ReplayResult replay_trace(const std::string& path, std::int64_t warmup_ns) {
  ReplayResult result;
  auto reader = trace::TraceReader::open(path, result.error);
  if (!reader) return result;
  TraceIndex index;
  if (!index_trace(*reader, index, result.error)) {
    if (reader->damaged()) result.error += "; " + reader->error();
    result.error = path + ": " + result.error;
    return result;
  }
  if (reader->damaged()) result.damage = reader->error();
  const ConfigResult config = load_config_string(index.config_text, path + " (recorded config)");
  if (!config.ok()) {
    result.error = config.error_report();
    return result;
  }
  result.recorded_blocks = index.blocks.size();
  result.ticks = index.ticks.size();

  auto replayer = std::make_unique<TickReplayer>(config.config, *reader, index);
  Tally tally;
  const HapticTickRecord& first = index.ticks.front();
  const std::uint64_t last_block = index.blocks.empty() ? 0 : index.blocks.rbegin()->first;
  result.mid_run = first.tick != 1;
  const std::int64_t warmup_end = result.mid_run ? first.deadline_ns + warmup_ns : first.deadline_ns;
  const std::string warmup_reason = "warm-up of a recording started mid-run (at haptic tick " +
                                    std::to_string(first.tick) +
                                    "): the renderer's state from before it is not in the trace";
  std::string lost;  // once set: why the replay's state is unknown from there on
  bool lost_expected = false;
  std::uint64_t previous = 0;
  auto block = std::make_unique<EmittedBlock>();
  for (const HapticTickRecord& t : index.ticks) {
    if (previous != 0 && t.tick > previous + 1 && lost.empty()) {
      lost = "replay state unknown from tick " + std::to_string(previous + 1) +
             ": tick records lost (trace ring full)";
    }
    for (std::uint64_t missing = previous + 1; previous != 0 && missing < t.tick; ++missing)
      tally.add(lost, lost_expected, missing);
    previous = t.tick;
    const bool warming_up = t.deadline_ns < warmup_end;
    if (!lost.empty() && !warming_up) {
      tally.add(lost, lost_expected, t.tick);
      continue;
    }
    if (const std::string missing = replayer->load_inputs(t); !missing.empty()) {
      if (warming_up) {
        tally.add(warmup_reason, true, t.tick);
        continue;
      }
      lost_expected = replayer->after_recording(t);
      lost = lost_expected ? "inputs of tick " + std::to_string(t.tick) + " onward arrived after the recording stopped"
                           : "replay state unknown from tick " + std::to_string(t.tick) + ": its " + missing +
                                 " is not in the trace (trace ring full)";
      tally.add(lost, lost_expected, t.tick);
      continue;
    }
    const FocalBlock& replayed = replayer->run(t);
    if (warming_up) {
      tally.add(warmup_reason, true, t.tick);
    } else if (!t.queued) {
      tally.add("lost live between the haptic and stream threads (ring full): never reached the array", true, t.tick);
    } else if (!replayer->recorded_block(t.tick, *block)) {
      if (t.tick > last_block) tally.add("made as the recording stopped (no block record)", true, t.tick);
      else tally.add("block record lost (trace ring full)", false, t.tick);
    } else {
      ++result.compared;
      if (block->fate == BlockFate::Refused) ++result.refused;
      if (block->fate == BlockFate::Discarded) ++result.discarded;
      if (same_output(block->block, replayed)) {
        ++result.identical;
      } else if (result.first_difference_tick == 0) {
        result.first_difference_tick = t.tick;
        result.first_difference_ns = block->block.start_time_ns;
      }
    }
  }
  // Blocks whose tick was not recorded: made before the recording began or after it stopped.
  for (const auto& [tick, offset] : index.blocks) {
    if (tick < first.tick) tally.add("made before the recording began (no tick record)", true, tick);
    else if (tick > index.ticks.back().tick) tally.add("made as the recording stopped (no tick record)", true, tick);
  }
  result.not_compared = tally.take();
  result.force = replay_force_ticks(index.force_ticks, index.force_servo);

  const bool complete = result.damage.empty() &&
                        std::all_of(result.not_compared.begin(), result.not_compared.end(),
                                    [](const ReplayNotCompared& n) { return n.expected; }) &&
                        (result.force.not_compared == 0 || result.force.not_compared_expected);
  if (result.compared != result.identical || result.force.compared != result.force.identical)
    result.verdict = ReplayVerdict::Different;
  else if (!complete || result.compared == 0) result.verdict = ReplayVerdict::Incomplete;
  else result.verdict = ReplayVerdict::Identical;
  return result;
}

std::string ReplayResult::report() const {
  if (verdict == ReplayVerdict::Unreadable) return "replay: " + error + "\n";
  std::string out = "replay: " + std::to_string(ticks) + " haptic ticks, " + std::to_string(recorded_blocks) +
                    " recorded blocks; " + std::to_string(compared) + " compared, " +
                    std::to_string(identical) + " identical: " + verdict_name(verdict) + "\n";
  if (first_difference_tick != 0) {
    out += "  first difference: the block of tick " + std::to_string(first_difference_tick) +
           " (starting at " + std::to_string(first_difference_ns) + " ns)\n";
  }
  for (const auto& n : not_compared) {
    out += "  not compared: " + std::to_string(n.blocks) + " block(s) from tick " + std::to_string(n.first_tick) +
           ": " + n.reason + (n.expected ? "" : " [trace incomplete]") + "\n";
  }
  if (refused + discarded > 0) {
    out += "  of the compared blocks, " + std::to_string(refused) + " were refused by the array and " +
           std::to_string(discarded) + " never reached it (live)\n";
  }
  if (force.ticks > 0) {
    out += "  force servo: " + std::to_string(force.ticks) + " ticks; " + std::to_string(force.compared) +
           " compared, " + std::to_string(force.identical) + " identical\n";
    if (force.first_difference_tick != 0)
      out += "  force servo: first difference at tick " + std::to_string(force.first_difference_tick) + "\n";
    if (force.not_compared > 0) {
      out += "  force servo: " + std::to_string(force.not_compared) + " tick(s) not compared: " +
             force.why_not_compared + (force.not_compared_expected ? "" : " [trace incomplete]") + "\n";
    }
  }
  if (!damage.empty()) out += "  trace damaged: " + damage + "; replayed up to there\n";
  return out;
}

std::string ReplayResult::summary_json() const {
  Json j;
  j.open('{');
  j.field("schema", std::string_view("sonoflow.replay")).field("schema_version", 1);
  j.field("verdict", std::string_view(verdict_name(verdict)));
  if (!error.empty()) j.field("error", std::string_view(error));
  j.field("mid_run", mid_run);
  j.field("ticks", ticks).field("recorded_blocks", recorded_blocks);
  j.field("compared", compared).field("identical", identical);
  j.field("refused", refused).field("discarded", discarded);
  if (first_difference_tick != 0) {
    j.key("first_difference").open('{').field("tick", first_difference_tick);
    j.field("start_ns", first_difference_ns).close('}');
  }
  j.key("not_compared").open('[');
  for (const auto& n : not_compared) {
    j.open('{').field("reason", std::string_view(n.reason)).field("expected", n.expected);
    j.field("blocks", n.blocks).field("first_tick", n.first_tick).close('}');
  }
  j.close(']');
  if (force.ticks > 0) {
    j.key("force").open('{').field("ticks", force.ticks).field("compared", force.compared);
    j.field("identical", force.identical);
    if (force.first_difference_tick != 0) j.field("first_difference_tick", force.first_difference_tick);
    j.field("not_compared", force.not_compared);
    if (force.not_compared > 0) {
      j.field("why_not_compared", std::string_view(force.why_not_compared));
      j.field("expected", force.not_compared_expected);
    }
    j.close('}');
  }
  if (!damage.empty()) j.field("damage", std::string_view(damage));
  j.close('}');
  return j.str();
}

}  // namespace sonoflow::daemon
