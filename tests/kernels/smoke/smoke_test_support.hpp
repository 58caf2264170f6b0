#pragma once
// Helpers shared by the smoke tests: an engine on whatever OpenCL device is present (PoCL in
// CI) on small grids, stepping with or without a hand, and the tracked hand of the fluid tests
// (a flat right hand, palm down towards the array, fingers along +x).
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <numbers>

#include <Eigen/Geometry>

#include "kernels/smoke/smoke_engine.hpp"
#include "kernels/types/eigen_bridge.hpp"
#include "tests/kernels/fluid/hand_fixture.hpp"

namespace sonoflow::smoke::test {

using fluid::test::flat_hand;

inline std::unique_ptr<SmokeEngine> make_engine(const SmokeConfig& config, const SmokeScene& scene = {}) {
  auto e = SmokeEngine::create(config);
  if (!e) {
    ADD_FAILURE() << "SmokeEngine::create: " << e.error().message;
    return nullptr;
  }
  if (auto err = e.value()->load_scene(scene)) {
    ADD_FAILURE() << "load_scene: " << err->message;
    return nullptr;
  }
  return std::move(e.value());
}

// A cube of n^3 cells of `cell` metres over the array: x, y centred on it, z from the array up.
inline SmokeConfig cube(int n, float cell) {
  SmokeConfig c;
  c.cells = {n, n, n};
  c.cell_size = cell;
  c.origin = {-0.5f * cell * static_cast<float>(n), -0.5f * cell * static_cast<float>(n), 0.0f};
  return c;
}

// Steps `frames` frames with `hand` held still (or no hand); returns the last stats.
inline SmokeStats run(SmokeEngine& e, int frames, const HandFrame& hand = HandFrame{},
                      double frame_dt = 1.0 / 90.0) {
  static ContactField field;  // large; one per process is enough
  SmokeStats stats;
  for (int k = 0; k < frames; ++k) e.step_frame(hand, &hand, frame_dt, field, stats);
  return stats;
}

// The test hand turned to the daemon's emulated hand's pose: palm down, fingers along +y (the
// palm centre at `palm`, the wrist 6 cm towards -y). Joint frames turn with it.
inline HandFrame forward_hand(Vec3f palm, std::uint64_t frame_id, std::int64_t time_ns = 0) {
  HandFrame f = flat_hand({0, 0, 0}, frame_id, time_ns);
  const Eigen::Quaternionf turn(Eigen::AngleAxisf(0.5f * std::numbers::pi_v<float>, Eigen::Vector3f::UnitZ()));
  for (JointPose& j : f.hands[0].joints) {
    const Eigen::Vector3f p = turn * to_eigen(j.position) + to_eigen(palm);
    j.position = to_vec3f(p);
    j.orientation = to_quatf(turn * to_eigen(j.orientation));
  }
  return f;
}

// The scenes' scripted motions (drivers/emulator/hand_script.hpp), t in seconds.
enum class Motion { Hover, Sweep, Stir, Press };
inline Vec3f palm_at(Motion m, Vec3f centre, float amplitude, float period, double t) {
  const float u = static_cast<float>(t / period - std::floor(t / period));
  const float phase = 2 * std::numbers::pi_v<float> * u;
  switch (m) {
    case Motion::Hover: return centre;
    case Motion::Sweep: return {centre.x + amplitude * (u < 0.5f ? 4 * u - 1 : 3 - 4 * u), centre.y, centre.z};
    case Motion::Stir: return {centre.x + amplitude * std::cos(phase), centre.y + amplitude * std::sin(phase), centre.z};
    case Motion::Press: return {centre.x, centre.y, centre.z - amplitude * 0.5f * (1 - std::cos(phase))};
  }
  return centre;
}

}  // namespace sonoflow::smoke::test
