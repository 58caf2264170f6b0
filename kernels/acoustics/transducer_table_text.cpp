#include "kernels/acoustics/transducer_table_text.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace sonoflow::acoustics {
namespace {

constexpr int kFields = 8;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Splits `line` into up to kFields floats; returns the count read, or -1 on a malformed number.
int parse_numbers(std::string_view line, float (&values)[kFields], int& extra) {
  int count = 0;
  extra = 0;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    if (i >= line.size()) break;
    std::size_t end = i;
    while (end < line.size() && !is_space(line[end])) ++end;
    if (count == kFields) {
      ++extra;
    } else {
      float value = 0;
      const char* first = line.data() + i;
      const auto [ptr, ec] = std::from_chars(first, line.data() + end, value);
      if (ec != std::errc() || ptr != line.data() + end || !std::isfinite(value)) return -1;
      values[count++] = value;
    }
    i = end;
  }
  return count;
}

}  // namespace

TableParseResult parse_transducer_table(std::string_view text, TransducerTable& table) {
  table.entries.clear();
  TableParseResult result;
  int line_number = 0;
  auto fail = [&](std::string message) {
    table.entries.clear();
    result.error_line = line_number;
    result.error = std::move(message);
    return result;
  };
  while (!text.empty()) {
    ++line_number;
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    std::size_t start = 0;
    while (start < line.size() && is_space(line[start])) ++start;
    if (start == line.size() || line[start] == '#') continue;

    float v[kFields];
    int extra = 0;
    const int count = parse_numbers(line.substr(start), v, extra);
    if (count < 0) return fail("not a finite number");
    if (count != kFields || extra != 0) {
      return fail("expected 8 fields (x y z nx ny nz phase_offset_rad amplitude_gain), got " +
                  std::to_string(count + extra));
    }
    if (std::sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5]) < 1e-6f) {
      return fail("normal is zero");
    }
    if (v[7] < 0) return fail("amplitude_gain is negative");
    TransducerEntry e;
    e.position = {v[0], v[1], v[2]};
    e.normal = {v[3], v[4], v[5]};
    e.phase_offset = v[6];
    e.amplitude_gain = v[7];
    table.entries.push_back(e);
  }
  if (table.entries.empty()) {
    line_number = 0;
    return fail("no transducers");
  }
  result.ok = true;
  return result;
}

std::string format_transducer_table(const TransducerTable& table) {
  std::string out = "# x y z nx ny nz phase_offset_rad amplitude_gain (m, unit, rad, relative)\n";
  char line[256];
  for (const TransducerEntry& e : table.entries) {
    // %.9g round-trips a float exactly.
    std::snprintf(line, sizeof line, "%.9g %.9g %.9g %.9g %.9g %.9g %.9g %.9g\n", e.position.x,
                  e.position.y, e.position.z, e.normal.x, e.normal.y, e.normal.z,
                  e.phase_offset, e.amplitude_gain);
    out += line;
  }
  return out;
}

}  // namespace sonoflow::acoustics
