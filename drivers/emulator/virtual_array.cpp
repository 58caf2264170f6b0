#include "drivers/emulator/virtual_array.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "drivers/protocol/message.hpp"

namespace sonoflow::drivers::emulator {
namespace {

constexpr std::size_t kDriveSampleBytes = 2 * kArrayTransducers;
constexpr std::uint16_t kPitchUm = 10'470;  // the thesis device (seed000 1.2)

using usb::TransferStatus;

std::vector<TransducerEntry> default_table(std::uint32_t seed) {
  std::vector<TransducerEntry> t(kArrayTransducers);
  std::uint32_t x = seed * 2654435761u + 1;
  for (int row = 0; row < 16; ++row) {
    for (int col = 0; col < 16; ++col) {
      TransducerEntry& e = t[static_cast<std::size_t>(row * 16 + col)];
      e.pos_um[0] = static_cast<std::int32_t>((2 * col - 15) * kPitchUm / 2);
      e.pos_um[1] = static_cast<std::int32_t>((2 * row - 15) * kPitchUm / 2);
      e.pos_um[2] = 0;
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      e.phase_corr = static_cast<std::uint8_t>(x & 0x1F);  // up to 45 degrees of phase error
      e.amp_corr_permille = static_cast<std::uint16_t>(950 + (x >> 8) % 101);
      e.driver_pin = static_cast<std::uint16_t>(row * 16 + col);
    }
  }
  return t;
}

std::uint8_t scale(std::uint8_t v, std::uint8_t cap, float gain) noexcept {
  const std::uint8_t capped = std::min(v, cap);
  return static_cast<std::uint8_t>(std::lround(static_cast<float>(capped) * gain));
}

}  // namespace

VirtualArray::VirtualArray(const rt::Clock& clock, VirtualArrayConfig config)
    : clock_(clock, kArrayTickHz, config.drift_ppm, config.start_tick),
      config_(std::move(config)),
      rng_(config_.seed * 747796405u + 2891336453u) {
  table_ = config_.table.empty() ? default_table(config_.seed) : config_.table;
  identity_.vendor_id = kArrayVid;
  identity_.product_id = kArrayPid;
  identity_.manufacturer = "sonoflow";
  identity_.product = "sonoflow phased array (emulated)";
  identity_.serial = config_.serial;
  identity_.endpoints = {
      {kArrayEpStreamOut, usb::EndpointType::Bulk, 512, 0},
      {kArrayEpStatusIn, usb::EndpointType::Interrupt, 128, 4},  // 1 ms at high speed
  };
  info_.fw_version = config_.fw_version;
  std::copy_n(config_.serial.begin(), std::min<std::size_t>(config_.serial.size(), 15),
              info_.serial.begin());
  info_.n_transducers = static_cast<std::uint16_t>(table_.size());
  info_.pitch_um = kPitchUm;
  info_.fifo_depth = config_.fifo_depth;
  info_.max_block_bytes =
      static_cast<std::uint32_t>(kFrameOverhead + 16 + kMaxBlockSamples * kDriveSampleBytes);
  info_.caps = kCapFoci | kCapDrive | kCapTimePing;
  fifo_.resize(std::max<std::uint32_t>(config_.fifo_depth, 1));
  held_drive_.resize(kDriveSampleBytes);
  emit_drive_.resize(kDriveSampleBytes);
  processed_tick_ = clock_.now();
}

// ---------------------------------------------------------------------------------------------
// EP0

TransferResult VirtualArray::reply(std::span<std::uint8_t> data, std::uint16_t max_len,
                                   const auto& msg) {
  std::array<std::uint8_t, 2048> buf;  // the largest reply, a table page, is 1.6 KB
  FrameHeader h;
  h.magic = kArrayMagic;
  h.seq = reply_seq_++;
  h.session_id = session_id_;
  const std::size_t n = encode_message(std::span(buf), h, msg);
  if (n == 0 || n > max_len || n > data.size()) return {TransferStatus::Stall, 0};
  std::memcpy(data.data(), buf.data(), n);
  return {TransferStatus::Ok, n};
}

TransferResult VirtualArray::control(const usb::SetupPacket& setup, std::span<std::uint8_t> data) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  advance();
  if ((setup.request_type & usb::kTypeMask) == usb::kTypeStandard)
    return answer_string_descriptor(identity_, setup, data);
  if ((setup.request_type & usb::kTypeMask) != usb::kTypeVendor) return {TransferStatus::Stall, 0};
  const bool in = setup.is_in();
  switch (static_cast<ArrayRequest>(setup.request)) {
    case ArrayRequest::GetInfo:
      if (!in) break;
      return reply(data, setup.length, info_);
    case ArrayRequest::GetTransducerTable: {
      if (!in || setup.index >= table_.size()) break;
      TransducerTablePage page;
      page.first = setup.index;
      page.total = static_cast<std::uint16_t>(table_.size());
      page.count = static_cast<std::uint16_t>(
          std::min<std::size_t>(kTransducersPerPage, table_.size() - setup.index));
      std::copy_n(table_.begin() + setup.index, page.count, page.entries.begin());
      return reply(data, setup.length, page);
    }
    case ArrayRequest::OpenSession: {
      const std::uint8_t major = static_cast<std::uint8_t>(setup.value >> 8);
      if (!in || major < info_.proto_min || major > info_.proto_max) break;
      open_session();
      SessionOpened s;
      s.session_id = session_id_;
      s.ver_major = major;
      s.ver_minor = kProtocolMinor;
      return reply(data, setup.length, s);
    }
    case ArrayRequest::SetStreamConfig: {
      if (in || session_id_ == kNoSession) break;
      StreamConfig c;
      const auto bytes = data.first(std::min<std::size_t>(setup.length, data.size()));
      if (decode_message(bytes, {kArrayMagic, session_id_}, c) != CodecError::Ok) break;
      if (c.tick_div < info_.min_tick_div) break;
      config_stream_ = c;
      configured_ = true;
      counters_.active_errors &= ~std::uint32_t(kErrWatchdog);
      reset_stream();
      if (c.mode == StreamMode::Drive && fifo_drive_.empty())
        fifo_drive_.resize(fifo_.size() * kDriveSampleBytes);
      return {TransferStatus::Ok, bytes.size()};
    }
    case ArrayRequest::Arm:
      if (in || session_id_ == kNoSession || !configured_) break;
      if (state_ == ArrayState::Idle) state_ = ArrayState::Armed;
      return {TransferStatus::Ok, 0};
    case ArrayRequest::Disarm:
      if (in) break;
      reset_stream();
      state_ = ArrayState::Idle;
      return {TransferStatus::Ok, 0};
    case ArrayRequest::GetStatus:
      if (!in) break;
      return reply(data, setup.length, status());
    case ArrayRequest::TimePing: {
      if (!in) break;
      ArrayTimePong pong;
      pong.device_tick = clock_.now();  // latched on arrival of the request
      return reply(data, setup.length, pong);
    }
  }
  return {TransferStatus::Stall, 0};
}

void VirtualArray::open_session() {
  do {
    session_id_ = next_random();
  } while (session_id_ == kNoSession);
  reset_stream();
  state_ = ArrayState::Idle;
  configured_ = false;
  have_seq_ = false;
  counters_ = ArrayStatus{};
  next_status_tick_ = clock_.now();
}

// Drops everything queued and falls silent (the state machine restarts from Armed or Idle).
void VirtualArray::reset_stream() noexcept {
  fifo_head_ = fifo_size_ = 0;
  if (state_ != ArrayState::Idle) state_ = ArrayState::Armed;
}

std::uint32_t VirtualArray::next_random() noexcept {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 17;
  rng_ ^= rng_ << 5;
  return rng_;
}

// ---------------------------------------------------------------------------------------------
// Stream (EP 0x01)

TransferResult VirtualArray::transfer_out(std::uint8_t endpoint, std::span<const std::uint8_t> data) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  if (endpoint != kArrayEpStreamOut) return {TransferStatus::Stall, 0};
  if (stalled(endpoint)) return {TransferStatus::Stall, 0};
  advance();
  accept_stream_message(data);
  // The USB transfer itself always succeeds: a rejected message is counted, not NAKed, so a
  // bad block can never wedge the pipe.
  return {TransferStatus::Ok, data.size()};
}

void VirtualArray::accept_stream_message(std::span<const std::uint8_t> data) {
  FrameView view;
  const CodecError e = parse_frame(data, {kArrayMagic, session_id_}, view);
  if (e == CodecError::BadCrc) {
    ++counters_.crc_errors;
    return;
  }
  if (e != CodecError::Ok || session_id_ == kNoSession) {
    ++counters_.rejected_blocks;
    return;
  }
  const std::uint32_t seq = view.header.seq;
  if (have_seq_ && seq != last_seq_ + 1) ++counters_.seq_gaps;
  have_seq_ = true;
  last_seq_ = seq;
  counters_.last_seq_rx = seq;
  const bool armed = state_ != ArrayState::Idle;
  if (view.header.msg_type == FociBlock::kType && armed &&
      config_stream_.mode == StreamMode::Foci &&
      decode_payload(view.payload, foci_scratch_) == CodecError::Ok &&
      foci_scratch_.tick_div == config_stream_.tick_div && foci_scratch_.n_foci <= info_.max_foci) {
    enqueue_foci(foci_scratch_, seq);
    return;
  }
  if (view.header.msg_type == DriveBlock::kType && armed &&
      config_stream_.mode == StreamMode::Drive &&
      decode_payload(view.payload, drive_scratch_) == CodecError::Ok &&
      drive_scratch_.tick_div == config_stream_.tick_div) {
    enqueue_drive(drive_scratch_, seq);
    return;
  }
  ++counters_.rejected_blocks;
}

VirtualArray::Admitted VirtualArray::admit_block(std::uint64_t start_tick, std::uint8_t tick_div, int n_samples) noexcept {
  ++totals_.blocks_accepted;
  Admitted a;
  // Samples whose tick has already played are late: skipped, and the block counted late.
  while (a.first < n_samples && start_tick + std::uint64_t(a.first) * tick_div <= processed_tick_) ++a.first;
  if (a.first > 0) ++counters_.late_blocks;
  if (a.first == n_samples) return a;
  // Samples overlapping the queue's tail replace it; what does not fit is an overrun.
  const std::uint64_t first_tick = start_tick + std::uint64_t(a.first) * tick_div;
  while (fifo_size_ > 0 && slot(fifo_size_ - 1).tick >= first_tick) --fifo_size_;
  const std::size_t n = static_cast<std::size_t>(n_samples - a.first);
  const std::size_t room = fifo_.size() - fifo_size_;
  if (n > room) counters_.overruns += static_cast<std::uint32_t>(n - room);
  a.count = std::min(n, room);
  return a;
}

void VirtualArray::enqueue_foci(const FociBlock& block, std::uint32_t seq) {
  const Admitted a = admit_block(block.start_tick, block.tick_div, block.n_samples);
  for (std::size_t i = 0; i < a.count; ++i) {
    const int s = a.first + static_cast<int>(i);
    QueuedSample& q = slot(fifo_size_++);
    q.tick = block.start_tick + std::uint64_t(s) * block.tick_div;
    q.block_seq = seq;
    q.index_in_block = static_cast<std::uint16_t>(s);
    q.n_foci = block.n_foci;
    std::copy_n(block.samples[static_cast<std::size_t>(s)].begin(), block.n_foci, q.foci.begin());
  }
}

void VirtualArray::enqueue_drive(const DriveBlock& block, std::uint32_t seq) {
  const Admitted a = admit_block(block.start_tick, block.tick_div, block.n_samples);
  for (std::size_t i = 0; i < a.count; ++i) {
    const int s = a.first + static_cast<int>(i);
    const std::size_t at = fifo_size_++;
    QueuedSample& q = slot(at);
    q.tick = block.start_tick + std::uint64_t(s) * block.tick_div;
    q.block_seq = seq;
    q.index_in_block = static_cast<std::uint16_t>(s);
    q.n_foci = 0;
    std::memcpy(drive_slot(at), block.samples[static_cast<std::size_t>(s)].data(),
                kDriveSampleBytes);
  }
}

std::uint8_t* VirtualArray::drive_slot(std::size_t i) noexcept {
  return fifo_drive_.data() + ((fifo_head_ + i) % fifo_.size()) * kDriveSampleBytes;
}

// ---------------------------------------------------------------------------------------------
// Playback

void VirtualArray::advance() {
  if (!connected_) return;
  run_until(clock_.now());
}

// Handles every output slot with a tick <= now_tick, in tick order. Each pass either plays or
// holds one slot, or returns: the loop ends once the next slot lies in the future.
void VirtualArray::run_until(std::uint64_t now_tick) {
  const std::uint64_t div = config_stream_.tick_div;
  const std::uint64_t watchdog_ticks = std::uint64_t(config_stream_.watchdog_ms) * (kArrayTickHz / 1000);
  const std::uint64_t fade_ticks = std::uint64_t(config_stream_.fade_us) * kArrayTickHz / 1'000'000;
  for (;;) {
    const bool have = fifo_size_ > 0;
    const std::uint64_t head_tick = have ? slot(0).tick : 0;
    if (state_ == ArrayState::Idle || state_ == ArrayState::Armed) {
      if (!have || head_tick > now_tick) break;
      play_head();
      continue;
    }
    const std::uint64_t expected = last_slot_tick_ + div;
    if (have && head_tick <= expected) {  // the next sample is due no later than the next slot
      if (head_tick > now_tick) break;
      if (state_ != ArrayState::Emitting) ++totals_.resumes;
      play_head();
      continue;
    }
    if (expected > now_tick) break;
    last_slot_tick_ = expected;
    if (state_ == ArrayState::Emitting) {  // nothing to play at this slot: underrun
      ++counters_.underruns;
      state_ = ArrayState::Holding;
      hold_start_tick_ = expected;
    }
    if (state_ == ArrayState::Holding && expected - hold_start_tick_ >= watchdog_ticks) {
      state_ = ArrayState::Fading;
      fade_start_tick_ = expected;
    }
    if (state_ == ArrayState::Holding) {
      emit_held(expected, EmissionKind::Held, 1.0f);
      continue;
    }
    const std::uint64_t into_fade = expected - fade_start_tick_;
    if (into_fade >= fade_ticks) {  // faded out: silent until the host sends samples again
      state_ = ArrayState::Armed;
      counters_.active_errors |= kErrWatchdog;
      ++totals_.fades_to_silence;
      continue;
    }
    const float gain = 1.0f - static_cast<float>(into_fade) / static_cast<float>(fade_ticks);
    emit_held(expected, EmissionKind::Fading, gain);
  }
  processed_tick_ = std::max(processed_tick_, now_tick);
}

void VirtualArray::play_head() {
  const QueuedSample& s = slot(0);
  const std::uint8_t* drive = config_stream_.mode == StreamMode::Drive ? drive_slot(0) : nullptr;
  state_ = ArrayState::Emitting;
  last_slot_tick_ = s.tick;
  held_ = s;
  if (drive) std::memcpy(held_drive_.data(), drive, kDriveSampleBytes);
  emit(s, drive, s.tick, EmissionKind::Played, 1.0f);
  fifo_head_ = (fifo_head_ + 1) % fifo_.size();
  --fifo_size_;
}

void VirtualArray::emit_held(std::uint64_t tick, EmissionKind kind, float gain) {
  emit(held_, config_stream_.mode == StreamMode::Drive ? held_drive_.data() : nullptr, tick, kind,
       gain);
}

void VirtualArray::emit(const QueuedSample& s, const std::uint8_t* drive, std::uint64_t tick,
                        EmissionKind kind, float gain) {
  if (kind == EmissionKind::Played) ++totals_.samples_played;
  if (kind == EmissionKind::Held) ++totals_.samples_held;
  if (kind == EmissionKind::Fading) ++totals_.samples_faded;
  const std::uint8_t cap = config_stream_.intensity_cap;
  // Plate heating: first-order response to the emitted level, ~60 s time constant.
  float level = 0;
  if (drive == nullptr) {
    for (int f = 0; f < s.n_foci; ++f) level = std::max(level, float(std::min(s.foci[f].intensity, cap)));
  } else {
    level = float(std::min(drive[1], cap));
  }
  const float target = 1500.0f * (level * gain / 255.0f);
  heat_cdeg_ += (target - heat_cdeg_) * (1.0f / (60.0f * 20'000.0f));
  if (observer_ == nullptr) return;
  EmittedSample out;
  out.tick = tick;
  out.kind = kind;
  out.mode = config_stream_.mode;
  out.gain = gain;
  out.block_seq = s.block_seq;
  out.index_in_block = s.index_in_block;
  if (drive == nullptr) {
    out.n_foci = s.n_foci;
    for (int f = 0; f < s.n_foci; ++f) {
      out.foci[f] = s.foci[f];
      out.foci[f].intensity = scale(s.foci[f].intensity, cap, gain);
    }
  } else {
    for (std::size_t i = 0; i < kDriveSampleBytes; i += 2) {
      emit_drive_[i] = drive[i];
      emit_drive_[i + 1] = scale(drive[i + 1], cap, gain);
    }
    out.drive = emit_drive_;
  }
  observer_->on_emit(out);
}

// ---------------------------------------------------------------------------------------------
// STATUS (EP 0x82)

ArrayStatus VirtualArray::status() const noexcept {
  ArrayStatus s = counters_;
  s.state = state_;
  s.mode = configured_ ? config_stream_.mode : StreamMode::None;
  s.device_tick = connected_ ? clock_.now() : 0;
  s.fifo_depth = static_cast<std::uint32_t>(fifo_.size());
  s.fifo_level = static_cast<std::uint32_t>(fifo_size_);
  s.next_play_tick = fifo_size_ > 0 ? fifo_[fifo_head_].tick : 0;
  s.temp_logic_cdeg = 3500;
  s.temp_array_cdeg = static_cast<std::int16_t>(2500 + heat_cdeg_);
  return s;
}

TransferResult VirtualArray::transfer_in(std::uint8_t endpoint, std::span<std::uint8_t> data) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  if (endpoint != kArrayEpStatusIn) return {TransferStatus::Stall, 0};
  if (stalled(endpoint)) return {TransferStatus::Stall, 0};
  advance();
  const std::uint64_t now = clock_.now();
  if (session_id_ == kNoSession || now < next_status_tick_) return {TransferStatus::Nak, 0};
  next_status_tick_ = now + kStatusPeriodTicks;
  TransferResult r = reply(data, static_cast<std::uint16_t>(std::min<std::size_t>(data.size(), 0xFFFF)),
                           status());
  if (r.status == TransferStatus::Ok) {
    ++totals_.statuses_sent;
    if (corrupt_in_ > 0 && r.bytes > 0) {
      --corrupt_in_;
      data[r.bytes - 1] ^= 0xFF;
    }
  }
  return r;
}

std::int64_t VirtualArray::next_event_ns() const noexcept {
  if (!connected_ || session_id_ == kNoSession) return clock_.host_clock().now_ns() + rt::kNsPerMs;
  return clock_.host_ns_at(next_status_tick_);
}

// ---------------------------------------------------------------------------------------------
// Faults

void VirtualArray::unplug() noexcept {
  connected_ = false;
  session_id_ = kNoSession;
  configured_ = false;
  fifo_head_ = fifo_size_ = 0;
  state_ = ArrayState::Idle;  // power gone: silent at once
}

void VirtualArray::plug() noexcept {
  clock_ = DeviceClock(clock_.host_clock(), kArrayTickHz, config_.drift_ppm, config_.start_tick);
  processed_tick_ = clock_.now();
  stalled_ = {};
  connected_ = true;
}

bool VirtualArray::stalled(std::uint8_t endpoint) const noexcept {
  return endpoint == kArrayEpStreamOut ? stalled_[0] != 0 : stalled_[1] != 0;
}

void VirtualArray::stall_endpoint(std::uint8_t endpoint) noexcept {
  (endpoint == kArrayEpStreamOut ? stalled_[0] : stalled_[1]) = 1;
}

void VirtualArray::clear_halt(std::uint8_t endpoint) noexcept {
  (endpoint == kArrayEpStreamOut ? stalled_[0] : stalled_[1]) = 0;
}

}  // namespace sonoflow::drivers::emulator
