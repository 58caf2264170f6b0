#include "rt/mailbox.hpp"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>

#include "tests/rt/stress_scale.hpp"

namespace sonoflow::rt {
namespace {

// A payload whose words all derive from its sequence number: any mix of two writes shows.
struct Payload {
  std::uint64_t seq = 0;
  std::array<std::uint64_t, 62> words{};
  std::uint64_t checksum = 0;

  static Payload make(std::uint64_t seq) {
    Payload p;
    p.seq = seq;
    std::uint64_t sum = seq;
    for (std::size_t i = 0; i < p.words.size(); ++i) {
      p.words[i] = seq * 0x9E3779B97F4A7C15ull + i;
      sum ^= p.words[i];
    }
    p.checksum = sum;
    return p;
  }
  bool intact() const {
    std::uint64_t sum = seq;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i] != seq * 0x9E3779B97F4A7C15ull + i) return false;
      sum ^= words[i];
    }
    return sum == checksum;
  }
};

TEST(Mailbox, ReaderSeesNothingUntilPublishedThenOnlyTheNewest) {
  Mailbox<Payload> box;
  Payload out;
  EXPECT_FALSE(box.try_read(out));
  box.write(Payload::make(1));
  box.write(Payload::make(2));
  box.write(Payload::make(3));
  ASSERT_TRUE(box.try_read(out));
  EXPECT_EQ(out.seq, 3u);
  EXPECT_FALSE(box.try_read(out)) << "nothing new after the newest was taken";
}

TEST(Mailbox, InPlaceWriteSlotPublishes) {
  Mailbox<Payload> box;
  box.write_slot() = Payload::make(7);
  box.publish();
  ASSERT_TRUE(box.fetch());
  EXPECT_EQ(box.read_slot().seq, 7u);
  EXPECT_TRUE(box.read_slot().intact());
}

TEST(MailboxStress, ReaderHammeringFastWriterNeverSeesATornOrOlderValue) {
  constexpr std::uint64_t kWrites = 2'000'000 / test::kStressScale;
  auto box = std::make_unique<Mailbox<Payload>>();
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (std::uint64_t s = 1; s <= kWrites; ++s) box->write(Payload::make(s));
    done.store(true, std::memory_order_release);
  });
  std::uint64_t torn = 0, backwards = 0, last = 0, reads = 0;
  for (;;) {
    const bool finished = done.load(std::memory_order_acquire);
    if (box->fetch()) {
      const Payload& p = box->read_slot();
      if (!p.intact()) ++torn;
      if (p.seq < last) ++backwards;
      last = p.seq;
      ++reads;
    } else if (finished) {
      break;  // the writer's last publish happened before `done`, so nothing is left
    }
  }
  writer.join();
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(backwards, 0u);
  EXPECT_EQ(last, kWrites) << "the final value must reach the reader";
  EXPECT_GT(reads, 0u);
}

// A reader that holds its slot and never comes back must not slow or corrupt the writer.
TEST(MailboxStress, StalledReaderNeitherBlocksWriterNorLosesItsOwnSlot) {
  auto box = std::make_unique<Mailbox<Payload>>();
  box->write(Payload::make(1));
  ASSERT_TRUE(box->fetch());
  const Payload* held = &box->read_slot();
  constexpr std::uint64_t kWrites = 1'000'000 / test::kStressScale;
  std::thread writer([&] {
    for (std::uint64_t s = 2; s <= kWrites; ++s) box->write(Payload::make(s));
  });
  writer.join();  // completes although the reader did nothing meanwhile
  EXPECT_EQ(held->seq, 1u) << "the writer wrote into the slot the reader owns";
  EXPECT_TRUE(held->intact());
  ASSERT_TRUE(box->fetch());
  EXPECT_EQ(box->read_slot().seq, kWrites);
}

}  // namespace
}  // namespace sonoflow::rt
