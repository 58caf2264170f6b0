// ClockSync recovers a device clock's offset and drift from noisy TIME_PING exchanges.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "drivers/timesync/clock_sync.hpp"

namespace sonoflow::drivers {
namespace {

// A device counter at `rate_hz` with a crystal error, started at `offset`; a ping latches it
// somewhere inside the round trip (uniformly), and round trips are 60 us plus an exponential
// tail (mean 300 us), as USB control transfers on a loaded host look.
struct SimulatedDevice {
  double rate_hz = 40'000;
  double drift_ppm = 0;
  double offset = 7'654'321;
  double count_at(double host_ns) const { return offset + host_ns * rate_hz * (1 + drift_ppm * 1e-6) / 1e9; }
};

void ping(ClockSync& sync, const SimulatedDevice& dev, std::int64_t t_ns, std::mt19937& rng) {
  std::exponential_distribution<double> tail(1.0 / 300'000.0);
  std::uniform_real_distribution<double> where(0.0, 1.0);
  const double rtt = 60'000.0 + tail(rng);
  const double latch = double(t_ns) + where(rng) * rtt;
  sync.add(t_ns, t_ns + std::int64_t(rtt), std::uint64_t(std::floor(dev.count_at(latch))));
}

TEST(ClockSync, NoMapBeforeTheFirstExchange) {
  ClockSync sync;
  EXPECT_FALSE(sync.map().valid());
  EXPECT_FALSE(sync.add(100, 50, 1));  // receive before send: ignored
  EXPECT_FALSE(sync.map().valid());
}

TEST(ClockSync, ExactExchangesGiveAnExactMap) {
  ClockSync sync;
  SimulatedDevice dev;
  for (int i = 0; i < 10; ++i) {
    const std::int64_t t = 1'000'000'000 + i * 100'000'000LL;
    sync.add(t, t, std::uint64_t(dev.count_at(double(t))));
  }
  const ClockMap m = sync.map();
  ASSERT_TRUE(m.valid());
  for (std::int64_t t : {1'000'000'000LL, 1'500'000'000LL, 3'000'000'000LL})
    EXPECT_NEAR(m.device_at(t), dev.count_at(double(t)), 1.0);  // within one tick
  EXPECT_NEAR(double(m.host_at(m.device_at(2'000'000'000))), 2e9, 1.0);
}

// 20 s of 10 Hz pings with 60-1000+ us round trips, over 20 noise draws per drift: the rate
// within 6 ppm and the mapping (now, and 100 ms ahead where the stream thread schedules) within
// two 25 us ticks, i.e. 0.35 mm of a focus moving at 7 m/s.
TEST(ClockSync, RecoversOffsetAndDriftThroughNoisyRoundTrips) {
  for (double drift : {-80.0, 0.0, 45.0}) {
    for (unsigned seed = 1; seed <= 20; ++seed) {
      ClockSync sync;
      SimulatedDevice dev;
      dev.drift_ppm = drift;
      std::mt19937 rng(seed);
      std::int64_t t = 0;
      for (int i = 0; i < 200; ++i, t += 100'000'000) ping(sync, dev, t, rng);
      const ClockMap m = sync.map();
      const double fitted_ppm = (m.units_per_ns / (dev.rate_hz / 1e9) - 1.0) * 1e6;
      EXPECT_NEAR(fitted_ppm, drift, 6.0) << "drift " << drift << " seed " << seed;
      for (std::int64_t at : {t, t + 100'000'000}) {
        EXPECT_NEAR(m.device_at(at), dev.count_at(double(at)), 2.0)
            << "drift " << drift << " seed " << seed;
      }
    }
  }
}

TEST(ClockSync, NominalRateUntilTheSamplesSpanLongEnough) {
  ClockSync sync;
  SimulatedDevice dev;
  dev.drift_ppm = 100;
  std::mt19937 rng(1);
  for (int i = 0; i < 5; ++i) ping(sync, dev, i * 10'000'000LL, rng);  // 40 ms span only
  EXPECT_DOUBLE_EQ(sync.map().units_per_ns, 40'000.0 / 1e9);
}

TEST(ClockSync, OutlierRateIsClampedToTheCrystalTolerance) {
  ClockSync sync;
  // A device that jumped (e.g. replugged without reset()): a wildly wrong slope.
  for (int i = 0; i < 20; ++i) {
    const std::int64_t t = i * 100'000'000LL;
    sync.add(t, t, std::uint64_t(i < 10 ? 1'000 + i * 4'000 : 9'000'000 + i * 4'000));
  }
  const double ppm = (sync.map().units_per_ns / (40'000.0 / 1e9) - 1.0) * 1e6;
  EXPECT_LE(std::abs(ppm), 500.0 + 1e-6);
}

}  // namespace
}  // namespace sonoflow::drivers
