// Service units for the lab's minimal service manager (aura-svcman), which runs inside O2
// worlds: what to run, as whom, where, with which environment, and when to restart it. A unit
// file is "key=value" lines (docs/SERVICES.md); parse_unit() is strict and names the line of
// every error, so a broken unit is a clear fact a learner can probe, never a silent default.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::services {

inline constexpr size_t kMaxUnitBytes = 16 << 10;
inline constexpr size_t kMaxArgs = 32;
inline constexpr size_t kMaxEnvEntries = 128;
inline constexpr size_t kMaxEnvFileBytes = 64 << 10;

enum class Restart { kNo, kOnFailure, kAlways };
std::string_view restart_name(Restart r);

struct Unit {
  std::string name;               // the file name without ".unit": [a-z][a-z0-9-]{0,31}
  std::vector<std::string> exec;  // exec=/abs/path arg ... (split on single spaces)
  std::string user;   // user=NAME or a number; the service never gets root from a default
  std::string group;  // group=NAME or a number; default: the user's primary group
  std::vector<std::string> supplementary_groups;  // added to the user's /etc/group memberships
  std::string working_directory;                  // absolute; default "/"
  std::string environment_file;                   // absolute; optional ("" = none)
  Restart restart = Restart::kOnFailure;
  uint32_t restart_delay_ms = 200;  // 10..60000
  uint32_t start_limit = 5;         // restarts within start_limit_window_ms before "failed"
  uint32_t start_limit_window_ms = 10'000;
};

// Parses a unit file's bytes. `name` is the unit's name (from its file name).
Result<Unit> parse_unit(std::string_view name, std::string_view text);

// Parses an environment file: KEY=VALUE lines, '#' comments and blank lines; keys
// [A-Z_][A-Z0-9_]*; at most kMaxEnvEntries. Returns "KEY=VALUE" strings.
Result<std::vector<std::string>> parse_environment_file(std::string_view text);

bool is_valid_unit_name(std::string_view name);

}  // namespace aura::services
