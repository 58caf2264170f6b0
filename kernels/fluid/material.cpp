#include "kernels/fluid/material.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <variant>

#include <toml++/toml.h>

#include "kernels/fluid/media/media_toml.hpp"

namespace sonoflow::fluid {

namespace {

// One TOML key and where its value goes.
struct Key {
  const char* table;  // "" for the top level
  const char* name;
  std::variant<float Material::*, int Material::*, bool Material::*> field;
};

const Key kKeys[] = {
    {"", "rest_density", &Material::rest_density},
    {"solver", "substeps", &Material::substeps},
    {"solver", "iterations", &Material::iterations},
    {"pbf", "relaxation", &Material::relaxation},
    {"pbf", "scorr_k", &Material::scorr_k},
    {"pbf", "scorr_dq", &Material::scorr_dq},
    {"pbf", "cohesion", &Material::cohesion},
    {"pbf", "xsph", &Material::xsph},
    {"pbf", "vorticity", &Material::vorticity},
    {"conformation", "tau", &Material::tau},
    {"conformation", "alpha", &Material::alpha},
    {"conformation", "beta", &Material::beta},
    {"conformation", "velocity_iterations", &Material::velocity_iterations},
    {"conformation", "corotation", &Material::corotation},
    {"conformation", "chebyshev", &Material::chebyshev},
    {"conformation", "yield", &Material::yield},
    {"clay", "viscosity", &Material::clay_viscosity},
    {"clay", "bonds", &Material::clay_bonds},
    {"clay", "bond_radius", &Material::bond_radius},
    {"clay", "bond_on_speed", &Material::bond_on_speed},
    {"clay", "bond_off_speed", &Material::bond_off_speed},
    {"clay", "bond_stretch", &Material::bond_stretch},
    {"clay", "bond_stiffness", &Material::bond_stiffness},
    {"clay", "yield_stress", &Material::yield_stress},
    {"clay", "plastic_fraction", &Material::plastic_fraction},
    {"clay", "wall_adhesion", &Material::wall_adhesion},
    {"contact", "wall_friction", &Material::wall_friction},
    {"contact", "wall_restitution", &Material::wall_restitution},
    {"contact", "hand_friction", &Material::hand_friction},
};

FluidError bad(std::string_view source, const std::string& what) {
  return {FluidErrc::BadMaterial, std::string(source) + ": " + what};
}

std::string dotted(const char* table, std::string_view name) {
  return *table ? std::string(table) + "." + std::string(name) : std::string(name);
}

const Key* find_key(std::string_view table, std::string_view name) {
  for (const Key& k : kKeys) {
    if (table == k.table && name == k.name) return &k;
  }
  return nullptr;
}

bool is_table_name(std::string_view name) {
  for (const Key& k : kKeys) {
    if (*k.table && name == k.table) return true;
  }
  return false;
}

// Stores one value; the error names the key and the type it needs.
Status assign(Material& m, const Key& key, const toml::node& node, std::string_view source) {
  const std::string where = dotted(key.table, key.name);
  if (auto* f = std::get_if<float Material::*>(&key.field)) {
    if (auto v = node.value<double>(); v && (node.is_floating_point() || node.is_integer())) {
      m.*(*f) = static_cast<float>(*v);
      return std::nullopt;
    }
    return bad(source, "key '" + where + "' must be a number");
  }
  if (auto* i = std::get_if<int Material::*>(&key.field)) {
    if (node.is_integer()) {
      m.*(*i) = static_cast<int>(*node.value<std::int64_t>());
      return std::nullopt;
    }
    return bad(source, "key '" + where + "' must be an integer");
  }
  auto* b = std::get_if<bool Material::*>(&key.field);
  if (node.is_boolean()) {
    m.*(*b) = *node.value<bool>();
    return std::nullopt;
  }
  return bad(source, "key '" + where + "' must be true or false");
}

}  // namespace

std::string_view to_string(MaterialModel model) {
  switch (model) {
    case MaterialModel::Water: return "water";
    case MaterialModel::Viscoelastic: return "viscoelastic";
    case MaterialModel::Clay: return "clay";
  }
  return "unknown";
}

Status validate_material(const Material& m) {
  struct Range {
    const char* key;
    double value, lo, hi;
    const char* why = nullptr;  // the reason for a bound that is not self-evident
  };
  const Range ranges[] = {
      {"rest_density", m.rest_density, 1.0, 1e5},
      {"solver.substeps", static_cast<double>(m.substeps), 1, 32},
      {"solver.iterations", static_cast<double>(m.iterations), 1, 200},
      {"pbf.relaxation", m.relaxation, 1e-6, 10.0},
      {"pbf.scorr_k", m.scorr_k, 0.0, 1.0},
      {"pbf.scorr_dq", m.scorr_dq, 0.01, 0.99},
      {"pbf.cohesion", m.cohesion, 0.0, 1.0, "1 balances s_corr at rest spacing; more pulls pairs closer"},
      {"pbf.xsph", m.xsph, 0.0, 1.0},
      {"pbf.vorticity", m.vorticity, 0.0, 1e4},
      {"conformation.tau", m.tau, 0.0, 1e6},
      {"conformation.alpha", m.alpha, 0.0, 1e9},
      {"conformation.beta", m.beta, 0.01, 100.0},
      {"conformation.velocity_iterations", static_cast<double>(m.velocity_iterations), 0, 200},
      {"conformation.chebyshev", m.chebyshev, 0.0, kMaxChebyshev,
       "above it the accelerated velocity sweeps fling a stiff viscous block off a wall"},
      {"conformation.yield", m.yield, 0.01, 10.0},
      {"clay.bond_radius", m.bond_radius, 0.1, 1.0},
      {"clay.bond_on_speed", m.bond_on_speed, 0.0, 100.0},
      {"clay.bond_off_speed", m.bond_off_speed, 0.0, 100.0},
      {"clay.bond_stretch", m.bond_stretch, 0.0, 10.0},
      {"clay.bond_stiffness", m.bond_stiffness, 0.0, 2.0},
      {"clay.yield_stress", m.yield_stress, 0.0, 1e9},
      {"clay.plastic_fraction", m.plastic_fraction, 0.0, 1.0},
      {"clay.wall_adhesion", m.wall_adhesion, 0.0, 1e6},
      {"contact.wall_friction", m.wall_friction, 0.0, 10.0},
      {"contact.wall_restitution", m.wall_restitution, 0.0, 1.0},
      {"contact.hand_friction", m.hand_friction, 0.0, 10.0},
  };
  for (const Range& r : ranges) {
    if (!std::isfinite(r.value) || r.value < r.lo || r.value > r.hi) {
      std::ostringstream s;
      s << "'" << m.name << "': " << r.key << " = " << r.value << " is outside [" << r.lo << ", "
        << r.hi << "]";
      if (r.why != nullptr) s << ": " << r.why;
      return FluidError{FluidErrc::BadMaterial, s.str()};
    }
  }
  if (auto err = validate_media(m)) return err;
  if (m.bond_off_speed < m.bond_on_speed) {
    return FluidError{FluidErrc::BadMaterial,
                      "'" + m.name + "': clay.bond_off_speed must not be below clay.bond_on_speed "
                      "(the hysteresis needs theta_off >= theta_on)"};
  }
  return std::nullopt;
}

namespace {
Expected<Material> parse_material_named(std::string_view toml_text, std::string_view source,
                                        std::string_view default_name);
}  // namespace

Expected<Material> parse_material(std::string_view toml_text, std::string_view source) {
  return parse_material_named(toml_text, source, "material");
}

namespace {
Expected<Material> parse_material_named(std::string_view toml_text, std::string_view source,
                                        std::string_view default_name) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "line " << e.source().begin.line << ": " << e.description();
    return bad(source, s.str());
  }
  Material m;
  m.name = std::string(default_name);
  bool has_model = false;
  for (auto&& [k, node] : doc) {
    const std::string_view key = k.str();
    if (key == "name") {
      if (!node.is_string()) return bad(source, "key 'name' must be a string");
      m.name = *node.value<std::string>();
      continue;
    }
    if (key == "model") {
      const auto v = node.value<std::string>();
      if (!v) return bad(source, "key 'model' must be a string");
      if (*v == "water") m.model = MaterialModel::Water;
      else if (*v == "viscoelastic") m.model = MaterialModel::Viscoelastic;
      else if (*v == "clay") m.model = MaterialModel::Clay;
      else return bad(source, "key 'model' is '" + *v + "'; expected water, viscoelastic or clay");
      has_model = true;
      continue;
    }
    if (is_media_table(key)) {  // issue 7 media: media/media_toml.cpp
      if (auto err = parse_media_table(key, node, m, source)) return *err;
      continue;
    }
    if (const toml::table* t = node.as_table(); t != nullptr && is_table_name(key)) {
      for (auto&& [sub, value] : *t) {
        const Key* known = find_key(key, sub.str());
        if (known == nullptr) {
          return bad(source, "unknown key '" + std::string(key) + "." + std::string(sub.str()) + "'");
        }
        if (auto err = assign(m, *known, value, source)) return *err;
      }
      continue;
    }
    const Key* known = find_key("", key);
    if (known == nullptr) return bad(source, "unknown key '" + std::string(key) + "'");
    if (auto err = assign(m, *known, node, source)) return *err;
  }
  if (!has_model) return bad(source, "missing key 'model' (water, viscoelastic or clay)");
  if (auto err = validate_material(m)) return bad(source, err->message);
  return m;
}
}  // namespace

Expected<Material> load_material(const std::string& path) {
  std::ifstream in(path);
  if (!in) return FluidError{FluidErrc::FileNotFound, "cannot open material preset '" + path + "'"};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_material_named(text.str(), path, std::filesystem::path(path).stem().string());
}

Expected<MaterialLibrary> MaterialLibrary::load(const std::string& directory) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(directory, ec)) {
    return FluidError{FluidErrc::FileNotFound, "material directory '" + directory + "' not found"};
  }
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(directory, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".toml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  MaterialLibrary lib;
  for (const auto& f : files) {
    auto m = load_material(f);
    if (!m) return m.error();
    if (lib.find(m->name) != nullptr) {
      return FluidError{FluidErrc::BadMaterial, f + ": a preset named '" + m->name + "' already exists"};
    }
    lib.materials_.push_back(std::move(m.value()));
    std::sort(lib.materials_.begin(), lib.materials_.end(),
              [](const Material& a, const Material& b) { return a.name < b.name; });
  }
  if (lib.materials_.empty()) {
    return FluidError{FluidErrc::FileNotFound, "no material presets (*.toml) in '" + directory + "'"};
  }
  return lib;
}

const Material* MaterialLibrary::find(std::string_view name) const {
  auto it = std::lower_bound(materials_.begin(), materials_.end(), name,
                             [](const Material& m, std::string_view n) { return m.name < n; });
  return it != materials_.end() && it->name == name ? &*it : nullptr;
}

}  // namespace sonoflow::fluid
