#include "daemon/recorder/recorder.hpp"

#include <sys/stat.h>

#include <cstring>
#include <ctime>

#include "daemon/config/config_loader.hpp"
#include "daemon/status/status_file.hpp"
#include "daemon/status/status_format.hpp"
#include "daemon/supervisor/log.hpp"
#include "rt/rt_thread.hpp"

namespace sonoflow::daemon {

Recorder::Recorder(const Config& config, Links& links, rt::Clock& clock, status::StatusRegion* status)
    : config_(config), links_(links), clock_(clock), status_(status),
      field_scratch_(std::make_unique<ContactField>()) {}

Recorder::~Recorder() {
  stop_thread();
  stop();
}

std::string Recorder::path() const {
  std::lock_guard lock(mutex_);
  return path_;
}

namespace {
std::uint64_t total_drops(const Links& l) {
  return l.trace_hands.drops.load() + l.trace_fields.drops.load() + l.trace_ticks.drops.load() +
         l.trace_settings.drops.load() + l.trace_blocks.drops.load() + l.trace_force.drops.load();
}
}  // namespace

std::string Recorder::start() {
  std::lock_guard lock(mutex_);
  if (writer_) return "already recording to " + path_;
  mkdir(config_.recorder.directory.c_str(), 0750);
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  ++session_;
  const std::string path = config_.recorder.directory + "/sonoflow-" + stamp + "-s" +
                           std::to_string(session_) + ".sftrace";
  trace::TraceHeader header;
  header.start_ns = origin_ns_ != 0 ? origin_ns_ : clock_.now_ns();
  header.session = session_;
  trace::TraceWriter::Options options;
  options.io = config_.recorder.io;
  options.buffer_bytes = static_cast<std::size_t>(config_.recorder.buffer_kib) * 1024;
  options.buffers = config_.recorder.buffers;
  std::string error;
  auto writer = trace::TraceWriter::create(path, header, options, error);
  if (!writer) return error;
  // The config goes first, so a replay runs with the same settings.
  const std::string toml = render_config(config_);
  writer->append(trace::RecordType::Config, header.start_ns, toml.data(),
                 static_cast<std::uint32_t>(toml.size()));
  if (links_.force_servo) {
    writer->append(trace::RecordType::ForceServo, header.start_ns, &*links_.force_servo,
                   static_cast<std::uint32_t>(sizeof(ForceServoRecord)));
  }
  writer_ = std::move(writer);
  path_ = path;
  last_io_ = writer_->io();
  drops_at_start_ = total_drops(links_);
  // Empty what queued up before, then let the stages push.
  HandFrame h;
  while (links_.trace_hands.ring.try_pop(h)) {}
  EmittedBlock b;
  while (links_.trace_blocks.ring.try_pop(b)) {}
  while (links_.trace_fields.ring.try_pop(*field_scratch_)) {}
  HapticTickRecord t;
  while (links_.trace_ticks.ring.try_pop(t)) {}
  HapticSettingsRecord s;
  while (links_.trace_settings.ring.try_pop(s)) {}
  ForceTickRecord force;
  while (links_.trace_force.ring.try_pop(force)) {}
  links_.recording.store(true, std::memory_order_release);
  const std::string how = std::string(writer_->io() == status::RecorderIo::IoUring ? "io_uring" : "pwrite") +
                          (writer_->direct_io() ? ", O_DIRECT" : ", buffered");
  log_line(LogLevel::Info, "rec", "recording to %s (%s)", path.c_str(), how.c_str());
  publish_status();
  return "recording to " + path + " (" + how + ")";
}

std::string Recorder::stop() {
  links_.recording.store(false, std::memory_order_release);
  drain_once();  // what the stages pushed before they saw the flag
  std::lock_guard lock(mutex_);
  if (!writer_) return "not recording";
  const bool ok = writer_->finish();
  const std::string result = (ok ? "recording stopped: " : "recording failed: ") + path_ + ", " +
                             std::to_string(writer_->records()) + " records, " +
                             std::to_string(writer_->bytes()) + " bytes, " + std::to_string(gaps_) +
                             " gaps" + (ok ? "" : " (" + writer_->error() + ")");
  log_line(ok ? LogLevel::Info : LogLevel::Error, "rec", "%s", result.c_str());
  writer_.reset();
  publish_status();
  return result;
}

void Recorder::drain_once() {
  std::lock_guard lock(mutex_);
  if (!writer_) return;
  // Order inside one drain: hands, fields, settings, ticks, blocks, force ticks (each ring is in
  // time order; the replay indexes the records, so their interleaving does not matter).
  HandFrame h;
  while (links_.trace_hands.ring.try_pop(h))
    writer_->append(trace::RecordType::HandFrame, h.capture_time_ns, &h, sizeof h);
  ContactField& f = *field_scratch_;
  while (links_.trace_fields.ring.try_pop(f)) {
    std::uint8_t head[trace::kContactFieldHeaderSize] = {};
    std::memcpy(head, &f.sequence, 8);
    std::memcpy(head + 8, &f.hand_frame_id, 8);
    std::memcpy(head + 16, &f.time_ns, 8);
    std::memcpy(head + 24, &f.count, 4);
    std::memcpy(head + 28, &f.hand_count, 1);
    std::memcpy(head + 32, f.hand_ids.data(), 4 * kMaxHands);
    writer_->append(trace::RecordType::ContactField, f.time_ns, head, sizeof head, f.samples.data(),
                    static_cast<std::uint32_t>(f.count * sizeof(ContactSample)));
  }
  HapticSettingsRecord s;
  while (links_.trace_settings.ring.try_pop(s))
    writer_->append(trace::RecordType::HapticSettings, 0, &s, sizeof s);
  HapticTickRecord t;
  while (links_.trace_ticks.ring.try_pop(t))
    writer_->append(trace::RecordType::HapticTick, t.deadline_ns, &t, sizeof t);
  EmittedBlock b;
  while (links_.trace_blocks.ring.try_pop(b))
    writer_->append(trace::RecordType::Block, b.block.start_time_ns, &b, sizeof b);
  ForceTickRecord force;
  while (links_.trace_force.ring.try_pop(force))
    writer_->append(trace::RecordType::ForceTick, force.deadline_ns, &force, sizeof force);
  gaps_ = total_drops(links_) - drops_at_start_;
  const std::int64_t now = clock_.now_ns();
  if (status_ != nullptr && now >= next_status_record_ns_) {
    next_status_record_ns_ = now + 1'000'000'000;
    const std::string json = status::to_json(status::take_snapshot(*status_), now);
    writer_->append(trace::RecordType::Status, now, json.data(), static_cast<std::uint32_t>(json.size()));
  }
  publish_status();
}

void Recorder::publish_status() {
  if (status_ == nullptr) return;
  status::RecorderStatus s;
  s.recording = writer_ ? 1 : 0;
  s.io = last_io_;
  s.session = session_;
  s.records = writer_ ? writer_->records() : 0;
  s.bytes = writer_ ? writer_->bytes() : 0;
  s.gaps = gaps_;
  std::strncpy(s.path.data(), path_.c_str(), s.path.size() - 1);
  status_->recorder.lock.store(s);
}

void Recorder::start_thread() {
  thread_ = std::thread([this] {
    rt::RtThreadConfig rt_config;
    rt_config.name = "sf-recorder";
    rt_config.fifo_priority = config_.threads.recorder.priority;
    rt_config.cpu = config_.threads.recorder.cpu;
    rt::setup_current_thread(rt_config);
    while (!stop_thread_.load(std::memory_order_acquire)) {
      drain_once();
      clock_.sleep_until(clock_.now_ns() + 5'000'000);
    }
  });
}

void Recorder::stop_thread() {
  stop_thread_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

}  // namespace sonoflow::daemon
