#include "daemon/config/config_loader.hpp"

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "daemon/config/config_schema.hpp"
#include "kernels/smoke/smoke_live.hpp"

namespace sonoflow::daemon {
namespace {

// Joins text pieces with append(): GCC 12 warns falsely (-Wrestrict, PR 105329) on
// `"literal" + std::string` chains.
template <typename... Pieces>
std::string concat(const Pieces&... pieces) {
  std::string out;
  (out.append(std::string_view(pieces)), ...);
  return out;
}

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.10g", v);
  return buf;
}

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string did_you_mean(std::string_view key, const std::vector<KeyInfo>& keys) {
  std::string_view best;
  std::size_t best_distance = 4;  // suggest only near misses
  for (const auto& k : keys) {
    const std::size_t d = edit_distance(key, k.key);
    if (d < best_distance) {
      best_distance = d;
      best = k.key;
    }
  }
  return best.empty() ? std::string{} : " (did you mean '" + std::string(best) + "'?)";
}

std::string_view type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::table: return "table";
    case toml::node_type::array: return "array";
    case toml::node_type::string: return "string";
    case toml::node_type::integer: return "integer";
    case toml::node_type::floating_point: return "float";
    case toml::node_type::boolean: return "boolean";
    default: return "date/time";
  }
}

std::string_view kind_name(KeyKind kind) {
  switch (kind) {
    case KeyKind::Bool: return "boolean";
    case KeyKind::Int: return "integer";
    case KeyKind::Float: return "number";
    case KeyKind::String:
    case KeyKind::Choice: return "string";
  }
  return "?";
}

const KeyInfo* find_key(const std::vector<KeyInfo>& keys, std::string_view name) {
  for (const auto& k : keys)
    if (k.key == name) return &k;
  return nullptr;
}

// Checks `node` against `key` and stores it; returns why not, or "" when stored.
std::string assign(const KeyInfo& key, const toml::node& node) {
  const std::string name = concat("'", key.key, "'");
  const auto wrong_type = [&] {
    std::string found(type_name(node));
    if (auto s = node.value<std::string>()) found = concat(found, " \"", *s, "\"");
    return concat(name, ": expected ", kind_name(key.kind), ", found ", found);
  };
  const auto range_check = [&](double v) -> std::string {
    if (v >= key.min && v <= key.max) return {};
    const std::string_view space = key.unit.empty() ? "" : " ";
    return concat(name, " = ", number_text(v), space, key.unit, " is out of range (min ",
                  number_text(key.min), ", max ", number_text(key.max), ")");
  };

  switch (key.kind) {
    case KeyKind::Bool: {
      if (!node.is_boolean()) return wrong_type();
      *std::get<bool*>(key.slot) = *node.value<bool>();
      return {};
    }
    case KeyKind::Int: {
      if (!node.is_integer()) return wrong_type();
      const auto v = *node.value<std::int64_t>();
      if (auto why = range_check(static_cast<double>(v)); !why.empty()) return why;
      *std::get<int*>(key.slot) = static_cast<int>(v);
      return {};
    }
    case KeyKind::Float: {
      if (!node.is_number()) return wrong_type();
      const double v = *node.value<double>();
      if (!std::isfinite(v)) return concat(name, " = ", number_text(v), " is not a finite number");
      if (auto why = range_check(v); !why.empty()) return why;
      *std::get<double*>(key.slot) = v;
      return {};
    }
    case KeyKind::String: {
      if (!node.is_string()) return wrong_type();
      *std::get<std::string*>(key.slot) = *node.value<std::string>();
      return {};
    }
    case KeyKind::Choice: {
      if (!node.is_string()) return wrong_type();
      const std::string v = *node.value<std::string>();
      if (std::find(key.choices.begin(), key.choices.end(), v) == key.choices.end()) {
        std::string list;
        for (auto c : key.choices) list = concat(list, list.empty() ? "" : ", ", c);
        return concat(name, " = \"", v, "\" is not one of: ", list);
      }
      *std::get<std::string*>(key.slot) = v;
      return {};
    }
  }
  return "unhandled key kind";
}

// [force_feedback] is not in the schema: kernels/force_feedback reads it (one place for its
// keys and ranges). Each key goes to that reader alone, so every bad key is reported at its own
// line and column like the schema's keys.
constexpr std::string_view kForceFeedbackTable = "force_feedback";

void read_force_feedback(const toml::node& node, std::string_view source,
                         force_feedback::ForceFeedbackSettings& out, std::vector<ConfigError>& errors) {
  const auto error = [&](const toml::node& at, std::string key, std::string message) {
    const auto& where = at.source().begin;
    errors.push_back(ConfigError{std::string(source), static_cast<int>(where.line),
                                 static_cast<int>(where.column), std::move(key), std::move(message)});
  };
  const toml::table* table = node.as_table();
  if (table == nullptr) {
    error(node, std::string(kForceFeedbackTable), "'force_feedback' must be a table");
    return;
  }
  for (auto&& [name, value] : *table) {
    toml::table inner;
    inner.insert(name, value);
    toml::table one;
    one.insert(kForceFeedbackTable, std::move(inner));
    std::ostringstream text;
    text << one;
    std::string why = force_feedback::parse_force_feedback(text.str(), out);
    if (!why.empty()) error(value, concat(kForceFeedbackTable, ".", name.str()), std::move(why));
  }
}

void walk(const toml::table& table, const std::string& prefix, const std::vector<KeyInfo>& keys,
          std::string_view source, std::vector<ConfigError>& errors) {
  for (auto&& [name, node] : table) {
    if (prefix.empty() && name.str() == kForceFeedbackTable) continue;  // read_force_feedback
    if (prefix.empty() && name.str() == "smoke") continue;              // read_smoke_table
    const std::string path = prefix.empty() ? std::string(name.str())
                                            : prefix + "." + std::string(name.str());
    const auto& where = node.source().begin;
    const auto error = [&](std::string message) {
      errors.push_back(ConfigError{std::string(source), static_cast<int>(where.line),
                                   static_cast<int>(where.column), path, std::move(message)});
    };
    if (const KeyInfo* key = find_key(keys, path)) {
      if (auto why = assign(*key, node); !why.empty()) error(std::move(why));
      continue;
    }
    if (const toml::table* sub = node.as_table()) {
      // A table is fine when some key lives under it.
      const bool known_prefix = std::any_of(keys.begin(), keys.end(), [&](const KeyInfo& k) {
        return k.key.substr(0, path.size() + 1) == path + ".";
      });
      if (known_prefix) {
        walk(*sub, path, keys, source, errors);
        continue;
      }
    }
    error("unknown key '" + path + "'" + did_you_mean(path, keys));
  }
}

// The longest ramp from the force cap to zero the config may ask for: stop() waits 500 ms for
// the array's fade and the force's ramp together, and a stalled fluid should not keep the device
// pushing for long.
constexpr double kForceRampLimitMs = 250;

// Rules that involve more than one key.
void check_cross_keys(const Config& c, std::string_view source,
                      std::vector<ConfigError>& errors) {
  const auto error = [&](std::string key, std::string message) {
    errors.push_back(ConfigError{std::string(source), 0, 0, std::move(key), std::move(message)});
  };
  if (c.tracker.rate_hz != 90 && c.tracker.rate_hz != 120)
    error("tracker.rate_hz", "'tracker.rate_hz' = " + std::to_string(c.tracker.rate_hz) +
                                 " Hz is not a tracker rate (90 or 120)");
  if (c.safety.stale_after_ms + c.safety.fade_ms > 100)
    error("safety.fade_ms", "'safety.stale_after_ms' + 'safety.fade_ms' = " +
                                std::to_string(c.safety.stale_after_ms + c.safety.fade_ms) +
                                " ms exceeds 100 ms (the array must be silent within 100 ms of "
                                "tracking loss)");
  // The fluid thread enqueues a frame's kernels and waits for the workers: workers at or above it
  // preempt it mid-enqueue or keep it from the CPU when their work is done (bench/RESULTS.md, poclprio).
  // A fluid thread on normal scheduling takes its workers with it (opencl_workers.hpp).
  if (c.threads.fluid.priority > 0 && c.threads.opencl.priority >= c.threads.fluid.priority)
    error("threads.opencl.priority",
          "'threads.opencl.priority' = " + std::to_string(c.threads.opencl.priority) +
              " is not below 'threads.fluid.priority' (" + std::to_string(c.threads.fluid.priority) +
              "): the OpenCL workers must not preempt the fluid thread that feeds them (0 leaves them "
              "on normal scheduling)");
  if (c.recorder.buffer_kib % 4 != 0)
    error("recorder.buffer_kib", "'recorder.buffer_kib' = " + std::to_string(c.recorder.buffer_kib) +
                                     " is not a multiple of 4 (O_DIRECT needs 4 KiB blocks)");
  if (c.fluid.particles > c.fluid.max_particles)
    error("fluid.particles", "'fluid.particles' = " + std::to_string(c.fluid.particles) +
                                 " exceeds 'fluid.max_particles' (" + std::to_string(c.fluid.max_particles) +
                                 "): the pool would not fit the particle buffers");
  if (c.status.path.empty()) error("status.path", "'status.path' must not be empty");
  if (c.control.socket.empty()) error("control.socket", "'control.socket' must not be empty");
  if (c.force_feedback.servo.servo_rate_hz < c.fluid.rate_hz)
    error("force_feedback.servo_rate_hz",
          concat("'force_feedback.servo_rate_hz' = ", number_text(c.force_feedback.servo.servo_rate_hz),
                 " Hz is below 'fluid.rate_hz' (", number_text(c.fluid.rate_hz),
                 " Hz): the servo upsamples the fluid's force"));
  if (c.force_feedback.enabled && c.safety.force_stale_after_ms * 1e-3 * c.fluid.rate_hz < 2)
    error("safety.force_stale_after_ms",
          concat("'safety.force_stale_after_ms' = ", std::to_string(c.safety.force_stale_after_ms),
                 " ms is shorter than two fluid frames at 'fluid.rate_hz' = ", number_text(c.fluid.rate_hz),
                 " Hz: the tool force would count as stale between frames"));
  const auto& servo = c.force_feedback.servo;
  const double ramp_ms = servo.max_force_n / servo.max_step_n / servo.servo_rate_hz * 1e3;
  if (c.force_feedback.enabled && ramp_ms > kForceRampLimitMs)
    error("force_feedback.max_step_n",
          concat("'force_feedback.max_force_n' / 'force_feedback.max_step_n' at 'force_feedback.servo_rate_hz' = ",
                 number_text(ramp_ms), " ms of ramp from the cap to zero, over ",
                 number_text(kForceRampLimitMs), " ms (a stop must release the device promptly)"));
  if (c.fluid.material.empty() ||
      c.fluid.material.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") !=
          std::string::npos)
    error("fluid.material", "'fluid.material' = \"" + c.fluid.material +
                                "\" is not a preset name (lower-case letters, digits, '-', '_')");
}

// The [smoke] table, when the document has one, through kernels/smoke's reader (its errors name
// file, line and key already).
void read_smoke_table(const toml::table& table, std::string_view text, std::string_view source,
                      ConfigResult& result) {
  if (!table.contains("smoke")) return;
  auto setup = smoke::parse_smoke_setup(text, source);
  if (!setup) {
    // "source:line:column: what" back into its parts.
    ConfigError e{std::string(source), 0, 0, "smoke", setup.error().message};
    const std::string& m = setup.error().message;
    if (m.compare(0, source.size() + 1, std::string(source) + ":") == 0) {
      int line = 0, column = 0, used = 0;
      if (std::sscanf(m.c_str() + source.size() + 1, "%d:%d: %n", &line, &column, &used) == 2 && used > 0) {
        e.line = line;
        e.column = column;
        e.message = m.substr(source.size() + 1 + static_cast<std::size_t>(used));
      } else {
        e.message = m.substr(m.find(": ") == std::string::npos ? 0 : m.find(": ") + 2);
      }
    }
    result.errors.push_back(std::move(e));
    return;
  }
  result.config.smoke = std::move(setup.value());
}

ConfigResult load_table(const toml::table& table, std::string_view text, std::string_view source,
                        const Config& base) {
  ConfigResult result{base, {}};
  auto keys = config_keys(result.config);
  if (const toml::node* ff = table.get(kForceFeedbackTable))
    read_force_feedback(*ff, source, result.config.force_feedback, result.errors);
  walk(table, "", keys, source, result.errors);
  read_smoke_table(table, text, source, result);
  check_cross_keys(result.config, source, result.errors);
  return result;
}

ConfigResult parse_failure(const toml::parse_error& e, std::string_view source) {
  ConfigResult result;
  const auto& where = e.source().begin;
  result.errors.push_back(ConfigError{std::string(source), static_cast<int>(where.line),
                                      static_cast<int>(where.column), "",
                                      "TOML syntax error: " + std::string(e.description())});
  return result;
}

}  // namespace

std::string ConfigError::to_string() const {
  std::string s = source;
  if (line > 0) {
    s.append(":").append(std::to_string(line)).append(":").append(std::to_string(column));
  }
  s.append(": ").append(message);
  return s;
}

std::string ConfigResult::error_report() const {
  std::set<std::string> files;
  std::string out;
  for (const auto& e : errors) {
    out += "sonoflowd: config: " + e.to_string() + "\n";
    files.insert(e.source);
  }
  out += "sonoflowd: configuration invalid (" + std::to_string(errors.size()) +
         (errors.size() == 1 ? " error" : " errors") + " in " + std::to_string(files.size()) +
         (files.size() == 1 ? " file" : " files") + "); not starting\n";
  return out;
}

ConfigResult load_config_file(const std::string& path, const Config& base) {
  if (std::FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
  } else {
    ConfigResult result{base, {}};
    result.errors.push_back(ConfigError{path, 0, 0, "", concat("cannot read config file: ", std::strerror(errno))});
    return result;
  }
  try {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return load_table(toml::parse(text.str(), path), text.str(), path, base);
  } catch (const toml::parse_error& e) {
    // toml++ reports a missing file as a parse error too; its description says which.
    return parse_failure(e, path);
  }
}

ConfigResult load_config_string(std::string_view text, std::string_view source,
                                const Config& base) {
  try {
    return load_table(toml::parse(text, source), text, source, base);
  } catch (const toml::parse_error& e) {
    return parse_failure(e, source);
  }
}

std::string set_config_key(Config& config, std::string_view key, std::string_view value,
                           bool allow_restart_keys) {
  Config candidate = config;
  if (key.substr(0, kForceFeedbackTable.size() + 1) == concat(kForceFeedbackTable, ".")) {
    if (!allow_restart_keys) return concat("'", key, "' cannot change while running (restart needed)");
    std::string why = force_feedback::parse_force_feedback(
        concat("[", kForceFeedbackTable, "]\n", key.substr(kForceFeedbackTable.size() + 1), " = ", value),
        candidate.force_feedback);
    if (!why.empty()) return why;
    config = candidate;
    return {};
  }
  auto keys = config_keys(candidate);
  const KeyInfo* info = find_key(keys, key);
  if (info == nullptr) return concat("unknown key '", key, "'", did_you_mean(key, keys));
  if (info->reload == Reload::Restart && !allow_restart_keys)
    return concat("'", key, "' cannot change while running (restart needed)");
  // Parse the value as TOML; a bare word is taken as a string.
  toml::table parsed;
  try {
    parsed = toml::parse(concat("v = ", value));
  } catch (const toml::parse_error&) {
    try {
      parsed = toml::parse(concat("v = \"", value, "\""));
    } catch (const toml::parse_error&) {
      return concat("'", key, "': cannot read value '", value, "'");
    }
  }
  if (auto why = assign(*info, *parsed.get("v")); !why.empty()) return why;
  std::vector<ConfigError> errors;
  check_cross_keys(candidate, "", errors);
  if (!errors.empty()) return errors.front().message;
  config = candidate;
  return {};
}

std::vector<std::string> restart_keys_changed(const Config& running, const Config& loaded) {
  Config a = running, b = loaded;
  auto ka = config_keys(a), kb = config_keys(b);
  std::vector<std::string> changed;
  for (std::size_t i = 0; i < ka.size(); ++i) {
    if (ka[i].reload == Reload::Restart && format_value(ka[i]) != format_value(kb[i]))
      changed.emplace_back(ka[i].key);
  }
  // [force_feedback]: every key needs a restart; its rendering has one line per key.
  std::istringstream ra(force_feedback::render_force_feedback(running.force_feedback));
  std::istringstream rb(force_feedback::render_force_feedback(loaded.force_feedback));
  for (std::string la, lb; std::getline(ra, la) && std::getline(rb, lb);) {
    if (la != lb) changed.push_back(concat(kForceFeedbackTable, ".", la.substr(0, la.find(' '))));
  }
  // [smoke]: its live part (smoke_live.hpp) applies live; any other changed key is named, a
  // changed jet or plume list as the list (lists are live, so only a restart key's line differs).
  smoke::SmokeSetup restart_view = loaded.smoke;
  smoke::apply_live(restart_view, smoke::live_part(running.smoke));
  std::istringstream sa(smoke::render_smoke_setup(running.smoke));
  std::istringstream sb(smoke::render_smoke_setup(restart_view));
  std::string la, lb;
  while (true) {
    const bool more_a = static_cast<bool>(std::getline(sa, la)), more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) break;
    if (la == lb) continue;
    const std::string& line = more_a ? la : lb;
    const bool entry = line.rfind("[[", 0) == 0 || line.find('#') == std::string::npos;
    changed.push_back(entry ? "smoke.sources" : concat("smoke.", line.substr(0, line.find(' '))));
    if (entry) break;  // the lists differ from here on
  }
  return changed;
}

void apply_live_keys(Config& running, const Config& loaded) {
  Config source = loaded;
  auto to = config_keys(running);
  auto from = config_keys(source);
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i].reload != Reload::Live) continue;
    std::visit([&](auto* dst) { *dst = *std::get<decltype(dst)>(from[i].slot); }, to[i].slot);
  }
  smoke::apply_live(running.smoke, smoke::live_part(loaded.smoke));
}

std::string render_config(const Config& config) {
  Config copy = config;
  std::ostringstream out;
  std::string table;
  for (const auto& key : config_keys(copy)) {
    const auto dot = key.key.rfind('.');
    const std::string section(key.key.substr(0, dot));
    if (section != table) {
      out << (table.empty() ? "" : "\n") << "[" << section << "]\n";
      table = section;
    }
    out << key.key.substr(dot + 1) << " = " << format_value(key) << "  # " << key.doc;
    if (!key.unit.empty()) out << " [" << key.unit << "]";
    out << (key.reload == Reload::Live ? " (live)" : "") << "\n";
  }
  out << "\n" << force_feedback::render_force_feedback(config.force_feedback);
  out << "\n" << smoke::render_smoke_setup(config.smoke);
  return out.str();
}

}  // namespace sonoflow::daemon
