// The parameters of a manifest check (CheckSpec::params_json), read by one strict rule for every
// world driver: a JSON object whose members are exactly those the driver's check call declares,
// each a string of 1..1024 bytes or an integer 0..65535, no duplicate at any depth, every
// required one there, errors naming the JSON path. What a value means (a path, a node name, a
// mode) the driver checks afterwards, with its own words.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::scenario {

inline constexpr size_t kMaxCheckTextBytes = 1024;
inline constexpr int64_t kMaxCheckInteger = 65535;

// One parameter a driver's check call takes.
struct CheckParamSpec {
  enum class Type { kText, kInteger };
  std::string_view name;
  Type type = Type::kText;
  bool required = true;
};

// The values of a check's parameters, by name.
class CheckParams {
 public:
  std::string get(std::string_view name) const;                 // "" when absent
  std::optional<int64_t> get_int(std::string_view name) const;  // nullopt when absent
  bool has(std::string_view name) const;

 private:
  friend Result<CheckParams> parse_check_params(std::string_view, std::span<const CheckParamSpec>,
                                                std::string_view);
  std::map<std::string, std::string, std::less<>> text_;
  std::map<std::string, int64_t, std::less<>> integer_;
};

// Reads `params_json` (empty reads as {}) with the strict reader (engine/json) against `spec`.
// kInvalidArgument, `path` naming the params before the member ("checks[0].params: colour:
// unknown member", "...: port: an integer 0..65535", "...: value: required", "...: to: a string
// of 1..1024 bytes"; a duplicate member, nesting past 4 levels or a string past 1024 bytes
// anywhere is refused by the reader, naming its path too).
Result<CheckParams> parse_check_params(std::string_view params_json,
                                       std::span<const CheckParamSpec> spec, std::string_view path);

}  // namespace aura::scenario
