#include "daemon/recorder/force_replay.hpp"

#include <cstring>

#include "kernels/force_feedback/force_servo.hpp"

namespace sonoflow::daemon {
namespace {

constexpr std::uint8_t kRendering = 1;  // ForceTickRecord::output

bool same_bits(const Vec3f& a, const Vec3f& b) { return std::memcmp(&a, &b, sizeof a) == 0; }

}  // namespace

ForceReplayResult replay_force_ticks(const std::vector<ForceTickRecord>& ticks,
                                     const std::optional<ForceServoRecord>& servo_record) {
  ForceReplayResult result;
  result.ticks = ticks.size();
  if (ticks.empty()) return result;
  const auto skip_from = [&](std::size_t k, std::string why, bool expected) {
    result.not_compared = ticks.size() - k;
    result.why_not_compared = std::move(why);
    result.not_compared_expected = expected;
  };
  if (!servo_record) {
    skip_from(0, "no force-servo settings record (trace incomplete)", false);
    return result;
  }
  if (ticks.front().tick != 1) {
    skip_from(0, "the recording began mid-run (force tick " + std::to_string(ticks.front().tick) +
                     "): the servo's filter state from before it is not in the trace",
              true);
    return result;
  }
  const ForceServoRecord& s = *servo_record;
  force_feedback::ForceServo servo({s.frame_rate_hz, s.servo_rate_hz, s.force_scale, s.max_force_n, s.max_step_n});
  std::int64_t arrival_ns = -1;  // when the newest fluid force arrived
  for (std::size_t k = 0; k < ticks.size(); ++k) {
    const ForceTickRecord& t = ticks[k];
    if (t.tick != k + 1) {
      skip_from(k, "servo state unknown from force tick " + std::to_string(k + 1) +
                       ": tick records lost (trace ring full)",
                false);
      return result;
    }
    // The force stage's decision, from the tick's inputs (force_stage.cpp).
    if (t.force_frame != 0) arrival_ns = t.wake_ns;
    const bool fresh = arrival_ns >= 0 && t.wake_ns - arrival_ns <= s.force_stale_after_ns;
    const bool render = t.stylus_ok != 0 && fresh && t.stopping == 0;
    if (render) servo.on_frame_force({t.fluid_force.x, t.fluid_force.y, t.fluid_force.z});
    else servo.release();
    const Eigen::Vector3d out = servo.tick();
    const Vec3f commanded{static_cast<float>(out.x()), static_cast<float>(out.y()), static_cast<float>(out.z())};
    ++result.compared;
    if (same_bits(commanded, t.commanded) && render == (t.output == kRendering)) {
      ++result.identical;
    } else if (result.first_difference_tick == 0) {
      result.first_difference_tick = t.tick;
    }
  }
  return result;
}

}  // namespace sonoflow::daemon
