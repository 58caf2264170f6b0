#include "daemon/recorder/trace_reader.hpp"

#include <cstring>

#include "drivers/protocol/crc32c.hpp"

namespace sonoflow::daemon::trace {

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
  } else if (h.hand_frame_size != sizeof(HandFrame) || h.contact_sample_size != sizeof(ContactSample) ||
             h.focal_block_size != sizeof(FocalBlock)) {
    error = path + ": recorded with different data types (another sonoflow build)";
  } else {
    return std::unique_ptr<TraceReader>(new TraceReader(f, h));
  }
  std::fclose(f);
  return nullptr;
}

TraceReader::~TraceReader() { std::fclose(file_); }

bool TraceReader::next(Record& out) {
  for (;;) {
    if (std::fread(&out.header, sizeof out.header, 1, file_) != 1) return false;
    const std::uint32_t stored = padded(out.header.size);
    if (out.header.size > (64u << 20)) {
      damaged_ = true;
      return false;
    }
    out.payload.resize(stored);
    if (stored > 0 && std::fread(out.payload.data(), 1, stored, file_) != stored) {
      damaged_ = true;  // torn tail
      return false;
    }
    out.payload.resize(out.header.size);
    if (out.header.type == RecordType::Padding) continue;
    if (drivers::crc32c(out.payload) != out.header.crc) {
      damaged_ = true;
      return false;
    }
    if (last_sequence_ != 0 && out.header.sequence > last_sequence_ + 1)
      gaps_ += out.header.sequence - last_sequence_ - 1;
    last_sequence_ = out.header.sequence;
    return true;
  }
}

bool TraceReader::decode(const Record& r, HandFrame& out) {
  if (r.header.type != RecordType::HandFrame || r.payload.size() != sizeof(HandFrame)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return true;
}

bool TraceReader::decode(const Record& r, ContactField& out) {
  if (r.header.type != RecordType::ContactField || r.payload.size() < kContactFieldHeaderSize) return false;
  std::memcpy(&out.sequence, r.payload.data(), 8);
  std::memcpy(&out.hand_frame_id, r.payload.data() + 8, 8);
  std::memcpy(&out.time_ns, r.payload.data() + 16, 8);
  std::memcpy(&out.count, r.payload.data() + 24, 4);
  std::memcpy(&out.hand_count, r.payload.data() + 28, 1);
  std::memcpy(out.hand_ids.data(), r.payload.data() + 32, 4 * kMaxHands);
  if (out.count > kMaxContactSamples ||
      r.payload.size() != kContactFieldHeaderSize + out.count * sizeof(ContactSample))
    return false;
  std::memcpy(out.samples.data(), r.payload.data() + kContactFieldHeaderSize,
              out.count * sizeof(ContactSample));
  return true;
}

bool TraceReader::decode(const Record& r, EmittedBlock& out) {
  if (r.header.type != RecordType::Block || r.payload.size() != sizeof(EmittedBlock)) return false;
  std::memcpy(&out, r.payload.data(), sizeof out);
  return true;
}

}  // namespace sonoflow::daemon::trace
