// The scenario manifest (manifest.json of a signed package), parsed and validated in full:
// what a learner is shown, the worlds, the probe/action/check catalogs with their parameter
// schemas, the target vocabulary and the judge-mode interventions. A Manifest only exists if
// every field validated; the attempt engine, IR validator and grader read nothing else.
// Schema: docs/SCENARIOS.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::scenario {

// How one parameter of a call is checked (docs/SCENARIOS.md, "Parameter schemas").
enum class ParamType {
  kString,   // UTF-8, min_bytes..max_bytes, no control characters; enum_values if non-empty
  kInteger,  // int64 in [min, max]
  kBoolean,
  kPath,    // absolute, normalised ('/'-separated, no "." / ".." / empty component, no NUL),
            // at most max_bytes, under one of path_prefixes (component-wise) and under none
            // of path_excludes
  kMode,    // a string of 3 or 4 octal digits ("0640"); bits outside mode_mask refused
  kTarget,  // {"role":N} | {"selector":N} | {"literal":S}: see TargetTerm
};

std::string_view param_type_name(ParamType type);  // "string" ... "target"

struct ParamSchema {
  std::string name;  // [a-z][a-z0-9_]{0,31}
  ParamType type = ParamType::kString;
  bool required = true;
  std::string description;
  // kString, kPath: byte bounds. kString: the value is one of enum_values when non-empty.
  uint32_t min_bytes = 1;
  uint32_t max_bytes = 256;
  std::vector<std::string> enum_values;
  // kPath: absolute prefixes ending in '/' (or exactly "/"); at least one.
  std::vector<std::string> path_prefixes;
  // kPath: prefixes of the same form under which a path is refused even when an allowed prefix
  // covers it (what the scenario's source of truth is made of, say); the folder itself too.
  std::vector<std::string> path_excludes;
  // kInteger
  int64_t min = 0;
  int64_t max = 0;
  // kMode
  uint32_t mode_mask = 07777;
  // kTarget: the vocabulary kind the target must have ("node", "service", "path" ...), and
  // whether a literal (a name in one world, which may not transfer) is accepted.
  std::string target_kind;
  bool allow_literal = true;
  uint32_t max_literal_bytes = 128;
};

// A probe, action or check call the scenario offers. `name` is a call the world driver
// implements (e.g. "file.read"); the schema narrows its parameters for this scenario.
struct CallSpec {
  std::string name;  // [a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+, at most 64 bytes
  std::string summary;
  std::vector<ParamSchema> params;    // unique names, declaration order kept
  uint32_t cost = 1;                  // probes: budget units spent per run (1..100)
  uint64_t max_output_bytes = 65536;  // probes: output beyond this is cut and marked truncated
};

// A name learners can target: a role ("web": every web node) or a selector ("the web nodes
// whose effective app_root differs from the group default"), resolved in each world by the
// world driver. kind is the vocabulary kind ("node", "service", "path" ...).
struct TargetTerm {
  std::string name;  // [a-z][a-z0-9_-]{0,63}
  std::string kind;  // [a-z][a-z0-9_-]{0,31}
  std::string description;
  bool selector = false;
  uint32_t max_matches = 1;  // resolving to 0 or more than this is an error (evidence)
};

enum class WorldRole { kPrimary, kTwin, kControl };
std::string_view world_role_name(WorldRole role);  // "primary" | "twin" | "control"

struct WorldSpec {
  std::string id;  // [a-z][a-z0-9_-]{0,63}, unique
  WorldRole role = WorldRole::kPrimary;
  std::string description;
  // The driver-specific recipe, kept as the exact JSON text of the manifest's "build" object
  // (the driver validates it when the package loads; see WorldDriver::check_manifest).
  std::string build_json;  // minified (simdjson::minify) JSON text
};

enum class CheckKind { kPostcondition, kInvariant };
std::string_view check_kind_name(CheckKind kind);  // "postcondition" | "invariant"

// A check the supervisor runs on a world (after freezing the learner's processes) that turns
// raw facts into ok / not ok. Postconditions say "recovered"; invariants say "nothing harmed".
struct CheckSpec {
  std::string id;  // [a-z][a-z0-9_.-]{0,63}, unique
  CheckKind kind = CheckKind::kPostcondition;
  std::string description;
  std::string call;  // a check call the world driver implements ("http.content" ...)
  // The check's parameters as one JSON object: its policy's (below) followed by its own "params"
  // members, minified. What the driver reads.
  std::string params_json;
  std::vector<WorldRole> roles;  // worlds it applies to; all three when the manifest omits it
  // The policies it reads ("policy": one name, or a list of names), in order; empty when none.
  std::vector<std::string> policies;
};

// A policy the package states once (docs/SCENARIOS.md, "Policies"): named check parameters
// (who a service runs as, which paths keep which owners and modes ...) that every check naming
// it reads, so no two checks can state one policy two ways.
struct Policy {
  std::string name;  // [a-z][a-z0-9_-]{0,63}, unique
  std::string description;
  std::string params_json;               // its "params" object, minified
  std::vector<std::string> param_names;  // its members, in order
};

struct Hypothesis {
  std::string id;  // [a-z][a-z0-9_-]{0,31}, unique
  std::string text;
};

// A judge-mode intervention: probes run first (their evidence gets ids ev-1, ev-2 ... in
// order), then the IR (exact JSON text) is submitted, applied and gated.
// A case may instead give "variants": [{probes?, ir}, ...] (1..16), picked as build variants
// are (variants[seed % n]): a hand edit names the node and the value its author saw, which the
// seed varies. probe_calls_json and ir_json are then the first variant's.
struct JudgeCase {
  std::string name;            // "gold" | "bad" (both required)
  std::string expect_verdict;  // "VERIFIED" for gold; "RECOVERED_UNPROVEN" or "NOT_RECOVERED"
  std::vector<std::string> probe_calls_json;  // each the minified JSON text of a call object
  std::string ir_json;                        // minified JSON text of an InterventionIR
  std::vector<JudgeCase> variants;            // empty unless the case has "variants"

  // The case the seed picks: itself without variants.
  const JudgeCase& for_seed(uint64_t seed) const {
    return variants.empty() ? *this : variants[seed % variants.size()];
  }
};

// What a scenario's worlds need of the machine (docs/CAPABILITIES.md, "Labs"): capability ids
// of the panel (capability_ids.h). The lab is available only when every required one was
// measured available; a missing optional one is reported, never required.
struct Requirements {
  std::vector<std::string> capabilities;  // unique, in manifest order
  std::vector<std::string> optional;      // unique, none of them also required
};

// What a fix may change, and what the world changes by itself (docs/SCENARIOS.md, "Change
// surface"). The gate reads every node's writable layers from the host and compares them with
// the world as built (docs/GATE.md, "Change set"): a change no rule covers fails the fix.
struct SurfaceRule {
  std::string name;  // [a-z][a-z0-9_-]{0,63}, unique within its list
  std::string description;
  // Path patterns: absolute, normalised; '*' matches within one component, a component "**"
  // matches any number of components (none included).
  std::vector<std::string> paths;
  // The attributes a change may touch (kChangeAttributes); a runtime rule allows every one.
  std::vector<std::string> what;
};

struct ChangeSurface {
  std::vector<SurfaceRule> fix;      // what this incident's fix may change
  std::vector<SurfaceRule> runtime;  // what the world writes itself: logs, pid files, state
};

// The attributes of one path a change touches (engine/gate/change_set.h).
inline constexpr std::string_view kChangeAttributes[] = {
    "create", "remove", "type", "content", "mode", "owner", "group", "links", "xattrs"};

// Whether `path` (absolute, normalised) matches `pattern` (SurfaceRule::paths).
bool path_pattern_matches(std::string_view pattern, std::string_view path);

struct Manifest {
  int schema = 1;  // "schema": 1, the first member
  std::string id, version, family, title;
  std::string briefing;                      // what the person on call sees; 1..8192 bytes
  std::string driver;                        // world driver name ("filetree", ...)
  std::vector<Hypothesis> hypotheses;        // 2..16, exactly one is the cause (not marked here)
  uint32_t probe_budget = 10;                // total probe cost an attempt may spend (1..1000)
  bool allow_scripts = false;                // whether the gray path (script action) is offered
  std::optional<Requirements> requirements;  // "requires"; nullopt when the manifest has none
  std::vector<TargetTerm> targets;           // roles and selectors
  std::vector<WorldSpec> worlds;             // exactly one primary, >= 1 twin, exactly one control
  std::vector<CallSpec> probes;
  std::vector<CallSpec> actions;
  std::vector<Policy> policies;   // each read by at least one check
  std::vector<CheckSpec> checks;  // >= 1 postcondition
  std::vector<JudgeCase> judge;   // gold and bad
  // "changes": nullopt when the manifest has none (its worlds then record no change set).
  std::optional<ChangeSurface> changes;

  const CallSpec* find_probe(std::string_view name) const;
  const CallSpec* find_action(std::string_view name) const;
  const CheckSpec* find_check(std::string_view id) const;
  const Policy* find_policy(std::string_view name) const;
  const TargetTerm* find_target(std::string_view name) const;
  const WorldSpec* primary() const;
  const WorldSpec* control() const;
  std::vector<const WorldSpec*> twins() const;
  const JudgeCase* find_judge(std::string_view name) const;
};

// Parses and validates manifest.json's bytes in full. Unknown or duplicate members anywhere,
// wrong types, bounds, cross-references (a target kind no term has, a duplicate id, a check
// whose roles name nothing ...) are refused with kInvalidArgument naming the JSON path:
// "manifest.json: probes[2].params.path.prefixes[0]: must be absolute and end in '/'".
// Does not validate driver-specific parts (build, check params): see WorldDriver.
Result<Manifest> parse_manifest(std::string_view manifest_bytes);

}  // namespace aura::scenario
