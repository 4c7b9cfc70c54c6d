// The rules every world driver applies when a call's target names things in one world: the
// manifest's term for a role or selector, at least one match and at most the term's max_matches
// (a thing matched twice counts once), and a path that stays inside the world. A driver finds
// the matches its own way (its inventory, its files, its nodes); these decide whether they
// stand, in the same words for every driver (docs/WORLDS.md, "Targets").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"

namespace aura::scenario {

// How errors name a target: "role web", "selector stale-app-root", "literal web2".
std::string target_label(const Target& target);

// The manifest's term for a role or selector target (name and type both match). kInvalidArgument
// "<label>: not a target term of this scenario" when there is none, and for a literal (a
// literal has no term).
Result<const TargetTerm*> find_term(const std::vector<TargetTerm>& terms, const Target& target);

// Decides what `target` (a role or selector of `term`) matched in one world, `matches` in the
// order the driver found them. Duplicates are dropped first (the first kept). Then no match is
// kNotFound "<label> resolved to no <kind> in this world", and more than term.max_matches is
// kFailedPrecondition "<label> resolved to N <kind>s (a, b, c), more than its max_matches M".
// Either way `matches` keeps what matched (deduplicated): the evidence shows it.
Status admit_matches(const Target& target, const TargetTerm& term,
                     std::vector<std::string>& matches);

// A path a target names in a world (a literal, or what a selector resolved to) stays inside it:
// a normalised absolute path ('/'-separated, no empty, "." or ".." component, no control
// character). kInvalidArgument `<param>: "<path>" is not a normalised absolute path` otherwise.
// The driver still opens it confined to the world (openat2 RESOLVE_IN_ROOT or a node's root):
// this is the rule, not the enforcement.
Status admit_path(std::string_view param, std::string_view path);

}  // namespace aura::scenario
