// Material presets: the TOML loader refuses bad input with a message naming the key, and the
// shipped presets (config/materials) carry the thesis' Table 3.1 values.
#include <gtest/gtest.h>

#include <string>

#include "kernels/fluid/material.hpp"

namespace sonoflow::fluid::test {
namespace {

TEST(Material, ParsesAPreset) {
  const auto m = parse_material(R"(
name = "goo"
model = "viscoelastic"
rest_density = 1200
[solver]
substeps = 3
iterations = 8
[conformation]
tau = 0.25
alpha = 0.02
corotation = false
)");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->name, "goo");
  EXPECT_EQ(m->model, MaterialModel::Viscoelastic);
  EXPECT_FLOAT_EQ(m->rest_density, 1200.0f);  // an integer is a fine number
  EXPECT_EQ(m->substeps, 3);
  EXPECT_FLOAT_EQ(m->tau, 0.25f);
  EXPECT_FLOAT_EQ(m->alpha, 0.02f);
  EXPECT_FALSE(m->corotation);
  EXPECT_FLOAT_EQ(m->beta, Material{}.beta);  // left out: default
}

void expect_error(const char* text, const std::string& needle) {
  const auto m = parse_material(text, "preset.toml");
  ASSERT_FALSE(m) << "accepted: " << text;
  EXPECT_EQ(m.error().code, FluidErrc::BadMaterial);
  EXPECT_NE(m.error().message.find(needle), std::string::npos) << m.error().message;
  EXPECT_NE(m.error().message.find("preset.toml"), std::string::npos) << m.error().message;
}

TEST(Material, RefusesBadInputNamingTheKey) {
  expect_error("model = \"water\"\ncolour = 3\n", "unknown key 'colour'");
  expect_error("model = \"water\"\n[conformation]\ntua = 0.1\n", "unknown key 'conformation.tua'");
  expect_error("model = \"water\"\n[solver]\nsubsteps = 2.5\n", "'solver.substeps' must be an integer");
  expect_error("model = \"water\"\nrest_density = \"heavy\"\n", "'rest_density' must be a number");
  expect_error("model = \"water\"\n[conformation]\ncorotation = 1\n", "'conformation.corotation' must be true or false");
  expect_error("model = \"water\"\n[conformation]\nalpha = -1\n", "conformation.alpha");
  expect_error("model = \"water\"\n[clay]\nbond_on_speed = 1.0\nbond_off_speed = 0.5\n", "bond_off_speed");
  expect_error("model = \"plasma\"\n", "'model' is 'plasma'");
  expect_error("rest_density = 1000\n", "missing key 'model'");
  expect_error("model = \"water\"\nrest_density = \n", "line 2");
}

TEST(Material, ReadsEveryMediaTable) {
  const auto m = parse_material(R"(
model = "water"
[phases]
diffusion = 0.2
[[phases.liquid]]
rest_density = 1000
colour = [0.1, 0.2, 0.3]
[[phases.liquid]]
rest_density = 1300
viscosity = 2.5
[viscosity]
iterations = 6
hand = false
[thermal]
solidus = 900
liquidus = 1000
[density]
solver = "spook"
method = "cg"
tau = 3
[collision]
model = "impulse"
friction = "wet"
mu = 0.4
[turbulence]
source = "spectral"
octaves = 3
seed = 42
[gun]
aim = "finger"
rate = 500
[[regions]]
min = [0, 0, 0]
max = [0.1, 0.2, 0.3]
fractions = [0.25, 0.75]
remove = true
)");
  ASSERT_TRUE(m) << m.error().message;
  const MediaSpec& md = m->media;
  EXPECT_FLOAT_EQ(md.phases.diffusion, 0.2f);
  ASSERT_EQ(md.phases.count, 2);
  EXPECT_FLOAT_EQ(md.phases.phases[0].colour[2], 0.3f);
  EXPECT_FLOAT_EQ(md.phases.phases[1].rest_density, 1300.0f);
  EXPECT_FLOAT_EQ(md.phases.phases[1].viscosity, 2.5f);
  EXPECT_EQ(md.viscosity.iterations, 6);
  EXPECT_FALSE(md.viscosity.hand);
  EXPECT_TRUE(md.thermal.enabled);  // a [thermal] table switches heat on
  EXPECT_FLOAT_EQ(md.thermal.liquidus, 1000.0f);
  EXPECT_EQ(md.density.solver, DensitySolver::Spook);
  EXPECT_EQ(md.density.method, SpookMethod::ConjugateGradient);
  EXPECT_EQ(md.collision.model, CollisionModel::Impulse);
  EXPECT_EQ(md.collision.friction, FrictionModel::Wet);
  EXPECT_FLOAT_EQ(md.collision.mu, 0.4f);
  EXPECT_TRUE(md.turbulence.enabled);
  EXPECT_EQ(md.turbulence.source, NoiseSource::Spectral);
  EXPECT_EQ(md.turbulence.octaves, 3);
  EXPECT_EQ(md.turbulence.seed, 42u);
  EXPECT_TRUE(md.gun.enabled);
  EXPECT_TRUE(md.gun.aim_finger);
  EXPECT_FLOAT_EQ(md.gun.rate, 500.0f);
  ASSERT_EQ(md.region_count, 1);
  EXPECT_FLOAT_EQ(md.regions[0].max.z, 0.3f);
  EXPECT_TRUE(md.regions[0].set_fractions);
  EXPECT_FLOAT_EQ(md.regions[0].fractions[1], 0.75f);
  EXPECT_FLOAT_EQ(md.regions[0].fractions[2], 0.0f);
  EXPECT_TRUE(md.regions[0].remove);
}

TEST(Material, RefusesBadMediaInputNamingTheKey) {
  expect_error("model = \"water\"\n[thermal]\nconductivty = 1\n", "unknown key 'thermal.conductivty'");
  expect_error("model = \"water\"\n[gun]\naim = \"up\"\n", "'gun.aim' must be one of down, finger");
  expect_error("model = \"water\"\n[density]\nsolver = 3\n", "'density.solver' must be one of pbf, spook");
  expect_error("model = \"water\"\n[viscosity]\niterations = 1.5\n", "'viscosity.iterations' must be an integer");
  expect_error("model = \"water\"\n[viscosity]\nhand = \"yes\"\n", "'viscosity.hand' must be true or false");
  expect_error("model = \"water\"\n[collision]\nmu = \"high\"\n", "'collision.mu' must be a number");
  expect_error("model = \"water\"\n[[phases.liquid]]\ncolour = [1, 0]\n", "'phases.liquid.colour' must be a list of 3");
  expect_error("model = \"water\"\n[[phases.liquid]]\nshade = 1\n", "unknown key 'phases.liquid.shade'");
  expect_error("model = \"water\"\n[[regions]]\nmin = [0, 0]\n", "'regions.min' must be a list of 3");
  expect_error("model = \"water\"\n[[regions]]\nfractions = [0, 0, 0, 0, 1]\n", "'regions.fractions' must list 1 to 4");
  expect_error("model = \"water\"\nregions = 3\n", "'regions' must be [[regions]] tables");
  expect_error("model = \"water\"\nturbulence = 3\n", "turbulence must be a table");
  expect_error("model = \"water\"\n[turbulence]\noctaves = 20\n", "turbulence.octaves");
}

TEST(Material, LibraryHoldsTheThesisPresets) {
  const auto lib = MaterialLibrary::load(SONOFLOW_MATERIALS_DIR);
  ASSERT_TRUE(lib) << lib.error().message;
  struct Row {
    const char* name;
    float tau, alpha;
  };
  // Thesis Table 3.1 (and text): honey, thick cream, runny cream, strawberry syrup, ice cream.
  const Row table[] = {{"honey", 0.0f, 0.005f},
                       {"thick_cream", 0.1f, 0.0f},
                       {"runny_cream", 0.1f, 0.01f},
                       {"strawberry_syrup", 0.5f, 0.015f},
                       {"ice_cream", 0.1f, 0.0f}};
  for (const Row& r : table) {
    const Material* m = lib->find(r.name);
    ASSERT_NE(m, nullptr) << r.name;
    EXPECT_EQ(m->model, MaterialModel::Viscoelastic) << r.name;
    EXPECT_FLOAT_EQ(m->tau, r.tau) << r.name;
    EXPECT_FLOAT_EQ(m->alpha, r.alpha) << r.name;
    EXPECT_EQ(m->substeps * m->iterations, 24) << r.name << ": the interactive 3 x 8 schedule";
  }
  const Material* water = lib->find("water");
  ASSERT_NE(water, nullptr);
  EXPECT_EQ(water->model, MaterialModel::Water);
  EXPECT_EQ(water->iterations, 4);
  EXPECT_EQ(lib->find("lava"), nullptr);
  EXPECT_FALSE(MaterialLibrary::load("/nonexistent/materials"));
}

}  // namespace
}  // namespace sonoflow::fluid::test
