#include "drivers/tracker/tracker_driver.hpp"

#include <algorithm>
#include <cmath>

#include <Eigen/Geometry>

#include "drivers/protocol/array_messages.hpp"  // SessionOpened, shared by both devices
#include "drivers/protocol/message.hpp"

namespace sonoflow::drivers {
namespace {

using usb::TransferStatus;
constexpr std::size_t kControlBuffer = 1024;
constexpr std::size_t kFrameBuffer = 4096;  // 48 + 4 x 768 + 28 bytes, rounded to 512

Quatf multiply(const Quatf& a, const Quatf& b) noexcept {
  return {a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
          a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
          a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z};
}

Vec3f rotate(const float r[9], const float v[3]) noexcept {
  return {r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
          r[6] * v[0] + r[7] * v[1] + r[8] * v[2]};
}

}  // namespace

MountTransform MountTransform::from(const TrackerCalibration& c) {
  MountTransform m;
  std::copy(c.rotation.begin(), c.rotation.end(), m.r);
  for (int i = 0; i < 3; ++i) m.t_m[i] = c.translation_mm[i] * 1e-3f;
  Eigen::Matrix3f r;
  r << c.rotation[0], c.rotation[1], c.rotation[2], c.rotation[3], c.rotation[4], c.rotation[5],
      c.rotation[6], c.rotation[7], c.rotation[8];
  Eigen::Quaternionf q(r);
  q.normalize();
  m.q = {q.x(), q.y(), q.z(), q.w()};
  return m;
}

int convert_hand_frame(const HandFrameMsg& msg, const MountTransform& mount, const ClockMap& clock,
                       std::int64_t receive_time_ns, HandFrame& out) noexcept {
  const bool in_array_frame = msg.coord_frame == 1;
  const auto to_array = [&](const float p_mm[3]) -> Vec3f {
    if (in_array_frame) return {p_mm[0] * 1e-3f, p_mm[1] * 1e-3f, p_mm[2] * 1e-3f};
    const Vec3f v = rotate(mount.r, p_mm);
    return {v.x * 1e-3f + mount.t_m[0], v.y * 1e-3f + mount.t_m[1], v.z * 1e-3f + mount.t_m[2]};
  };
  const auto to_array_dir = [&](const float v_mm[3]) -> Vec3f {
    const Vec3f v = in_array_frame ? Vec3f{v_mm[0], v_mm[1], v_mm[2]} : rotate(mount.r, v_mm);
    return {v.x * 1e-3f, v.y * 1e-3f, v.z * 1e-3f};
  };
  const auto to_array_rot = [&](const float q[4]) -> Quatf {
    const Quatf t{q[0], q[1], q[2], q[3]};
    return in_array_frame ? t : multiply(mount.q, t);
  };

  out.frame_id = msg.tracking_frame_id;
  out.receive_time_ns = receive_time_ns;
  out.capture_time_ns =
      clock.valid() ? clock.host_at(double(msg.capture_time_us)) : receive_time_ns;
  // Keep the most confident hands when the tracker reports more than we carry. An insertion
  // sort of at most four: stable (equal confidences keep the wire's order), and GCC cannot
  // prove std::sort's 16-element insertion threshold unreachable here (-Warray-bounds under ASan).
  std::array<int, kMaxWireHands> order{0, 1, 2, 3};
  const int n = std::min<int>(msg.n_hands, kMaxWireHands);
  const auto confidence = [&](int k) {
    return msg.hands[static_cast<std::size_t>(order[static_cast<std::size_t>(k)])].confidence;
  };
  for (int i = 1; i < n; ++i)
    for (int k = i; k > 0 && confidence(k) > confidence(k - 1); --k)
      std::swap(order[static_cast<std::size_t>(k)], order[static_cast<std::size_t>(k - 1)]);
  out.hand_count = static_cast<std::uint8_t>(std::min(n, kMaxHands));
  for (int h = 0; h < out.hand_count; ++h) {
    const WireHand& w = msg.hands[static_cast<std::size_t>(order[static_cast<std::size_t>(h)])];
    HandPose& p = out.hands[static_cast<std::size_t>(h)];
    p.hand_id = w.hand_id;
    p.chirality = w.chirality == 0 ? Chirality::Left : Chirality::Right;
    p.confidence = w.confidence;
    p.pinch_strength = w.pinch_strength;
    p.grab_strength = w.grab_strength;
    p.palm_velocity = to_array_dir(w.palm_vel_mm_s);
    for (int j = 0; j < kHandJointCount; ++j) {
      const WireJoint& wj = w.joints[static_cast<std::size_t>(j)];
      JointPose& jp = p.joints[static_cast<std::size_t>(j)];
      jp.position = to_array(wj.pos_mm);
      jp.orientation = to_array_rot(wj.rot);
      jp.radius = float(wj.radius_10um) * 1e-5f;
      jp.valid = (wj.flags & kJointPosValid) != 0;
    }
  }
  return n - out.hand_count;
}

TrackerDriver::TrackerDriver(usb::Transport& transport, const rt::Clock& host_clock,
                             TrackerDriverConfig config)
    : transport_(transport),
      clock_(host_clock),
      config_(config),
      control_buf_(kControlBuffer),
      sync_(ClockSyncConfig{1e6}) {}

TrackerDriver::~TrackerDriver() { disconnect(); }

DriverError TrackerDriver::fail(TransferStatus status) noexcept {
  return status == TransferStatus::NoDevice ? DriverError::NoDevice : DriverError::Transfer;
}

template <class M>
DriverError TrackerDriver::request_in(TrackerRequest request, std::uint16_t value, M& out) {
  std::size_t got = 0;
  const TransferStatus s =
      transport_.control_in(static_cast<std::uint8_t>(request), value, 0, control_buf_, got);
  if (s != TransferStatus::Ok) return fail(s);
  const CodecError e = decode_message(std::span(control_buf_).first(got),
                                      {kTrackerMagic, session_.load(std::memory_order_relaxed)}, out);
  if (e != CodecError::Ok) {
    last_codec_error_ = e;
    return DriverError::Protocol;
  }
  return DriverError::Ok;
}

DriverError TrackerDriver::connect() {
  if (link_state() == LinkState::Connected || link_state() == LinkState::Streaming)
    return DriverError::Ok;
  if (config_.rate_hz != 90 && config_.rate_hz != 120) return DriverError::BadArgument;
  if (transport_.open() != TransferStatus::Ok) return DriverError::NoDevice;
  session_.store(kNoSession, std::memory_order_relaxed);
  if (auto e = request_in(TrackerRequest::GetInfo, 0, info_); e != DriverError::Ok) return e;
  const std::uint16_t rate_bit = config_.rate_hz == 90 ? 0x1 : 0x2;
  if (info_.proto_min > kProtocolMajor || info_.proto_max < kProtocolMajor ||
      (info_.rates_mask & rate_bit) == 0)
    return DriverError::Incompatible;
  if (auto e = request_in(TrackerRequest::GetCalibration, 0, device_calibration_);
      e != DriverError::Ok)
    return e;
  mount_ = MountTransform::from(config_.mount_override.value_or(device_calibration_));
  SessionOpened opened;
  const std::uint16_t version = std::uint16_t(kProtocolMajor << 8 | kProtocolMinor);
  if (auto e = request_in(TrackerRequest::OpenSession, version, opened); e != DriverError::Ok)
    return e;
  session_.store(opened.session_id, std::memory_order_release);
  sync_.reset();
  have_last_ = false;
  for (int i = 0; i < config_.initial_pings; ++i)
    if (auto e = sync_time(); e != DriverError::Ok) return e;
  was_connected_ = true;
  state_.store(LinkState::Connected, std::memory_order_release);
  return DriverError::Ok;
}

void TrackerDriver::set_mount(const TrackerCalibration& mount) noexcept {
  config_.mount_override = mount;
  mount_ = MountTransform::from(mount);
}

DriverError TrackerDriver::start_streaming() {
  if (link_state() == LinkState::Streaming) return DriverError::Ok;
  if (link_state() != LinkState::Connected) return DriverError::NotConnected;
  usb::StreamSetup setup;
  setup.handler = this;
  setup.in[0] = {kTrackerEpFramesIn, usb::EndpointType::Bulk, config_.frame_transfers, kFrameBuffer};
  setup.in[1] = {kTrackerEpStatusIn, usb::EndpointType::Interrupt, 1, 64};
  have_last_ = false;
  const TransferStatus s = transport_.start_streams(setup);
  if (s != TransferStatus::Ok) return fail(s);
  TrackerMode mode;
  mode.rate_hz = config_.rate_hz;
  FrameHeader h;
  h.magic = kTrackerMagic;
  h.seq = control_seq_++;
  h.session_id = session_.load(std::memory_order_relaxed);
  const std::size_t n = encode_message(std::span(control_buf_), h, mode);
  const TransferStatus m = transport_.control_out(static_cast<std::uint8_t>(TrackerRequest::SetMode),
                                                  0, 0, std::span(control_buf_).first(n));
  if (m != TransferStatus::Ok) {
    transport_.stop_streams();
    return fail(m);
  }
  want_streaming_ = true;
  state_.store(LinkState::Streaming, std::memory_order_release);
  return DriverError::Ok;
}

void TrackerDriver::stop_streaming() noexcept {
  want_streaming_ = false;
  if (link_state() != LinkState::Streaming) return;
  state_.store(LinkState::Connected, std::memory_order_release);
  transport_.stop_streams();
}

DriverError TrackerDriver::sync_time() {
  if (!transport_.is_open()) return DriverError::NoDevice;
  const std::int64_t send = clock_.now_ns();
  std::size_t got = 0;
  const TransferStatus s = transport_.control_in(
      static_cast<std::uint8_t>(TrackerRequest::TimePing), 0, 0, control_buf_, got);
  const std::int64_t receive = clock_.now_ns();
  if (s != TransferStatus::Ok) return fail(s);
  TrackerTimePong pong;
  const CodecError e = decode_message(std::span(control_buf_).first(got),
                                      {kTrackerMagic, session_.load(std::memory_order_relaxed)}, pong);
  if (e != CodecError::Ok) {
    last_codec_error_ = e;
    return DriverError::Protocol;
  }
  sync_.add(send, receive, pong.device_time_us);
  clock_map_.store(sync_.map());
  last_ping_ns_ = receive;
  pings_.fetch_add(1, std::memory_order_relaxed);
  return DriverError::Ok;
}

LinkState TrackerDriver::maintain() {
  LinkState state = link_state();
  if ((state == LinkState::Connected || state == LinkState::Streaming) && !transport_.is_open()) {
    // Lost with no callback, or before the stream's callback ran: counted once either way.
    if (mark_link_lost(state_)) counts_.lost.fetch_add(1, std::memory_order_relaxed);
    state = link_state();
  }
  if (state == LinkState::Lost) {
    transport_.close();
    session_.store(kNoSession, std::memory_order_release);
    state_.store(LinkState::Disconnected, std::memory_order_release);
    state = LinkState::Disconnected;
  }
  if (state == LinkState::Disconnected && was_connected_) {
    if (transport_.device_present() && restore() == DriverError::Ok)
      reconnects_.fetch_add(1, std::memory_order_relaxed);
    return link_state();
  }
  if ((state == LinkState::Connected || state == LinkState::Streaming) &&
      clock_.now_ns() - last_ping_ns_ >= config_.ping_period_ns)
    (void)sync_time();
  return link_state();
}

DriverError TrackerDriver::restore() {
  const bool streaming = want_streaming_;
  if (auto e = connect(); e != DriverError::Ok) {
    transport_.close();
    return e;
  }
  return streaming ? start_streaming() : DriverError::Ok;
}

void TrackerDriver::disconnect() noexcept {
  if (link_state() == LinkState::Streaming) {
    state_.store(LinkState::Connected, std::memory_order_release);
    transport_.stop_streams();
  }
  want_streaming_ = was_connected_ = false;
  transport_.close();
  session_.store(kNoSession, std::memory_order_release);
  state_.store(LinkState::Disconnected, std::memory_order_release);
}

bool TrackerDriver::status(TrackerStatus& out) const noexcept {
  return status_.generation() > 0 && status_.load(out);
}

ClockMap TrackerDriver::clock_map() const noexcept {
  ClockMap m;
  if (!clock_map_.load(m)) return ClockMap{};
  return m;
}

TrackerDriverCounters TrackerDriver::counters() const noexcept {
  TrackerDriverCounters c;
  c.frames = counts_.frames.load(std::memory_order_relaxed);
  c.frames_rejected = counts_.rejected.load(std::memory_order_relaxed);
  c.dropped_frames = counts_.dropped.load(std::memory_order_relaxed);
  c.camera_drops = counts_.camera_drops.load(std::memory_order_relaxed);
  c.ring_full = counts_.ring_full.load(std::memory_order_relaxed);
  c.hands_truncated = counts_.truncated.load(std::memory_order_relaxed);
  c.statuses = counts_.statuses.load(std::memory_order_relaxed);
  c.links_lost = counts_.lost.load(std::memory_order_relaxed);
  c.reconnects = reconnects_.load(std::memory_order_relaxed);
  c.time_pings = pings_.load(std::memory_order_relaxed);
  return c;
}

// ---------------------------------------------------------------------------------------------
// Transport thread

void TrackerDriver::in_done(std::uint8_t endpoint, TransferStatus status,
                            std::span<const std::uint8_t> data) noexcept {
  if (status != TransferStatus::Ok) return;
  if (endpoint == kTrackerEpFramesIn) {
    on_frame(data);
    return;
  }
  if (endpoint == kTrackerEpStatusIn) {
    TrackerStatus s;
    const CodecError e =
        decode_message(data, {kTrackerMagic, session_.load(std::memory_order_acquire)}, s);
    if (e == CodecError::Ok) {
      status_.store(s);
      counts_.statuses.fetch_add(1, std::memory_order_relaxed);
    } else {
      counts_.rejected.fetch_add(1, std::memory_order_relaxed);
      rejections_.count(e);
    }
  }
}

void TrackerDriver::on_frame(std::span<const std::uint8_t> data) noexcept {
  const std::int64_t received = clock_.now_ns();
  const CodecError e =
      decode_message(data, {kTrackerMagic, session_.load(std::memory_order_acquire)}, msg_scratch_);
  if (e != CodecError::Ok) {
    counts_.rejected.fetch_add(1, std::memory_order_relaxed);
    rejections_.count(e);
    return;
  }
  const HandFrameMsg& m = msg_scratch_;
  if (have_last_) {
    if (m.tracking_frame_id <= last_tracking_id_) {  // duplicate or out of order
      counts_.rejected.fetch_add(1, std::memory_order_relaxed);
      rejections_.count(CodecError::OutOfRange);
      return;
    }
    counts_.dropped.fetch_add(m.tracking_frame_id - last_tracking_id_ - 1, std::memory_order_relaxed);
    if (m.frame_id > last_camera_id_ + 1)
      counts_.camera_drops.fetch_add(m.frame_id - last_camera_id_ - 1, std::memory_order_relaxed);
  }
  have_last_ = true;
  last_tracking_id_ = m.tracking_frame_id;
  last_camera_id_ = m.frame_id;
  ClockMap map;
  if (!clock_map_.load(map)) map = ClockMap{};
  const int truncated = convert_hand_frame(m, mount_, map, received, frame_scratch_);
  if (truncated > 0) counts_.truncated.fetch_add(1, std::memory_order_relaxed);
  if (!frames_.try_push(frame_scratch_)) counts_.ring_full.fetch_add(1, std::memory_order_relaxed);
  latest_.write(frame_scratch_);
  counts_.frames.fetch_add(1, std::memory_order_relaxed);
}

void TrackerDriver::link_lost() noexcept {
  if (mark_link_lost(state_)) counts_.lost.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace sonoflow::drivers
