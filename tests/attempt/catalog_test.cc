// An attempt's catalog (app::attempt_catalog_json, what `aura attempt catalog` and the attempt
// page show): everything a learner needs to name a probe, an action, a target term or a check,
// the budget left, the next step; the same catalog members the scenario's public JSON has; and
// nothing of what a learner must never see, for every bundled scenario.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "app/lab/views.h"
#include "engine/attempt/attempt_engine.h"
#include "engine/json/json_reader.h"
#include "tests/app/learner_secrets.h"
#include "tests/attempt/engine_lab.h"

using namespace aura;
using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

// `json` with every run of 16 or more lowercase hex digits (ids, digests, hashes) cut to one
// '#', on both sides of a comparison: a hidden string such as a port is looked for where it
// could leak, not inside a random id that happens to hold its digits.
std::string without_hex_runs(const std::string& json) {
  std::string out;
  size_t i = 0;
  while (i < json.size()) {
    size_t j = i;
    while (j < json.size() && std::isxdigit(static_cast<unsigned char>(json[j])) &&
           !std::isupper(static_cast<unsigned char>(json[j])))
      ++j;
    if (j - i >= 16) {
      out += '#';
      i = j;
    } else if (j > i) {
      out.append(json, i, j - i);
      i = j;
    } else {
      out += json[i++];
    }
  }
  return out;
}

constexpr size_t npos = std::string::npos;

// The bundled packages sit beside the t0 package the test is given.
scenario::Manifest bundled(std::string_view name) {
  const char* t0 = std::getenv("AURA_T0_PACKAGE");
  REQUIRE(t0 != nullptr);
  std::ifstream in(fs::path(t0).parent_path() / name / "manifest.json");
  std::stringstream s;
  s << in.rdbuf();
  auto m = scenario::parse_manifest(s.str());
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  return *m;
}

attempt::AttemptState state_of(const scenario::Manifest& m, uint32_t spent) {
  attempt::AttemptState s;
  s.id = "0123456789abcdef";
  s.scenario_id = m.id;
  s.phase = attempt::Phase::kInspect;
  s.predicted = true;
  s.probe_budget = m.probe_budget;
  s.spent = spent;
  return s;
}

std::string minified(const json::Object& o, std::string_view member) {
  auto v = o.value(member);
  REQUIRE(v.ok());
  return v->minified();
}

}  // namespace

TEST_CASE("catalog: every bundled scenario's catalog names all a learner may use, nothing hidden") {
  for (const char* name : {"t0-config-drift", "o1-fleet-drift", "o2-service-chain"}) {
    CAPTURE(name);
    const scenario::Manifest m = bundled(name);
    const std::string catalog = app::attempt_catalog_json(m, state_of(m, 1));
    json::Reader reader;
    auto c = reader.parse_object(catalog);
    REQUIRE_MESSAGE(c.ok(), c.status().message());
    CHECK(*c->required_string("attempt") == "0123456789abcdef");
    CHECK(*c->required_u64("probe_budget") == m.probe_budget);
    CHECK(*c->required_u64("spent") == 1);
    CHECK(*c->required_u64("remaining") == m.probe_budget - 1);
    CHECK(c->required_string("next")->find("budget left") != std::string::npos);

    // Every name a refusal could ask for is there, with what describes it.
    for (const auto& h : m.hypotheses) CHECK(catalog.find("\"id\":\"" + h.id + "\"") != npos);
    for (const auto* list : {&m.probes, &m.actions}) {
      for (const auto& call : *list) {
        CHECK(catalog.find("\"name\":\"" + call.name + "\"") != std::string::npos);
        for (const auto& p : call.params) {
          CHECK(catalog.find("\"name\":\"" + p.name + "\",\"type\":\"" +
                             std::string(scenario::param_type_name(p.type)) + "\"") !=
                std::string::npos);
          for (const auto& prefix : p.path_prefixes) CHECK(catalog.find(prefix) != npos);
          for (const auto& ex : p.path_excludes) CHECK(catalog.find(ex) != npos);
          for (const auto& v : p.enum_values) CHECK(catalog.find("\"" + v + "\"") != npos);
        }
      }
    }
    for (const auto& t : m.targets) {
      CHECK(catalog.find("{\"name\":\"" + t.name + "\",\"kind\":\"" + t.kind + "\",\"type\":\"" +
                         (t.selector ? "selector" : "role") + "\"") != std::string::npos);
    }
    for (const auto& k : m.checks) {
      CHECK(catalog.find("{\"id\":\"" + k.id + "\",\"kind\":\"" +
                         std::string(scenario::check_kind_name(k.kind)) + "\"") != npos);
    }

    // Nothing a learner must never see: worlds, check parameters, the judge's answers.
    for (const std::string& hidden : hidden_strings(m)) {
      CAPTURE(hidden);
      CHECK(catalog.find(hidden) == std::string::npos);
    }
    for (const auto& k : m.checks) CHECK(catalog.find("\"call\":\"" + k.call + "\"") == npos);

    // The catalog members are the scenario page's, byte for byte: the two cannot drift.
    const std::string page = app::scenario_public_json(m);
    json::Reader page_reader;
    auto p = page_reader.parse_object(page);
    REQUIRE(p.ok());
    for (const char* member : {"hypotheses", "probes", "actions", "targets", "checks"}) {
      CAPTURE(member);
      CHECK(minified(*c, member) == minified(*p, member));
    }
  }
}

TEST_CASE("catalog: an attempt's catalog is its own manifest's, with the budget it has left") {
  EngineLab lab;
  const std::string id = lab.start_and_probe("gold");
  auto st = lab.engine->state(id);
  REQUIRE(st.ok());
  auto m = attempt::attempt_manifest(*lab.blobs, *st);
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  CHECK(m->id == lab.manifest.id);
  json::Reader reader;
  const std::string catalog = app::attempt_catalog_json(*m, *st);
  auto c = reader.parse_object(catalog);
  REQUIRE(c.ok());
  CHECK(*c->required_string("phase") == "inspect");
  CHECK(*c->required_u64("spent") == st->spent);
  CHECK(*c->required_u64("remaining") == st->probe_budget - st->spent);
  CHECK(*c->required_string("next") == app::next_step(*st));
}

TEST_CASE("catalog: parameters point at no selector, and every target term can be used") {
  for (const char* name : {"t0-config-drift", "o1-fleet-drift", "o2-service-chain"}) {
    CAPTURE(name);
    const scenario::Manifest m = bundled(name);
    for (const auto* list : {&m.probes, &m.actions}) {
      for (const auto& call : *list) {
        for (const auto& p : call.params) {
          // A description naming one selector would steer a learner to it (to the cause's, in
          // the bundled scenarios): the target terms list them all, each with what it names.
          for (const auto& t : m.targets) {
            if (!t.selector) continue;
            INFO(call.name << "." << p.name << " names " << t.name);
            CHECK(p.description.find(t.name) == std::string::npos);
          }
        }
      }
    }
    // Each term is of a kind some action's target parameter takes.
    for (const auto& t : m.targets) {
      bool taken = false;
      for (const auto& a : m.actions) {
        for (const auto& p : a.params)
          taken |= p.type == scenario::ParamType::kTarget && p.target_kind == t.kind;
      }
      CHECK_MESSAGE(taken, t.name);
    }
  }
}

namespace {

// What a fix of each competing hypothesis names, by selector (docs/INSTRUCTORS.md, "Target
// terms for every hypothesis"). A selector is named for what it selects, so listing them all
// tells a learner nothing of which hypothesis is true.
struct HypothesisTerms {
  std::string hypothesis;
  std::vector<std::string> selectors;
};
const std::map<std::string, std::vector<HypothesisTerms>> kSelectorsByHypothesis = {
    {"t0-config-drift",
     {{"stale-override", {"host-vars-root-without-page"}},
      {"bad-release", {"release-page"}},
      {"stale-process", {"nodes-serving-no-page"}}}},
    {"o1-fleet-drift",
     {{"stale-override",
       {"host-vars-root-missing", "nodes-root-missing", "host-vars-root-differs"}},
      {"hand-edit", {"nodes-serving-no-page", "nodes-root-differs"}},
      {"nginx-down", {"nodes-serving-no-page", "nodes-root-differs"}},
      {"content-missing", {"nodes-serving-no-page", "nodes-root-differs"}}}},
};

// The words of a hypothesis id ("stale-override": stale, override).
std::vector<std::string> words_of(std::string_view id) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= id.size()) {
    const size_t dash = std::min(id.find('-', at), id.size());
    if (dash > at) out.emplace_back(id.substr(at, dash - at));
    at = dash + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("catalog: every competing hypothesis has a selector; no term names the cause") {
  for (const auto& [name, table] : kSelectorsByHypothesis) {
    CAPTURE(name);
    const scenario::Manifest m = bundled(name);
    // Every hypothesis is in the table, with at least one selector the manifest offers.
    std::set<std::string> listed;
    for (const auto& h : m.hypotheses) {
      CAPTURE(h.id);
      const auto row = std::find_if(table.begin(), table.end(),
                                    [&](const HypothesisTerms& t) { return t.hypothesis == h.id; });
      REQUIRE(row != table.end());
      CHECK_FALSE(row->selectors.empty());
      for (const auto& s : row->selectors) {
        CAPTURE(s);
        const scenario::TargetTerm* term = m.find_target(s);
        REQUIRE(term != nullptr);
        CHECK(term->selector);
        listed.insert(s);
      }
    }
    CHECK(table.size() == m.hypotheses.size());
    // No selector is there for the cause alone without the table saying whose fix names it.
    for (const auto& t : m.targets) {
      if (t.selector) CHECK_MESSAGE(listed.count(t.name) == 1, t.name);
    }
    // No term's name or description carries a word of the cause's id ("stale-..." only on the
    // cause's selector would point at it): the gold case's hypothesis is the cause.
    const scenario::JudgeCase* gold = m.find_judge("gold");
    REQUIRE(gold != nullptr);
    json::Reader reader;
    auto ir = reader.parse_object(gold->ir_json);
    REQUIRE(ir.ok());
    const std::string cause(*ir->required_string("hypothesis"));
    // The briefing may teach what a selector is for; it names none (that would be the answer).
    for (const auto& t : m.targets) {
      if (t.selector) CHECK_MESSAGE(m.briefing.find(t.name) == npos, t.name);
    }
    for (const auto& t : m.targets) {
      for (const std::string& word : words_of(cause)) {
        INFO(t.name << " names '" << word << "' of the cause " << cause);
        CHECK(t.name.find(word) == npos);
        CHECK(t.description.find(word) == npos);
      }
    }
  }
}

TEST_CASE("catalog: the tutorial's briefing says why a literal target does not transfer") {
  const scenario::Manifest m = bundled("t0-config-drift");
  // How a fix is judged (fresh copies, the fault elsewhere, a healthy one), that naming web2's
  // files mends this copy only, and that a role or selector is resolved again in every copy.
  for (const char* part : {"fresh copies of this fleet", "the same fault sits on another node",
                           "names web2's files or web2 itself mends this copy only",
                           "by a role or a selector from the catalog is resolved again in every"}) {
    CHECK_MESSAGE(m.briefing.find(part) != npos, part);
  }
}

TEST_CASE("gate feedback: a learner's gate.property says the check and what was seen, not where") {
  EngineLab lab;
  // The bad fix in judge mode: every property runs, so the twin's and control's are shown too.
  const std::string id = lab.up_to_gate("bad", "alice", "judge");
  auto g = lab.engine->gate(id, "alice", nullptr);
  REQUIRE_MESSAGE(g.ok(), g.status().message());
  CHECK(g->result.verdict == gate::Verdict::kRecoveredUnproven);
  const auto& twin = g->result.properties[size_t(gate::Property::kTwin)];
  REQUIRE(twin.status == gate::Outcome::kFail);
  CHECK(twin.finding.check == "fleet-healthy");
  CHECK(twin.finding.description == lab.manifest.find_check("fleet-healthy")->description);
  CHECK(twin.finding.observed ==
        "did not hold on 1 of 1 hidden twin world (the same fault at another spot) after your fix "
        "was applied; it held on the primary");
  // The grader's reasons are unchanged (receipts and judges read them).
  CHECK(twin.reason == "check fleet-healthy failed at after_apply on world twin-1");

  // Every event of the attempt as a learner is shown it: the findings, and nothing of the
  // hidden worlds — no world id, no node or path of the twin or control, no check parameter.
  std::vector<std::string> shown;
  REQUIRE(lab.log
              ->read_stream(attempt::stream_of(id), 0,
                            [&](const EventView& e) {
                              if (auto j = app::learner_event_json(e)) shown.push_back(*j);
                              return true;
                            })
              .is_ok());
  size_t findings = 0;
  for (const std::string& j : shown) {
    // A gate world's action error would name what a target resolved to there.
    if (j.find(R"("type":"gate.action")") != npos) CHECK(j.find("\"error\"") == npos);
    if (j.find(R"("type":"gate.property")") == npos) continue;
    CHECK(j.find("\"reason\"") == npos);
    if (j.find(R"("status":"fail")") != npos) {
      ++findings;
      CHECK(j.find(R"("finding":{"check":")") != npos);
    }
  }
  CHECK(findings == 4);  // primary, twin, control, repeat; the rollback restores the world
  std::vector<std::string> hidden = hidden_strings(lab.manifest);
  for (const char* layout : {"twin-1", "hotfix-7", "/srv/www/canary", "8081"})
    hidden.emplace_back(layout);
  for (const std::string& j : shown) {
    const std::string text = without_hex_runs(j);
    for (const std::string& h : hidden) {
      CAPTURE(h);
      CAPTURE(j);
      CHECK(text.find(without_hex_runs(h)) == npos);
    }
  }
}
