// The TransferGate grader: a pure, deterministic function from recorded check facts to the five
// property results and a verdict. It is a function of its arguments only (no clock, no I/O), so
// replaying the log reproduces every verdict. A verdict is not an error: grade() always decides,
// and a missing fact fails its property with reason "unknown: ...". Semantics: docs/GATE.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/scenario/manifest.h"

namespace aura::gate {

// The five properties, in the order they are evaluated and reported.
enum class Property { kPrimary, kTwin, kControl, kRepeat, kReversal };
inline constexpr Property kProperties[] = {Property::kPrimary, Property::kTwin, Property::kControl,
                                           Property::kRepeat, Property::kReversal};
std::string_view property_name(Property p);  // "primary" "twin" "control" "repeat" "reversal"
std::optional<Property> parse_property(std::string_view name);

// When, within a property's run on its fresh world, a fact was taken.
enum class Stage { kBefore, kAfterApply, kAfterRepeat, kAfterRollback };
std::string_view stage_name(Stage s);  // "before" "after_apply" "after_repeat" "after_rollback"
std::optional<Stage> parse_stage(std::string_view name);

// The check id that carries a world fingerprint (value = 64 hex) instead of ok / not ok.
inline constexpr std::string_view kFingerprintCheck = "world.fingerprint";

// One recorded fact: a `gate.fact` event appended by the supervisor (never a learner-driven run).
struct Fact {
  uint64_t seq = 0;  // the event's seq: what property results cite
  Property property = Property::kPrimary;
  std::string world;  // the manifest world id it was taken on
  Stage stage = Stage::kAfterApply;
  std::string check;     // a check id, or kFingerprintCheck
  bool ok = false;       // for checks
  std::string value;     // for fingerprints and change sets: 64 lowercase hex
  std::string observed;  // what the check saw (feedback on the learner's own world only)
};

// What the grader needs from the manifest and the intervention: which checks each world role
// must pass. A property requires every postcondition and invariant whose roles include its
// world's role, plus the IR's own promised postconditions/invariants (which can only add).
struct GateSpec {
  struct Check {
    std::string id;
    scenario::CheckKind kind = scenario::CheckKind::kPostcondition;
    std::vector<scenario::WorldRole> roles;
    std::string description;  // the manifest's public description (what a learner is told)
  };
  std::vector<Check> checks;
  std::string primary_world;             // world id of the primary (repeat and reversal use it too)
  std::vector<std::string> twin_worlds;  // every twin must pass
  std::string control_world;
  std::vector<std::string> promised;  // IR postconditions + invariants (check ids)
  // The manifest declares a change surface: every applied world's change set must lie inside it
  // (kChangesCheck ok), and repeat and reversal compare change sets as well as fingerprints.
  bool changes = false;

  static GateSpec from(const scenario::Manifest& manifest,
                       const std::vector<std::string>& promised_checks);
};

// The checks a world of `role` must pass: every check whose roles include it, then every
// promised check not already listed, in spec order.
std::vector<const GateSpec::Check*> required_checks(const GateSpec& spec, scenario::WorldRole role);

enum class Outcome { kPass, kFail, kNotRun };  // of one property (not aura::Status, an error)
std::string_view outcome_name(Outcome o);      // "pass" "fail" "not_run"

// What a learner is told of a property that failed (feedback.h): the check that decided it, its
// public description, and what was observed, from pass or fail per check and world role only.
struct Finding {
  std::string check;        // the check that failed; empty when fingerprints decided
  std::string description;  // the manifest's description of that check, or what was compared
  std::string observed;     // "did not hold on 1 of 1 hidden twin world ..."
};

struct PropertyResult {
  Property property = Property::kPrimary;
  Outcome status = Outcome::kFail;
  // Empty on pass; otherwise the first reason, e.g. "unknown: no fact for check fleet-health at
  // after_apply on world twin-1", "check secret-mode failed at after_apply on world primary",
  // "fingerprint after_rollback differs from before", "not run: gate stopped at primary".
  std::string reason;
  std::vector<uint64_t> cited;  // seqs of the facts used, ascending
  // Set when status is kFail. Not part of result_json(): a reading of the facts for learners,
  // made again from them whenever they are graded.
  Finding finding;
};

enum class Verdict { kNotRecovered, kRecoveredUnproven, kVerified };
std::string_view verdict_name(Verdict v);  // "NOT_RECOVERED" "RECOVERED_UNPROVEN" "VERIFIED"

struct GateResult {
  bool recovered = false;                  // the primary's postconditions at after_apply all ok
  std::vector<PropertyResult> properties;  // five, in kProperties order
  Verdict verdict = Verdict::kNotRecovered;
};

// `not_run` lists properties the gate stopped before (outside judge mode); they get kNotRun and
// count as not passed. Facts for other gates or attempts must not be passed in. Two facts for the
// same (property, world, stage, check) contradict each other: the property fails with reason
// "conflicting facts ...". Deterministic: the same inputs give the same result, byte for byte
// in result_json().
GateResult grade(const GateSpec& spec, const std::vector<Fact>& facts,
                 const std::vector<Property>& not_run = {});

// Compact JSON of a result (what the gate.verdict event and receipts record):
// {"recovered":B,"verdict":V,"properties":[{"property":P,"status":S,"reason":R,"cited":[...]}...]}
std::string result_json(const GateResult& result);

}  // namespace aura::gate
