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
