#pragma once
// The daemon's version, from the top-level CMake project() (SONOFLOW_VERSION is defined for
// every target that links sonoflow_daemon_config).
namespace sonoflow::daemon {
inline constexpr const char* kVersion = SONOFLOW_VERSION;
}  // namespace sonoflow::daemon
