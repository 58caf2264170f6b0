#pragma once
// Reads a .sftrace file (trace_format.hpp) record by record. Strict: a trace of another format
// version or built with other data types is refused at open(); a record with a bad CRC, an
// unknown type, a size its type does not allow or a sequence number that goes backwards ends
// the reading there (damaged() and error() say where and why). A torn tail after a crash reads
// as damaged after the last complete record.
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
  std::uint64_t offset = 0;  // file offset of the record header (for read_at)
};

class TraceReader {
 public:
  static std::unique_ptr<TraceReader> open(const std::string& path, std::string& error);
  ~TraceReader();
  TraceReader(const TraceReader&) = delete;
  TraceReader& operator=(const TraceReader&) = delete;

  const TraceHeader& header() const noexcept { return header_; }
  // The next record; false at the end or at a damaged record (then damaged() says so).
  bool next(Record& out);
  // The record at `offset` (from an earlier Record::offset), with the same checks.
  bool read_at(std::uint64_t offset, Record& out);
  bool damaged() const noexcept { return damaged_; }
  const std::string& error() const noexcept { return error_; }
  // Records missing from the writer's own numbering (an edited or spliced file).
  std::uint64_t gaps() const noexcept { return gaps_; }

  static bool decode(const Record& r, HandFrame& out);
  static bool decode(const Record& r, ContactField& out);
  static bool decode(const Record& r, EmittedBlock& out);
  static bool decode(const Record& r, HapticTickRecord& out);
  static bool decode(const Record& r, HapticSettingsRecord& out);
  static bool decode(const Record& r, ForceTickRecord& out);
  static bool decode(const Record& r, ForceServoRecord& out);

 private:
  TraceReader(std::FILE* file, const TraceHeader& header) : file_(file), header_(header) {}
  bool read_record(Record& out);  // one record at the file position, checked
  bool fail(const Record& r, const std::string& why);

  std::FILE* file_;
  TraceHeader header_;
  std::uint64_t last_sequence_ = 0, gaps_ = 0;
  bool damaged_ = false;
  std::string error_;
};

}  // namespace sonoflow::daemon::trace
