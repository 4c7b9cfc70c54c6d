// How a refusal that names an unknown name (a call, a parameter, a target term, a check, a
// hypothesis, an evidence id, a scenario, a command) lists the valid ones: every validator builds
// its message with these, so no such refusal is a dead end. A list is bounded (at most
// kMaxListedNames, then "and N more") and the nearest valid name is suggested when one is close.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/scenario/manifest.h"

namespace aura::scenario {

inline constexpr size_t kMaxListedNames = 50;

// "a, b, c", or with more than `max` names the first `max` and " and N more"; "none" when empty.
std::string name_list(const std::vector<std::string>& names, size_t max = kMaxListedNames);

// The Levenshtein distance between `a` and `b` (bytes; insert, delete, substitute each cost 1).
size_t edit_distance(std::string_view a, std::string_view b);

// The valid name nearest to `name` when it is close enough to be a typo (a distance of at most
// 2, and less than half of `name`'s length), or nullopt. Ties go to the first in `names`.
std::optional<std::string> nearest_name(std::string_view name,
                                        const std::vector<std::string>& names);

// `what` + " " + quoted name + " " + `problem` + (" (did you mean X?)") + "; " + `valid_label` +
// ": " + the bounded list, e.g. `"file.raed" is not offered by this scenario (did you mean
// file.read?); its probes: file.read, dir.list`. `quoted` is the name as the message shows it.
std::string unknown_name(std::string_view quoted, std::string_view name, std::string_view problem,
                         std::string_view valid_label, const std::vector<std::string>& valid);

// The manifest's names, in manifest order, as refusals list them.
std::vector<std::string> call_names(const std::vector<CallSpec>& catalog);
std::vector<std::string> param_names(const CallSpec& spec);
std::vector<std::string> hypothesis_ids(const Manifest& m);
std::vector<std::string> check_ids(const Manifest& m, CheckKind kind);
// The terms a target parameter of `kind` takes, each as "role NAME" or "selector NAME".
std::vector<std::string> term_labels(const Manifest& m, std::string_view kind);

}  // namespace aura::scenario
