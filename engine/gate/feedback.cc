#include "engine/gate/feedback.h"

#include <algorithm>

#include "engine/gate/change_set.h"

namespace aura::gate {
namespace {

using scenario::WorldRole;

// How the learner is told of a property's worlds: never by id.
std::string place(Property p, size_t n) {
  const std::string s = n == 1 ? "" : "s";
  switch (p) {
    case Property::kTwin:
      return "hidden twin world" + s + " (the same fault at another spot)";
    case Property::kControl:
      return "healthy control world" + s;
    default:
      return "fresh primary world" + s;
  }
}

const Fact* find_fact(const std::vector<Fact>& facts, Property p, const std::string& world,
                      Stage stage, std::string_view check) {
  const Fact* found = nullptr;
  for (const Fact& f : facts) {
    if (f.property == p && f.world == world && f.stage == stage && f.check == check) {
      if (found != nullptr) return nullptr;  // conflicting facts: nothing can be said
      found = &f;
    }
  }
  return found;
}

// Fingerprints of `world` at two stages of `p` differ (both recorded and well formed).
bool fingerprints_differ(const std::vector<Fact>& facts, Property p, const std::string& world,
                         Stage a, Stage b) {
  const Fact* x = find_fact(facts, p, world, a, kFingerprintCheck);
  const Fact* y = find_fact(facts, p, world, b, kFingerprintCheck);
  return x != nullptr && y != nullptr && x->value != y->value;
}

}  // namespace

Finding learner_finding(const GateSpec& spec, const std::vector<Fact>& facts, Property p) {
  Finding f;
  if (p == Property::kReversal && spec.changes) {
    const Fact* before = find_fact(facts, p, spec.primary_world, Stage::kBefore, kChangesCheck);
    const Fact* after =
        find_fact(facts, p, spec.primary_world, Stage::kAfterRollback, kChangesCheck);
    if (before != nullptr && after != nullptr && before->value != after->value) {
      f.check = std::string(kChangesCheck);
      f.description = "your rollback puts every file back exactly as it was before the fix";
      f.observed = "after the rollback, still changed: " + after->observed;
      return f;
    }
  }
  if (p == Property::kRepeat && spec.changes) {
    const Fact* once = find_fact(facts, p, spec.primary_world, Stage::kAfterApply, kChangesCheck);
    const Fact* twice = find_fact(facts, p, spec.primary_world, Stage::kAfterRepeat, kChangesCheck);
    if (once != nullptr && twice != nullptr && once->value != twice->value) {
      f.check = std::string(kChangesCheck);
      f.description = "applying the fix a second time changes nothing";
      f.observed =
          "after the first apply: " + once->observed + "; after the second: " + twice->observed;
      return f;
    }
  }
  if (p == Property::kReversal) {
    f.description = "your rollback puts the world back exactly as it was before the fix";
    f.observed =
        fingerprints_differ(facts, p, spec.primary_world, Stage::kBefore, Stage::kAfterRollback)
            ? "after the rollback the world differed from the world before the fix"
            : "the gate has no complete record of the world before and after the "
              "rollback";
    return f;
  }
  if (p == Property::kRepeat &&
      fingerprints_differ(facts, p, spec.primary_world, Stage::kAfterApply, Stage::kAfterRepeat)) {
    f.description = "applying the fix a second time changes nothing";
    f.observed = "the second apply changed the world again";
    return f;
  }
  std::vector<std::string> worlds;
  WorldRole role = WorldRole::kPrimary;
  Stage stage = p == Property::kRepeat ? Stage::kAfterRepeat : Stage::kAfterApply;
  switch (p) {
    case Property::kTwin:
      worlds = spec.twin_worlds;
      role = WorldRole::kTwin;
      break;
    case Property::kControl:
      worlds = {spec.control_world};
      role = WorldRole::kControl;
      break;
    default:
      worlds = {spec.primary_world};
      break;
  }
  const std::string after =
      p == Property::kRepeat ? "after your fix was applied twice" : "after your fix was applied";
  for (const auto* c : required_checks(spec, role)) {
    size_t failed = 0, unknown = 0;
    for (const auto& w : worlds) {
      const Fact* fact = find_fact(facts, p, w, stage, c->id);
      if (fact == nullptr) {
        ++unknown;
      } else if (!fact->ok) {
        ++failed;
      }
    }
    if (failed == 0 && unknown == 0) continue;
    f.check = c->id;
    f.description = c->description;
    const size_t n = worlds.size();
    if (failed > 0) {
      f.observed = "did not hold on " + std::to_string(failed) + " of " + std::to_string(n) + " " +
                   place(p, n) + " " + after;
    } else {
      f.observed = "no single result was recorded for it on " + std::to_string(unknown) + " of " +
                   std::to_string(n) + " " + place(p, n);
    }
    // Beside the primary, the contrast is the lesson: a fix that held where the learner looked
    // but not where the same cause sits elsewhere treats the spot, not the cause.
    if (p == Property::kTwin || p == Property::kControl) {
      const Fact* primary =
          find_fact(facts, Property::kPrimary, spec.primary_world, Stage::kAfterApply, c->id);
      if (primary != nullptr) {
        f.observed += primary->ok ? "; it held on the primary" : "; nor did it hold on the primary";
      }
    }
    return f;
  }
  // The change surface, after the declared checks: on the learner's own (primary) world the
  // paths are named; elsewhere only where it did not hold.
  if (spec.changes) {
    for (const auto& w : worlds) {
      for (Stage st : {Stage::kAfterApply, stage}) {
        const Fact* fact = find_fact(facts, p, w, st, kChangesCheck);
        if (fact != nullptr && fact->ok) continue;
        f.check = std::string(kChangesCheck);
        f.description =
            "the fix changes only what the incident's change surface allows (the catalog lists "
            "it)";
        if (fact == nullptr) {
          f.observed = "no single change set was recorded on the " + place(p, 1);
        } else if (p == Property::kTwin || p == Property::kControl) {
          f.observed = "the fix changed something outside the surface on the " + place(p, 1);
        } else {
          f.observed = fact->observed;
        }
        return f;
      }
    }
  }
  f.observed = "the gate's record of this property is not consistent, so it could not hold";
  return f;
}

std::string finding_text(const Finding& f) {
  std::string out = f.check.empty() ? f.description : f.check + ": " + f.description;
  return out + " -- observed: " + f.observed;
}

}  // namespace aura::gate
