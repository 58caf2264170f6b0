#pragma once
// Reads a .sftrace file (trace_format.hpp) record by record, checking each CRC.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "daemon/pipeline/links.hpp"
#include "daemon/recorder/trace_format.hpp"

namespace sonoflow::daemon::trace {

struct Record {
  RecordHeader header;
  std::vector<std::uint8_t> payload;
};

class TraceReader {
 public:
  static std::unique_ptr<TraceReader> open(const std::string& path, std::string& error);
  ~TraceReader();

  const TraceHeader& header() const noexcept { return header_; }
  // The next record; false at the end or at a damaged record (then damaged() says so).
  bool next(Record& out);
  bool damaged() const noexcept { return damaged_; }
  std::uint64_t gaps() const noexcept { return gaps_; }

  static bool decode(const Record& r, HandFrame& out);
  static bool decode(const Record& r, ContactField& out);
  static bool decode(const Record& r, EmittedBlock& out);

 private:
  TraceReader(std::FILE* file, const TraceHeader& header) : file_(file), header_(header) {}
  std::FILE* file_;
  TraceHeader header_;
  std::uint64_t last_sequence_ = 0, gaps_ = 0;
  bool damaged_ = false;
};

}  // namespace sonoflow::daemon::trace
