// The constraint fluid (issue 7; WO 2010/140957 A1, SPOOK): a water column stepped in frames of
// 1/100 s holds its density within 1 %, and the same scene passes the hydrostatic test with PBF
// and with SPOOK (Jacobi and conjugate gradients); a relaxation time tau <= 0 is refused, and so
// is SPOOK for a material that is not water (viscoelastic, clay).
//
// As transcribed (and as the digest's own check found: ~3 % at 10 ms, breakdown at 1/60 s),
// one SPOOK step of 10 ms does not hold a 20-particle column: the density solve runs in
// substeps of the 1/100 s frame (8 x 1.25 ms), with a little XSPH to damp the velocity noise
// the unilateral solve leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "kernels/fluid/material.hpp"
#include "tests/kernels/fluid/fluid_test_support.hpp"

namespace sonoflow::fluid::test {
namespace {

constexpr float kD = 0.01f;

struct Hydrostatic {
  float worst_compression = 0;  // mean max(rho / rho0 - 1, 0), worst over 1 s
  float creep = 0;              // m the centroid moved in that second
  float rms_speed = 0;          // m/s at the end
  double floor_pressure = 0;    // Pa, walls' reaction over the floor area
  double expected = 0;          // Pa, the column's weight over the floor area
  int particles = 0;
};

// A 20 cm column in a 10 cm box: 1 s to settle, then 1 s of measurement.
Hydrostatic column(const Material& m, double frame_dt) {
  Hydrostatic r;
  auto e = column_engine(m, {{{-0.05f, -0.05f, 0.0f}, {0.05f, 0.05f, 0.2f}}});
  if (!e) return r;
  const int second = static_cast<int>(std::lround(1.0 / frame_dt));
  FluidStats st = run(*e, second, frame_dt);
  const float z0 = st.centroid.z;
  for (int f = 0; f < second; ++f) {
    st = run(*e, 1, frame_dt);
    r.worst_compression = std::max(r.worst_compression, st.mean_compression);
    r.floor_pressure += -st.wall_force.z / (kColumnSide * kColumnSide) / second;
  }
  r.creep = std::fabs(st.centroid.z - z0);
  r.particles = st.particles;
  r.rms_speed = std::sqrt(2.0f * st.kinetic_energy / (e->particle_mass() * static_cast<float>(st.particles)));
  r.expected = e->particle_mass() * st.particles * 9.81 / (kColumnSide * kColumnSide);
  return r;
}

Material spook(SpookMethod method, int iterations) {
  Material m;
  m.name = "spook-water";
  m.substeps = 8;
  m.iterations = iterations;
  m.xsph = 0.1f;
  m.media.density.solver = DensitySolver::Spook;
  m.media.density.method = method;
  m.media.density.tau = 2.0f;
  return m;
}

void expect_hydrostatic(const Hydrostatic& h, const char* what) {
  std::printf("%s: compression %.4f, creep %.5f m, rms speed %.4f m/s, floor %.1f Pa (rho g H %.1f Pa)\n",
              what, h.worst_compression, h.creep, h.rms_speed, h.floor_pressure, h.expected);
  EXPECT_EQ(h.particles, 2000) << what;
  EXPECT_LT(h.worst_compression, 0.01f) << what;
  EXPECT_LT(h.creep, 0.1f * kD) << what;
  EXPECT_LT(h.rms_speed, 0.03f) << what;
  EXPECT_NEAR(h.floor_pressure, h.expected, 0.05 * h.expected) << what;
}

TEST(Spook, WaterColumnInHundredthSecondFramesHoldsDensity) {
  expect_hydrostatic(column(spook(SpookMethod::Jacobi, 8), 0.01), "SPOOK Jacobi, frame 1/100 s");
}

TEST(Spook, ConjugateGradientColumn) {
  expect_hydrostatic(column(spook(SpookMethod::ConjugateGradient, 8), 0.01), "SPOOK CG, frame 1/100 s");
}

TEST(Spook, TauMustBePositive) {
  Material m = spook(SpookMethod::Jacobi, 8);
  EXPECT_FALSE(validate_material(m));
  for (float tau : {0.0f, -1.0f}) {
    m.media.density.tau = tau;
    const auto err = validate_material(m);
    ASSERT_TRUE(err) << "tau = " << tau << " accepted";
    EXPECT_NE(err->message.find("density.tau"), std::string::npos) << err->message;
  }
  const auto parsed = parse_material("model = \"water\"\n[density]\nsolver = \"spook\"\ntau = 0.0\n", "t.toml");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("density.tau"), std::string::npos) << parsed.error().message;
  FluidConfig c;
  c.material = m;
  EXPECT_FALSE(FluidEngine::create(c)) << "the engine must refuse it too";
}

// SPOOK is a water-only density solver: its sweeps rebuild the positions from x0 + dt (v + dv),
// so a viscoelastic (DC-PBD) or clay material would keep only the last conformation or bond
// sweep, and the walls' load and approach speed from the velocity phase would be overwritten.
// Measured on the kernel before the refusal (honey / thick cream presets with SPOOK, tau 2, in
// the viscoelastic tests' scenes): the floor carried 0.79 / 0.42 of a resting pool's weight
// (PBF: 1.002 / 1.000), the thick cream pool never came to rest (rms 139 mm/s; PBF 0.28), the
// lone particle's e = 0.5 bounce returned 0 of the drop height (PBF 0.236) and a 6 cm honey
// cube slumped to a centroid of 5.2 mm in 1 s (PBF 11.7 mm). So the combination is refused
// wherever a material is read or set, naming the key and the model.
TEST(Spook, RefusedForViscoelasticAndClayNamingTheKey) {
  for (MaterialModel model : {MaterialModel::Viscoelastic, MaterialModel::Clay}) {
    Material m = spook(SpookMethod::Jacobi, 8);
    m.model = model;
    const auto err = validate_material(m);
    ASSERT_TRUE(err) << to_string(model) << " on SPOOK accepted";
    EXPECT_NE(err->message.find("density.solver"), std::string::npos) << err->message;
    EXPECT_NE(err->message.find(std::string(to_string(model))), std::string::npos) << err->message;
    FluidConfig c;
    c.material = m;
    EXPECT_FALSE(FluidEngine::create(c)) << "the engine must refuse it too";
    m.media.density.solver = DensitySolver::Pbf;
    EXPECT_FALSE(validate_material(m)) << to_string(model) << " on PBF must stay accepted";
  }
  // A preset file (the daemon's fluid.materials_dir) is refused where it is read.
  const auto parsed =
      parse_material("model = \"viscoelastic\"\n[density]\nsolver = \"spook\"\n", "mine.toml");
  ASSERT_FALSE(parsed);
  EXPECT_NE(parsed.error().message.find("mine.toml"), std::string::npos) << parsed.error().message;
  EXPECT_NE(parsed.error().message.find("density.solver"), std::string::npos) << parsed.error().message;
  // A live switch to it is refused and the engine keeps its material.
  auto e = column_engine(spook(SpookMethod::Jacobi, 8), {{{-0.05f, -0.05f, 0.0f}, {0.05f, 0.05f, 0.2f}}});
  ASSERT_TRUE(e);
  Material honey_on_spook = spook(SpookMethod::Jacobi, 8);
  honey_on_spook.model = MaterialModel::Viscoelastic;
  EXPECT_TRUE(e->set_material(honey_on_spook));
  EXPECT_EQ(e->material().model, MaterialModel::Water);
}

TEST(Spook, SameSceneWithPbf) {
  Material pbf;
  pbf.substeps = 4;
  pbf.iterations = 8;
  expect_hydrostatic(column(pbf, 0.01), "PBF 4 x 8, frame 1/100 s");
}

// Boundaries contribute density to the constraint, so a body held in the SPOOK fluid feels it:
// a rod (ghost particles) held still, dipped 4 cm into the pool, is pushed up (buoyancy); moved
// sideways, it is dragged back.
TEST(Spook, HeldBodyFeelsBuoyancyAndDrag) {
  FluidConfig c;
  c.max_particles = 4000;
  c.particle_spacing = kD;
  c.domain_min = {-0.16f, -0.16f, 0.05f};
  c.domain_max = {0.16f, 0.16f, 0.40f};
  c.material = spook(SpookMethod::Jacobi, 8);
  c.material.substeps = 4;
  c.tool.kind = ToolKind::Rod;
  c.tool.radius = 0.01f;
  c.tool.length = 0.1f;
  auto e = make_engine(c);
  ASSERT_TRUE(e);
  Scene s;
  s.shapes.push_back(Shape::box({-0.08f, -0.08f, 0.10f}, {0.08f, 0.08f, 0.35f}));
  s.blocks.push_back({{-0.08f, -0.08f, 0.10f}, {0.08f, 0.08f, 0.16f}});
  ASSERT_FALSE(e->load_scene(s));
  run(*e, 20);
  ToolPose pose{{-0.04f, 0.0f, 0.17f}, {}};  // rod from 12 to 22 cm: 4 cm under the surface
  double up = 0, drag = 0;
  for (int f = 0; f < 60; ++f) {
    e->set_tool_pose(pose, nullptr);  // held still
    run(*e, 1);
    if (f >= 20) up += e->tool_force().force.z / 40;
  }
  for (int f = 0; f < 35; ++f) {
    const ToolPose before = pose;
    pose.position.x += 0.002f;  // 0.18 m/s along +x
    e->set_tool_pose(pose, &before);
    run(*e, 1);
    if (f >= 10) drag += -e->tool_force().force.x / 25;
  }
  // Archimedes for the dipped 4 cm of a rod of radius 1 cm, whose ghosts keep the fluid about
  // half a particle spacing farther out: rho g pi r^2 h with r between 1 and 2 cm.
  const double lo = 1000 * 9.81 * 3.14159 * 0.01 * 0.01 * 0.04, hi = 4 * lo;
  std::printf("held rod: %.4f N up (Archimedes %.3f-%.3f N); moving at 0.18 m/s: %.4f N against "
              "the motion\n", up, lo, hi, drag);
  EXPECT_GT(up, lo) << "too little buoyancy";
  EXPECT_LT(up, hi) << "too much buoyancy";
  EXPECT_GT(drag, 0.0) << "no drag";
}

}  // namespace
}  // namespace sonoflow::fluid::test
