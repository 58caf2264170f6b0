// Physics of the single-focus field: where the focus lands, how wide it is, and the model's
// constants. Oracles: seed000-haptics.md sections 1.3, 1.4 and 6 (items 1-3, 7, 8).
#include <cmath>
#include <numbers>

#include <Eigen/Geometry>
#include <gtest/gtest.h>

#include "kernels/acoustics/field.hpp"
#include "kernels/acoustics/focus_solver.hpp"
#include "kernels/acoustics/transducer_table_text.hpp"

namespace sonoflow::acoustics {
namespace {

FieldModel default_field() { return FieldModel(ArrayGeometry::grid({}), TransducerModel()); }

// Brings a sampled peak to sub-step resolution with a parabola through three samples.
float parabolic_offset(float left, float centre, float right) {
  const float denom = left - 2 * centre + right;
  return denom < 0 ? 0.5f * (left - right) / denom : 0.0f;
}

// Position of the |p| maximum on a grid in the plane through `centre` spanned by u, v.
Eigen::Vector3f peak_in_plane(const FieldModel& field, const Drive& q, const Eigen::Vector3f& centre,
                              const Eigen::Vector3f& u, const Eigen::Vector3f& v,
                              float half_extent, float step) {
  const int n = static_cast<int>(std::round(half_extent / step));
  float best = -1;
  int best_a = 0, best_b = 0;
  auto at = [&](int a, int b) {
    return std::abs(field.pressure(centre + float(a) * step * u + float(b) * step * v, q));
  };
  for (int a = -n; a <= n; ++a) {
    for (int b = -n; b <= n; ++b) {
      const float value = at(a, b);
      if (value > best) { best = value; best_a = a; best_b = b; }
    }
  }
  const float da = parabolic_offset(at(best_a - 1, best_b), best, at(best_a + 1, best_b));
  const float db = parabolic_offset(at(best_a, best_b - 1), best, at(best_a, best_b + 1));
  return centre + (float(best_a) + da) * step * u + (float(best_b) + db) * step * v;
}

TEST(AcousticField, SingleFocusPeakLiesOnTargetLaterallyAndNearItAxially) {
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  for (float z : {0.10f, 0.15f, 0.20f, 0.25f}) {
    SCOPED_TRACE(z);
    const Eigen::Vector3f target(0.004f, -0.003f, z);
    focus_drive(field, target, q);
    const Eigen::Vector3f peak = peak_in_plane(field, q, target, Eigen::Vector3f::UnitX(),
                                               Eigen::Vector3f::UnitY(), 2e-3f, 0.1e-3f);
    EXPECT_LT((peak - target).norm(), 0.5e-3f);
    // Axial: the on-axis maximum sits slightly in front of the target (oracle 3), < 5 % of z.
    float best = 0, best_z = 0;
    for (float zz = 0.5f * z; zz < 1.5f * z; zz += 0.2e-3f) {
      const float value = std::abs(field.pressure({target.x(), target.y(), zz}, q));
      if (value > best) { best = value; best_z = zz; }
    }
    EXPECT_LT(std::abs(best_z - z), 0.05f * z);
    EXPECT_LE(best_z, z + 1e-3f);
  }
}

TEST(AcousticField, RadiationPressureHalfMaximumWidthAt200mmIsAboutTenMillimetres) {
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  const Eigen::Vector3f target(0, 0, 0.2f);
  focus_drive(field, target, q);
  const float peak = field.radiation_pressure(field.pressure(target, q));
  // Walk outwards along x until the radiation pressure falls below half of the peak.
  auto half_width = [&](float direction) {
    float previous = peak, x = 0;
    const float step = 0.01e-3f;
    while (true) {
      x += step;
      const float value =
          field.radiation_pressure(field.pressure(target + Eigen::Vector3f(direction * x, 0, 0), q));
      if (value < 0.5f * peak) return x - step * (0.5f * peak - value) / (previous - value);
      previous = value;
    }
  };
  const float fwhm = half_width(1.0f) + half_width(-1.0f);
  EXPECT_NEAR(fwhm, 10.11e-3f, 0.15f * 10.11e-3f);
  // About 1.2 wavelengths (oracle 2).
  EXPECT_NEAR(fwhm / field.model().wavelength(), 1.18f, 0.18f);
}

TEST(AcousticField, OffAxisFociUpTo45DegreesLandWithinOneMillimetre) {
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  for (float degrees : {0.0f, 15.0f, 30.0f, 45.0f}) {
    for (float azimuth : {0.0f, 1.0f, 2.5f}) {
      SCOPED_TRACE(degrees);
      const float theta = degrees * std::numbers::pi_v<float> / 180;
      const Eigen::Vector3f dir(std::sin(theta) * std::cos(azimuth),
                                std::sin(theta) * std::sin(azimuth), std::cos(theta));
      const Eigen::Vector3f target = 0.2f * dir;
      focus_drive(field, target, q);
      // Peak in the plane through the target, perpendicular to the line from the array centre.
      const Eigen::Vector3f u = dir.unitOrthogonal();
      const Eigen::Vector3f v = dir.cross(u);
      const Eigen::Vector3f peak = peak_in_plane(field, q, target, u, v, 3e-3f, 0.1e-3f);
      EXPECT_LT((peak - target).norm(), 1e-3f);
    }
  }
}

TEST(AcousticField, SteeringLosesPressureMonotonically) {
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  float previous = 1e30f;
  for (float x : {0.0f, 0.03f, 0.06f, 0.1f}) {
    const Eigen::Vector3f target(x, 0, 0.2f);
    focus_drive(field, target, q);
    const float value = std::abs(field.pressure(target, q));
    EXPECT_LT(value, previous);
    previous = value;
  }
}

TEST(AcousticField, SideLobesStayBelowAQuarterOfThePeak) {
  // Oracle 4: for a focus at (0, 0, 200 mm) the first side lobe is ~0.21 of the peak |p| at
  // ~16 mm, and nothing within 100 mm laterally rises above 0.25.
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  const Eigen::Vector3f target(0, 0, 0.2f);
  focus_drive(field, target, q);
  const float peak = std::abs(field.pressure(target, q));
  const int n = 1001;
  Eigen::Matrix3Xf line(3, n);
  for (int i = 0; i < n; ++i) line.col(i) << 0.1e-3f * float(i), 0, 0.2f;  // 0 .. 100 mm
  Eigen::VectorXcf p(n);
  field.pressures(line, q, p);
  // Walk past the main lobe (to the first minimum), then find the largest value beyond it.
  int i = 1;
  while (i < n - 1 && std::abs(p[i + 1]) < std::abs(p[i])) ++i;
  const float first_null_mm = 0.1f * float(i);
  float lobe = 0, lobe_mm = 0;
  for (int j = i; j < n; ++j) {
    if (std::abs(p[j]) > lobe) { lobe = std::abs(p[j]); lobe_mm = 0.1f * float(j); }
  }
  EXPECT_NEAR(first_null_mm, 11.5f, 1.5f);
  EXPECT_LT(lobe / peak, 0.25f);
  EXPECT_GT(lobe / peak, 0.15f);
  EXPECT_NEAR(lobe_mm, 16.0f, 2.0f);
}

TEST(AcousticField, RadiationPressureSliceIsCentredAndSymmetric) {
  const FieldModel field = default_field();
  Drive q(field.transducer_count());
  const Eigen::Vector3f target(0.01f, 0.02f, 0.15f);
  focus_drive(field, target, q);
  const Eigen::MatrixXf slice = field.radiation_pressure_slice(
      q, target, Eigen::Vector3f::UnitX(), Eigen::Vector3f::UnitY(), 21, 21, 1e-3f);
  Eigen::Index a = 0, b = 0;
  const float top = slice.maxCoeff(&a, &b);
  EXPECT_EQ(a, 10);
  EXPECT_EQ(b, 10);
  EXPECT_NEAR(top, field.radiation_pressure(field.pressure(target, q)), 1e-4f * top);
  // Radiation pressure of the peak: 2 p_rms^2 / (rho c^2) with p_rms = |p| / sqrt(2).
  const float c = field.model().speed_of_sound();
  EXPECT_NEAR(top, std::norm(field.pressure(target, q)) / (1.2f * c * c), 1e-3f * top);
  // Near the axis the lobe is close to circular: opposite neighbours agree within 5 %.
  EXPECT_NEAR(slice(5, 10), slice(15, 10), 0.05f * slice(5, 10));
  EXPECT_NEAR(slice(10, 5), slice(10, 15), 0.05f * slice(10, 5));
}

TEST(AcousticField, SpeedOfSoundWavelengthAndAttenuation) {
  EXPECT_NEAR(speed_of_sound(20.0f), 343.2f, 0.3f);
  EXPECT_GT(speed_of_sound(30.0f), speed_of_sound(10.0f));
  const TransducerModel model;
  EXPECT_NEAR(model.wavelength(), 8.575e-3f, 0.01f * 8.575e-3f);  // oracle 7

  // On axis of one transducer, with and without attenuation: ratio exp(-beta r) (oracle 8).
  TransducerTable one;
  one.entries.push_back({});
  MediumConfig lossless;
  lossless.attenuation_np_per_m = 0;
  const FieldModel with(ArrayGeometry::from_table(one), TransducerModel());
  const FieldModel without(ArrayGeometry::from_table(one), TransducerModel(lossless));
  Drive q = Drive::Ones(1);
  const Eigen::Vector3f x(0, 0, 0.2f);
  const float ratio = std::abs(with.pressure(x, q)) / std::abs(without.pressure(x, q));
  EXPECT_NEAR(ratio, std::exp(-0.115f * 0.2f), 1e-4f);
  // Spherical spreading: P_ref / r on axis.
  EXPECT_NEAR(std::abs(without.pressure(x, q)), TransducerConfig{}.reference_pressure_pa_m / 0.2f,
              1e-3f);
}

TEST(TransducerModel, PistonDirectivityFollowsBesselAndTableCanReplaceIt) {
  const TransducerModel model;
  EXPECT_FLOAT_EQ(model.directivity(1.0f), 1.0f);
  EXPECT_EQ(model.directivity(-0.5f), 0.0f);
  const float ka = model.wavenumber() * 4.5e-3f;
  for (float deg : {10.0f, 25.0f, 40.0f, 60.0f, 85.0f}) {
    const float t = deg * std::numbers::pi_v<float> / 180;
    const float x = ka * std::sin(t);
    const float expected = 2 * static_cast<float>(std::cyl_bessel_j(1.0, double(x))) / x;
    EXPECT_NEAR(model.directivity(std::cos(t)), expected, 2e-4f);
  }
  // A measured table (autd3's T4010A1 values at 0..90 degrees in 10 degree steps).
  TransducerConfig measured;
  measured.measured_directivity = {1.0f, 1.0f, 1.0f, 0.891251f, 0.707946f,
                                   0.501187f, 0.354813f, 0.251189f, 0.199526f, 0.177832f};
  const TransducerModel table_model({}, measured);
  const float c40 = std::cos(40.0f * std::numbers::pi_v<float> / 180);
  EXPECT_NEAR(table_model.directivity(c40), 0.707946f, 2e-3f);
}

TEST(ArrayGeometry, DefaultGridAndTableRoundTrip) {
  const ArrayGeometry g = ArrayGeometry::grid({});
  ASSERT_EQ(g.size(), 256);
  EXPECT_NEAR(g.positions.row(0).mean(), 0.0f, 1e-6f);
  EXPECT_NEAR(g.positions(0, 1) - g.positions(0, 0), 10.47e-3f, 1e-7f);
  EXPECT_NEAR(g.positions.row(0).maxCoeff(), 7.5f * 10.47e-3f, 1e-6f);
  const ArrayGeometry back = ArrayGeometry::from_table(g.to_table());
  EXPECT_TRUE(back.positions.isApprox(g.positions));
  EXPECT_TRUE(back.normals.isApprox(g.normals));
}

TEST(ArrayGeometry, PhaseCalibrationIsCompensatedByTheFocusDrive) {
  ArrayGeometry calibrated = ArrayGeometry::grid({});
  for (int i = 0; i < calibrated.size(); ++i) {
    calibrated.phase_offset[i] = std::fmod(1.7f * float(i), 6.28f);  // scrambled per transducer
  }
  const FieldModel plain(ArrayGeometry::grid({}), TransducerModel());
  const FieldModel field(calibrated, TransducerModel());
  Drive q(256), q_plain(256);
  const Eigen::Vector3f target(0.02f, 0.01f, 0.18f);
  focus_drive(field, target, q);
  focus_drive(plain, target, q_plain);
  EXPECT_NEAR(std::abs(field.pressure(target, q)), std::abs(plain.pressure(target, q_plain)),
              1e-3f * std::abs(plain.pressure(target, q_plain)));
  // Ignoring the calibration scatters the phases and loses most of the focus.
  EXPECT_LT(std::abs(field.pressure(target, q_plain)), 0.3f * std::abs(field.pressure(target, q)));
}

TEST(TransducerTableText, RoundTripsAndRejectsBadLinesWithTheirNumber) {
  ArrayGeometry g = ArrayGeometry::grid({4, 2, 0.01f});
  g.phase_offset[3] = 1.25f;
  g.amplitude_gain[5] = 0.875f;
  TransducerTable back;
  const TableParseResult ok = parse_transducer_table(format_transducer_table(g.to_table()), back);
  ASSERT_TRUE(ok.ok) << ok.error;
  const ArrayGeometry h = ArrayGeometry::from_table(back);
  EXPECT_EQ(h.positions, g.positions);
  EXPECT_EQ(h.phase_offset[3], 1.25f);
  EXPECT_EQ(h.amplitude_gain[5], 0.875f);

  struct Bad { const char* text; int line; };
  for (const Bad& bad : {Bad{"0 0 0 0 0 1 0 1\n0 0 0 0 0 1 0\n", 2},
                         Bad{"# header\n\n0 0 0 0 0 1 0 1 7\n", 3},
                         Bad{"0 0 0 0 0 0 0 1\n", 1},
                         Bad{"0 0 x 0 0 1 0 1\n", 1},
                         Bad{"0 0 0 0 0 1 nan 1\n", 1},
                         Bad{"0 0 0 0 0 1 0 -1\n", 1},
                         Bad{"# nothing\n", 0}}) {
    TransducerTable table;
    const TableParseResult r = parse_transducer_table(bad.text, table);
    EXPECT_FALSE(r.ok) << bad.text;
    EXPECT_EQ(r.error_line, bad.line) << bad.text;
    EXPECT_FALSE(r.error.empty());
    EXPECT_TRUE(table.entries.empty());
  }
}

}  // namespace
}  // namespace sonoflow::acoustics
