#include "kernels/fluid/media/media_toml.hpp"

#include <cmath>
#include <sstream>

namespace sonoflow::fluid {

namespace {

constexpr std::string_view kTables[] = {"phases", "viscosity", "thermal", "density", "collision",
                                        "turbulence", "regions", "gun"};

FluidError bad(std::string_view source, const std::string& what) {
  return {FluidErrc::BadMaterial, std::string(source) + ": " + what};
}

// A table's keys, each read by one of the helpers below.
class Reader {
 public:
  Reader(std::string_view table, std::string_view source) : table_(table), source_(source) {}

  Status number(const toml::node& n, std::string_view key, float& out) const {
    if (auto v = n.value<double>(); v && (n.is_floating_point() || n.is_integer())) {
      out = static_cast<float>(*v);
      return std::nullopt;
    }
    return bad(source_, "key '" + where(key) + "' must be a number");
  }
  Status integer(const toml::node& n, std::string_view key, int& out) const {
    if (n.is_integer()) {
      out = static_cast<int>(*n.value<std::int64_t>());
      return std::nullopt;
    }
    return bad(source_, "key '" + where(key) + "' must be an integer");
  }
  Status boolean(const toml::node& n, std::string_view key, bool& out) const {
    if (n.is_boolean()) {
      out = *n.value<bool>();
      return std::nullopt;
    }
    return bad(source_, "key '" + where(key) + "' must be true or false");
  }
  // One of the names; its index goes to out.
  Status choice(const toml::node& n, std::string_view key, std::initializer_list<std::string_view> names,
                int& out) const {
    const auto v = n.value<std::string>();
    int k = 0;
    std::string list;
    for (std::string_view name : names) {
      if (v && *v == name) {
        out = k;
        return std::nullopt;
      }
      if (k > 0) list += ", ";
      list.append(name.data(), name.size());
      ++k;
    }
    return bad(source_, "key '" + where(key) + "' must be one of " + list);
  }
  FluidError unknown(std::string_view key) const {
    return bad(source_, "unknown key '" + where(key) + "'");
  }
  FluidError invalid(std::string_view key, const std::string& what) const {
    return bad(source_, "key '" + where(key) + "' " + what);
  }
  std::string where(std::string_view key) const { return std::string(table_) + "." + std::string(key); }

 private:
  std::string_view table_, source_;
};

Status parse_liquid(const toml::table& t, PhaseSpec& p, const Reader& r) {
  for (auto&& [k, node] : t) {
    const std::string_view key = k.str();
    Status err;
    if (key == "rest_density") err = r.number(node, "liquid.rest_density", p.rest_density);
    else if (key == "viscosity") err = r.number(node, "liquid.viscosity", p.viscosity);
    else if (key == "colour") {
      const toml::array* a = node.as_array();
      if (a == nullptr || a->size() != 3) return r.invalid("liquid.colour", "must be [r, g, b]");
      for (std::size_t c = 0; c < 3; ++c) {
        if (auto e = r.number(*a->get(c), "liquid.colour", p.colour[c])) return e;
      }
    } else return r.unknown("liquid." + std::string(key));
    if (err) return err;
  }
  return std::nullopt;
}

Status parse_vec3(const toml::node& n, std::string_view key, Vec3f& out, const Reader& r) {
  const toml::array* a = n.as_array();
  if (a == nullptr || a->size() != 3) return r.invalid(key, "must be [x, y, z]");
  float v[3];
  for (std::size_t c = 0; c < 3; ++c) {
    if (auto e = r.number(*a->get(c), key, v[c])) return e;
  }
  out = {v[0], v[1], v[2]};
  return std::nullopt;
}

Status parse_region(const toml::table& t, RegionSpec& g, const Reader& r) {
  for (auto&& [k, node] : t) {
    const std::string_view key = k.str();
    Status err;
    if (key == "min") err = parse_vec3(node, "min", g.min, r);
    else if (key == "max") err = parse_vec3(node, "max", g.max, r);
    else if (key == "temperature") err = r.number(node, key, g.temperature);
    else if (key == "remove") err = r.boolean(node, key, g.remove);
    else if (key == "fractions") {
      const toml::array* a = node.as_array();
      if (a == nullptr || a->size() < 1 || a->size() > kMaxPhases)
        return r.invalid(key, "must list 1 to 4 fractions");
      g.fractions = {0, 0, 0, 0};
      for (std::size_t c = 0; c < a->size(); ++c) {
        if (auto e = r.number(*a->get(c), key, g.fractions[c])) return e;
      }
      g.set_fractions = true;
    } else return r.unknown(key);
    if (err) return err;
  }
  return std::nullopt;
}

}  // namespace

bool is_media_table(std::string_view name) {
  for (std::string_view t : kTables)
    if (name == t) return true;
  return false;
}

Status parse_media_table(std::string_view name, const toml::node& node, Material& m,
                         std::string_view source) {
  if (name == "regions") {  // [[regions]]: an array of tables
    const toml::array* a = node.as_array();
    if (a == nullptr || !a->is_array_of_tables()) return bad(source, "'regions' must be [[regions]] tables");
    if (a->size() > kMaxRegions)
      return bad(source, "at most " + std::to_string(kMaxRegions) + " [[regions]]");
    const Reader r(name, source);
    m.media.region_count = static_cast<int>(a->size());
    for (std::size_t i = 0; i < a->size(); ++i) {
      m.media.regions[i] = RegionSpec{};
      if (auto e = parse_region(*a->get(i)->as_table(), m.media.regions[i], r)) return e;
    }
    return std::nullopt;
  }
  const toml::table* t = node.as_table();
  if (t == nullptr) {
    std::string what(name);
    what += " must be a table";
    return bad(source, what);
  }
  const Reader r(name, source);
  MediaSpec& md = m.media;
  if (name == "thermal") md.thermal.enabled = true;
  if (name == "turbulence") md.turbulence.enabled = true;
  if (name == "gun") md.gun.enabled = true;
  for (auto&& [k, v] : *t) {
    const std::string_view key = k.str();
    Status err;
    int choice = 0;
    if (name == "phases") {
      if (key == "diffusion") err = r.number(v, key, md.phases.diffusion);
      else if (key == "liquid") {
        const toml::array* a = v.as_array();
        if (a == nullptr || !a->is_array_of_tables())
          return bad(source, "key 'phases.liquid' must be an array of tables ([[phases.liquid]])");
        if (a->size() < 1 || a->size() > kMaxPhases)
          return bad(source, "'phases' needs 1 to " + std::to_string(kMaxPhases) + " [[phases.liquid]] tables");
        md.phases.count = static_cast<int>(a->size());
        for (std::size_t i = 0; i < a->size(); ++i) {
          md.phases.phases[i] = PhaseSpec{};
          if (auto e = parse_liquid(*a->get(i)->as_table(), md.phases.phases[i], r)) return e;
        }
      } else return r.unknown(key);
    } else if (name == "viscosity") {
      if (key == "viscosity") err = r.number(v, key, md.viscosity.viscosity);
      else if (key == "iterations") err = r.integer(v, key, md.viscosity.iterations);
      else if (key == "hand") err = r.boolean(v, key, md.viscosity.hand);
      else return r.unknown(key);
    } else if (name == "thermal") {
      ThermalSpec& th = md.thermal;
      const std::pair<std::string_view, float*> keys[] = {
          {"conductivity", &th.conductivity},
          {"specific_heat", &th.specific_heat},
          {"latent_heat", &th.latent_heat},
          {"solidus", &th.solidus},
          {"liquidus", &th.liquidus},
          {"initial_temperature", &th.initial_temperature},
          {"viscosity_ref", &th.viscosity_ref},
          {"viscosity_ref_temperature", &th.viscosity_ref_temperature},
          {"viscosity_slope", &th.viscosity_slope},
          {"viscosity_min", &th.viscosity_min},
          {"mushy_viscosity", &th.mushy_viscosity},
          {"stiffness_exponent", &th.stiffness_exponent}};
      float* target = nullptr;
      for (auto [kn, p] : keys)
        if (key == kn) target = p;
      if (target == nullptr) return r.unknown(key);
      err = r.number(v, key, *target);
    } else if (name == "density") {
      DensitySpec& d = md.density;
      if (key == "solver") {
        err = r.choice(v, key, {"pbf", "spook"}, choice);
        d.solver = choice == 0 ? DensitySolver::Pbf : DensitySolver::Spook;
      } else if (key == "method") {
        err = r.choice(v, key, {"jacobi", "cg"}, choice);
        d.method = choice == 0 ? SpookMethod::Jacobi : SpookMethod::ConjugateGradient;
      } else if (key == "tau") err = r.number(v, key, d.tau);
      else if (key == "epsilon") err = r.number(v, key, d.epsilon);
      else if (key == "gamma") err = r.number(v, key, d.gamma);
      else if (key == "omega") err = r.number(v, key, d.omega);
      else return r.unknown(key);
    } else if (name == "collision") {
      CollisionSpec& c = md.collision;
      if (key == "model") {
        err = r.choice(v, key, {"anchor", "impulse"}, choice);
        c.model = choice == 0 ? CollisionModel::Anchor : CollisionModel::Impulse;
      } else if (key == "friction") {
        err = r.choice(v, key, {"dry", "wet"}, choice);
        c.friction = choice == 0 ? FrictionModel::Dry : FrictionModel::Wet;
      } else if (key == "restitution") err = r.number(v, key, c.restitution);
      else if (key == "mu") err = r.number(v, key, c.mu);
      else if (key == "damping") err = r.number(v, key, c.damping);
      else return r.unknown(key);
    } else if (name == "gun") {
      GunSpec& g = md.gun;
      const std::pair<std::string_view, float*> keys[] = {
          {"rate", &g.rate},           {"temperature", &g.temperature}, {"speed", &g.speed},
          {"nozzle", &g.nozzle},       {"standoff", &g.standoff},       {"arc_power", &g.arc_power},
          {"arc_radius", &g.arc_radius}, {"arc_reach", &g.arc_reach},   {"fill_limit", &g.fill_limit}};
      float* target = nullptr;
      for (auto [kn, p] : keys)
        if (key == kn) target = p;
      if (key == "aim") {
        err = r.choice(v, key, {"down", "finger"}, choice);
        g.aim_finger = choice == 1;
      } else if (target != nullptr) {
        err = r.number(v, key, *target);
      } else return r.unknown(key);
    } else if (name == "turbulence") {
      TurbulenceSpec& w = md.turbulence;
      if (key == "source") {
        err = r.choice(v, key, {"octave", "spectral"}, choice);
        w.source = choice == 0 ? NoiseSource::Octave : NoiseSource::Spectral;
      } else if (key == "speed") err = r.number(v, key, w.speed);
      else if (key == "scale") err = r.number(v, key, w.scale);
      else if (key == "octaves") err = r.integer(v, key, w.octaves);
      else if (key == "drag") err = r.number(v, key, w.drag);
      else if (key == "force") err = r.number(v, key, w.force);
      else if (key == "grid_spacing") err = r.number(v, key, w.grid_spacing);
      else if (key == "seed") {
        int seed = 0;
        err = r.integer(v, key, seed);
        w.seed = static_cast<std::uint32_t>(seed);
      } else return r.unknown(key);
    }
    if (err) return err;
  }
  return std::nullopt;
}

Status validate_media(const Material& m) {
  const MediaSpec& md = m.media;
  struct Range {
    const char* key;
    double value, lo, hi;
  };
  const ThermalSpec& t = md.thermal;
  // No allocation unless something is out of range: set_material validates on the fluid
  // thread.
  const auto out_of_range = [&m](const Range& r) -> Status {
    if (std::isfinite(r.value) && r.value >= r.lo && r.value <= r.hi) return std::nullopt;
    std::ostringstream s;
    s << "'" << m.name << "': " << r.key << " = " << r.value << " is outside [" << r.lo << ", "
      << r.hi << "]";
    return FluidError{FluidErrc::BadMaterial, s.str()};
  };
  const Range ranges[] = {
      {"phases.diffusion", md.phases.diffusion, 0.0, 100.0},
      {"viscosity.viscosity", md.viscosity.viscosity, 0.0, 1e5},
      {"viscosity.iterations", static_cast<double>(md.viscosity.iterations), 0, 200},
      {"thermal.conductivity", t.conductivity, 0.0, 1e5},
      {"thermal.specific_heat", t.specific_heat, 1.0, 1e6},
      {"thermal.latent_heat", t.latent_heat, 0.0, 1e8},
      {"thermal.solidus", t.solidus, 1.0, 1e5},
      {"thermal.liquidus", t.liquidus, 1.0, 1e5},
      {"thermal.initial_temperature", t.initial_temperature, 0.0, 1e5},
      {"thermal.viscosity_ref", t.viscosity_ref, 0.0, 1e5},
      {"thermal.viscosity_ref_temperature", t.viscosity_ref_temperature, 0.0, 1e5},
      {"thermal.viscosity_slope", t.viscosity_slope, -1e3, 1e3},
      {"thermal.viscosity_min", t.viscosity_min, 1e-6, 1e5},
      {"thermal.mushy_viscosity", t.mushy_viscosity, 1e-6, 1e6},
      {"thermal.stiffness_exponent", t.stiffness_exponent, 0.0, 4.0},
      {"density.epsilon", md.density.epsilon, 0.0, 10.0},
      {"density.gamma", md.density.gamma, 0.0, 10.0},
      {"density.omega", md.density.omega, 0.01, 1.0},
      {"collision.restitution", md.collision.restitution, 0.0, 1.0},
      {"collision.mu", md.collision.mu, 0.0, 10.0},
      {"collision.damping", md.collision.damping, 0.0, 1e3},
      {"turbulence.speed", md.turbulence.speed, 0.0, 100.0},
      {"turbulence.scale", md.turbulence.scale, 1e-4, 10.0},
      {"turbulence.octaves", static_cast<double>(md.turbulence.octaves), 1, 8},
      {"turbulence.drag", md.turbulence.drag, 0.0, 1e4},
      {"turbulence.force", md.turbulence.force, 0.0, 1e4},
      {"turbulence.grid_spacing", md.turbulence.grid_spacing, 0.0, 1.0},
      {"gun.rate", md.gun.rate, 0.0, 1e5},
      {"gun.temperature", md.gun.temperature, 0.0, 1e5},
      {"gun.speed", md.gun.speed, 0.0, 100.0},
      {"gun.nozzle", md.gun.nozzle, 0.0, 1.0},
      {"gun.standoff", md.gun.standoff, 0.0, 1.0},
      {"gun.arc_power", md.gun.arc_power, 0.0, 1e6},
      {"gun.arc_radius", md.gun.arc_radius, 1e-5, 1.0},
      {"gun.arc_reach", md.gun.arc_reach, 0.0, 10.0},
      {"gun.fill_limit", md.gun.fill_limit, 0.0, 1.0},
  };
  for (const Range& r : ranges) {
    if (auto err = out_of_range(r)) return err;
  }
  for (int k = 0; k < md.region_count && k < kMaxRegions; ++k) {
    const RegionSpec& g = md.regions[static_cast<std::size_t>(k)];
    if (!(g.max.x >= g.min.x && g.max.y >= g.min.y && g.max.z >= g.min.z))
      return FluidError{FluidErrc::BadMaterial, "'" + m.name + "': regions: max must not be below min"};
    if (auto err = out_of_range({"regions.temperature", g.temperature < 0 ? 0.0 : g.temperature, 0.0, 1e5}))
      return err;
    for (float f : g.fractions) {
      if (auto err = out_of_range({"regions.fractions", f, 0.0, 1.0})) return err;
    }
  }
  for (int k = 0; k < md.phases.count && k < kMaxPhases; ++k) {
    const PhaseSpec& p = md.phases.phases[static_cast<std::size_t>(k)];
    if (auto err = out_of_range({"phases.liquid.rest_density", p.rest_density, 1.0, 1e5})) return err;
    if (auto err = out_of_range({"phases.liquid.viscosity", p.viscosity, 0.0, 1e5})) return err;
    for (float c : p.colour) {
      if (auto err = out_of_range({"phases.liquid.colour", c, 0.0, 1.0})) return err;
    }
  }
  if (md.phases.count < 0 || md.phases.count > kMaxPhases)
    return FluidError{FluidErrc::BadMaterial, "'" + m.name + "': 1 to 4 liquids"};
  // SPOOK is unstable at tau = 0 (a double eigenvalue -1) and stable for every tau > 0.
  if (!(md.density.tau > 0) || !std::isfinite(md.density.tau) || md.density.tau > 1e3) {
    std::ostringstream s;
    s << "'" << m.name << "': density.tau = " << md.density.tau
      << " must be > 0 (the SPOOK relaxation time, in substeps; 2 is critically damped)";
    return FluidError{FluidErrc::BadMaterial, s.str()};
  }
  if (t.enabled && !(t.liquidus > t.solidus)) {
    return FluidError{FluidErrc::BadMaterial,
                      "'" + m.name + "': thermal.liquidus must exceed thermal.solidus (the mushy zone)"};
  }
  return std::nullopt;
}

}  // namespace sonoflow::fluid
