#include "engine/scenario/names.h"

#include <algorithm>

namespace aura::scenario {

std::string name_list(const std::vector<std::string>& names, size_t max) {
  if (names.empty()) return "none";
  std::string out;
  const size_t shown = std::min(names.size(), max);
  for (size_t i = 0; i < shown; ++i) out += (i == 0 ? "" : ", ") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  // One row of the dynamic programme at a time: row[j] is the distance of a[0..i) to b[0..j).
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::optional<std::string> nearest_name(std::string_view name,
                                        const std::vector<std::string>& names) {
  // Longer inputs than any name could be are not typos of one; this also bounds the work.
  constexpr size_t kMaxCompared = 256;
  if (name.empty() || name.size() > kMaxCompared) return std::nullopt;
  const std::string* best = nullptr;
  size_t best_distance = 0;
  for (const std::string& candidate : names) {
    if (candidate.size() > kMaxCompared || candidate == name) continue;
    const size_t d = edit_distance(name, candidate);
    if (best == nullptr || d < best_distance) {
      best = &candidate;
      best_distance = d;
    }
  }
  if (best == nullptr || best_distance > 2 || best_distance * 2 >= name.size()) return std::nullopt;
  return *best;
}

std::string unknown_name(std::string_view quoted, std::string_view name, std::string_view problem,
                         std::string_view valid_label, const std::vector<std::string>& valid) {
  std::string out = std::string(quoted) + " " + std::string(problem);
  if (auto near = nearest_name(name, valid)) out += " (did you mean " + *near + "?)";
  return out + "; " + std::string(valid_label) + ": " + name_list(valid);
}

std::vector<std::string> call_names(const std::vector<CallSpec>& catalog) {
  std::vector<std::string> out;
  for (const CallSpec& c : catalog) out.push_back(c.name);
  return out;
}

std::vector<std::string> param_names(const CallSpec& spec) {
  std::vector<std::string> out;
  for (const ParamSchema& p : spec.params) out.push_back(p.name);
  return out;
}

std::vector<std::string> hypothesis_ids(const Manifest& m) {
  std::vector<std::string> out;
  for (const Hypothesis& h : m.hypotheses) out.push_back(h.id);
  return out;
}

std::vector<std::string> check_ids(const Manifest& m, CheckKind kind) {
  std::vector<std::string> out;
  for (const CheckSpec& c : m.checks)
    if (c.kind == kind) out.push_back(c.id);
  return out;
}

std::vector<std::string> term_labels(const Manifest& m, std::string_view kind) {
  std::vector<std::string> out;
  for (const TargetTerm& t : m.targets)
    if (t.kind == kind) out.push_back((t.selector ? "selector " : "role ") + t.name);
  return out;
}

}  // namespace aura::scenario
