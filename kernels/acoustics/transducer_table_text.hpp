#pragma once
// Reads and writes a transducer table as plain text, so a measured calibration can live in
// config/ next to the daemon's TOML and be checked into version control.
//
// One transducer per line, whitespace separated, SI units:
//   x y z  nx ny nz  phase_offset_rad  amplitude_gain
// Blank lines and lines starting with '#' are ignored. The fields are those of TransducerEntry,
// which is also what a device reports through GET_TRANSDUCER_TABLE.
#include <string>
#include <string_view>

#include "kernels/acoustics/array_geometry.hpp"

namespace sonoflow::acoustics {

struct TableParseResult {
  bool ok = false;
  int error_line = 0;   // 1-based line of the first error, 0 when ok
  std::string error;    // what was wrong with it
};

// Replaces table.entries with the parsed lines. On error, table is left empty.
TableParseResult parse_transducer_table(std::string_view text, TransducerTable& table);
std::string format_transducer_table(const TransducerTable& table);

}  // namespace sonoflow::acoustics
