#pragma once
// VirtualArray: the firmware of the phased array (PROTOCOL.md section 3), behind the UsbDevice
// interface.
//
// The device counts its own 40 kHz tick (DeviceClock: offset and crystal drift the host must
// recover), keeps a FIFO of timestamped samples, and plays each sample when the tick it is
// stamped with arrives. When the FIFO runs dry while emitting it counts an underrun, holds the
// last sample for the watchdog time, then ramps it to silence over the fade time; a sample that
// arrives in the meantime resumes playback at once. Every emitted sample passes the intensity
// cap, and an EmissionObserver sees it (foci or per-transducer phase/amplitude), so tests can
// check timing, order and the acoustic field of what actually left the array.
//
// Block rules: a block stamped with ticks already past has those samples dropped and counts as
// late; a block starting at or before queued samples replaces them from its start tick on (the
// host may re-plan); samples that do not fit the FIFO are dropped as overruns. Stream messages
// are accepted only while armed, in the configured mode, with the current session id.
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "drivers/emulator/device_clock.hpp"
#include "drivers/emulator/usb_device.hpp"
#include "drivers/protocol/array_messages.hpp"
#include "drivers/protocol/frame.hpp"

namespace sonoflow::drivers::emulator {

struct VirtualArrayConfig {
  std::string serial = "SFA-EMU-0001";
  std::uint32_t fifo_depth = 800;     // samples: 40 ms at 20 kHz
  std::uint32_t fw_version = 0x000100;
  double drift_ppm = 0;               // crystal error of the 40 kHz tick
  std::uint64_t start_tick = 1'000'000;  // tick count at power-on
  std::uint32_t seed = 1;             // session ids and calibration values
  // Transducer table; empty = 16x16 grid at 10.47 mm pitch with small per-element phase and
  // amplitude calibration values derived from `seed`.
  std::vector<TransducerEntry> table;
};

enum class EmissionKind : std::uint8_t {
  Played,   // a FIFO sample at its own tick
  Held,     // the last sample repeated after an underrun, within the watchdog time
  Fading,   // the last sample ramped down after the watchdog expired
};

struct EmittedSample {
  std::uint64_t tick = 0;
  EmissionKind kind = EmissionKind::Played;
  StreamMode mode = StreamMode::Foci;
  float gain = 1;               // fade factor applied (1 while playing or holding)
  std::uint32_t block_seq = 0;  // header seq of the block that delivered the sample
  std::uint16_t index_in_block = 0;
  std::uint8_t n_foci = 0;                      // FOCI mode
  std::array<WireFocus, kMaxWireFoci> foci{};   // after cap and gain
  std::span<const std::uint8_t> drive;          // DRIVE mode: {phase, amplitude} x 256, after
                                                // cap and gain; valid during the callback only
};

class EmissionObserver {
 public:
  virtual ~EmissionObserver() = default;
  virtual void on_emit(const EmittedSample& sample) = 0;
};

// Totals since power-on (the STATUS counters reset with each session; these do not).
struct ArrayEmulatorCounters {
  std::uint64_t blocks_accepted = 0;
  std::uint64_t samples_played = 0;
  std::uint64_t samples_held = 0;
  std::uint64_t samples_faded = 0;
  std::uint64_t resumes = 0;       // playback restarted from Holding or Fading
  std::uint64_t fades_to_silence = 0;
  std::uint64_t statuses_sent = 0;
};

class VirtualArray final : public UsbDevice {
 public:
  static constexpr std::uint32_t kStatusPeriodTicks = kArrayTickHz / 1000;  // 1 kHz

  VirtualArray(const rt::Clock& clock, VirtualArrayConfig config = {});

  // UsbDevice
  const DeviceIdentity& identity() const noexcept override { return identity_; }
  TransferResult control(const usb::SetupPacket& setup, std::span<std::uint8_t> data) override;
  TransferResult transfer_out(std::uint8_t endpoint, std::span<const std::uint8_t> data) override;
  TransferResult transfer_in(std::uint8_t endpoint, std::span<std::uint8_t> data) override;
  void advance() override;
  std::int64_t next_event_ns() const noexcept override;

  // Observation (tests). The observer must outlive the device or be reset to nullptr.
  void set_observer(EmissionObserver* observer) noexcept { observer_ = observer; }
  ArrayStatus status() const noexcept;
  const ArrayEmulatorCounters& counters() const noexcept { return totals_; }
  const ArrayInfo& info() const noexcept { return info_; }
  const std::vector<TransducerEntry>& table() const noexcept { return table_; }
  std::uint64_t device_tick() const noexcept { return clock_.now(); }
  const DeviceClock& device_clock() const noexcept { return clock_; }
  std::uint32_t session_id() const noexcept { return session_id_; }
  const StreamConfig& stream_config() const noexcept { return config_stream_; }

  // Fault injection.
  void unplug() noexcept;           // gone from the bus: every call fails with NoDevice, silent
  void plug() noexcept;             // back: a fresh power-on (new tick origin, no session)
  bool connected() const noexcept override { return connected_; }
  void stall_endpoint(std::uint8_t endpoint) noexcept;  // until the host clears the halt
  void clear_halt(std::uint8_t endpoint) noexcept override;
  void corrupt_next_in(int messages) noexcept { corrupt_in_ = messages; }  // flip a CRC byte

 private:
  struct QueuedSample {
    std::uint64_t tick = 0;
    std::uint32_t block_seq = 0;
    std::uint16_t index_in_block = 0;
    std::uint8_t n_foci = 0;
    std::array<WireFocus, kMaxWireFoci> foci{};
  };

  TransferResult reply(std::span<std::uint8_t> data, std::uint16_t max_len, const auto& msg);
  void open_session();
  void reset_stream() noexcept;
  void accept_stream_message(std::span<const std::uint8_t> data);
  void enqueue_foci(const FociBlock& block, std::uint32_t seq);
  void enqueue_drive(const DriveBlock& block, std::uint32_t seq);
  // Which samples of an arriving block are queued: from `first` (the earlier ones are late),
  // `count` of them (the rest overran the FIFO). Counts the block, its lateness and overruns,
  // and drops queued samples the block overlaps (a newer block replaces the queue's tail).
  struct Admitted {
    int first = 0;
    std::size_t count = 0;
  };
  Admitted admit_block(std::uint64_t start_tick, std::uint8_t tick_div, int n_samples) noexcept;
  QueuedSample& slot(std::size_t i) noexcept { return fifo_[(fifo_head_ + i) % fifo_.size()]; }
  std::uint8_t* drive_slot(std::size_t i) noexcept;
  void run_until(std::uint64_t now_tick);
  void play_head();
  void emit_held(std::uint64_t tick, EmissionKind kind, float gain);
  void emit(const QueuedSample& s, const std::uint8_t* drive, std::uint64_t tick,
            EmissionKind kind, float gain);
  bool stalled(std::uint8_t endpoint) const noexcept;
  std::uint32_t next_random() noexcept;

  DeviceClock clock_;
  VirtualArrayConfig config_;
  DeviceIdentity identity_;
  ArrayInfo info_;
  std::vector<TransducerEntry> table_;
  EmissionObserver* observer_ = nullptr;

  bool connected_ = true;
  std::uint32_t rng_;
  std::uint32_t session_id_ = kNoSession;
  std::uint32_t reply_seq_ = 0;
  bool configured_ = false;
  StreamConfig config_stream_;
  ArrayState state_ = ArrayState::Idle;

  // FIFO: a ring of fifo_depth samples (DRIVE payloads in a parallel byte ring).
  std::vector<QueuedSample> fifo_;
  std::vector<std::uint8_t> fifo_drive_;
  std::size_t fifo_head_ = 0, fifo_size_ = 0;

  std::uint64_t processed_tick_ = 0;  // every slot up to here has been handled
  std::uint64_t last_slot_tick_ = 0;  // tick of the last emitted (or held) slot
  std::uint64_t hold_start_tick_ = 0, fade_start_tick_ = 0;
  QueuedSample held_;
  std::vector<std::uint8_t> held_drive_;
  std::vector<std::uint8_t> emit_drive_;  // scratch: capped and faded DRIVE sample

  bool have_seq_ = false;
  std::uint32_t last_seq_ = 0;
  ArrayStatus counters_;  // the STATUS counters of this session
  std::uint64_t next_status_tick_ = 0;
  float heat_cdeg_ = 0;   // temperature rise of the transducer plate
  ArrayEmulatorCounters totals_;
  std::array<std::uint8_t, 2> stalled_{};  // [0] EP 0x01, [1] EP 0x82
  int corrupt_in_ = 0;

  FociBlock foci_scratch_;
  DriveBlock drive_scratch_;
};

}  // namespace sonoflow::drivers::emulator
