#include "kernels/force_feedback/force_feedback_config.hpp"

#include <cmath>
#include <cstdio>
#include <sstream>

#include <toml++/toml.h>

namespace sonoflow::force_feedback {

namespace {

std::string number(const toml::node& n, std::string_view key, double lo, double hi, double& out) {
  const auto v = n.value<double>();
  if (!v || !(n.is_floating_point() || n.is_integer()))
    return "'force_feedback." + std::string(key) + "' must be a number";
  if (!std::isfinite(*v) || *v < lo || *v > hi) {
    std::ostringstream s;
    s << "'force_feedback." << key << "' = " << *v << " is out of range (min " << lo << ", max " << hi << ")";
    return s.str();
  }
  out = *v;
  return {};
}

std::string decimal(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  std::string s = buf;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

}  // namespace

std::string parse_force_feedback(std::string_view toml_text, ForceFeedbackSettings& out) {
  toml::table doc;
  try {
    doc = toml::parse(toml_text, std::string_view("force_feedback"));
  } catch (const toml::parse_error& e) {
    std::ostringstream s;
    s << "line " << e.source().begin.line << ": " << e.description();
    return s.str();
  }
  const toml::node* node = doc.get("force_feedback");
  if (node == nullptr) return {};
  const toml::table* t = node->as_table();
  if (t == nullptr) return "'force_feedback' must be a table";
  ForceFeedbackSettings s = out;
  for (auto&& [k, v] : *t) {
    const std::string_view key = k.str();
    std::string err;
    if (key == "enabled") {
      if (!v.is_boolean()) return "'force_feedback.enabled' must be true or false";
      s.enabled = *v.value<bool>();
    } else if (key == "device") {
      const auto d = v.value<std::string>();
      if (!d || *d != "emulated") return "'force_feedback.device' must be \"emulated\"";
      s.device = *d;
    } else if (key == "tool") {
      const auto d = v.value<std::string>();
      if (!d || (*d != "rod" && *d != "ladle")) return "'force_feedback.tool' must be \"rod\" or \"ladle\"";
      s.ladle = *d == "ladle";
    } else if (key == "tool_radius_m") err = number(v, key, 0.001, 0.05, s.tool_radius_m);
    else if (key == "tool_length_m") err = number(v, key, 0.01, 0.5, s.tool_length_m);
    else if (key == "bowl_radius_m") err = number(v, key, 0.005, 0.1, s.bowl_radius_m);
    else if (key == "force_scale") err = number(v, key, 0.0, 100.0, s.servo.force_scale);
    else if (key == "max_force_n") err = number(v, key, 0.01, 50.0, s.servo.max_force_n);
    else if (key == "max_step_n") err = number(v, key, 1e-4, 10.0, s.servo.max_step_n);
    else if (key == "servo_rate_hz") err = number(v, key, 100.0, 10000.0, s.servo.servo_rate_hz);
    else return "unknown key 'force_feedback." + std::string(key) + "'";
    if (!err.empty()) return err;
  }
  out = s;
  return {};
}

std::string render_force_feedback(const ForceFeedbackSettings& s) {
  std::string out = "[force_feedback]\n";
  const auto line = [&out](const char* key, const std::string& value, const char* doc) {
    out.append(key).append(" = ").append(value).append("  # ").append(doc).append("\n");
  };
  line("enabled", s.enabled ? "true" : "false", "render the fluid's force on a hand-held tool");
  line("device", "\"" + s.device + "\"", "force-feedback device: emulated");
  line("tool", s.ladle ? "\"ladle\"" : "\"rod\"", "tool in the fluid: rod | ladle");
  line("tool_radius_m", decimal(s.tool_radius_m), "rod / handle radius [m]");
  line("tool_length_m", decimal(s.tool_length_m), "rod / handle length [m]");
  line("bowl_radius_m", decimal(s.bowl_radius_m), "ladle cup radius [m]");
  line("force_scale", decimal(s.servo.force_scale), "device newtons per fluid newton");
  line("max_force_n", decimal(s.servo.max_force_n), "force magnitude cap [N]");
  line("max_step_n", decimal(s.servo.max_step_n), "largest change between two servo ticks [N]");
  line("servo_rate_hz", decimal(s.servo.servo_rate_hz), "servo loop rate [Hz]");
  return out;
}

}  // namespace sonoflow::force_feedback
