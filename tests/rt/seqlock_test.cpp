#include "rt/seqlock.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <thread>

#include "tests/rt/stress_scale.hpp"

namespace sonoflow::rt {
namespace {

struct Section {
  std::uint64_t seq = 0;
  std::array<std::uint32_t, 29> values{};
  std::uint32_t checksum = 0;

  static Section make(std::uint64_t seq) {
    Section s;
    s.seq = seq;
    std::uint32_t sum = static_cast<std::uint32_t>(seq);
    for (std::size_t i = 0; i < s.values.size(); ++i) {
      s.values[i] = static_cast<std::uint32_t>(seq * 2654435761u + i);
      sum = sum * 31 + s.values[i];
    }
    s.checksum = sum;
    return s;
  }
  bool intact() const { return make(seq).values == values && make(seq).checksum == checksum; }
};

TEST(SeqLock, LoadReturnsWhatWasStored) {
  SeqLock<Section> lock;
  lock.store(Section::make(41));
  Section out;
  ASSERT_TRUE(lock.load(out));
  EXPECT_EQ(out.seq, 41u);
  EXPECT_TRUE(out.intact());
  EXPECT_EQ(lock.generation(), 1u);
}

TEST(SeqLock, HoldsNoPointersAndOnlyLockFreeAtomics) {
  // What makes it safe to place in a file mapped by other processes.
  EXPECT_TRUE(std::is_standard_layout_v<SeqLock<Section>>);
  EXPECT_TRUE(std::atomic<std::uint64_t>::is_always_lock_free);
  EXPECT_GE(sizeof(SeqLock<Section>), sizeof(Section) + 8);
}

TEST(SeqLockStress, ReaderHammeringFastWriterNeverSeesATornValue) {
  constexpr std::uint64_t kWrites = 2'000'000 / test::kStressScale;
  auto lock = std::make_unique<SeqLock<Section>>();
  lock->store(Section::make(0));
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t s = 1; s <= kWrites; ++s) {
      lock->store(Section::make(s));
      // On a loaded 2-core machine (or under TSan) a writer that never pauses can keep every
      // read attempt overlapping a store; an occasional yield lets some reads complete.
      if (s % 256 == 0) std::this_thread::yield();
    }
    done.store(true, std::memory_order_release);
  });
  std::uint64_t torn = 0, backwards = 0, consistent = 0, last = 0;
  Section out;
  while (!done.load(std::memory_order_acquire)) {
    if (lock->try_load(out)) {
      if (!out.intact()) ++torn;
      if (out.seq < last) ++backwards;
      last = out.seq;
      ++consistent;
    }
  }
  writer.join();
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(backwards, 0u);
  EXPECT_GT(consistent, 0u);
  ASSERT_TRUE(lock->load(out));
  EXPECT_EQ(out.seq, kWrites);
}

TEST(SeqLockStress, WriterProgressDoesNotDependOnReaders) {
  // Readers only read the sequence: a reader parked forever cannot hold the writer. The writer
  // completes every store while a reader thread sits blocked mid-run.
  auto lock = std::make_unique<SeqLock<Section>>();
  std::atomic<bool> release_reader{false};
  std::thread stalled_reader([&] {
    Section s;
    (void)lock->try_load(s);
    while (!release_reader.load(std::memory_order_acquire)) std::this_thread::yield();
  });
  constexpr std::uint64_t kWrites = 500'000 / test::kStressScale;
  for (std::uint64_t s = 1; s <= kWrites; ++s) lock->store(Section::make(s));
  EXPECT_EQ(lock->generation(), kWrites);
  release_reader.store(true, std::memory_order_release);
  stalled_reader.join();
}

#if !defined(__SANITIZE_THREAD__)  // TSan does not follow memory shared across fork
TEST(SeqLockStress, WorksAcrossProcessesInSharedMemory) {
  void* mem = mmap(nullptr, sizeof(SeqLock<Section>), PROT_READ | PROT_WRITE,
                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  auto* lock = new (mem) SeqLock<Section>();
  lock->store(Section::make(0));
  constexpr std::uint64_t kWrites = 1'000'000;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (std::uint64_t s = 1; s <= kWrites; ++s) lock->store(Section::make(s));
    _exit(0);
  }
  std::uint64_t torn = 0, last = 0;
  Section out;
  while (last < kWrites) {
    if (lock->try_load(out)) {
      if (!out.intact()) ++torn;
      last = out.seq;
    }
  }
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_EQ(torn, 0u);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  munmap(mem, sizeof(SeqLock<Section>));
}
#endif

}  // namespace
}  // namespace sonoflow::rt
