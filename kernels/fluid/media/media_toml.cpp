#include "kernels/fluid/media/media_toml.hpp"

#include <cmath>
#include <functional>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "kernels/fluid/material.hpp"

namespace sonoflow::fluid {

namespace {

constexpr std::string_view kTables[] = {"phases", "viscosity", "thermal", "density", "collision",
                                        "turbulence", "regions", "gun"};

FluidError bad(std::string_view source, const std::string& what) {
  return {FluidErrc::BadMaterial, std::string(source) + ": " + what};
}

// Where one key of a table goes, and how its value is read: a number, an integer, a flag, or a
// reader of its own (choices, arrays, nested tables). `where` is the key's dotted name for errors.
using ReadOwn = std::function<Status(const toml::node&, const std::string& where)>;
struct Key {
  std::string_view name;
  std::variant<float*, int*, bool*, std::uint32_t*, ReadOwn> into;
};

class Reader {
 public:
  Reader(std::string_view table, std::string_view source) : table_(table), source_(source) {}

  // Reads every key of `t` through `keys`; a key not among them is refused.
  Status read(const toml::table& t, std::initializer_list<Key> keys) const {
    for (auto&& [k, node] : t) {
      const Key* key = nullptr;
      for (const Key& candidate : keys)
        if (candidate.name == k.str()) key = &candidate;
      const std::string where = std::string(table_) + "." + std::string(k.str());
      if (key == nullptr) return bad(source_, "unknown key '" + where + "'");
      if (auto err = read_one(node, *key, where)) return err;
    }
    return std::nullopt;
  }

  FluidError invalid(const std::string& where, const std::string& what) const {
    return bad(source_, "key '" + where + "' " + what);
  }

  // A reader for a key that is one of the named options.
  template <typename T>
  ReadOwn one_of(std::initializer_list<std::pair<std::string_view, T>> options, T& out) const {
    return [this, options = std::vector(options), &out](const toml::node& n, const std::string& where) -> Status {
      std::string list;
      for (const auto& [name, value] : options) {
        if (n.value<std::string>() == name) {
          out = value;
          return std::nullopt;
        }
        list += (list.empty() ? "" : ", ") + std::string(name);
      }
      return invalid(where, "must be one of " + list);
    };
  }

  // A reader for a point [x, y, z].
  ReadOwn point(Vec3f& out) const {
    return [this, &out](const toml::node& n, const std::string& where) -> Status {
      float v[3];
      if (auto e = numbers(v, 3, true)(n, where)) return e;
      out = {v[0], v[1], v[2]};
      return std::nullopt;
    };
  }

  // A reader for exactly `count` numbers, or (exact false) 1 to `count` of them, into `out`.
  ReadOwn numbers(float* out, std::size_t count, bool exact) const {
    return [this, out, count, exact](const toml::node& n, const std::string& where) -> Status {
      const toml::array* a = n.as_array();
      if (a == nullptr || (exact ? a->size() != count : a->empty() || a->size() > count)) {
        return invalid(where, exact ? "must be a list of " + std::to_string(count) + " numbers"
                                    : "must list 1 to " + std::to_string(count) + " numbers");
      }
      for (std::size_t c = 0; c < a->size(); ++c) {
        if (auto e = number(*a->get(c), where, out[c])) return e;
      }
      return std::nullopt;
    };
  }

 private:
  Status read_one(const toml::node& n, const Key& key, const std::string& where) const {
    if (auto* f = std::get_if<float*>(&key.into)) return number(n, where, **f);
    if (auto* own = std::get_if<ReadOwn>(&key.into)) return (*own)(n, where);
    if (auto* b = std::get_if<bool*>(&key.into)) {
      if (!n.is_boolean()) return invalid(where, "must be true or false");
      **b = *n.value<bool>();
      return std::nullopt;
    }
    if (!n.is_integer()) return invalid(where, "must be an integer");
    const std::int64_t v = *n.value<std::int64_t>();
    if (auto* i = std::get_if<int*>(&key.into)) **i = static_cast<int>(v);
    else **std::get_if<std::uint32_t*>(&key.into) = static_cast<std::uint32_t>(v);
    return std::nullopt;
  }
  Status number(const toml::node& n, const std::string& where, float& out) const {
    if (auto v = n.value<double>(); v && (n.is_floating_point() || n.is_integer())) {
      out = static_cast<float>(*v);
      return std::nullopt;
    }
    return invalid(where, "must be a number");
  }

  std::string_view table_, source_;
};

// A list of tables ([[name]]): 1 to `most` of them, each read by `read_table`.
template <typename ReadTable>
Status read_tables(const toml::node& node, const std::string& where, int most, std::string_view source,
                   int& count, ReadTable read_table) {
  const toml::array* a = node.as_array();
  if (a == nullptr || !a->is_array_of_tables())
    return bad(source, "'" + where + "' must be [[" + where + "]] tables");
  if (a->empty() || a->size() > static_cast<std::size_t>(most))
    return bad(source, "'" + where + "' needs 1 to " + std::to_string(most) + " [[" + where + "]] tables");
  count = static_cast<int>(a->size());
  for (std::size_t i = 0; i < a->size(); ++i) {
    if (auto e = read_table(*a->get(i)->as_table(), i)) return e;
  }
  return std::nullopt;
}

Status read_phases(const toml::table& t, MultiphaseSpec& p, std::string_view source) {
  const Reader r("phases", source);
  const ReadOwn liquids = [&](const toml::node& n, const std::string& where) {
    return read_tables(n, where, kMaxPhases, source, p.count, [&](const toml::table& liquid, std::size_t i) {
      PhaseSpec& phase = p.phases[i];
      phase = PhaseSpec{};
      const Reader lr("phases.liquid", source);
      return lr.read(liquid, {{"rest_density", &phase.rest_density},
                              {"viscosity", &phase.viscosity},
                              {"colour", lr.numbers(phase.colour.data(), 3, true)}});
    });
  };
  return r.read(t, {{"diffusion", &p.diffusion}, {"liquid", liquids}});
}

Status read_regions(const toml::node& node, MediaSpec& md, std::string_view source) {
  return read_tables(node, "regions", kMaxRegions, source, md.region_count,
                     [&](const toml::table& t, std::size_t i) {
                       RegionSpec& g = md.regions[i];
                       g = RegionSpec{};
                       const Reader r("regions", source);
                       const ReadOwn fractions = [&](const toml::node& n, const std::string& where) {
                         g.fractions = {0, 0, 0, 0};
                         g.set_fractions = true;
                         return r.numbers(g.fractions.data(), kMaxPhases, false)(n, where);
                       };
                       return r.read(t, {{"min", r.point(g.min)},
                                         {"max", r.point(g.max)},
                                         {"temperature", &g.temperature},
                                         {"remove", &g.remove},
                                         {"fractions", fractions}});
                     });
}

Status read_table(std::string_view name, const toml::table& t, MediaSpec& md, std::string_view source) {
  const Reader r(name, source);
  if (name == "phases") return read_phases(t, md.phases, source);
  if (name == "viscosity") {
    ViscositySpec& v = md.viscosity;
    return r.read(t, {{"viscosity", &v.viscosity}, {"iterations", &v.iterations}, {"hand", &v.hand}});
  }
  if (name == "thermal") {
    ThermalSpec& th = md.thermal;
    th.enabled = true;  // a [thermal] table switches heat on
    return r.read(t, {{"conductivity", &th.conductivity},
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
                      {"stiffness_exponent", &th.stiffness_exponent}});
  }
  if (name == "density") {
    DensitySpec& d = md.density;
    return r.read(t, {{"solver", r.one_of({{"pbf", DensitySolver::Pbf}, {"spook", DensitySolver::Spook}}, d.solver)},
                      {"method", r.one_of({{"jacobi", SpookMethod::Jacobi}, {"cg", SpookMethod::ConjugateGradient}},
                                          d.method)},
                      {"tau", &d.tau},
                      {"epsilon", &d.epsilon},
                      {"gamma", &d.gamma},
                      {"omega", &d.omega}});
  }
  if (name == "collision") {
    CollisionSpec& c = md.collision;
    return r.read(t, {{"model", r.one_of({{"anchor", CollisionModel::Anchor}, {"impulse", CollisionModel::Impulse}},
                                         c.model)},
                      {"friction", r.one_of({{"dry", FrictionModel::Dry}, {"wet", FrictionModel::Wet}}, c.friction)},
                      {"restitution", &c.restitution},
                      {"mu", &c.mu},
                      {"damping", &c.damping}});
  }
  if (name == "turbulence") {
    TurbulenceSpec& w = md.turbulence;
    w.enabled = true;  // a [turbulence] table switches the wind on
    return r.read(t, {{"source", r.one_of({{"octave", NoiseSource::Octave}, {"spectral", NoiseSource::Spectral}},
                                          w.source)},
                      {"speed", &w.speed},
                      {"scale", &w.scale},
                      {"octaves", &w.octaves},
                      {"drag", &w.drag},
                      {"force", &w.force},
                      {"grid_spacing", &w.grid_spacing},
                      {"seed", &w.seed}});
  }
  GunSpec& g = md.gun;  // name == "gun"
  g.enabled = true;     // a [gun] table puts a welding gun in the hand
  return r.read(t, {{"rate", &g.rate},
                    {"temperature", &g.temperature},
                    {"speed", &g.speed},
                    {"nozzle", &g.nozzle},
                    {"standoff", &g.standoff},
                    {"aim", r.one_of({{"down", false}, {"finger", true}}, g.aim_finger)},
                    {"arc_power", &g.arc_power},
                    {"arc_radius", &g.arc_radius},
                    {"arc_reach", &g.arc_reach},
                    {"fill_limit", &g.fill_limit}});
}

}  // namespace

bool is_media_table(std::string_view name) {
  for (std::string_view t : kTables)
    if (name == t) return true;
  return false;
}

Status parse_media_table(std::string_view name, const toml::node& node, Material& m,
                         std::string_view source) {
  if (name == "regions") return read_regions(node, m.media, source);  // [[regions]]: a list of tables
  const toml::table* t = node.as_table();
  if (t == nullptr) return bad(source, std::string(name) + " must be a table");
  return read_table(name, *t, m.media, source);
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
  // SPOOK is a water-only density solver. It solves the density once per substep at the velocity
  // level and every sweep rebuilds the positions from x0 + dt (v + dv): the conformation sweeps
  // DC-PBD staggers with the density sweeps (thesis alg. 2), and clay's bond sweeps, would each
  // be thrown away by the next SPOOK sweep (only the last one kept), its right-hand side never
  // sees the velocity phase, and it overwrites the walls' load and approach speed that phase
  // left (CHOICES.md, "SPOOK is for water only").
  if (md.density.solver == DensitySolver::Spook && m.model != MaterialModel::Water) {
    return FluidError{FluidErrc::BadMaterial,
                      "'" + m.name + "': density.solver = \"spook\" needs model = \"water\" (this one is " +
                          std::string(to_string(m.model)) +
                          "): SPOOK rebuilds the positions on every sweep, so the conformation (DC-PBD) "
                          "and clay bond sweeps interleaved with it would be lost; use solver = \"pbf\""};
  }
  if (t.enabled && !(t.liquidus > t.solidus)) {
    return FluidError{FluidErrc::BadMaterial,
                      "'" + m.name + "': thermal.liquidus must exceed thermal.solidus (the mushy zone)"};
  }
  return std::nullopt;
}

}  // namespace sonoflow::fluid
