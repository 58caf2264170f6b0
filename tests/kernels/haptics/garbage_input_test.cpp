// Bad input never crashes the renderers and never reaches the array as anything but finite
// positions and intensities in [0, 1]: fields and hand frames full of random bits, NaN and
// infinities, out-of-range indices and counts.
#include <cmath>
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "kernels/haptics/haptic_renderer.hpp"
#include "tests/kernels/haptics/plumes.hpp"

namespace sonoflow::haptics {
namespace {

float nasty(std::mt19937& rng) {
  static constexpr float kSpecial[] = {NAN, INFINITY, -INFINITY, 1e38f, -1e38f, 0.0f, -0.0f, 1e-40f};
  const unsigned pick = rng() % 16;
  if (pick < 8) return kSpecial[pick];
  return std::uniform_real_distribution<float>(-0.3f, 0.3f)(rng);
}

void corrupt(ContactField& field, std::mt19937& rng) {
  for (std::uint32_t i = 0; i < field.count; ++i) {
    ContactSample& s = field.samples[i];
    switch (rng() % 6) {
      case 0: s.position = {nasty(rng), nasty(rng), nasty(rng)}; break;
      case 1: s.normal = {nasty(rng), nasty(rng), nasty(rng)}; break;
      case 2: s.pressure = nasty(rng); break;
      case 3: s.joint = std::uint8_t(rng()); s.hand = std::uint8_t(rng()); break;
      case 4: s.offset = {nasty(rng), nasty(rng), nasty(rng)}; break;
      default: break;  // some samples stay good
    }
  }
  if (rng() % 4 == 0) field.count = std::uint32_t(rng());  // a count beyond the array
}

void corrupt(HandFrame& frame, std::mt19937& rng) {
  frame.hand_count = std::uint8_t(rng() % 4);  // may exceed kMaxHands
  for (HandPose& hand : frame.hands) {
    for (JointPose& j : hand.joints) {
      if (rng() % 3 == 0) j.position = {nasty(rng), nasty(rng), nasty(rng)};
      if (rng() % 3 == 0) j.orientation = {nasty(rng), nasty(rng), nasty(rng), nasty(rng)};
      if (rng() % 5 == 0) j.valid = !j.valid;
    }
  }
}

class Garbage : public ::testing::TestWithParam<HapticMode> {};

TEST_P(Garbage, OutputStaysFiniteAndBounded) {
  HapticConfig config;
  config.mode = GetParam();
  config.am.weight_map.enabled = true;
  auto renderer = std::make_unique<HapticRenderer>(config);
  std::mt19937 rng(1234);
  const HandFrame good_hand = test::flat_hand(0.2f);
  auto field = test::hand_field(good_hand, test::four_plumes);
  FocalBlock block;
  for (std::int64_t t = 0; t < 400; ++t) {
    HandFrame hand = good_hand;
    if (t % 3 != 0) corrupt(hand, rng);
    ContactField* fresh = nullptr;
    if (t % 11 == 0) {
      field = test::hand_field(good_hand, t % 22 ? test::one_plume : test::four_plumes, std::uint64_t(t));
      field->time_ns = t * 1'000'000;
      if (t % 33 != 0) corrupt(*field, rng);
      fresh = field.get();
    }
    renderer->render(fresh, hand, t * 1'000'000, block);
    for (const FocalSample& s : block.samples) {
      ASSERT_LE(s.count, kMaxFoci);
      for (int k = 0; k < s.count; ++k) {
        const Focus& f = s.foci[std::size_t(k)];
        ASSERT_TRUE(std::isfinite(f.position.x) && std::isfinite(f.position.y) &&
                    std::isfinite(f.position.z)) << "tick " << t;
        ASSERT_TRUE(std::isfinite(f.intensity)) << "tick " << t;
        ASSERT_GE(f.intensity, 0.0f);
        ASSERT_LE(f.intensity, 1.0f);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, Garbage, ::testing::Values(HapticMode::AM, HapticMode::STM),
                         [](const auto& param_info) {
                           return param_info.param == HapticMode::AM ? std::string("AM") : std::string("STM");
                         });

}  // namespace
}  // namespace sonoflow::haptics
