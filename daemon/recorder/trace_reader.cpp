#include "daemon/recorder/trace_reader.hpp"

#include <cerrno>
#include <cstring>

#include "drivers/protocol/crc32c.hpp"

namespace sonoflow::daemon::trace {
namespace {

// The payload size a record type allows: exact for fixed structs, 0 where it varies.
std::uint32_t fixed_size(RecordType type) {
  switch (type) {
    case RecordType::HandFrame: return sizeof(HandFrame);
    case RecordType::Block: return sizeof(EmittedBlock);
    case RecordType::HapticTick: return sizeof(HapticTickRecord);
    case RecordType::HapticSettings: return sizeof(HapticSettingsRecord);
    case RecordType::ForceTick: return sizeof(ForceTickRecord);
    default: return 0;
  }
}

}  // namespace

std::unique_ptr<TraceReader> TraceReader::open(const std::string& path, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "cannot open trace " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  TraceHeader h;
  if (std::fread(&h, sizeof h, 1, f) != 1 || h.magic != kMagic) {
    error = path + ": not a sonoflow trace";
  } else if (h.version != kVersion) {
    error = path + ": trace version " + std::to_string(h.version) + ", this build reads " +
            std::to_string(kVersion);
  } else if (h.header_size != sizeof(TraceHeader) || h.hand_frame_size != sizeof(HandFrame) ||
             h.contact_sample_size != sizeof(ContactSample) || h.focal_block_size != sizeof(FocalBlock) ||
             h.emitted_block_size != sizeof(EmittedBlock) || h.haptic_tick_size != sizeof(HapticTickRecord) ||
             h.haptic_settings_size != sizeof(HapticSettingsRecord) ||
             h.force_tick_size != sizeof(ForceTickRecord) || h.force_servo_size != sizeof(ForceServoRecord)) {
    error = path + ": recorded with different data types (another sonoflow build)";
  } else {
    return std::unique_ptr<TraceReader>(new TraceReader(f, h));
  }
  std::fclose(f);
  return nullptr;
}

TraceReader::~TraceReader() { std::fclose(file_); }

bool TraceReader::fail(const Record& r, const std::string& why) {
  damaged_ = true;
  error_ = "damaged record at byte " + std::to_string(r.offset) + ": " + why;
  return false;
}

bool TraceReader::read_record(Record& out) {
  for (;;) {
    const long at = std::ftell(file_);
    out.offset = at < 0 ? 0 : static_cast<std::uint64_t>(at);
    if (std::fread(&out.header, sizeof out.header, 1, file_) != 1) {
      if (std::feof(file_) && std::ftell(file_) != at) return fail(out, "torn record header");
      return false;  // the clean end
    }
    if (out.header.size > (64u << 20)) return fail(out, "implausible size");
    const std::uint32_t stored = padded(out.header.size);
    out.payload.resize(stored);
    if (stored > 0 && std::fread(out.payload.data(), 1, stored, file_) != stored)
      return fail(out, "torn payload (the recording was cut off)");
    out.payload.resize(out.header.size);
    if (out.header.type == RecordType::Padding) continue;
    if (static_cast<std::uint32_t>(out.header.type) > kLastRecordType)
      return fail(out, "unknown record type " + std::to_string(static_cast<std::uint32_t>(out.header.type)));
    if (drivers::crc32c(out.payload) != out.header.crc) return fail(out, "CRC mismatch");
    const std::uint32_t expected = fixed_size(out.header.type);
    if (expected != 0 && out.header.size != expected)
      return fail(out, "payload of " + std::to_string(out.header.size) + " bytes, its type has " +
                           std::to_string(expected));
    return true;
  }
}

bool TraceReader::next(Record& out) {
  if (damaged_ || !read_record(out)) return false;
  if (out.header.sequence <= last_sequence_) return fail(out, "record sequence goes backwards");
  if (last_sequence_ != 0 && out.header.sequence > last_sequence_ + 1)
    gaps_ += out.header.sequence - last_sequence_ - 1;
  last_sequence_ = out.header.sequence;
  return true;
}

bool TraceReader::read_at(std::uint64_t offset, Record& out) {
  if (std::fseek(file_, static_cast<long>(offset), SEEK_SET) != 0) return false;
  return read_record(out);
}

bool TraceReader::decode(const Record& r, HandFrame& out) {
  if (r.header.type != RecordType::HandFrame || r.payload.size() != sizeof(HandFrame)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return true;
}

bool TraceReader::decode(const Record& r, ContactField& out) {
  if (r.header.type != RecordType::ContactField || r.payload.size() < kContactFieldHeaderSize) return false;
  std::uint32_t count = 0;
  std::memcpy(&count, r.payload.data() + 24, 4);
  if (count > kMaxContactSamples || r.payload.size() != kContactFieldHeaderSize + count * sizeof(ContactSample))
    return false;
  std::memcpy(&out.sequence, r.payload.data(), 8);
  std::memcpy(&out.hand_frame_id, r.payload.data() + 8, 8);
  std::memcpy(&out.time_ns, r.payload.data() + 16, 8);
  out.count = count;
  std::memcpy(&out.hand_count, r.payload.data() + 28, 1);
  if (out.hand_count > kMaxHands) return false;
  std::memcpy(out.hand_ids.data(), r.payload.data() + 32, 4 * kMaxHands);
  std::memcpy(out.samples.data(), r.payload.data() + kContactFieldHeaderSize, count * sizeof(ContactSample));
  return true;
}

bool TraceReader::decode(const Record& r, EmittedBlock& out) {
  if (r.header.type != RecordType::Block || r.payload.size() != sizeof(EmittedBlock)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return static_cast<std::uint32_t>(out.fate) <= static_cast<std::uint32_t>(BlockFate::Discarded);
}

bool TraceReader::decode(const Record& r, HapticTickRecord& out) {
  if (r.header.type != RecordType::HapticTick || r.payload.size() != sizeof(HapticTickRecord)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return true;
}

bool TraceReader::decode(const Record& r, HapticSettingsRecord& out) {
  if (r.header.type != RecordType::HapticSettings || r.payload.size() != sizeof(HapticSettingsRecord))
    return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return out.mode <= static_cast<std::uint8_t>(HapticMode::STM);
}

bool TraceReader::decode(const Record& r, ForceServoRecord& out) {
  if (r.header.type != RecordType::ForceServo || r.payload.size() != sizeof(ForceServoRecord)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return out.servo_rate_hz > 0 && out.frame_rate_hz > 0;
}

bool TraceReader::decode(const Record& r, ForceTickRecord& out) {
  if (r.header.type != RecordType::ForceTick || r.payload.size() != sizeof(ForceTickRecord)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return out.output <= 2;
}

}  // namespace sonoflow::daemon::trace
