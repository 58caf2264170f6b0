#pragma once
// The schema of the daemon's configuration: for every key its type, range or choices, unit,
// whether it may change while the daemon runs, one line of documentation, and where in a
// Config its value lives. The loader, SIGHUP reload, `sonoflowctl set` and the test that checks
// config/sonoflow.toml all work from this one table.
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/config/config.hpp"

namespace sonoflow::daemon {

enum class KeyKind { Bool, Int, Float, String, Choice };

// Live keys are applied on SIGHUP and by `sonoflowctl set`; restart keys need a restart.
enum class Reload { Live, Restart };

using ValueSlot = std::variant<bool*, int*, double*, std::string*>;

struct KeyInfo {
  std::string_view key;                  // dotted path, e.g. "haptic.mode"
  KeyKind kind;
  double min = 0, max = 0;               // Int and Float only, inclusive
  std::vector<std::string_view> choices; // Choice only
  Reload reload = Reload::Restart;
  std::string_view unit;                 // "" when dimensionless
  std::string_view doc;
  ValueSlot slot;                        // points into the Config the table was built for
};

// The schema bound to `config`: every entry's slot points into it.
std::vector<KeyInfo> config_keys(Config& config);

// A value as text, the way it is written in TOML (strings quoted).
std::string format_value(const KeyInfo& key);

}  // namespace sonoflow::daemon
