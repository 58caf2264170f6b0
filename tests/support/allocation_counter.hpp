#pragma once
// Counts heap allocations made by the calling thread, through a replaced global operator new
// (tests/support/allocation_counter.cpp). Link the `sonoflow_test_alloc_counter` target into a
// test to use it:
//
//   AllocationScope scope;
//   ...hot path...
//   EXPECT_EQ(scope.allocations(), 0u);
#include <cstdint>

namespace sonoflow::test {

std::uint64_t thread_allocation_count() noexcept;

class AllocationScope {
 public:
  AllocationScope() noexcept : start_(thread_allocation_count()) {}
  std::uint64_t allocations() const noexcept { return thread_allocation_count() - start_; }

 private:
  std::uint64_t start_;
};

}  // namespace sonoflow::test
