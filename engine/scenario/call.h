// A concrete call of a catalog entry (a probe, an action, or a check's params), parsed from
// untrusted JSON and checked parameter by parameter against its CallSpec. Only a Call that
// validated reaches a world driver. Errors name the JSON path that failed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/manifest.h"

namespace aura::scenario {

// How an action names what it acts on. A role or selector is resolved in each world by the
// driver (and so can transfer to a twin); a literal names one thing in one world.
struct Target {
  enum class Kind { kRole, kSelector, kLiteral };
  Kind kind = Kind::kRole;
  std::string name;  // the term's name, or the literal text

  bool operator==(const Target&) const = default;
};

// kString, kPath and kMode values are strings (a mode as its octal text); kInteger int64;
// kBoolean bool; kTarget Target.
using ParamValue = std::variant<std::string, int64_t, bool, Target>;

struct Call {
  std::string name;                                        // the CallSpec's name
  std::vector<std::pair<std::string, ParamValue>> params;  // sorted by name

  const ParamValue* find(std::string_view param) const;
};

// Parses `json` ({"call":"file.read","params":{...}}; "params" may be omitted when the spec
// has no required parameter) with the strict reader (engine/json) and validates it against
// `catalog` (the spec with that name). `where` names the call in every error, before the JSON
// path inside it ("probe: params.path: \"/etc/../x\" is not a normalised absolute path"; the
// path alone when `where` is empty). Refuses invalid JSON or UTF-8, duplicate members at any
// depth, unknown calls and parameters, missing required ones, wrong types, out-of-bounds values,
// a target whose term is unknown or of the wrong kind, a literal where the spec forbids it, and
// input over kMaxCallJsonBytes or nested deeper than 8 levels.
inline constexpr size_t kMaxCallJsonBytes = 64 << 10;
Result<Call> parse_call(std::string_view json, const std::vector<CallSpec>& catalog,
                        const Manifest& manifest, std::string_view where);

// Validates one value against its schema (used by parse_call and the IR validator).
Status check_param(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest,
                   std::string_view json_path);

// A normalised absolute path under `prefix` (component-wise: "/etc/app/" covers "/etc/app/x",
// not "/etc/apps"). Exposed for tests.
bool is_normalised_absolute_path(std::string_view path);
bool path_has_prefix(std::string_view path, std::string_view prefix);

// Compact JSON of a call, members in order call, params (sorted): what events record.
std::string call_json(const Call& call);

}  // namespace aura::scenario
