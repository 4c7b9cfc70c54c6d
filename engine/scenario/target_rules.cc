#include "engine/scenario/target_rules.h"

#include <algorithm>

#include "engine/scenario/call_dom.h"

namespace aura::scenario {

std::string target_label(const Target& target) {
  switch (target.kind) {
    case Target::Kind::kRole:
      return "role " + target.name;
    case Target::Kind::kSelector:
      return "selector " + target.name;
    case Target::Kind::kLiteral:
      break;
  }
  return "literal " + target.name;
}

Result<const TargetTerm*> find_term(const std::vector<TargetTerm>& terms, const Target& target) {
  if (target.kind != Target::Kind::kLiteral) {
    const bool selector = target.kind == Target::Kind::kSelector;
    for (const TargetTerm& t : terms)
      if (t.name == target.name && t.selector == selector) return &t;
  }
  return Status::invalid(target_label(target) + ": not a target term of this scenario");
}

Status admit_matches(const Target& target, const TargetTerm& term,
                     std::vector<std::string>& matches) {
  std::vector<std::string> unique;
  for (std::string& m : matches)
    if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(std::move(m));
  matches = std::move(unique);
  if (matches.empty())
    return Status::not_found(target_label(target) + " resolved to no " + term.kind +
                             " in this world");
  if (matches.size() > term.max_matches) {
    std::string names;
    for (const std::string& m : matches) names += (names.empty() ? "" : ", ") + m;
    return Status::failed_precondition(
        target_label(target) + " resolved to " + std::to_string(matches.size()) + " " + term.kind +
        "s (" + names + "), more than its max_matches " + std::to_string(term.max_matches));
  }
  return Status::ok();
}

Status admit_path(std::string_view param, std::string_view path) {
  if (!is_normalised_absolute_path(path))
    return Status::invalid(std::string(param) + ": " + call_reader::quoted(path) +
                           " is not a normalised absolute path");
  return Status::ok();
}

}  // namespace aura::scenario
