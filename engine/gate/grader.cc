#include "engine/gate/grader.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "engine/common/json_writer.h"
#include "engine/gate/change_set.h"
#include "engine/gate/feedback.h"

namespace aura::gate {
namespace {

using scenario::WorldRole;

// (world, stage, check): one fact slot of a property.
using Key = std::tuple<std::string, Stage, std::string>;

// The facts of one property, by slot; each slot's facts sorted by seq.
class FactIndex {
 public:
  FactIndex(Property p, const std::vector<Fact>& facts) {
    for (const Fact& f : facts) {
      if (f.property == p) slots_[{f.world, f.stage, f.check}].push_back(&f);
    }
    for (auto& [key, list] : slots_) {
      std::sort(list.begin(), list.end(),
                [](const Fact* a, const Fact* b) { return a->seq < b->seq; });
    }
  }

  // The facts in a slot (empty when none); marks the slot examined and cites every fact in it.
  const std::vector<const Fact*>& examine(const std::string& world, Stage stage,
                                          std::string_view check) {
    static const std::vector<const Fact*> kNone;
    Key key{world, stage, std::string(check)};
    examined_.insert(key);
    auto it = slots_.find(key);
    if (it == slots_.end()) return kNone;
    for (const Fact* f : it->second) cited_.insert(f->seq);
    return it->second;
  }

  // The first slot (in key order) that holds more than one fact and was not examined; it is
  // cited. Null when there is none.
  const std::pair<const Key, std::vector<const Fact*>>* unexamined_conflict() {
    for (const auto& slot : slots_) {
      if (slot.second.size() > 1 && !examined_.count(slot.first)) {
        for (const Fact* f : slot.second) cited_.insert(f->seq);
        return &slot;
      }
    }
    return nullptr;
  }

  std::vector<uint64_t> cited() const { return {cited_.begin(), cited_.end()}; }

 private:
  std::map<Key, std::vector<const Fact*>> slots_;
  std::set<Key> examined_;
  std::set<uint64_t> cited_;
};

std::string where(Stage stage, const std::string& world) {
  return "at " + std::string(stage_name(stage)) + " on world " + world;
}

std::string conflict_reason(std::string_view check, Stage stage, const std::string& world,
                            const std::vector<const Fact*>& facts) {
  std::string seqs;
  for (const Fact* f : facts) {
    if (!seqs.empty()) seqs += ", ";
    seqs += std::to_string(f->seq);
  }
  return "conflicting facts for check " + std::string(check) + " " + where(stage, world) +
         " (seqs " + seqs + ")";
}

// Collects the first failure reason; later failures are still examined (for citations) but do
// not replace it.
class FirstFailure {
 public:
  void fail(std::string reason) {
    if (reason_.empty()) reason_ = std::move(reason);
  }
  bool failed() const { return !reason_.empty(); }
  const std::string& reason() const { return reason_; }

 private:
  std::string reason_;
};

// The single fact in a slot, or nullptr after recording why there is not exactly one.
const Fact* single_fact(FactIndex& index, const std::string& world, Stage stage,
                        std::string_view check, FirstFailure& out) {
  const auto& facts = index.examine(world, stage, check);
  if (facts.empty()) {
    out.fail("unknown: no fact for check " + std::string(check) + " " + where(stage, world));
    return nullptr;
  }
  if (facts.size() > 1) {
    out.fail(conflict_reason(check, stage, world, facts));
    return nullptr;
  }
  return facts.front();
}

// The manifest's own name for a role (kept here so the grader links without the parser).
std::string_view role_name(WorldRole role) {
  switch (role) {
    case WorldRole::kPrimary:
      return "primary";
    case WorldRole::kTwin:
      return "twin";
    case WorldRole::kControl:
      return "control";
  }
  return "?";
}

bool has_role(const GateSpec::Check& c, WorldRole role) {
  return std::find(c.roles.begin(), c.roles.end(), role) != c.roles.end();
}

// The checks a world of `role` must pass, in spec order.
// Every required check of `role` ok at `stage` on `world`.
void grade_checks(const GateSpec& spec, WorldRole role, const std::string& world, Stage stage,
                  FactIndex& index, FirstFailure& out) {
  const auto checks = required_checks(spec, role);
  if (checks.empty()) {
    out.fail("unknown: no check applies to world role " + std::string(role_name(role)));
    return;
  }
  for (const auto* c : checks) {
    const Fact* f = single_fact(index, world, stage, c->id, out);
    if (f != nullptr && !f->ok) {
      out.fail("check " + c->id + " failed " + where(stage, world));
    }
  }
}

bool is_fingerprint(std::string_view v) {
  return v.size() == 64 && std::all_of(v.begin(), v.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

// The fingerprint value taken at `stage` on `world`, or nullptr after recording why not.
const std::string* fingerprint(FactIndex& index, const std::string& world, Stage stage,
                               FirstFailure& out) {
  const auto& facts = index.examine(world, stage, kFingerprintCheck);
  if (facts.empty()) {
    out.fail("unknown: no fingerprint " + where(stage, world));
    return nullptr;
  }
  if (facts.size() > 1) {
    out.fail(conflict_reason(kFingerprintCheck, stage, world, facts));
    return nullptr;
  }
  if (!is_fingerprint(facts.front()->value)) {
    out.fail("unknown: fingerprint " + where(stage, world) + " is not 64 lowercase hex");
    return nullptr;
  }
  return &facts.front()->value;
}

void compare_fingerprints(FactIndex& index, const std::string& world, Stage reference, Stage later,
                          FirstFailure& out) {
  const std::string* a = fingerprint(index, world, reference, out);
  const std::string* b = fingerprint(index, world, later, out);
  if (a != nullptr && b != nullptr && *a != *b) {
    out.fail("fingerprint " + std::string(stage_name(later)) + " differs from " +
             std::string(stage_name(reference)) + " on world " + world);
  }
}

// The change set of `world` at `stage` lies inside the incident's change surface.
void grade_changes(const std::string& world, Stage stage, FactIndex& index, FirstFailure& out) {
  const Fact* f = single_fact(index, world, stage, std::string(kChangesCheck), out);
  if (f == nullptr) return;
  if (!is_fingerprint(f->value)) {
    out.fail("unknown: change set " + where(stage, world) + " has no 64 lowercase hex digest");
  } else if (!f->ok) {
    out.fail("the change set " + where(stage, world) + " is outside the incident's change surface");
  }
}

// The fix's changes (runtime state aside) are the same at two stages of `world`.
void compare_changes(FactIndex& index, const std::string& world, Stage reference, Stage later,
                     FirstFailure& out) {
  const Fact* a = single_fact(index, world, reference, std::string(kChangesCheck), out);
  const Fact* b = single_fact(index, world, later, std::string(kChangesCheck), out);
  if (a == nullptr || b == nullptr) return;
  if (!is_fingerprint(a->value) || !is_fingerprint(b->value)) {
    out.fail("unknown: a change set of world " + world + " has no 64 lowercase hex digest");
  } else if (a->value != b->value) {
    out.fail("change set " + std::string(stage_name(later)) + " differs from " +
             std::string(stage_name(reference)) + " on world " + world);
  }
}

// A world id the spec must name; records an unknown when it is empty.
bool need_world(const std::string& id, std::string_view role, FirstFailure& out) {
  if (!id.empty()) return true;
  out.fail("unknown: no " + std::string(role) + " world");
  return false;
}

PropertyResult grade_property(const GateSpec& spec, Property p, const std::vector<Fact>& facts) {
  FactIndex index(p, facts);
  FirstFailure out;
  switch (p) {
    case Property::kPrimary:
      if (need_world(spec.primary_world, "primary", out)) {
        grade_checks(spec, WorldRole::kPrimary, spec.primary_world, Stage::kAfterApply, index, out);
        if (spec.changes) grade_changes(spec.primary_world, Stage::kAfterApply, index, out);
      }
      break;
    case Property::kTwin:
      if (spec.twin_worlds.empty()) out.fail("unknown: no twin world");
      for (const auto& w : spec.twin_worlds) {
        grade_checks(spec, WorldRole::kTwin, w, Stage::kAfterApply, index, out);
        if (spec.changes) grade_changes(w, Stage::kAfterApply, index, out);
      }
      break;
    case Property::kControl:
      if (need_world(spec.control_world, "control", out)) {
        grade_checks(spec, WorldRole::kControl, spec.control_world, Stage::kAfterApply, index, out);
        if (spec.changes) grade_changes(spec.control_world, Stage::kAfterApply, index, out);
      }
      break;
    case Property::kRepeat:
      if (need_world(spec.primary_world, "primary", out)) {
        compare_fingerprints(index, spec.primary_world, Stage::kAfterApply, Stage::kAfterRepeat,
                             out);
        if (spec.changes) {
          compare_changes(index, spec.primary_world, Stage::kAfterApply, Stage::kAfterRepeat, out);
          grade_changes(spec.primary_world, Stage::kAfterRepeat, index, out);
        }
        grade_checks(spec, WorldRole::kPrimary, spec.primary_world, Stage::kAfterRepeat, index,
                     out);
      }
      break;
    case Property::kReversal:
      if (need_world(spec.primary_world, "primary", out)) {
        compare_fingerprints(index, spec.primary_world, Stage::kBefore, Stage::kAfterRollback, out);
        if (spec.changes)
          compare_changes(index, spec.primary_world, Stage::kBefore, Stage::kAfterRollback, out);
      }
      break;
  }
  // Two facts for one slot make the record contradictory even where this property did not
  // look: fail closed.
  if (const auto* c = index.unexamined_conflict()) {
    const auto& [world, stage, check] = c->first;
    out.fail(conflict_reason(check, stage, world, c->second));
  }
  PropertyResult r;
  r.property = p;
  r.status = out.failed() ? Outcome::kFail : Outcome::kPass;
  r.reason = out.reason();
  r.cited = index.cited();
  return r;
}

// The primary's postconditions at after_apply: each has exactly one fact, and it is ok.
bool primary_recovered(const GateSpec& spec, const std::vector<Fact>& facts) {
  if (spec.primary_world.empty()) return false;
  FactIndex index(Property::kPrimary, facts);
  FirstFailure out;
  size_t postconditions = 0;
  for (const auto* c : required_checks(spec, WorldRole::kPrimary)) {
    if (c->kind != scenario::CheckKind::kPostcondition) continue;
    ++postconditions;
    const Fact* f = single_fact(index, spec.primary_world, Stage::kAfterApply, c->id, out);
    if (f == nullptr || !f->ok) return false;
  }
  return postconditions > 0;
}

}  // namespace

std::string_view property_name(Property p) {
  switch (p) {
    case Property::kPrimary:
      return "primary";
    case Property::kTwin:
      return "twin";
    case Property::kControl:
      return "control";
    case Property::kRepeat:
      return "repeat";
    case Property::kReversal:
      return "reversal";
  }
  return "?";
}

std::optional<Property> parse_property(std::string_view name) {
  for (Property p : kProperties) {
    if (property_name(p) == name) return p;
  }
  return std::nullopt;
}

std::string_view stage_name(Stage s) {
  switch (s) {
    case Stage::kBefore:
      return "before";
    case Stage::kAfterApply:
      return "after_apply";
    case Stage::kAfterRepeat:
      return "after_repeat";
    case Stage::kAfterRollback:
      return "after_rollback";
  }
  return "?";
}

std::optional<Stage> parse_stage(std::string_view name) {
  for (Stage s : {Stage::kBefore, Stage::kAfterApply, Stage::kAfterRepeat, Stage::kAfterRollback}) {
    if (stage_name(s) == name) return s;
  }
  return std::nullopt;
}

std::string_view outcome_name(Outcome s) {
  switch (s) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "fail";
    case Outcome::kNotRun:
      return "not_run";
  }
  return "?";
}

std::string_view verdict_name(Verdict v) {
  switch (v) {
    case Verdict::kNotRecovered:
      return "NOT_RECOVERED";
    case Verdict::kRecoveredUnproven:
      return "RECOVERED_UNPROVEN";
    case Verdict::kVerified:
      return "VERIFIED";
  }
  return "?";
}

std::vector<const GateSpec::Check*> required_checks(const GateSpec& spec, WorldRole role) {
  std::vector<const GateSpec::Check*> out;
  for (const auto& c : spec.checks) {
    const bool promised =
        std::find(spec.promised.begin(), spec.promised.end(), c.id) != spec.promised.end();
    if (has_role(c, role) || promised) out.push_back(&c);
  }
  return out;
}

GateSpec GateSpec::from(const scenario::Manifest& manifest,
                        const std::vector<std::string>& promised_checks) {
  GateSpec spec;
  for (const auto& c : manifest.checks)
    spec.checks.push_back({c.id, c.kind, c.roles, c.description});
  for (const auto& w : manifest.worlds) {
    switch (w.role) {
      case WorldRole::kPrimary:
        if (spec.primary_world.empty()) spec.primary_world = w.id;
        break;
      case WorldRole::kTwin:
        spec.twin_worlds.push_back(w.id);
        break;
      case WorldRole::kControl:
        if (spec.control_world.empty()) spec.control_world = w.id;
        break;
    }
  }
  spec.promised = promised_checks;
  spec.changes = manifest.changes.has_value();
  return spec;
}

GateResult grade(const GateSpec& spec, const std::vector<Fact>& facts,
                 const std::vector<Property>& not_run) {
  GateResult result;
  const auto skipped = [&](Property p) {
    return std::find(not_run.begin(), not_run.end(), p) != not_run.end();
  };
  bool all_pass = true;
  for (Property p : kProperties) {
    PropertyResult r;
    if (skipped(p)) {
      r.property = p;
      r.status = Outcome::kNotRun;
      r.reason = "not run";
    } else {
      r = grade_property(spec, p, facts);
      if (r.status == Outcome::kFail) r.finding = learner_finding(spec, facts, p);
    }
    all_pass = all_pass && r.status == Outcome::kPass;
    result.properties.push_back(std::move(r));
  }
  result.recovered = !skipped(Property::kPrimary) && primary_recovered(spec, facts);
  if (!result.recovered) {
    result.verdict = Verdict::kNotRecovered;
  } else if (all_pass) {
    result.verdict = Verdict::kVerified;
  } else {
    result.verdict = Verdict::kRecoveredUnproven;
  }
  return result;
}

std::string result_json(const GateResult& result) {
  JsonArray properties;
  for (const auto& r : result.properties) {
    JsonArray cited;
    for (uint64_t seq : r.cited) cited.raw(std::to_string(seq));
    properties.raw(JsonWriter()
                       .str("property", property_name(r.property))
                       .str("status", outcome_name(r.status))
                       .str("reason", r.reason)
                       .raw("cited", cited.done())
                       .done());
  }
  return JsonWriter()
      .boolean("recovered", result.recovered)
      .str("verdict", verdict_name(result.verdict))
      .raw("properties", properties.done())
      .done();
}

}  // namespace aura::gate
