#pragma once
// Loads and validates the daemon's TOML configuration against config_schema.hpp.
//
// Validation is fail-fast and complete: every unknown key (with a did-you-mean), wrong type and
// out-of-range value is reported, each naming the file, line, column and key and saying why, e.g.
//   sonoflow.toml:7:15: 'haptic.rate_hz' = 5000 Hz is out of range (min 250, max 2000)
// A config with any error is not used; sonoflowd then exits with 78 (EX_CONFIG).
#include <string>
#include <string_view>
#include <vector>

#include "daemon/config/config.hpp"

namespace sonoflow::daemon {

inline constexpr int kExitConfigInvalid = 78;  // EX_CONFIG; the unit has RestartPreventExitStatus=78

struct ConfigError {
  std::string source;  // file name, or "<string>"
  int line = 0, column = 0;
  std::string key;     // dotted key; empty for a syntax error
  std::string message;

  std::string to_string() const;  // "source:line:col: message"
};

struct ConfigResult {
  Config config;
  std::vector<ConfigError> errors;
  bool ok() const noexcept { return errors.empty(); }
  std::string error_report() const;  // one line per error plus a closing summary line
};

// Starts from `base` (built-in defaults unless given) and overlays the keys in the file/text.
ConfigResult load_config_file(const std::string& path, const Config& base = Config{});
ConfigResult load_config_string(std::string_view toml_text, std::string_view source_name,
                                const Config& base = Config{});

// Sets one key from its TOML spelling (`set haptic.mode stm` -> key "haptic.mode", value "stm";
// bare words are accepted for strings). Applies only if the key exists, is live (unless
// `allow_restart_keys`) and the value passes the schema. Returns an empty string on success,
// else why not.
std::string set_config_key(Config& config, std::string_view key, std::string_view value,
                           bool allow_restart_keys = false);

// Keys whose values differ between two configs and need a restart to change (SIGHUP reports
// them and keeps the running values).
std::vector<std::string> restart_keys_changed(const Config& running, const Config& loaded);

// Copies every live key's value from `loaded` into `running`.
void apply_live_keys(Config& running, const Config& loaded);

// The whole config as TOML text with one comment per key (`sonoflowctl config show`).
std::string render_config(const Config& config);

}  // namespace sonoflow::daemon
