#include "tests/projections/lab_story.h"

#include <cstdio>
#include <stdexcept>

#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/events/registry_events.h"

namespace aura::testing {

namespace {

template <class T>
T must_ok(Result<T> r) {
  if (!r.ok()) throw std::runtime_error(r.status().message());
  return std::move(r).value();
}

// The story's scenario: a small package of one primary, one twin and one control, whose fix is
// one chmod (or one script), checked by a postcondition on the primary and twin and an invariant
// everywhere.
app::SyntheticScenario story_scenario(BlobStore& store) {
  app::SyntheticScenario sc;
  sc.dir = "scenarios/perm";
  sc.id = "perm-drift";
  sc.version = "1.1.0";
  sc.family = "files";
  sc.title = "Permissions drift";
  sc.publisher = "aura.lab/test";
  sc.manifest =
      must_ok(app::store_blob(store, R"({"schema":1,"id":"perm-drift"})", "scenario.manifest"));
  sc.probe_budget = 5;
  sc.probe_cost = 2;
  sc.hypotheses = {"h2"};
  sc.expect = "mode 0644 \"drifted\"\nback";
  sc.probe_calls = {R"({"call":"file.stat","params":{"path":"/etc/app/f1"}})",
                    R"({"call":"file.stat","params":{"path":"/etc/app/f2"}})"};
  sc.action_calls = {R"({"call":"file.chmod","params":{"mode":"0600"}})"};
  sc.rollback_calls = {R"({"call":"file.chmod","params":{"mode":"0644"}})"};
  sc.resolved = {"/etc/app/f1"};
  sc.irs = {must_ok(app::store_blob(store, R"({"ir":1})", "intervention.ir")),
            must_ok(app::store_blob(store, R"({"ir":2})", "intervention.ir"))};
  using scenario::CheckKind;
  using scenario::WorldRole;
  sc.spec.checks = {
      {"mode", CheckKind::kPostcondition, {WorldRole::kPrimary, WorldRole::kTwin}},
      {"up", CheckKind::kInvariant, {WorldRole::kPrimary, WorldRole::kTwin, WorldRole::kControl}}};
  sc.spec.primary_world = "primary";
  sc.spec.twin_worlds = {"twin-1"};
  sc.spec.control_world = "control";
  Status st = app::add_package(sc, store, 2);
  if (!st.is_ok()) throw std::runtime_error(st.message());
  return sc;
}

// The same package loaded from `dir` as `id` at `version`.
events::ScenarioLoaded loaded(const app::SyntheticScenario& sc, std::string dir, std::string id,
                              std::string version) {
  events::ScenarioLoaded e = app::scenario_loaded_payload(sc);
  e.dir = std::move(dir);
  e.id = std::move(id);
  e.version = std::move(version);
  return e;
}

// Three capabilities: ns_user, sched_ext (missing) and tool_nginx, found or not.
events::CapabilitiesMeasured panel(bool nginx) {
  return {"story",
          "6.1.0",
          {{"ns_user", true, "unshared"},
           {"sched_ext", false, "no /sys/kernel/sched_ext"},
           {"tool_nginx", nginx, nginx ? "nginx/1.22.1" : "not found on PATH"}}};
}

// The six shapes of attempt, round `round` (distinct IDs per round).
std::vector<AttemptPlan> plans(int round) {
  std::vector<AttemptPlan> out;
  for (unsigned k = 0; k < 6; ++k) {
    AttemptPlan p;
    char id[17];
    std::snprintf(id, sizeof id, "%08x%08x", 0xa77e0000u + unsigned(round), 0xc0de0000u + k);
    p.id = id;
    p.learner = p.id.substr(12);
    p.seed = 18446744073709551557ull;  // above 2^63: kept exactly
    switch (k) {
      case 0:  // verified with a receipt; the coach was used
        p.verdict = "VERIFIED";
        p.coach = true;
        break;
      case 1:  // recovered but unproven (the twin fails); contract revised once
        p.verdict = "RECOVERED_UNPROVEN";
        p.second_revision = true;
        p.probes = 1;
        break;
      case 2:  // judge mode, a script authorised that failed: not recovered on any world; one
               // probe had no output
        p.mode = "judge";
        p.verdict = "NOT_RECOVERED";
        p.script = true;
        p.failed_action = true;
        p.probe_without_output = true;
        break;
      case 3:  // abandoned while inspecting
        p.probes = 1;
        break;
      case 4:  // judge mode with a script action, verified after a second revision
        p.mode = "judge";
        p.verdict = "VERIFIED";
        p.script = true;
        p.second_revision = true;
        break;
      default:
        p.verdict = "RECOVERED_UNPROVEN";
        break;
    }
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace

uint64_t LabStory::find(std::string_view stream, std::string_view type, int nth) const {
  for (size_t i = 0; i < drafts.size(); ++i) {
    if (drafts[i].stream == stream && drafts[i].type == type && nth-- == 0) return i + 1;
  }
  throw std::runtime_error("no such event in the story");
}

LabStory make_lab_story(BlobStore& store, int rounds) {
  const app::SyntheticScenario sc = story_scenario(store);
  LabStory story;
  auto add = [&](EventDraft d) { story.drafts.push_back(std::move(d)); };
  add(app::scenario_loaded(loaded(sc, "scenarios/perm", "perm-drift", "1.0.0")));
  add(app::scenario_rejected("scenarios/unsigned", "package.sig.json: missing"));
  events::ScenarioLoaded disk = loaded(sc, "scenarios/disk", "disk-full", "2.0.0");
  disk.requirements = events::ScenarioLoaded::Requirements::kNotDeclared;
  add(app::scenario_loaded(disk));
  // Events the projections must ignore: other streams (an operator's note, a registry and a
  // panel of another stream).
  add({"log", events::kOperatorNote, "operator", JsonWriter().str("text", "hello").done()});
  add({"lab/other", events::kScenarioLoaded, "engine",
       loaded(sc, "scenarios/other", "other", "9.0.0").encode()});
  // Two capability measurements (docs/CAPABILITIES.md): the second finds nginx, which the first
  // lacked; a measurement in another stream is ignored.
  add(app::capabilities_measured(std::string(events::kCapabilityStream), panel(false)));
  add(app::capabilities_measured("lab/other", panel(true)));
  add(app::capabilities_measured(std::string(events::kCapabilityStream), panel(true)));

  std::vector<AttemptPlan> all;
  for (int r = 0; r < rounds; ++r) {
    for (AttemptPlan& p : plans(r)) all.push_back(std::move(p));
  }
  story.attempts = all;
  // One command of each live attempt in turn, every attempt live at once.
  size_t next = 0;
  uint64_t seq = story.drafts.size() + 1;
  Status st = app::interleave(
      sc, all.size(),
      [&]() -> std::optional<AttemptPlan> {
        if (next == all.size()) return std::nullopt;
        return all[next++];
      },
      seq,
      [&](std::vector<EventDraft>&& command) {
        for (EventDraft& d : command) add(std::move(d));
        return Status::ok();
      },
      [](app::AttemptHistory&&) {});
  if (!st.is_ok()) throw std::runtime_error(st.message());
  // The registry changes later: perm reloaded at a new version that declares its requirements, disk
  // rejected after a change.
  events::ScenarioLoaded perm = loaded(sc, "scenarios/perm", "perm-drift", "1.1.0");
  perm.requirements = events::ScenarioLoaded::Requirements::kDeclared;
  perm.required_capabilities = {"ns_user", "tool_nginx"};
  perm.optional_capabilities = {"sched_ext"};
  add(app::scenario_loaded(perm));
  add(app::scenario_rejected("scenarios/disk", "manifest.json: changed file"));
  return story;
}

void append_story(EventLog& log, const LabStory& story, size_t from, size_t count, size_t group) {
  std::vector<EventDraft> batch;
  for (size_t i = from; i < from + count; ++i) {
    batch.push_back(story.drafts.at(i));
    if (batch.size() == group || i + 1 == from + count) {
      auto r = log.append_all(batch);
      if (!r.ok()) throw std::runtime_error("append_story: " + r.status().message());
      batch.clear();
    }
  }
}

}  // namespace aura::testing
