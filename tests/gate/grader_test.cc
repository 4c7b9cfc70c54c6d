#include "engine/gate/grader.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "engine/gate/feedback.h"

using namespace aura::gate;
using aura::scenario::CheckKind;
using aura::scenario::WorldRole;

namespace {

const std::string kFpA(64, 'a');
const std::string kFpB(64, 'b');

// Checks: two postconditions (one not on control), an invariant everywhere, an invariant only on
// control, and a postcondition only twins require unless the IR promises it.
// Worlds: primary, twin-1, twin-2, control.
GateSpec test_spec() {
  GateSpec s;
  const std::vector<WorldRole> all = {WorldRole::kPrimary, WorldRole::kTwin, WorldRole::kControl};
  s.checks = {{"page-ok", CheckKind::kPostcondition, all},
              {"perms-ok", CheckKind::kPostcondition, {WorldRole::kPrimary, WorldRole::kTwin}},
              {"secret-mode", CheckKind::kInvariant, all},
              {"control-quiet", CheckKind::kInvariant, {WorldRole::kControl}},
              {"deep-check", CheckKind::kPostcondition, {WorldRole::kTwin}}};
  s.primary_world = "primary";
  s.twin_worlds = {"twin-1", "twin-2"};
  s.control_world = "control";
  return s;
}

// Builds a fact list with increasing seqs.
struct Facts {
  std::vector<Fact> list;
  uint64_t next_seq = 100;

  Facts& add(Property p, const std::string& world, Stage stage, const std::string& check,
             bool ok = true, const std::string& value = "") {
    list.push_back({next_seq++, p, world, stage, check, ok, value});
    return *this;
  }
  Facts& fp(Property p, Stage stage, const std::string& value) {
    return add(p, "primary", stage, std::string(kFingerprintCheck), true, value);
  }
  Fact& find(Property p, const std::string& world, Stage stage, const std::string& check) {
    auto it = std::find_if(list.begin(), list.end(), [&](const Fact& f) {
      return f.property == p && f.world == world && f.stage == stage && f.check == check;
    });
    REQUIRE(it != list.end());
    return *it;
  }
  void erase(Property p, const std::string& world, Stage stage, const std::string& check) {
    const Fact& f = find(p, world, stage, check);
    list.erase(list.begin() + (&f - list.data()));
  }
};

// Every fact test_spec() needs for VERIFIED, in the order the gate would record them.
Facts passing_facts() {
  Facts f;
  for (const char* c : {"page-ok", "perms-ok", "secret-mode"})
    f.add(Property::kPrimary, "primary", Stage::kAfterApply, c);
  for (const char* w : {"twin-1", "twin-2"})
    for (const char* c : {"page-ok", "perms-ok", "secret-mode", "deep-check"})
      f.add(Property::kTwin, w, Stage::kAfterApply, c);
  for (const char* c : {"page-ok", "secret-mode", "control-quiet"})
    f.add(Property::kControl, "control", Stage::kAfterApply, c);
  f.fp(Property::kRepeat, Stage::kAfterApply, kFpA);
  f.fp(Property::kRepeat, Stage::kAfterRepeat, kFpA);
  for (const char* c : {"page-ok", "perms-ok", "secret-mode"})
    f.add(Property::kRepeat, "primary", Stage::kAfterRepeat, c);
  f.fp(Property::kReversal, Stage::kBefore, kFpB);
  f.fp(Property::kReversal, Stage::kAfterRollback, kFpB);
  return f;
}

const PropertyResult& of(const GateResult& r, Property p) {
  REQUIRE(r.properties.size() == 5);
  return r.properties[size_t(p)];
}

// Every property but `failing` passes; `failing` fails with `reason`.
void check_only_failure(const GateResult& r, Property failing, const std::string& reason) {
  for (Property p : kProperties) {
    CAPTURE(property_name(p));
    if (p == failing) {
      CHECK(of(r, p).status == Outcome::kFail);
      CHECK(of(r, p).reason == reason);
    } else {
      CHECK(of(r, p).status == Outcome::kPass);
      CHECK(of(r, p).reason.empty());
    }
  }
}

std::vector<uint64_t> seqs_of(const std::vector<Fact>& facts, Property p) {
  std::vector<uint64_t> out;
  for (const Fact& f : facts)
    if (f.property == p) out.push_back(f.seq);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("grader: all five properties pass on complete facts -> VERIFIED") {
  const Facts f = passing_facts();
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.recovered);
  CHECK(r.verdict == Verdict::kVerified);
  REQUIRE(r.properties.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(r.properties[i].property == kProperties[i]);
    CHECK(r.properties[i].status == Outcome::kPass);
    CHECK(r.properties[i].reason.empty());
    // Every fact recorded for a property is one it had to examine.
    CHECK(r.properties[i].cited == seqs_of(f.list, kProperties[i]));
  }
}

TEST_CASE("grader: a failing primary postcondition -> NOT_RECOVERED, naming the check") {
  Facts f = passing_facts();
  f.find(Property::kPrimary, "primary", Stage::kAfterApply, "perms-ok").ok = false;
  const GateResult r = grade(test_spec(), f.list);
  CHECK_FALSE(r.recovered);
  CHECK(r.verdict == Verdict::kNotRecovered);
  check_only_failure(r, Property::kPrimary,
                     "check perms-ok failed at after_apply on world primary");
  // Cited on failure too: every primary fact examined.
  CHECK(of(r, Property::kPrimary).cited == seqs_of(f.list, Property::kPrimary));
}

TEST_CASE(
    "grader: an invariant failing on the primary with its postconditions ok -> "
    "RECOVERED_UNPROVEN") {
  Facts f = passing_facts();
  f.find(Property::kPrimary, "primary", Stage::kAfterApply, "secret-mode").ok = false;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.recovered);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  check_only_failure(r, Property::kPrimary,
                     "check secret-mode failed at after_apply on world primary");
}

TEST_CASE("grader: the first failing check in spec order is the reason") {
  Facts f = passing_facts();
  f.find(Property::kPrimary, "primary", Stage::kAfterApply, "secret-mode").ok = false;
  f.find(Property::kPrimary, "primary", Stage::kAfterApply, "page-ok").ok = false;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(of(r, Property::kPrimary).reason == "check page-ok failed at after_apply on world primary");
}

TEST_CASE("grader: every missing fact fails its property as unknown") {
  struct Case {
    Property property;
    std::string world;
    Stage stage;
    std::string check;
    std::string reason;
  };
  const std::string fp(kFingerprintCheck);
  const std::vector<Case> cases = {
      {Property::kPrimary, "primary", Stage::kAfterApply, "page-ok",
       "unknown: no fact for check page-ok at after_apply on world primary"},
      {Property::kPrimary, "primary", Stage::kAfterApply, "secret-mode",
       "unknown: no fact for check secret-mode at after_apply on world primary"},
      {Property::kTwin, "twin-1", Stage::kAfterApply, "deep-check",
       "unknown: no fact for check deep-check at after_apply on world twin-1"},
      {Property::kTwin, "twin-2", Stage::kAfterApply, "perms-ok",
       "unknown: no fact for check perms-ok at after_apply on world twin-2"},
      {Property::kControl, "control", Stage::kAfterApply, "control-quiet",
       "unknown: no fact for check control-quiet at after_apply on world control"},
      {Property::kControl, "control", Stage::kAfterApply, "page-ok",
       "unknown: no fact for check page-ok at after_apply on world control"},
      {Property::kRepeat, "primary", Stage::kAfterApply, fp,
       "unknown: no fingerprint at after_apply on world primary"},
      {Property::kRepeat, "primary", Stage::kAfterRepeat, fp,
       "unknown: no fingerprint at after_repeat on world primary"},
      {Property::kRepeat, "primary", Stage::kAfterRepeat, "perms-ok",
       "unknown: no fact for check perms-ok at after_repeat on world primary"},
      {Property::kReversal, "primary", Stage::kBefore, fp,
       "unknown: no fingerprint at before on world primary"},
      {Property::kReversal, "primary", Stage::kAfterRollback, fp,
       "unknown: no fingerprint at after_rollback on world primary"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.reason);
    Facts f = passing_facts();
    f.erase(c.property, c.world, c.stage, c.check);
    const GateResult r = grade(test_spec(), f.list);
    check_only_failure(r, c.property, c.reason);
    CHECK(of(r, c.property).reason.rfind("unknown: ", 0) == 0);
    const bool postcondition_of_primary =
        c.property == Property::kPrimary && c.check != "secret-mode";
    CHECK(r.recovered == !postcondition_of_primary);
    CHECK(r.verdict ==
          (postcondition_of_primary ? Verdict::kNotRecovered : Verdict::kRecoveredUnproven));
  }
}

TEST_CASE("grader: no facts at all -> every property unknown, NOT_RECOVERED") {
  const GateResult r = grade(test_spec(), {});
  CHECK_FALSE(r.recovered);
  CHECK(r.verdict == Verdict::kNotRecovered);
  for (const auto& p : r.properties) {
    CHECK(p.status == Outcome::kFail);
    CHECK(p.reason.rfind("unknown: ", 0) == 0);
    CHECK(p.cited.empty());
  }
}

TEST_CASE("grader: two facts for one slot are conflicting, even if they agree") {
  SUBCASE("on a primary postcondition: not recovered") {
    Facts f = passing_facts();
    const uint64_t first = f.find(Property::kPrimary, "primary", Stage::kAfterApply, "page-ok").seq;
    f.add(Property::kPrimary, "primary", Stage::kAfterApply, "page-ok", true);
    const GateResult r = grade(test_spec(), f.list);
    CHECK_FALSE(r.recovered);
    CHECK(r.verdict == Verdict::kNotRecovered);
    check_only_failure(r, Property::kPrimary,
                       "conflicting facts for check page-ok at after_apply on world primary "
                       "(seqs " +
                           std::to_string(first) + ", " + std::to_string(f.next_seq - 1) + ")");
    CHECK(of(r, Property::kPrimary).cited == seqs_of(f.list, Property::kPrimary));
  }
  SUBCASE("on a twin check that disagrees") {
    Facts f = passing_facts();
    f.add(Property::kTwin, "twin-2", Stage::kAfterApply, "secret-mode", false);
    const GateResult r = grade(test_spec(), f.list);
    CHECK(r.verdict == Verdict::kRecoveredUnproven);
    CHECK(of(r, Property::kTwin)
              .reason.rfind(
                  "conflicting facts for check secret-mode at after_apply on world twin-2", 0) ==
          0);
  }
  SUBCASE("on fingerprints") {
    Facts f = passing_facts();
    f.fp(Property::kReversal, Stage::kAfterRollback, kFpB);
    const GateResult r = grade(test_spec(), f.list);
    CHECK(
        of(r, Property::kReversal)
            .reason.rfind(
                "conflicting facts for check world.fingerprint at after_rollback on world primary",
                0) == 0);
  }
  SUBCASE("on a slot the property never examines") {
    Facts f = passing_facts();
    f.add(Property::kControl, "control", Stage::kAfterRepeat, "not-a-check", true);
    f.add(Property::kControl, "control", Stage::kAfterRepeat, "not-a-check", true);
    const GateResult r = grade(test_spec(), f.list);
    check_only_failure(r, Property::kControl,
                       "conflicting facts for check not-a-check at after_repeat on world control "
                       "(seqs " +
                           std::to_string(f.next_seq - 2) + ", " + std::to_string(f.next_seq - 1) +
                           ")");
    CHECK(of(r, Property::kControl).cited == seqs_of(f.list, Property::kControl));
  }
  SUBCASE("a single extra fact on an unexamined slot is ignored") {
    Facts f = passing_facts();
    f.add(Property::kControl, "control", Stage::kAfterRepeat, "not-a-check", false);
    CHECK(grade(test_spec(), f.list).verdict == Verdict::kVerified);
  }
}

TEST_CASE("grader: a fact recorded for another property never satisfies this one") {
  SUBCASE("a twin fact offered for the primary") {
    Facts f = passing_facts();
    f.erase(Property::kPrimary, "primary", Stage::kAfterApply, "page-ok");
    f.add(Property::kTwin, "primary", Stage::kAfterApply, "page-ok", true);
    const GateResult r = grade(test_spec(), f.list);
    CHECK_FALSE(r.recovered);
    CHECK(r.verdict == Verdict::kNotRecovered);
    CHECK(of(r, Property::kPrimary).reason ==
          "unknown: no fact for check page-ok at after_apply on world primary");
  }
  SUBCASE("a primary fact offered for the repeat run") {
    Facts f = passing_facts();
    f.erase(Property::kRepeat, "primary", Stage::kAfterRepeat, "page-ok");
    f.add(Property::kPrimary, "primary", Stage::kAfterRepeat, "page-ok", true);
    const GateResult r = grade(test_spec(), f.list);
    check_only_failure(r, Property::kRepeat,
                       "unknown: no fact for check page-ok at after_repeat on world primary");
  }
  SUBCASE("a fact at another stage") {
    Facts f = passing_facts();
    f.find(Property::kControl, "control", Stage::kAfterApply, "page-ok").stage = Stage::kBefore;
    const GateResult r = grade(test_spec(), f.list);
    check_only_failure(r, Property::kControl,
                       "unknown: no fact for check page-ok at after_apply on world control");
  }
}

TEST_CASE("grader: a control-only invariant binds the control and nothing else") {
  Facts f = passing_facts();
  f.find(Property::kControl, "control", Stage::kAfterApply, "control-quiet").ok = false;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.recovered);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  check_only_failure(r, Property::kControl,
                     "check control-quiet failed at after_apply on world control");
  // The primary and twins pass without any control-quiet fact: it is not required there.
  for (const Fact& x : f.list) CHECK((x.check != "control-quiet" || x.world == "control"));
}

TEST_CASE("grader: a repeat whose fingerprint changed fails") {
  Facts f = passing_facts();
  f.find(Property::kRepeat, "primary", Stage::kAfterRepeat, std::string(kFingerprintCheck)).value =
      kFpB;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  check_only_failure(r, Property::kRepeat,
                     "fingerprint after_repeat differs from after_apply on world primary");
  CHECK(of(r, Property::kRepeat).cited == seqs_of(f.list, Property::kRepeat));
}

TEST_CASE("grader: a repeat with a failing check after the second apply fails") {
  Facts f = passing_facts();
  f.find(Property::kRepeat, "primary", Stage::kAfterRepeat, "secret-mode").ok = false;
  check_only_failure(grade(test_spec(), f.list), Property::kRepeat,
                     "check secret-mode failed at after_repeat on world primary");
}

TEST_CASE("grader: a reversal whose fingerprint differs from before fails") {
  Facts f = passing_facts();
  f.find(Property::kReversal, "primary", Stage::kAfterRollback, std::string(kFingerprintCheck))
      .value = kFpA;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  check_only_failure(r, Property::kReversal,
                     "fingerprint after_rollback differs from before on world primary");
}

TEST_CASE("grader: a fingerprint that is not 64 lowercase hex is unknown") {
  for (const std::string& bad : {std::string(), std::string(63, 'a'), std::string(64, 'A'),
                                 std::string(63, 'a') + "g", std::string(65, 'a')}) {
    CAPTURE(bad);
    Facts f = passing_facts();
    // Both sides equal, so only the format check can fail it.
    f.find(Property::kReversal, "primary", Stage::kBefore, std::string(kFingerprintCheck)).value =
        bad;
    f.find(Property::kReversal, "primary", Stage::kAfterRollback, std::string(kFingerprintCheck))
        .value = bad;
    check_only_failure(grade(test_spec(), f.list), Property::kReversal,
                       "unknown: fingerprint at before on world primary is not 64 lowercase hex");
  }
}

TEST_CASE("grader: every twin must pass; the failing one is named") {
  Facts f = passing_facts();
  f.find(Property::kTwin, "twin-2", Stage::kAfterApply, "page-ok").ok = false;
  const GateResult r = grade(test_spec(), f.list);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  check_only_failure(r, Property::kTwin, "check page-ok failed at after_apply on world twin-2");
  // Both twins' facts were examined and cited.
  CHECK(of(r, Property::kTwin).cited == seqs_of(f.list, Property::kTwin));
}

TEST_CASE("grader: a spec without twin worlds fails twin as unknown") {
  GateSpec s = test_spec();
  s.twin_worlds.clear();
  const GateResult r = grade(s, passing_facts().list);
  check_only_failure(r, Property::kTwin, "unknown: no twin world");
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
}

TEST_CASE("grader: a role no check applies to cannot pass") {
  GateSpec s = test_spec();
  for (auto& c : s.checks) {
    c.roles.erase(std::remove(c.roles.begin(), c.roles.end(), WorldRole::kControl), c.roles.end());
  }
  const GateResult r = grade(s, passing_facts().list);
  CHECK(of(r, Property::kControl).status == Outcome::kFail);
  CHECK(of(r, Property::kControl).reason == "unknown: no check applies to world role control");
}

TEST_CASE("grader: a primary without any postcondition is not recovered") {
  GateSpec s = test_spec();
  for (auto& c : s.checks) {
    if (c.kind == CheckKind::kPostcondition) c.roles = {WorldRole::kTwin};
  }
  const GateResult r = grade(s, passing_facts().list);
  CHECK_FALSE(r.recovered);
  CHECK(r.verdict == Verdict::kNotRecovered);
}

TEST_CASE("grader: promised checks add requirements on every world; unknown ids are ignored") {
  SUBCASE("a promised twin-only postcondition is required on the primary too") {
    GateSpec s = test_spec();
    s.promised = {"deep-check"};
    const GateResult r = grade(s, passing_facts().list);
    CHECK_FALSE(r.recovered);
    CHECK(r.verdict == Verdict::kNotRecovered);
    CHECK(of(r, Property::kPrimary).reason ==
          "unknown: no fact for check deep-check at after_apply on world primary");
    CHECK(of(r, Property::kControl).reason ==
          "unknown: no fact for check deep-check at after_apply on world control");
  }
  SUBCASE("with its facts recorded it passes") {
    GateSpec s = test_spec();
    s.promised = {"deep-check", "not-in-manifest"};
    Facts f = passing_facts();
    f.add(Property::kPrimary, "primary", Stage::kAfterApply, "deep-check");
    f.add(Property::kControl, "control", Stage::kAfterApply, "deep-check");
    f.add(Property::kRepeat, "primary", Stage::kAfterRepeat, "deep-check");
    CHECK(grade(s, f.list).verdict == Verdict::kVerified);
  }
  SUBCASE("an id promised that is no manifest check changes nothing") {
    GateSpec s = test_spec();
    s.promised = {"not-in-manifest"};
    CHECK(result_json(grade(s, passing_facts().list)) ==
          result_json(grade(test_spec(), passing_facts().list)));
  }
}

TEST_CASE("grader: properties the gate stopped before are not_run and block VERIFIED") {
  SUBCASE("primary ran, the rest did not") {
    Facts f = passing_facts();
    const GateResult r =
        grade(test_spec(), f.list,
              {Property::kTwin, Property::kControl, Property::kRepeat, Property::kReversal});
    CHECK(r.recovered);
    CHECK(r.verdict == Verdict::kRecoveredUnproven);
    CHECK(of(r, Property::kPrimary).status == Outcome::kPass);
    for (Property p :
         {Property::kTwin, Property::kControl, Property::kRepeat, Property::kReversal}) {
      CHECK(of(r, p).status == Outcome::kNotRun);
      CHECK(of(r, p).reason == "not run");
      CHECK(of(r, p).cited.empty());
    }
  }
  SUBCASE("one not_run property alone") {
    const GateResult r = grade(test_spec(), passing_facts().list, {Property::kReversal});
    CHECK(r.verdict == Verdict::kRecoveredUnproven);
    CHECK(of(r, Property::kReversal).status == Outcome::kNotRun);
  }
  SUBCASE("a primary not run is not recovered") {
    const GateResult r = grade(test_spec(), passing_facts().list, {Property::kPrimary});
    CHECK_FALSE(r.recovered);
    CHECK(r.verdict == Verdict::kNotRecovered);
  }
}

TEST_CASE("grader: deterministic: the same facts in any order give the same bytes") {
  Facts f = passing_facts();
  f.find(Property::kTwin, "twin-1", Stage::kAfterApply, "secret-mode").ok = false;
  f.add(Property::kReversal, "primary", Stage::kBefore, std::string(kFingerprintCheck), true,
        kFpA);  // a conflict, whose seqs are listed in order
  const std::string once = result_json(grade(test_spec(), f.list));
  CHECK(result_json(grade(test_spec(), f.list)) == once);
  std::mt19937 rng(12345);
  for (int i = 0; i < 20; ++i) {
    std::vector<Fact> shuffled = f.list;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    CHECK(result_json(grade(test_spec(), shuffled)) == once);
  }
}

TEST_CASE("grader: result_json has the documented members in order") {
  Facts f = passing_facts();
  f.find(Property::kControl, "control", Stage::kAfterApply, "page-ok").ok = false;
  const GateResult r = grade(test_spec(), f.list, {Property::kReversal});
  const std::string j = result_json(r);
  CHECK(j.rfind(R"({"recovered":true,"verdict":"RECOVERED_UNPROVEN","properties":[)", 0) == 0);
  std::string cited;
  for (uint64_t s : of(r, Property::kControl).cited)
    cited += (cited.empty() ? "" : ",") + std::to_string(s);
  CHECK(j.find(R"({"property":"control","status":"fail","reason":"check page-ok failed at )"
               R"(after_apply on world control","cited":[)" +
               cited + "]}") != std::string::npos);
  CHECK(j.find(R"({"property":"reversal","status":"not_run","reason":"not run","cited":[]}]})") !=
        std::string::npos);
  CHECK(j.back() == '}');
}

TEST_CASE("grader: GateSpec::from takes checks in manifest order and worlds by role") {
  aura::scenario::Manifest m;
  m.worlds = {{"c", WorldRole::kControl, "", "{}"},
              {"t-a", WorldRole::kTwin, "", "{}"},
              {"p", WorldRole::kPrimary, "", "{}"},
              {"t-b", WorldRole::kTwin, "", "{}"}};
  m.checks = {{"z-check", CheckKind::kInvariant, "", "x.y", "{}", {WorldRole::kControl}},
              {"a-check",
               CheckKind::kPostcondition,
               "",
               "x.y",
               "{}",
               {WorldRole::kPrimary, WorldRole::kTwin}}};
  const GateSpec s = GateSpec::from(m, {"a-check"});
  REQUIRE(s.checks.size() == 2);
  CHECK(s.checks[0].id == "z-check");
  CHECK(s.checks[0].kind == CheckKind::kInvariant);
  CHECK(s.checks[0].roles == std::vector<WorldRole>{WorldRole::kControl});
  CHECK(s.checks[1].id == "a-check");
  CHECK(s.primary_world == "p");
  CHECK(s.twin_worlds == std::vector<std::string>{"t-a", "t-b"});
  CHECK(s.control_world == "c");
  CHECK(s.promised == std::vector<std::string>{"a-check"});
}

TEST_CASE("grader: names parse back to their values and nothing else parses") {
  for (Property p : kProperties) CHECK(parse_property(property_name(p)) == p);
  for (Stage s : {Stage::kBefore, Stage::kAfterApply, Stage::kAfterRepeat, Stage::kAfterRollback})
    CHECK(parse_stage(stage_name(s)) == s);
  CHECK_FALSE(parse_property("Primary").has_value());
  CHECK_FALSE(parse_property("").has_value());
  CHECK_FALSE(parse_stage("after-apply").has_value());
  CHECK(verdict_name(Verdict::kVerified) == "VERIFIED");
  CHECK(verdict_name(Verdict::kRecoveredUnproven) == "RECOVERED_UNPROVEN");
  CHECK(verdict_name(Verdict::kNotRecovered) == "NOT_RECOVERED");
  CHECK(outcome_name(Outcome::kNotRun) == "not_run");
}

TEST_CASE("grader: a failed property's finding says the check and what was counted, not where") {
  GateSpec spec = test_spec();
  for (auto& c : spec.checks) c.description = "what " + c.id + " means";
  Facts f = passing_facts();
  f.find(Property::kTwin, "twin-2", Stage::kAfterApply, "page-ok").ok = false;
  f.find(Property::kControl, "control", Stage::kAfterApply, "control-quiet").ok = false;
  f.find(Property::kRepeat, "primary", Stage::kAfterRepeat, std::string(kFingerprintCheck)).value =
      kFpB;
  f.find(Property::kReversal, "primary", Stage::kAfterRollback, std::string(kFingerprintCheck))
      .value = kFpA;
  const GateResult r = grade(spec, f.list);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  CHECK(of(r, Property::kPrimary).finding.observed.empty());  // passed: nothing to tell
  const Finding& twin = of(r, Property::kTwin).finding;
  CHECK(twin.check == "page-ok");
  CHECK(twin.description == "what page-ok means");
  CHECK(twin.observed ==
        "did not hold on 1 of 2 hidden twin worlds (the same fault at another spot) after your "
        "fix was applied; it held on the primary");
  CHECK(finding_text(twin) ==
        "page-ok: what page-ok means -- observed: did not hold on 1 of 2 hidden twin worlds (the "
        "same fault at another spot) after your fix was applied; it held on the primary");
  const Finding& control = of(r, Property::kControl).finding;
  CHECK(control.check == "control-quiet");  // the primary never checks it: no comparison
  CHECK(control.observed ==
        "did not hold on 1 of 1 healthy control world after your fix was applied");
  CHECK(of(r, Property::kRepeat).finding.check.empty());
  CHECK(of(r, Property::kRepeat).finding.observed == "the second apply changed the world again");
  CHECK(of(r, Property::kReversal).finding.observed ==
        "after the rollback the world differed from the world before the fix");
  // No world id in any finding; and result_json (what events and receipts record) is unchanged.
  for (const auto& p : r.properties) {
    CHECK(finding_text(p.finding).find("twin-2") == std::string::npos);
    CHECK(finding_text(p.finding).find("world primary") == std::string::npos);
  }
  CHECK(result_json(r).find("finding") == std::string::npos);
  CHECK(result_json(r).find("observed") == std::string::npos);
}
