#include "drivers/timesync/clock_sync.hpp"

#include <algorithm>

namespace sonoflow::drivers {

bool ClockSync::add(std::int64_t host_send_ns, std::int64_t host_receive_ns,
                    std::uint64_t device_count) noexcept {
  if (host_receive_ns < host_send_ns) return false;
  Sample s;
  s.rtt_ns = host_receive_ns - host_send_ns;
  s.host_mid_ns = host_send_ns + s.rtt_ns / 2;
  // A latched counter value n means the true count lay in [n, n + 1): centre it.
  s.device = static_cast<double>(device_count) + 0.5;
  window_[next_] = s;
  next_ = (next_ + 1) % kWindow;
  count_ = std::min(count_ + 1, kWindow);
  return true;
}

ClockMap ClockSync::map() const noexcept {
  ClockMap m;
  if (count_ == 0) return m;
  // Keep the exchanges with the shortest round trips.
  std::array<Sample, kWindow> kept;
  std::copy_n(window_.begin(), count_, kept.begin());
  const std::size_t n_keep =
      std::max<std::size_t>(1, static_cast<std::size_t>(double(count_) * config_.keep_fraction));
  std::nth_element(kept.begin(), kept.begin() + (n_keep - 1), kept.begin() + count_,
                   [](const Sample& a, const Sample& b) { return a.rtt_ns < b.rtt_ns; });
  const auto first = kept.begin();
  const auto last = kept.begin() + n_keep;
  // Reference: the newest kept sample's host time; work in offsets from it (keeps doubles exact).
  const std::int64_t ref = std::max_element(first, last, [](const Sample& a, const Sample& b) {
                             return a.host_mid_ns < b.host_mid_ns;
                           })->host_mid_ns;
  double mean_h = 0, mean_d = 0;
  std::int64_t h_min = ref, h_max = ref;
  for (auto it = first; it != last; ++it) {
    mean_h += static_cast<double>(it->host_mid_ns - ref);
    mean_d += it->device;
    h_min = std::min(h_min, it->host_mid_ns);
    h_max = std::max(h_max, it->host_mid_ns);
  }
  mean_h /= double(n_keep);
  mean_d /= double(n_keep);
  const double nominal = config_.nominal_units_per_s / 1e9;
  double rate = nominal;
  if (n_keep >= 2 && h_max - h_min >= config_.min_drift_span_ns) {
    double shh = 0, shd = 0;
    for (auto it = first; it != last; ++it) {
      const double dh = static_cast<double>(it->host_mid_ns - ref) - mean_h;
      shh += dh * dh;
      shd += dh * (it->device - mean_d);
    }
    if (shh > 0) rate = shd / shh;
    const double limit = nominal * config_.max_drift_ppm * 1e-6;
    rate = std::clamp(rate, nominal - limit, nominal + limit);
  }
  m.host_ref_ns = ref;
  m.units_per_ns = rate;
  m.device_ref = mean_d - rate * mean_h;  // the fitted line evaluated at the reference
  double worst = 0;
  for (auto it = first; it != last; ++it)
    worst = std::max(worst, std::abs(it->device - m.device_at(it->host_mid_ns)));
  residual_ = worst;
  return m;
}

}  // namespace sonoflow::drivers
