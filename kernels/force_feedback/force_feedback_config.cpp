#include "kernels/force_feedback/force_feedback_config.hpp"

#include <cmath>
#include <sstream>

#include <toml++/toml.h>

namespace sonoflow::force_feedback {

namespace {

std::string number(const toml::node& n, std::string_view key, double lo, double hi, double& out) {
  const auto v = n.value<double>();
  if (!v || !(n.is_floating_point() || n.is_integer()))
    return "key 'force_feedback." + std::string(key) + "' must be a number";
  if (!std::isfinite(*v) || *v < lo || *v > hi) {
    std::ostringstream s;
    s << "force_feedback." << key << " = " << *v << " is outside [" << lo << ", " << hi << "]";
    return s.str();
  }
  out = *v;
  return {};
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
      if (!v.is_boolean()) return "key 'force_feedback.enabled' must be true or false";
      s.enabled = *v.value<bool>();
    } else if (key == "device") {
      const auto d = v.value<std::string>();
      if (!d || *d != "emulated") return "key 'force_feedback.device' must be \"emulated\"";
      s.device = *d;
    } else if (key == "tool") {
      const auto d = v.value<std::string>();
      if (!d || (*d != "rod" && *d != "ladle")) return "key 'force_feedback.tool' must be \"rod\" or \"ladle\"";
      s.ladle = *d == "ladle";
    } else if (key == "tool_radius_m") err = number(v, key, 0.001, 0.05, s.tool_radius_m);
    else if (key == "tool_length_m") err = number(v, key, 0.01, 0.5, s.tool_length_m);
    else if (key == "bowl_radius_m") err = number(v, key, 0.005, 0.1, s.bowl_radius_m);
    else if (key == "force_scale") err = number(v, key, 0.0, 100.0, s.servo.force_scale);
    else if (key == "max_force_n") err = number(v, key, 0.0, 50.0, s.servo.max_force_n);
    else if (key == "max_step_n") err = number(v, key, 1e-4, 10.0, s.servo.max_step_n);
    else if (key == "servo_rate_hz") err = number(v, key, 100.0, 10000.0, s.servo.servo_rate_hz);
    else return "unknown key 'force_feedback." + std::string(key) + "'";
    if (!err.empty()) return err;
  }
  out = s;
  return {};
}

}  // namespace sonoflow::force_feedback
