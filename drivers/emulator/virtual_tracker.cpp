#include "drivers/emulator/virtual_tracker.hpp"

#include <algorithm>
#include <cstring>

#include "drivers/protocol/array_messages.hpp"  // SessionOpened, shared by both devices
#include "drivers/protocol/message.hpp"

namespace sonoflow::drivers::emulator {
namespace {

using usb::TransferStatus;
constexpr std::size_t kMaxReply = 256;  // largest control reply (TrackerInfo) is 76 bytes

}  // namespace

TrackerCalibration default_tracker_mount() {
  TrackerCalibration c;
  c.rotation = {1, 0, 0, 0, 0, -1, 0, 1, 0};
  c.translation_mm = {0, -120, 0};
  return c;
}

VirtualTracker::VirtualTracker(const rt::Clock& clock, VirtualTrackerConfig config,
                               std::unique_ptr<HandSource> source)
    : clock_(clock, 1e6, config.drift_ppm, config.start_us),
      config_(std::move(config)),
      source_(std::move(source)),
      rng_(config_.seed * 2246822519u + 374761393u) {
  identity_.vendor_id = kTrackerVid;
  identity_.product_id = kTrackerPid;
  identity_.manufacturer = "sonoflow";
  identity_.product = "sonoflow hand tracker (emulated)";
  identity_.serial = config_.serial;
  identity_.endpoints = {
      {kTrackerEpFramesIn, usb::EndpointType::Bulk, 512, 0},
      {kTrackerEpStatusIn, usb::EndpointType::Interrupt, 64, 4},
  };
  info_.fw_version = 0x000100;
  std::copy_n(config_.serial.begin(), std::min<std::size_t>(config_.serial.size(), 15),
              info_.serial.begin());
  info_.caps = 0;
}

std::uint32_t VirtualTracker::next_random() noexcept {
  rng_ ^= rng_ << 13;
  rng_ ^= rng_ >> 17;
  rng_ ^= rng_ << 5;
  return rng_;
}

TransferResult VirtualTracker::reply(std::span<std::uint8_t> data, std::uint16_t max_len,
                                     const auto& msg) {
  std::array<std::uint8_t, kMaxReply> buf;
  FrameHeader h;
  h.magic = kTrackerMagic;
  h.seq = reply_seq_++;
  h.session_id = session_id_;
  const std::size_t n = encode_message(std::span(buf), h, msg);
  if (n == 0 || n > max_len || n > data.size()) return {TransferStatus::Stall, 0};
  std::memcpy(data.data(), buf.data(), n);
  return {TransferStatus::Ok, n};
}

TransferResult VirtualTracker::control(const usb::SetupPacket& setup, std::span<std::uint8_t> data) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  advance();
  if ((setup.request_type & usb::kTypeMask) == usb::kTypeStandard)
    return answer_string_descriptor(identity_, setup, data);
  if ((setup.request_type & usb::kTypeMask) != usb::kTypeVendor) return {TransferStatus::Stall, 0};
  const bool in = setup.is_in();
  switch (static_cast<TrackerRequest>(setup.request)) {
    case TrackerRequest::GetInfo:
      if (!in) break;
      return reply(data, setup.length, info_);
    case TrackerRequest::GetCalibration:
      if (!in) break;
      return reply(data, setup.length, config_.mount);
    case TrackerRequest::OpenSession: {
      const std::uint8_t major = static_cast<std::uint8_t>(setup.value >> 8);
      if (!in || major < info_.proto_min || major > info_.proto_max) break;
      do {
        session_id_ = next_random();
      } while (session_id_ == kNoSession);
      streaming_ = false;
      captured_.clear();
      ready_.clear();
      dropped_frames_ = tracking_losses_ = 0;
      next_status_us_ = clock_.now();
      SessionOpened s;
      s.session_id = session_id_;
      s.ver_major = major;
      return reply(data, setup.length, s);
    }
    case TrackerRequest::SetMode: {
      if (in || session_id_ == kNoSession) break;
      TrackerMode mode;
      const auto bytes = data.first(std::min<std::size_t>(setup.length, data.size()));
      if (decode_message(bytes, {kTrackerMagic, session_id_}, mode) != CodecError::Ok) break;
      if (mode.rate_hz != 90 && mode.rate_hz != 120) break;
      rate_hz_ = mode.rate_hz;
      streaming_ = true;
      stream_start_us_ = clock_.now();
      next_frame_index_ = 0;
      captured_.clear();
      ready_.clear();
      return {TransferStatus::Ok, bytes.size()};
    }
    case TrackerRequest::TimePing: {
      if (!in) break;
      TrackerTimePong pong;
      pong.device_time_us = clock_.now();
      return reply(data, setup.length, pong);
    }
  }
  return {TransferStatus::Stall, 0};
}

TransferResult VirtualTracker::transfer_out(std::uint8_t, std::span<const std::uint8_t>) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  return {TransferStatus::Stall, 0};  // the tracker has no OUT endpoint
}

std::uint64_t VirtualTracker::nominal_capture_us(std::uint64_t index) const noexcept {
  return stream_start_us_ + index * 1'000'000 / rate_hz_;
}

void VirtualTracker::advance() {
  if (!connected_ || !streaming_) return;
  const std::uint64_t now = clock_.now();
  // Capture every frame whose exposure has happened, then publish those whose processing is
  // done. Jitter moves the capture instant (and with it the publish instant).
  while (nominal_capture_us(next_frame_index_) <= now) {
    std::uint64_t capture_us = nominal_capture_us(next_frame_index_);
    if (jitter_us_ > 0) {
      const std::int64_t j = std::int64_t(next_random() % (2 * jitter_us_ + 1)) - jitter_us_;
      capture_us = std::uint64_t(std::max<std::int64_t>(std::int64_t(stream_start_us_),
                                                        std::int64_t(capture_us) + j));
    }
    capture(capture_us);
    ++next_frame_index_;
  }
  while (!captured_.empty() && captured_.front().publish_us <= now) {
    Pending p = captured_.front();
    captured_.pop_front();
    p.msg.tracking_frame_id = ++tracking_frame_id_;
    if (lose_next_ > 0) {  // published, then lost on the way to the host
      --lose_next_;
      ++totals_.frames_lost_in_transit;
      continue;
    }
    if (ready_.size() >= config_.queue_depth) {
      ready_.pop_front();
      ++dropped_frames_;
      ++totals_.frames_overflowed;
    }
    ready_.push_back(p);
  }
}

void VirtualTracker::capture(std::uint64_t capture_us) {
  ++totals_.frames_captured;
  Pending p;
  p.publish_us = capture_us + config_.latency_us;
  HandFrameMsg& m = p.msg;
  m.frame_id = next_frame_index_ + 1;
  m.capture_time_us = capture_us;
  m.publish_time_us = p.publish_us;
  m.framerate_chz = static_cast<std::uint16_t>(rate_hz_ * 100);
  m.coord_frame = 0;
  HandSnapshot snapshot;
  if (capture_us >= loss_until_us_ && source_) {
    source_->hands_at(double(capture_us - stream_start_us_) / 1e6, snapshot);
  }
  m.status_flags = capture_us < loss_until_us_ ? 0x2 : 0x1;  // bit0 tracking, bit1 lost
  assign_ids(snapshot, capture_us);
  m.n_hands = static_cast<std::uint8_t>(snapshot.count);
  for (int i = 0; i < snapshot.count; ++i) m.hands[static_cast<std::size_t>(i)] = snapshot.hands[static_cast<std::size_t>(i)];
  captured_.push_back(p);
}

// Keeps reported ids stable while a slot stays in view and gives it a fresh id after it was
// out of view (or tracking was lost), as a real tracker re-acquiring a hand does.
void VirtualTracker::assign_ids(HandSnapshot& snapshot, std::uint64_t capture_us) {
  for (Track& t : tracks_) t.seen = false;
  for (int i = 0; i < snapshot.count; ++i) {
    WireHand& h = snapshot.hands[static_cast<std::size_t>(i)];
    Track* track = nullptr;
    for (Track& t : tracks_)
      if (t.id != 0 && t.slot == h.hand_id) track = &t;
    if (track == nullptr) {
      for (Track& t : tracks_)
        if (t.id == 0 && track == nullptr) track = &t;
      if (track == nullptr) continue;
      track->slot = h.hand_id;
      track->id = next_hand_id_++;
      track->since_us = capture_us;
    }
    track->seen = true;
    h.hand_id = track->id;
    h.visible_time_ms = static_cast<std::uint32_t>((capture_us - track->since_us) / 1000);
  }
  for (Track& t : tracks_)
    if (!t.seen) t.id = 0;
}

void VirtualTracker::lose_tracking(std::uint64_t duration_us) noexcept {
  loss_until_us_ = clock_.now() + duration_us;
  ++tracking_losses_;
}

TransferResult VirtualTracker::transfer_in(std::uint8_t endpoint, std::span<std::uint8_t> data) {
  if (!connected_) return {TransferStatus::NoDevice, 0};
  const int which = endpoint == kTrackerEpFramesIn ? 0 : endpoint == kTrackerEpStatusIn ? 1 : -1;
  if (which < 0 || stalled_[static_cast<std::size_t>(which)]) return {TransferStatus::Stall, 0};
  advance();
  std::size_t n = 0;
  if (which == 0) {
    if (ready_.empty()) return {TransferStatus::Nak, 0};
    FrameHeader h;
    h.magic = kTrackerMagic;
    h.seq = frame_seq_++;
    h.session_id = session_id_;
    n = encode_message(data, h, ready_.front().msg);
    if (n == 0) return {TransferStatus::Overflow, 0};
    ready_.pop_front();
    ++totals_.frames_sent;
  } else {
    const std::uint64_t now = clock_.now();
    if (session_id_ == kNoSession || now < next_status_us_) return {TransferStatus::Nak, 0};
    next_status_us_ = now + kStatusPeriodUs;
    TrackerStatus s;
    s.state = streaming_ ? 1 : 0;
    s.rate_hz = rate_hz_;
    s.last_frame_id = next_frame_index_;
    s.dropped_frames = dropped_frames_;
    s.tracking_losses = tracking_losses_;
    s.temp_cdeg = 3100;
    const TransferResult r =
        reply(data, static_cast<std::uint16_t>(std::min<std::size_t>(data.size(), 0xFFFF)), s);
    if (r.status != TransferStatus::Ok) return r;
    n = r.bytes;
    ++totals_.statuses_sent;
  }
  if (which == 0 && corrupt_in_ > 0 && n > 0) {
    --corrupt_in_;
    data[n - 1] ^= 0xFF;
  }
  return {TransferStatus::Ok, n};
}

std::int64_t VirtualTracker::next_event_ns() const noexcept {
  const std::int64_t idle = clock_.host_clock().now_ns() + 10 * rt::kNsPerMs;
  if (!connected_ || session_id_ == kNoSession) return idle;
  std::uint64_t next = next_status_us_;
  if (streaming_) {
    next = std::min(next, captured_.empty() ? nominal_capture_us(next_frame_index_) + config_.latency_us
                                            : captured_.front().publish_us);
    if (!ready_.empty()) return clock_.host_clock().now_ns();
  }
  return clock_.host_ns_at(next);
}

void VirtualTracker::unplug() noexcept {
  connected_ = false;
  session_id_ = kNoSession;
  streaming_ = false;
  captured_.clear();
  ready_.clear();
}

void VirtualTracker::plug() noexcept {
  clock_ = DeviceClock(clock_.host_clock(), 1e6, config_.drift_ppm, config_.start_us);
  stalled_ = {};
  connected_ = true;
}

void VirtualTracker::stall_endpoint(std::uint8_t endpoint) noexcept {
  stalled_[endpoint == kTrackerEpFramesIn ? 0 : 1] = 1;
}

void VirtualTracker::clear_halt(std::uint8_t endpoint) noexcept {
  stalled_[endpoint == kTrackerEpFramesIn ? 0 : 1] = 0;
}

}  // namespace sonoflow::drivers::emulator
