#include "kernels/smoke/smoke_toml.hpp"

#include <array>
#include <cstdio>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <type_traits>
#include <vector>

#include <toml++/toml.h>

namespace sonoflow::smoke {

namespace {

using opencl::Errc;
using opencl::Error;

// "file:line:column: smoke.key: what"
Error bad(std::string_view source, const toml::node& node, const std::string& key, const std::string& what) {
  std::ostringstream s;
  s << source;
  const auto& at = node.source().begin;
  if (at.line > 0) s << ":" << at.line << ":" << at.column;
  s << ": '" << key << "' " << what;
  return {Errc::BadScene, s.str()};
}

opencl::Status read_float(const toml::node& node, const std::string& key, std::string_view source, float& out) {
  if (!node.is_number()) return bad(source, node, key, "must be a number");
  const double v = *node.value<double>();
  if (!std::isfinite(v)) return bad(source, node, key, "must be finite");
  out = static_cast<float>(v);
  return std::nullopt;
}

opencl::Status read_int(const toml::node& node, const std::string& key, std::string_view source, int& out) {
  if (!node.is_integer()) return bad(source, node, key, "must be an integer");
  const auto v = *node.value<std::int64_t>();
  if (v < -1000000 || v > 1000000) return bad(source, node, key, "is out of range");
  out = static_cast<int>(v);
  return std::nullopt;
}

opencl::Status read_vec3(const toml::node& node, const std::string& key, std::string_view source, Vec3f& out) {
  const toml::array* a = node.as_array();
  if (a == nullptr || a->size() != 3) return bad(source, node, key, "must be an array of 3 numbers");
  float v[3] = {};
  for (std::size_t k = 0; k < 3; ++k) {
    if (auto err = read_float(*a->get(k), key, source, v[k])) return err;
  }
  out = {v[0], v[1], v[2]};
  return std::nullopt;
}

opencl::Status read_cells(const toml::node& node, const std::string& key, std::string_view source,
                          std::array<int, 3>& out) {
  const toml::array* a = node.as_array();
  if (a == nullptr || a->size() != 3) return bad(source, node, key, "must be an array of 3 integers");
  for (std::size_t k = 0; k < 3; ++k) {
    if (auto err = read_int(*a->get(k), key, source, out[k])) return err;
  }
  return std::nullopt;
}

opencl::Status read_open_faces(const toml::node& node, const std::string& key, std::string_view source,
                               unsigned& out) {
  const toml::array* a = node.as_array();
  if (a == nullptr) return bad(source, node, key, "must be an array of face names (-x +x -y +y -z +z)");
  constexpr std::array<std::string_view, 6> names = {"-x", "+x", "-y", "+y", "-z", "+z"};
  out = 0;
  for (const toml::node& face : *a) {
    const auto name = face.value<std::string>();
    bool known = false;
    for (std::size_t f = 0; f < names.size(); ++f) {
      if (name && *name == names[f]) {
        out |= 1u << f;
        known = true;
      }
    }
    if (!known) return bad(source, face, key, "names an unknown face (expected -x +x -y +y -z +z)");
  }
  return std::nullopt;
}

using Reader = std::function<opencl::Status(const toml::node&, const std::string&, std::string_view)>;

struct Field {
  std::string_view name;
  Reader read;
};

// Reads every key of `table` through `fields`; an unknown key is an error.
opencl::Status read_table(const toml::table& table, const std::string& prefix, std::string_view source,
                          const std::vector<Field>& fields) {
  for (auto&& [k, node] : table) {
    const std::string_view name = k.str();
    const std::string key = prefix + "." + std::string(name);
    const Field* field = nullptr;
    for (const Field& f : fields)
      if (f.name == name) field = &f;
    if (field == nullptr) return bad(source, node, key, "is not a smoke setting");
    if (auto err = field->read(node, key, source)) return err;
  }
  return std::nullopt;
}

template <class T>
Reader number(T& slot) {
  return [&slot](const toml::node& n, const std::string& key, std::string_view source) -> opencl::Status {
    if constexpr (std::is_same_v<T, int>) return read_int(n, key, source, slot);
    else return read_float(n, key, source, slot);
  };
}
Reader vec3(Vec3f& slot) {
  return [&slot](const toml::node& n, const std::string& key, std::string_view source) {
    return read_vec3(n, key, source, slot);
  };
}

opencl::Status read_smoke(const toml::table& t, std::string_view source, SmokeSetup& out) {
  SmokeConfig& c = out.config;
  PressureSettings& p = c.pressure;
  const std::vector<Field> fields = {
      {"cells", [&c](const toml::node& n, const std::string& key, std::string_view s) {
         return read_cells(n, key, s, c.cells);
       }},
      {"cell_size", number(c.cell_size)},
      {"origin", vec3(c.origin)},
      {"open_faces", [&c](const toml::node& n, const std::string& key, std::string_view s) {
         return read_open_faces(n, key, s, c.open_faces);
       }},
      {"substeps", number(c.substeps)},
      {"advection", [&c](const toml::node& n, const std::string& key, std::string_view s) -> opencl::Status {
         const auto v = n.value<std::string>();
         if (v && *v == "semi-lagrangian") c.advection = Advection::SemiLagrangian;
         else if (v && *v == "maccormack") c.advection = Advection::MacCormack;
         else return bad(s, n, key, "must be \"semi-lagrangian\" or \"maccormack\"");
         return std::nullopt;
       }},
      {"solver", [&p](const toml::node& n, const std::string& key, std::string_view s) -> opencl::Status {
         const auto v = n.value<std::string>();
         if (v && *v == "red-black-sor") p.solver = PressureSolver::RedBlackSor;
         else if (v && *v == "multigrid-cg") p.solver = PressureSolver::MultigridCg;
         else return bad(s, n, key, "must be \"red-black-sor\" or \"multigrid-cg\"");
         return std::nullopt;
       }},
      {"tolerance", number(p.tolerance)},
      {"max_iterations", number(p.max_iterations)},
      {"sor_omega", number(p.sor_omega)},
      {"check_every", number(p.check_every)},
      {"air_density", number(c.air_density)},
      {"gravity", vec3(c.gravity)},
      {"body_force", vec3(c.body_force)},
      {"smoke_weight", number(c.smoke_weight)},
      {"heat_lift", number(c.heat_lift)},
      {"vorticity", number(c.vorticity)},
      {"smoke_decay", number(c.smoke_decay)},
      {"heat_decay", number(c.heat_decay)},
      {"max_hand_speed", number(c.max_hand_speed)},
      {"teleport_distance", number(c.teleport_distance)},
      {"jet", [&out](const toml::node& n, const std::string& key, std::string_view s) -> opencl::Status {
         const toml::array* jets = n.as_array();
         if (jets == nullptr) return bad(s, n, key, "must be an array of tables ([[smoke.jet]])");
         for (const toml::node& item : *jets) {
           const toml::table* jt = item.as_table();
           if (jt == nullptr) return bad(s, item, key, "entries must be tables");
           SmokeJet& j = out.scene.jets.emplace_back();
           const std::string at = key + "[" + std::to_string(out.scene.jets.size() - 1) + "]";
           if (auto err = read_table(*jt, at, s,
                                     {{"position", vec3(j.position)}, {"velocity", vec3(j.velocity)},
                                      {"radius", number(j.radius)}, {"density", number(j.density)},
                                      {"temperature", number(j.temperature)}}))
             return err;
         }
         return std::nullopt;
       }},
      {"plume", [&out](const toml::node& n, const std::string& key, std::string_view s) -> opencl::Status {
         const toml::array* plumes = n.as_array();
         if (plumes == nullptr) return bad(s, n, key, "must be an array of tables ([[smoke.plume]])");
         for (const toml::node& item : *plumes) {
           const toml::table* pt = item.as_table();
           if (pt == nullptr) return bad(s, item, key, "entries must be tables");
           SmokePlume& q = out.scene.plumes.emplace_back();
           const std::string at = key + "[" + std::to_string(out.scene.plumes.size() - 1) + "]";
           if (auto err = read_table(*pt, at, s,
                                     {{"position", vec3(q.position)}, {"radius", number(q.radius)},
                                      {"density", number(q.density)}, {"temperature", number(q.temperature)}}))
             return err;
         }
         return std::nullopt;
       }},
  };
  if (auto err = read_table(t, "smoke", source, fields)) return err;
  if (auto err = validate(c)) {
    return Error{Errc::BadScene, std::string(source) + ": [smoke] " + err->message};
  }
  if (auto err = validate(out.scene)) return Error{Errc::BadScene, std::string(source) + ": " + err->message};
  return std::nullopt;
}

}  // namespace

opencl::Expected<SmokeSetup> parse_smoke_setup(std::string_view toml_text, std::string_view source) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << source << ":" << e.source().begin.line << ":" << e.source().begin.column
      << ": TOML syntax error: " << e.description();
    return Error{Errc::BadScene, s.str()};
  }
  SmokeSetup setup;
  const toml::node* smoke = doc.get("smoke");
  if (smoke == nullptr) return setup;
  const toml::table* t = smoke->as_table();
  if (t == nullptr) return bad(source, *smoke, "smoke", "must be a table");
  if (auto err = read_smoke(*t, source, setup)) return *err;
  return setup;
}

opencl::Expected<SmokeSetup> load_smoke_setup(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{Errc::FileNotFound, "cannot read " + path};
  std::ostringstream text;
  text << in.rdbuf();
  return parse_smoke_setup(text.str(), path);
}

namespace {

bool same(const Vec3f& a, const Vec3f& b) { return a == b; }

}  // namespace

bool same_setup(const SmokeSetup& a, const SmokeSetup& b) {
  const SmokeConfig &x = a.config, &y = b.config;
  const bool config = x.device.platform == y.device.platform && x.device.device == y.device.device &&
                      x.device.type == y.device.type && x.cells == y.cells && x.cell_size == y.cell_size &&
                      same(x.origin, y.origin) && x.open_faces == y.open_faces && x.substeps == y.substeps &&
                      x.advection == y.advection && x.pressure.solver == y.pressure.solver &&
                      x.pressure.tolerance == y.pressure.tolerance &&
                      x.pressure.max_iterations == y.pressure.max_iterations &&
                      x.pressure.sor_omega == y.pressure.sor_omega &&
                      x.pressure.check_every == y.pressure.check_every && x.air_density == y.air_density &&
                      same(x.gravity, y.gravity) && same(x.body_force, y.body_force) &&
                      x.smoke_weight == y.smoke_weight && x.heat_lift == y.heat_lift &&
                      x.vorticity == y.vorticity && x.smoke_decay == y.smoke_decay &&
                      x.heat_decay == y.heat_decay && x.max_hand_speed == y.max_hand_speed &&
                      x.teleport_distance == y.teleport_distance && x.profile == y.profile;
  if (!config || a.scene.jets.size() != b.scene.jets.size() || a.scene.plumes.size() != b.scene.plumes.size())
    return false;
  for (std::size_t k = 0; k < a.scene.jets.size(); ++k) {
    const SmokeJet &p = a.scene.jets[k], &q = b.scene.jets[k];
    if (!same(p.position, q.position) || !same(p.velocity, q.velocity) || p.radius != q.radius ||
        p.density != q.density || p.temperature != q.temperature)
      return false;
  }
  for (std::size_t k = 0; k < a.scene.plumes.size(); ++k) {
    const SmokePlume &p = a.scene.plumes[k], &q = b.scene.plumes[k];
    if (!same(p.position, q.position) || p.radius != q.radius || p.density != q.density ||
        p.temperature != q.temperature)
      return false;
  }
  return true;
}

namespace {

std::string num_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  std::string t = buf;
  if (t.find_first_of(".eEn") == std::string::npos) t += ".0";
  return t;
}
// Built with append(): GCC 12 warns falsely (-Wrestrict, PR 105329) on "literal" + std::string.
std::string vec_text(const Vec3f& v) {
  std::string s("[");
  s.append(num_text(v.x)).append(", ").append(num_text(v.y)).append(", ").append(num_text(v.z)).append("]");
  return s;
}

}  // namespace

std::string render_smoke_setup(const SmokeSetup& setup) {
  const SmokeConfig& c = setup.config;
  std::string out = "[smoke]\n";
  const auto line = [&out](const char* key, const std::string& value, const char* doc) {
    out.append(key).append(" = ").append(value).append("  # ").append(doc).append("\n");
  };
  std::string cells("[");
  cells.append(std::to_string(c.cells[0])).append(", ").append(std::to_string(c.cells[1])).append(", ");
  cells.append(std::to_string(c.cells[2])).append("]");
  line("cells", cells, "grid size");
  line("cell_size", num_text(c.cell_size), "[m]");
  line("origin", vec_text(c.origin), "the grid's low corner [m]");
  std::string faces("[");
  constexpr const char* names[6] = {"-x", "+x", "-y", "+y", "-z", "+z"};
  for (int f = 0; f < 6; ++f) {
    if ((c.open_faces >> f) & 1u) faces.append(faces.size() > 1 ? ", \"" : "\"").append(names[f]).append("\"");
  }
  faces.append("]");
  line("open_faces", faces, "faces air flows through; the rest are walls");
  line("substeps", std::to_string(c.substeps), "steps per fluid frame");
  const auto quoted = [](const char* v) { return std::string("\"").append(v).append("\""); };
  line("advection", quoted(to_string(c.advection)), "semi-lagrangian | maccormack");
  line("solver", quoted(to_string(c.pressure.solver)), "red-black-sor | multigrid-cg");
  line("tolerance", num_text(c.pressure.tolerance), "largest divergence left by the projection [1/s]");
  line("max_iterations", std::to_string(c.pressure.max_iterations), "pressure iterations per step, at most");
  line("sor_omega", num_text(c.pressure.sor_omega), "SOR over-relaxation; 0 = optimal");
  line("check_every", std::to_string(c.pressure.check_every), "SOR sweeps between residual checks");
  line("air_density", num_text(c.air_density), "[kg/m^3]");
  line("gravity", vec_text(c.gravity), "buoyancy acts against it [m/s^2]");
  line("body_force", vec_text(c.body_force), "[m/s^2]");
  line("smoke_weight", num_text(c.smoke_weight), "per unit smoke density [m/s^2]");
  line("heat_lift", num_text(c.heat_lift), "per K above ambient [m/s^2]");
  line("vorticity", num_text(c.vorticity), "vorticity confinement [1/s]");
  line("smoke_decay", num_text(c.smoke_decay), "[1/s]");
  line("heat_decay", num_text(c.heat_decay), "[1/s]");
  line("max_hand_speed", num_text(c.max_hand_speed), "[m/s]");
  line("teleport_distance", num_text(c.teleport_distance), "[m]");
  for (const SmokeJet& j : setup.scene.jets) {
    out.append("[[smoke.jet]]\nposition = ").append(vec_text(j.position));
    out.append("\nvelocity = ").append(vec_text(j.velocity)).append("\nradius = ").append(num_text(j.radius));
    out.append("\ndensity = ").append(num_text(j.density)).append("\ntemperature = ");
    out.append(num_text(j.temperature)).append("\n");
  }
  for (const SmokePlume& p : setup.scene.plumes) {
    out.append("[[smoke.plume]]\nposition = ").append(vec_text(p.position)).append("\nradius = ");
    out.append(num_text(p.radius)).append("\ndensity = ").append(num_text(p.density));
    out.append("\ntemperature = ").append(num_text(p.temperature)).append("\n");
  }
  return out;
}

}  // namespace sonoflow::smoke
