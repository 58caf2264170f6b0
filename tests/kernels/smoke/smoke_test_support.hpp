#pragma once
// Helpers shared by the smoke tests: an engine on whatever OpenCL device is present (PoCL in
// CI) on small grids, stepping with or without a hand, and the tracked hand of the fluid tests
// (a flat right hand, palm down towards the array, fingers along +x).
#include <gtest/gtest.h>

#include <memory>

#include "kernels/smoke/smoke_engine.hpp"
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

}  // namespace sonoflow::smoke::test
