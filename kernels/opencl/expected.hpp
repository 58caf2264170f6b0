#pragma once
// Result type of the OpenCL solvers' set-up calls (C++20 has no std::expected): either a value or
// an Error that names what went wrong. Set-up code returns these instead of throwing; per-frame
// steps never fail (they report trouble in their statistics). The particle fluid calls these
// FluidError / FluidErrc (kernels/fluid/expected.hpp), the grid smoke SmokeError.
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace sonoflow::opencl {

enum class Errc {
  NoDevice,        // no OpenCL platform/device matches the selector
  OpenClError,     // an OpenCL call failed (code in the message)
  BuildFailed,     // the kernels did not compile; the message holds the build log
  BadConfig,       // a configuration value is out of range or inconsistent
  BadMaterial,     // a material preset is malformed (unknown key, wrong type, out of range)
  BadScene,        // a scene description is malformed
  FileNotFound,
  CapacityExceeded,
};

struct Error {
  Errc code;
  std::string message;
};

template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}                   // NOLINT: implicit on purpose
  Expected(Error error) : v_(std::move(error)) {}               // NOLINT
  bool has_value() const { return v_.index() == 0; }
  explicit operator bool() const { return has_value(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

// For calls that return nothing on success.
using Status = std::optional<Error>;

}  // namespace sonoflow::opencl
