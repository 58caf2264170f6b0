#pragma once
// A small JSON writer for the daemon's machine-readable output (status, summary, control
// replies): objects and arrays with comma handling, C-locale numbers, escaped strings.
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace sonoflow::daemon {

// A tiny JSON writer: objects and arrays with comma handling, C-locale numbers.
class Json {
 public:
  Json& open(char bracket) {
    comma();
    out_ += bracket;
    first_ = true;
    return *this;
  }
  Json& close(char bracket) {
    out_ += bracket;
    first_ = false;
    return *this;
  }
  Json& key(std::string_view k) {
    comma();
    string(k);
    out_ += ':';
    first_ = true;  // the value follows without a comma
    return *this;
  }
  Json& value(std::int64_t v) { return raw(std::to_string(v)); }
  Json& value(std::uint64_t v) { return raw(std::to_string(v)); }
  Json& value(std::int32_t v) { return raw(std::to_string(v)); }
  Json& value(std::uint32_t v) { return raw(std::to_string(v)); }
  Json& value(double v) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    return raw(buf);
  }
  Json& value(bool v) { return raw(v ? "true" : "false"); }
  Json& value(std::string_view v) {
    comma();
    string(v);
    return *this;
  }
  template <typename T>
  Json& field(std::string_view k, T v) {
    key(k);
    return value(v);
  }
  std::string str() const { return out_; }

 private:
  void comma() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  Json& raw(const std::string& text) {
    comma();
    out_ += text;
    return *this;
  }
  void string(std::string_view v) {
    out_ += '"';
    for (char c : v) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += c;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out_ += buf;
      } else {
        out_ += c;
      }
    }
    out_ += '"';
  }
  std::string out_;
  bool first_ = true;
};

}  // namespace sonoflow::daemon
