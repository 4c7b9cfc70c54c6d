// The change set's text, the surface rule and the manifest's "changes" member: pure functions,
// tested with change sets of our own (the real layers are read in tests/attempt/hostile_test.cc).
#include "engine/gate/change_set.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/gate/feedback.h"
#include "engine/gate/grader.h"
#include "tests/scenario/sample_manifest.h"

using namespace aura;
using namespace aura::gate;
using aura::scenario::ChangeSurface;
using aura::scenario::path_pattern_matches;
using aura::scenario::SurfaceRule;

namespace {

const std::string kDigestA(64, 'a');
const std::string kDigestB(64, 'b');

std::string file(std::string_view mode, std::string_view content = kDigestA,
                 std::string_view links = "1", std::string_view xattrs = "-") {
  return "file " + std::string(mode) + " 0 0 " + std::string(links) + " " + std::string(xattrs) +
         " " + std::string(content);
}
std::string dir(std::string_view mode) { return "dir " + std::string(mode) + " 0 101 - - -"; }

ChangeSurface surface() {
  ChangeSurface s;
  s.fix.push_back(
      {"state-folder", "the app's state folder", {"/srv/app/state"}, {"mode", "xattrs"}});
  s.fix.push_back({"config",
                   "nginx's configuration",
                   {"/etc/nginx/**"},
                   {"create", "remove", "content", "mode"}});
  s.runtime.push_back({"logs", "logs", {"/var/log/**", "/run/*.pid"}, {}});
  return s;
}

bool contains(std::string_view s, std::string_view part) { return s.find(part) != s.npos; }

}  // namespace

TEST_CASE("change set: path patterns match whole components, '**' any depth") {
  CHECK(path_pattern_matches("/etc/nginx/**", "/etc/nginx"));
  CHECK(path_pattern_matches("/etc/nginx/**", "/etc/nginx/sites/a.conf"));
  CHECK_FALSE(path_pattern_matches("/etc/nginx/**", "/etc/nginx2"));
  CHECK(path_pattern_matches("/run/*.pid", "/run/nginx.pid"));
  CHECK_FALSE(path_pattern_matches("/run/*.pid", "/run/sub/nginx.pid"));
  CHECK_FALSE(path_pattern_matches("/run/*.pid", "/run/nginx.pid.bak"));
  CHECK(path_pattern_matches("/**/cache", "/cache"));
  CHECK(path_pattern_matches("/**/cache", "/a/b/cache"));
  CHECK(path_pattern_matches("/a/*/c", "/a/b/c"));
  CHECK_FALSE(path_pattern_matches("/a/*/c", "/a/c"));
  CHECK(path_pattern_matches("/", "/"));
  CHECK_FALSE(path_pattern_matches("/", "/etc"));
  CHECK(path_pattern_matches("/**", "/etc/ld.so.preload"));
}

TEST_CASE("change set: entries are absent or seven strict fields") {
  CHECK(parse_entry("absent").ok());
  CHECK_FALSE(parse_entry("absent").value().present);
  auto e = parse_entry(file("0644"));
  REQUIRE(e.ok());
  CHECK(e->type == "file");
  CHECK(entry_text(*e) == file("0644"));
  CHECK(parse_entry("dir 0750 0 0 - - opaque").ok());
  CHECK(parse_entry("char 0000 0 0 1 - 1:3").ok());
  for (const std::string& bad : std::vector<std::string>{
           "", "file", "file 644 0 0 1 - " + kDigestA, "file 0644 0 0 - - " + kDigestA,
           "dir 0755 0 0 2 - -", "file 0644 0 0 1 - short", "file 0644 -1 0 1 - " + kDigestA,
           "link 0777 0 0 1 - " + kDigestA,
           "file 0644 0 0 1 " + kDigestA.substr(1) + " " + kDigestA, "fifo 0644 0 0 1 - x",
           file("0644") + " extra", "file  0644 0 0 1 - -"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_entry(bad).ok());
  }
}

TEST_CASE("change set: the text is canonical and reads back, odd paths escaped") {
  std::vector<Change> changes = {
      {"web1", "/etc/z", "absent", file("0644")},
      {"app", "/srv/a b\t%\n\x7f\xc3\xa9", "absent", file("0600")},
      {"app", "/etc/a", file("0644"), "absent"},
  };
  const std::string text = change_set_text(changes);
  CHECK(text.starts_with("app\t/etc/a\t"));
  CHECK(contains(text, "/srv/a%20b%09%25%0A%7F%C3%A9\t"));
  auto back = parse_change_set(text);
  REQUIRE(back.ok());
  REQUIRE(back->size() == 3);
  CHECK((*back)[1].path == "/srv/a b\t%\n\x7f\xc3\xa9");
  CHECK(change_set_text(*back) == text);
  CHECK(parse_change_set("").ok());

  const std::string one = "app\t/etc/a\tabsent\t" + file("0644") + "\n";
  const std::string two = "app\t/etc/b\tabsent\t" + file("0644") + "\n";
  struct Bad {
    std::string text, why;
  };
  for (const Bad& b : std::vector<Bad>{
           {two + one, "out of order"},
           {one + one, "out of order or repeated"},
           {"app\t/etc/a\tabsent\tabsent\n", "the same"},
           {"app\t/etc/a\tabsent\t" + file("0644"), "newline"},
           {"app\t/etc/%2f\tabsent\t" + file("0644") + "\n", "'%'"},
           {"app\t/etc/%41\tabsent\t" + file("0644") + "\n", "canonical"},
           {"app\t/etc/../x\tabsent\t" + file("0644") + "\n", "normalised"},
           {"app\tetc\tabsent\t" + file("0644") + "\n", "normalised"},
           {"App\t/etc/a\tabsent\t" + file("0644") + "\n", "node name"},
           {"app\t/etc/a\tabsent\n", "4 tab-separated"},
           {"app\t/etc/a\tabsent\t" + file("0644") + "\tx\n", "4 tab-separated"},
           {"app\t/etc/a\tgone\t" + file("0644") + "\n", "entry"},
       }) {
    CAPTURE(b.text);
    auto r = parse_change_set(b.text);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), b.why), r.status().message());
  }
}

TEST_CASE("change set: a change outside the surface fails, named with what it did") {
  const ChangeSurface s = surface();
  // Inside: a mode on the state folder, config content, runtime logs.
  std::vector<Change> ok = {
      {"app", "/srv/app/state", dir("0740"), dir("0750")},
      {"web1", "/etc/nginx/sites/a.conf", file("0644"), file("0644", kDigestB)},
      {"web1", "/var/log/nginx/access.log", file("0640"), file("0640", kDigestB)},
  };
  const ChangeJudgement j = judge_changes(s, ok);
  CHECK(j.ok);
  CHECK(j.observed.empty());
  CHECK(j.fix_changes == 2);
  CHECK(j.runtime_changes == 1);
  CHECK(contains(j.summary, "/srv/app/state on app (mode 0740 -> 0750)"));

  // A system-wide file the fix may not touch.
  auto preload = ok;
  preload.push_back({"app", "/etc/ld.so.preload", "absent", file("0644")});
  ChangeJudgement p = judge_changes(s, preload);
  CHECK_FALSE(p.ok);
  CHECK(p.outside == 1);
  CHECK(contains(p.observed, "the fix changed /etc/ld.so.preload on app (created (file))"));
  CHECK(contains(p.observed, "which this incident's fix may not change"));

  // A rule that covers the path but not the attribute: the state folder's owner.
  ChangeJudgement o =
      judge_changes(s, {{"app", "/srv/app/state", "dir 0740 0 101 - - -", "dir 0740 0 0 - - -"}});
  CHECK_FALSE(o.ok);
  CHECK(contains(o.observed, "group 101 -> 0"));
  // Content the state-folder rule does not allow (a folder made opaque: what it held hidden).
  CHECK_FALSE(
      judge_changes(s, {{"app", "/srv/app/state", dir("0740"), "dir 0740 0 101 - - opaque"}}).ok);
  // A link count: a hard link made to a config file is not a content change.
  CHECK_FALSE(
      judge_changes(s, {{"web1", "/etc/nginx/a.conf", file("0644"), file("0644", kDigestA, "2")}})
          .ok);
  // Many outside: the first three named and the rest counted.
  std::vector<Change> many;
  for (char c = 'a'; c <= 'e'; ++c)
    many.push_back({"app", std::string("/etc/cron.d/") + c, "absent", file("0644")});
  ChangeJudgement m = judge_changes(s, many);
  CHECK(m.outside == 5);
  CHECK(contains(m.observed, "and 2 more paths"));
}

TEST_CASE("change set: the fix digest leaves runtime state aside") {
  const ChangeSurface s = surface();
  const std::vector<Change> fix = {{"app", "/srv/app/state", dir("0740"), dir("0750")}};
  auto with_logs = fix;
  with_logs.push_back({"web1", "/var/log/nginx/error.log", "absent", file("0640")});
  CHECK(judge_changes(s, fix).fix_digest == judge_changes(s, with_logs).fix_digest);
  auto more = fix;
  more.push_back({"web1", "/etc/nginx/b.conf", "absent", file("0644")});
  CHECK(judge_changes(s, fix).fix_digest != judge_changes(s, more).fix_digest);
  CHECK(judge_changes(s, {}).fix_digest == empty_fix_digest());
  CHECK(judge_changes(s, {{"web1", "/run/nginx.pid", "absent", file("0644")}}).fix_digest ==
        empty_fix_digest());
  CHECK(judge_changes(s, {}).summary == "no change");
}

TEST_CASE("change set: the manifest's surface parses strictly") {
  using aura::testing::sample_manifest;
  std::string m = sample_manifest();
  const size_t at = m.rfind('}');
  REQUIRE(at != std::string::npos);
  auto with = [&](std::string_view changes) {
    return m.substr(0, at) + ",\"changes\": " + std::string(changes) + "}\n";
  };
  auto good = scenario::parse_manifest(with(
      R"({"fix":[{"name":"cfg","description":"config","paths":["/etc/nginx/**"],"what":["content"]}],)"
      R"("runtime":[{"name":"logs","description":"logs","paths":["/var/log/**"]}]})"));
  REQUIRE_MESSAGE(good.ok(), good.status().message());
  REQUIRE(good->changes.has_value());
  CHECK(good->changes->fix[0].what == std::vector<std::string>{"content"});
  CHECK(good->changes->runtime[0].what.size() == std::size(scenario::kChangeAttributes));
  CHECK_FALSE(scenario::parse_manifest(sample_manifest())->changes.has_value());
  struct Bad {
    std::string changes, why;
  };
  for (const Bad& b : std::vector<Bad>{
           {R"({"fix":[{"name":"a","description":"d","paths":["/etc"],"what":["colour"]}]})",
            "is not an attribute"},
           {R"({"fix":[{"name":"a","description":"d","paths":["/etc"],"what":["mode","mode"]}]})",
            "listed twice"},
           {R"({"fix":[{"name":"a","description":"d","paths":["etc"],"what":["mode"]}]})",
            "absolute"},
           {R"({"fix":[{"name":"a","description":"d","paths":["/etc/a**"],"what":["mode"]}]})",
            "whole component"},
           {R"({"fix":[{"name":"a","description":"d","paths":["/**/**/**"],"what":["mode"]}]})",
            "at most two"},
           {R"({"fix":[{"name":"a","description":"d","paths":["/etc/../x"],"what":["mode"]}]})",
            "normalised"},
           {R"({"runtime":[{"name":"a","description":"d","paths":["/x"],"what":["mode"]}]})",
            "what"},
           {R"({"fix":[],"extra":[]})", "extra"},
       }) {
    CAPTURE(b.changes);
    auto r = scenario::parse_manifest(with(b.changes));
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), b.why), r.status().message());
  }
}

namespace {

// A spec with one postcondition on every world and a change surface.
GateSpec spec_with_changes() {
  GateSpec s;
  const std::vector<scenario::WorldRole> all = {
      scenario::WorldRole::kPrimary, scenario::WorldRole::kTwin, scenario::WorldRole::kControl};
  s.checks = {{"up", scenario::CheckKind::kPostcondition, all, "it serves"}};
  s.primary_world = "primary";
  s.twin_worlds = {"twin"};
  s.control_world = "control";
  s.changes = true;
  return s;
}

// Every fact a passing gate records, change sets included.
std::vector<Fact> passing_facts() {
  std::vector<Fact> f;
  uint64_t seq = 1;
  auto add = [&](Property p, std::string w, Stage st, std::string check, std::string value = "") {
    f.push_back({seq++, p, w, st, check, true, value, ""});
  };
  const std::string fp(64, 'f');
  const std::string ch = kDigestA;
  add(Property::kPrimary, "primary", Stage::kAfterApply, "up");
  add(Property::kPrimary, "primary", Stage::kAfterApply, std::string(kChangesCheck), ch);
  add(Property::kTwin, "twin", Stage::kAfterApply, "up");
  add(Property::kTwin, "twin", Stage::kAfterApply, std::string(kChangesCheck), ch);
  add(Property::kControl, "control", Stage::kAfterApply, "up");
  add(Property::kControl, "control", Stage::kAfterApply, std::string(kChangesCheck), ch);
  add(Property::kRepeat, "primary", Stage::kAfterApply, std::string(kFingerprintCheck), fp);
  add(Property::kRepeat, "primary", Stage::kAfterApply, std::string(kChangesCheck), ch);
  add(Property::kRepeat, "primary", Stage::kAfterRepeat, std::string(kFingerprintCheck), fp);
  add(Property::kRepeat, "primary", Stage::kAfterRepeat, std::string(kChangesCheck), ch);
  add(Property::kRepeat, "primary", Stage::kAfterRepeat, "up");
  add(Property::kReversal, "primary", Stage::kBefore, std::string(kFingerprintCheck), fp);
  add(Property::kReversal, "primary", Stage::kBefore, std::string(kChangesCheck),
      empty_fix_digest());
  add(Property::kReversal, "primary", Stage::kAfterRollback, std::string(kFingerprintCheck), fp);
  add(Property::kReversal, "primary", Stage::kAfterRollback, std::string(kChangesCheck),
      empty_fix_digest());
  return f;
}

Fact& fact(std::vector<Fact>& facts, Property p, Stage st, std::string_view check,
           std::string_view world = "primary") {
  for (Fact& f : facts)
    if (f.property == p && f.stage == st && f.check == check && f.world == world) return f;
  FAIL("no such fact");
  return facts.front();
}

}  // namespace

TEST_CASE("change set: the grader requires every applied world's change set inside the surface") {
  const GateSpec spec = spec_with_changes();
  CHECK(grade(spec, passing_facts()).verdict == Verdict::kVerified);

  SUBCASE("a twin's change set outside the surface fails twin, and says so without paths") {
    auto f = passing_facts();
    Fact& t = fact(f, Property::kTwin, Stage::kAfterApply, kChangesCheck, "twin");
    t.ok = false;
    t.observed = "the fix changed /etc/secret-twin-path on n1 (content)";
    const GateResult r = grade(spec, f);
    CHECK(r.verdict == Verdict::kRecoveredUnproven);
    CHECK(r.properties[1].status == Outcome::kFail);
    CHECK(contains(r.properties[1].reason, "outside the incident's change surface"));
    CHECK(r.properties[1].finding.check == kChangesCheck);
    CHECK_FALSE(contains(r.properties[1].finding.observed, "secret-twin-path"));
  }
  SUBCASE("on the primary, the finding names what the fix changed") {
    auto f = passing_facts();
    Fact& p = fact(f, Property::kPrimary, Stage::kAfterApply, kChangesCheck);
    p.ok = false;
    p.observed = "the fix changed /etc/ld.so.preload on app (created (file))";
    const GateResult r = grade(spec, f);
    CHECK(r.properties[0].status == Outcome::kFail);
    CHECK(contains(r.properties[0].finding.observed, "/etc/ld.so.preload"));
  }
  SUBCASE("a missing change set is unknown, so the property fails") {
    auto f = passing_facts();
    std::erase_if(f, [](const Fact& x) {
      return x.property == Property::kControl && x.check == kChangesCheck;
    });
    const GateResult r = grade(spec, f);
    CHECK(r.properties[2].status == Outcome::kFail);
    CHECK(contains(r.properties[2].reason, "unknown"));
  }
  SUBCASE("a second apply that changes files again fails repeat, fingerprints equal") {
    auto f = passing_facts();
    fact(f, Property::kRepeat, Stage::kAfterRepeat, kChangesCheck).value = kDigestB;
    const GateResult r = grade(spec, f);
    CHECK(r.properties[3].status == Outcome::kFail);
    CHECK(contains(r.properties[3].reason, "change set after_repeat differs from after_apply"));
  }
  SUBCASE("a rollback that leaves a file changed fails reversal, fingerprints equal") {
    auto f = passing_facts();
    Fact& after = fact(f, Property::kReversal, Stage::kAfterRollback, kChangesCheck);
    after.value = kDigestB;
    after.observed = "1 changed: /etc/ld.so.preload on app (created (file))";
    const GateResult r = grade(spec, f);
    CHECK(r.properties[4].status == Outcome::kFail);
    CHECK(contains(r.properties[4].finding.observed, "/etc/ld.so.preload"));
  }
  SUBCASE("a digest that is not 64 hex is unknown") {
    auto f = passing_facts();
    fact(f, Property::kPrimary, Stage::kAfterApply, kChangesCheck).value = "abc";
    CHECK(grade(spec, f).properties[0].status == Outcome::kFail);
  }
  SUBCASE("without a surface the change facts are not required") {
    GateSpec plain = spec;
    plain.changes = false;
    auto f = passing_facts();
    std::erase_if(f, [](const Fact& x) { return x.check == kChangesCheck; });
    CHECK(grade(plain, f).verdict == Verdict::kVerified);
  }
}
