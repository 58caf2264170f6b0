#include "drivers/array/array_driver.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "drivers/protocol/message.hpp"

namespace sonoflow::drivers {
namespace {

using usb::TransferStatus;
constexpr std::size_t kControlBuffer = 4096;
constexpr std::size_t kStatusBuffer = 256;

std::int16_t to_wire_coord(float metres) noexcept {
  const float units = std::round(metres / kFocusUnitM);
  return static_cast<std::int16_t>(std::clamp(units, -32767.0f, 32767.0f));
}

std::uint8_t to_wire_intensity(float v) noexcept {
  if (!(v > 0.0f)) return 0;  // also NaN
  return static_cast<std::uint8_t>(std::lround(std::min(v, 1.0f) * 255.0f));
}

}  // namespace

ArrayDriver::ArrayDriver(usb::Transport& transport, const rt::Clock& host_clock,
                         ArrayDriverConfig config)
    : transport_(transport),
      clock_(host_clock),
      config_(config),
      control_buf_(kControlBuffer),
      sync_(ClockSyncConfig{double(kArrayTickHz)}),
      pool_(kPoolSize) {
  for (std::uint16_t i = 0; i < kPoolSize; ++i) (void)free_.try_push(i);
}

ArrayDriver::~ArrayDriver() { disconnect(); }

// ---------------------------------------------------------------------------------------------
// Setup

DriverError ArrayDriver::fail(TransferStatus status) noexcept {
  return status == TransferStatus::NoDevice ? DriverError::NoDevice : DriverError::Transfer;
}

template <class M>
DriverError ArrayDriver::request_in(ArrayRequest request, std::uint16_t value, std::uint16_t index,
                                    M& out) {
  std::size_t got = 0;
  const TransferStatus s = transport_.control_in(static_cast<std::uint8_t>(request), value, index,
                                                 control_buf_, got);
  if (s != TransferStatus::Ok) return fail(s);
  // Replies before OPEN_SESSION carry session 0; after it, the open session.
  const std::uint32_t session = session_.load(std::memory_order_relaxed);
  const CodecError e = decode_message(std::span(control_buf_).first(got), {kArrayMagic, session}, out);
  if (e != CodecError::Ok) {
    last_codec_error_ = e;
    return DriverError::Protocol;
  }
  return DriverError::Ok;
}

DriverError ArrayDriver::request_out(ArrayRequest request, std::span<const std::uint8_t> data) {
  const TransferStatus s = transport_.control_out(static_cast<std::uint8_t>(request), 0, 0, data);
  return s == TransferStatus::Ok ? DriverError::Ok : fail(s);
}

DriverError ArrayDriver::connect() {
  if (link_state() == LinkState::Connected || link_state() == LinkState::Streaming)
    return DriverError::Ok;
  if (transport_.open() != TransferStatus::Ok) return DriverError::NoDevice;
  session_.store(kNoSession, std::memory_order_relaxed);
  if (auto e = request_in(ArrayRequest::GetInfo, 0, 0, info_); e != DriverError::Ok) return e;
  if (info_.proto_min > kProtocolMajor || info_.proto_max < kProtocolMajor ||
      (info_.caps & kCapFoci) == 0 || info_.n_transducers != kArrayTransducers ||
      info_.tick_hz != kArrayTickHz)
    return DriverError::Incompatible;
  table_.assign(info_.n_transducers, TransducerEntry{});
  for (std::uint16_t first = 0; first < info_.n_transducers; first += kTransducersPerPage) {
    TransducerTablePage page;
    if (auto e = request_in(ArrayRequest::GetTransducerTable, 0, first, page); e != DriverError::Ok)
      return e;
    if (page.first != first || page.total != info_.n_transducers || page.count == 0) {
      last_codec_error_ = CodecError::BadCount;
      return DriverError::Protocol;
    }
    std::copy_n(page.entries.begin(), page.count, table_.begin() + first);
  }
  SessionOpened opened;
  const std::uint16_t version = std::uint16_t(kProtocolMajor << 8 | kProtocolMinor);
  if (auto e = request_in(ArrayRequest::OpenSession, version, 0, opened); e != DriverError::Ok)
    return e;
  session_.store(opened.session_id, std::memory_order_release);
  sync_.reset();
  for (int i = 0; i < config_.initial_pings; ++i) {
    if (auto e = sync_time(); e != DriverError::Ok) return e;
  }
  state_.store(LinkState::Connected, std::memory_order_release);
  return DriverError::Ok;
}

DriverError ArrayDriver::configure(const StreamConfig& config) {
  if (link_state() != LinkState::Connected && link_state() != LinkState::Streaming)
    return DriverError::NotConnected;
  if (config.tick_div < info_.min_tick_div || config.mode == StreamMode::None ||
      (config.mode == StreamMode::Drive && (info_.caps & kCapDrive) == 0))
    return DriverError::BadArgument;
  FrameHeader h;
  h.magic = kArrayMagic;
  h.seq = control_seq_++;
  h.session_id = session_.load(std::memory_order_relaxed);
  const std::size_t n = encode_message(std::span(control_buf_), h, config);
  if (n == 0) return DriverError::BadArgument;
  if (auto e = request_out(ArrayRequest::SetStreamConfig, std::span(control_buf_).first(n));
      e != DriverError::Ok)
    return e;
  stream_config_ = config;
  have_config_ = true;
  tick_div_.store(config.tick_div, std::memory_order_relaxed);
  return DriverError::Ok;
}

DriverError ArrayDriver::arm() {
  if (link_state() != LinkState::Connected && link_state() != LinkState::Streaming)
    return DriverError::NotConnected;
  const DriverError e = request_out(ArrayRequest::Arm, {});
  if (e == DriverError::Ok) want_armed_ = true;
  return e;
}

DriverError ArrayDriver::disarm() {
  want_armed_ = false;
  if (link_state() != LinkState::Connected && link_state() != LinkState::Streaming)
    return DriverError::NotConnected;
  return request_out(ArrayRequest::Disarm, {});
}

DriverError ArrayDriver::start_streaming() {
  if (link_state() == LinkState::Streaming) return DriverError::Ok;
  if (link_state() != LinkState::Connected) return DriverError::NotConnected;
  usb::StreamSetup setup;
  setup.handler = this;
  setup.out_endpoint = kArrayEpStreamOut;
  setup.out_transfers = config_.out_transfers;
  setup.out_buffer_bytes = kMaxFrameSize;
  setup.in[0] = {kArrayEpStatusIn, usb::EndpointType::Interrupt, config_.status_transfers,
                 kStatusBuffer};
  recycle_queued();
  out_stalled_.store(false, std::memory_order_relaxed);
  const TransferStatus s = transport_.start_streams(setup);
  if (s != TransferStatus::Ok) return fail(s);
  want_streaming_ = true;
  epoch_.fetch_add(1, std::memory_order_acq_rel);
  state_.store(LinkState::Streaming, std::memory_order_release);
  return DriverError::Ok;
}

void ArrayDriver::stop_streaming() noexcept {
  want_streaming_ = false;
  if (link_state() != LinkState::Streaming) return;
  state_.store(LinkState::Connected, std::memory_order_release);
  transport_.stop_streams();
  recycle_queued();
}

// With the transport stopped, the supervisor takes over the transport's side of both rings
// (stop_streams() returned after the last callback, which orders the hand-over).
void ArrayDriver::recycle_queued() noexcept {
  std::uint16_t slot;
  while (queued_.try_pop(slot)) (void)free_.try_push(slot);
}

DriverError ArrayDriver::sync_time() {
  if (!transport_.is_open()) return DriverError::NoDevice;
  const std::int64_t send = clock_.now_ns();
  std::size_t got = 0;
  const TransferStatus s = transport_.control_in(static_cast<std::uint8_t>(ArrayRequest::TimePing),
                                                 0, 0, control_buf_, got);
  const std::int64_t receive = clock_.now_ns();
  if (s != TransferStatus::Ok) return fail(s);
  ArrayTimePong pong;
  const CodecError e = decode_message(std::span(control_buf_).first(got),
                                      {kArrayMagic, session_.load(std::memory_order_relaxed)}, pong);
  if (e != CodecError::Ok) {
    last_codec_error_ = e;
    return DriverError::Protocol;
  }
  sync_.add(send, receive, pong.device_tick);
  clock_map_.store(sync_.map());
  last_ping_ns_ = receive;
  pings_.fetch_add(1, std::memory_order_relaxed);
  return DriverError::Ok;
}

LinkState ArrayDriver::maintain() {
  LinkState state = link_state();
  if ((state == LinkState::Connected || state == LinkState::Streaming) && !transport_.is_open()) {
    // Lost outside a stream (no callback told us: a control transfer found it gone), or the
    // stream's callback has not run yet; whichever of the two moves the link counts it.
    if (mark_link_lost(state_)) transport_counts_.lost.fetch_add(1, std::memory_order_relaxed);
    state = link_state();
  }
  if (state == LinkState::Lost) {
    transport_.close();  // reaps every transfer
    recycle_queued();
    session_.store(kNoSession, std::memory_order_release);
    state_.store(LinkState::Disconnected, std::memory_order_release);
    state = LinkState::Disconnected;
  }
  if (state == LinkState::Disconnected && (want_streaming_ || want_armed_ || have_config_)) {
    if (transport_.device_present() && restore() == DriverError::Ok)
      reconnects_.fetch_add(1, std::memory_order_relaxed);
    return link_state();
  }
  if (state == LinkState::Connected || state == LinkState::Streaming) {
    if (out_stalled_.exchange(false, std::memory_order_acq_rel))
      (void)transport_.clear_halt(kArrayEpStreamOut);
    if (clock_.now_ns() - last_ping_ns_ >= config_.ping_period_ns) (void)sync_time();
  }
  return link_state();
}

// Brings a returned device back to what the supervisor had asked for.
DriverError ArrayDriver::restore() {
  const bool armed = want_armed_, streaming = want_streaming_;
  if (auto e = connect(); e != DriverError::Ok) {
    transport_.close();
    return e;
  }
  if (have_config_)
    if (auto e = configure(stream_config_); e != DriverError::Ok) return e;
  if (armed)
    if (auto e = arm(); e != DriverError::Ok) return e;
  if (streaming) return start_streaming();
  return DriverError::Ok;
}

void ArrayDriver::disconnect() noexcept {
  if (link_state() == LinkState::Connected || link_state() == LinkState::Streaming) {
    state_.store(LinkState::Connected, std::memory_order_release);
    transport_.stop_streams();
    (void)request_out(ArrayRequest::Disarm, {});  // never leave the array emitting
  }
  want_armed_ = want_streaming_ = have_config_ = false;
  transport_.close();
  recycle_queued();
  session_.store(kNoSession, std::memory_order_release);
  state_.store(LinkState::Disconnected, std::memory_order_release);
}

acoustics::TransducerTable ArrayDriver::transducer_table() const {
  acoustics::TransducerTable t;
  t.entries.resize(table_.size());
  for (std::size_t i = 0; i < table_.size(); ++i) {
    const TransducerEntry& w = table_[i];
    acoustics::TransducerEntry& e = t.entries[i];
    e.position = {float(w.pos_um[0]) * 1e-6f, float(w.pos_um[1]) * 1e-6f, float(w.pos_um[2]) * 1e-6f};
    e.normal = {float(w.normal_q15[0]) / 32767.0f, float(w.normal_q15[1]) / 32767.0f,
                float(w.normal_q15[2]) / 32767.0f};
    e.phase_offset = float(w.phase_corr) * 2.0f * std::numbers::pi_v<float> / 256.0f;
    e.amplitude_gain = float(w.amp_corr_permille) / 1000.0f;
  }
  return t;
}

// ---------------------------------------------------------------------------------------------
// Stream thread

bool ArrayDriver::take_slot(std::uint16_t& slot) noexcept {
  if (spare_slot_ >= 0) {
    slot = static_cast<std::uint16_t>(spare_slot_);
    spare_slot_ = -1;
    return true;
  }
  if (free_.try_pop(slot)) return true;
  stream_counts_.no_buffer.fetch_add(1, std::memory_order_relaxed);
  return false;
}

bool ArrayDriver::enqueue(std::size_t size, std::uint16_t slot, std::uint64_t start_tick) noexcept {
  if (size == 0) {  // did not encode (invalid block): keep the buffer for the next submit
    spare_slot_ = slot;
    stream_counts_.invalid.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  pool_[slot].size = size;
  (void)queued_.try_push(slot);  // cannot fail: both rings hold every slot
  stream_counts_.submitted.fetch_add(1, std::memory_order_relaxed);
  const ClockMap map = clock_map();
  transport_.out_queued(map.valid() ? map.host_at(double(start_tick)) : usb::kNoPlayTime);
  return true;
}

bool ArrayDriver::submit(const FocalBlock& block, std::uint64_t start_tick) noexcept {
  if (link_state() != LinkState::Streaming) {
    stream_counts_.not_streaming.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::uint16_t slot;
  if (!take_slot(slot)) return false;
  FociBlock& f = foci_scratch_;
  f.n_samples = kSamplesPerBlock;
  f.start_tick = start_tick;
  f.tick_div = tick_div();
  f.sound_speed_q6 = 0;
  std::uint8_t n_foci = 1;
  for (const FocalSample& s : block.samples) n_foci = std::max<std::uint8_t>(n_foci, std::min<std::uint8_t>(s.count, kMaxWireFoci));
  f.n_foci = n_foci;
  for (int i = 0; i < kSamplesPerBlock; ++i) {
    const FocalSample& s = block.samples[i];
    for (int k = 0; k < n_foci; ++k) {
      WireFocus& w = f.samples[i][k];
      if (k < s.count) {
        const Focus& focus = s.foci[k];
        w = {to_wire_coord(focus.position.x), to_wire_coord(focus.position.y),
             to_wire_coord(focus.position.z), to_wire_intensity(focus.intensity), 0};
      } else {
        w = WireFocus{};  // padding: silent
      }
    }
  }
  const ClockMap map = clock_map();
  if (map.valid() && double(start_tick) <= map.device_at(clock_.now_ns()))
    stream_counts_.late.fetch_add(1, std::memory_order_relaxed);
  FrameHeader h;
  h.magic = kArrayMagic;
  h.seq = stream_seq_++;
  h.session_id = session_.load(std::memory_order_acquire);
  return enqueue(encode_message(std::span(pool_[slot].bytes), h, f), slot, start_tick);
}

bool ArrayDriver::submit(const DriveBlock& block) noexcept {
  if (link_state() != LinkState::Streaming) {
    stream_counts_.not_streaming.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  std::uint16_t slot;
  if (!take_slot(slot)) return false;
  FrameHeader h;
  h.magic = kArrayMagic;
  h.seq = stream_seq_++;
  h.session_id = session_.load(std::memory_order_acquire);
  return enqueue(encode_message(std::span(pool_[slot].bytes), h, block), slot, block.start_tick);
}

bool ArrayDriver::status(ArrayStatus& out) const noexcept {
  return status_.generation() > 0 && status_.load(out);
}

ClockMap ArrayDriver::clock_map() const noexcept {
  ClockMap m;
  if (!clock_map_.load(m)) return ClockMap{};
  return m;
}

ArrayDriverCounters ArrayDriver::counters() const noexcept {
  ArrayDriverCounters c;
  c.blocks_submitted = stream_counts_.submitted.load(std::memory_order_relaxed);
  c.submit_no_buffer = stream_counts_.no_buffer.load(std::memory_order_relaxed);
  c.submit_not_streaming = stream_counts_.not_streaming.load(std::memory_order_relaxed);
  c.late_submits = stream_counts_.late.load(std::memory_order_relaxed);
  c.submit_invalid = stream_counts_.invalid.load(std::memory_order_relaxed);
  c.blocks_sent = transport_counts_.sent.load(std::memory_order_relaxed);
  c.out_errors = transport_counts_.out_errors.load(std::memory_order_relaxed);
  c.statuses = transport_counts_.statuses.load(std::memory_order_relaxed);
  c.statuses_rejected = transport_counts_.rejected.load(std::memory_order_relaxed);
  c.links_lost = transport_counts_.lost.load(std::memory_order_relaxed);
  c.reconnects = reconnects_.load(std::memory_order_relaxed);
  c.time_pings = pings_.load(std::memory_order_relaxed);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Transport thread

std::size_t ArrayDriver::next_out(std::span<std::uint8_t> buffer) noexcept {
  std::uint16_t slot;
  if (!queued_.try_pop(slot)) return 0;
  const Buffer& b = pool_[slot];
  const std::size_t n = std::min(b.size, buffer.size());
  std::memcpy(buffer.data(), b.bytes.data(), n);
  (void)free_.try_push(slot);
  transport_counts_.sent.fetch_add(1, std::memory_order_relaxed);
  return n;
}

void ArrayDriver::out_done(TransferStatus status, std::size_t) noexcept {
  if (status == TransferStatus::Ok) return;
  transport_counts_.out_errors.fetch_add(1, std::memory_order_relaxed);
  if (status == TransferStatus::Stall) out_stalled_.store(true, std::memory_order_release);
}

void ArrayDriver::in_done(std::uint8_t endpoint, TransferStatus status,
                          std::span<const std::uint8_t> data) noexcept {
  if (endpoint != kArrayEpStatusIn || status != TransferStatus::Ok) return;
  ArrayStatus s;
  const CodecError e =
      decode_message(data, {kArrayMagic, session_.load(std::memory_order_acquire)}, s);
  if (e != CodecError::Ok) {
    transport_counts_.rejected.fetch_add(1, std::memory_order_relaxed);
    rejections_.count(e);
    return;
  }
  status_.store(s);
  transport_counts_.statuses.fetch_add(1, std::memory_order_relaxed);
}

void ArrayDriver::link_lost() noexcept {
  if (mark_link_lost(state_)) transport_counts_.lost.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace sonoflow::drivers
