#pragma once
// Stress tests move fewer items under ThreadSanitizer, which slows atomics ~10-50x.
#include <cstdint>

namespace sonoflow::test {
#if defined(__SANITIZE_THREAD__)
inline constexpr std::uint64_t kStressScale = 50;
#else
inline constexpr std::uint64_t kStressScale = 1;
#endif
}  // namespace sonoflow::test
