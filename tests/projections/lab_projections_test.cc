// The lab projections (projections/lab/) against a real RocksDB log holding a synthetic lab
// history (lab_story.h) and real SQLite files: incremental equals rebuild, rebuilds are
// byte-identical, re-applying events changes nothing, foreign databases are refused, malformed
// payloads roll the batch back, and the rows say what the events said.
#include "projections/lab/lab_projections.h"

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "engine/events/event_types.h"
#include "projections/core/projector.h"
#include "projections/lab/payload.h"
#include "tests/projections/lab_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::append_story;
using aura::testing::dump_all;
using aura::testing::must;
using aura::testing::open_lab;
using aura::testing::query_all;
using aura::testing::StoryLog;
using aura::testing::TempDir;

namespace {

std::vector<StoredEvent> all_events(const EventLog& log) {
  std::vector<StoredEvent> out;
  REQUIRE(log.read_range(1, log.head().seq,
                         [&](const EventView& e) {
                           out.push_back(StoredEvent::from_view(e));
                           return true;
                         })
              .is_ok());
  return out;
}

EventView view_of(const StoredEvent& e) {
  return {e.seq, e.prev_hash, e.ts_us, e.stream, e.type, e.actor, e.payload, e.hash};
}

// Each projection's dump, by name, so a difference names the projection.
std::map<std::string, std::string> dumps(lab::LabProjections& p) {
  std::map<std::string, std::string> out;
  for (const auto& projection : p.projections()) {
    out[std::string(projection->name())] = must(canonical_dump(p.db(), *projection));
  }
  return out;
}

void check_same(lab::LabProjections& a, lab::LabProjections& b) {
  auto da = dumps(a), db = dumps(b);
  for (const auto& [name, dump] : da) {
    CAPTURE(name);
    CHECK(dump == db[name]);
  }
  CHECK(query_all(a) == query_all(b));
}

std::string text(const lab::Rows& rows, size_t r, std::string_view column) {
  const lab::Cell* c = rows.get(r, column);
  REQUIRE(c != nullptr);
  if (c->kind == lab::Cell::Kind::kNull) return "NULL";
  if (c->kind == lab::Cell::Kind::kInt) return std::to_string(c->i);
  return c->s;
}

}  // namespace

TEST_CASE(
    "lab projections: catch-up in small batches, event by event, and as the log grows all equal "
    "one rebuild") {
  TempDir dir;
  StoryLog s(dir.path(), 2);
  const size_t n = s.story.drafts.size();
  REQUIRE(n > 200);

  // As the log grows: five chunks, catching up in batches of 7 after each.
  auto growing = open_lab(*s.log, dir / "growing.sqlite");
  for (size_t from = 0; from < n; from += n / 5 + 1) {
    append_story(*s.log, s.story, from, std::min(n - from, n / 5 + 1), 13);
    must(growing->catch_up_all(7));
    CHECK(growing->serve_check_all().is_ok());
  }
  REQUIRE(s.log->head().seq == n);

  auto full = open_lab(*s.log, dir / "full.sqlite");
  auto reports = must(full->rebuild_all());
  for (const auto& r : reports) CHECK(r.events_applied == n);
  check_same(*full, *growing);

  SUBCASE("one event per transaction") {
    auto one = open_lab(*s.log, dir / "one.sqlite");
    must(one->catch_up_all(1));
    check_same(*full, *one);
  }
  SUBCASE("each projection on its own projector, applying event by event") {
    auto own = open_lab(*s.log, dir / "own.sqlite");
    const std::vector<StoredEvent> events = all_events(*s.log);
    for (const auto& projection : own->projections()) {
      Projector j(*s.log, own->db(), *projection);
      for (const StoredEvent& e : events) CHECK(must(j.apply_event(view_of(e))));
    }
    check_same(*full, *own);
  }
  SUBCASE("projections at different positions catch up together") {
    auto mixed = open_lab(*s.log, dir / "mixed.sqlite");
    // attempts alone to a third of the log, evidence alone to half of it.
    Projector attempts(*s.log, mixed->db(), *mixed->projections()[1]);
    Projector evidence(*s.log, mixed->db(), *mixed->projections()[2]);
    const std::vector<StoredEvent> events = all_events(*s.log);
    for (size_t i = 0; i < n / 3; ++i) must(attempts.apply_event(view_of(events[i])));
    for (size_t i = 0; i < n / 2; ++i) must(evidence.apply_event(view_of(events[i])));
    auto r = must(mixed->catch_up_all(11));
    CHECK(r[0].events_applied == n);
    CHECK(r[1].events_applied == n - n / 3);
    CHECK(r[2].events_applied == n - n / 2);
    check_same(*full, *mixed);
  }
}

TEST_CASE("lab projections: two rebuilds give byte-identical dumps and identical query results") {
  TempDir dir;
  StoryLog s(dir.path(), 2);
  s.append_all_of_story();
  auto a = open_lab(*s.log, dir / "a.sqlite");
  auto b = open_lab(*s.log, dir / "b.sqlite");
  must(a->rebuild_all(50));
  const std::string first_dump = dump_all(*a);
  const std::string first_query = query_all(*a);
  must(a->rebuild_all(100000));
  must(b->rebuild_all(3));
  CHECK(dump_all(*a) == first_dump);
  CHECK(dump_all(*b) == first_dump);
  CHECK(query_all(*a) == first_query);
  CHECK(query_all(*b) == first_query);
  // Every table holds rows: the story exercises all of them.
  for (const auto& projection : a->projections()) {
    for (const auto& [table, count] : must(a->row_counts(*projection))) {
      CAPTURE(table);
      CHECK(count > 0);
    }
  }
}

TEST_CASE("lab projections: the rows say what the story's events said") {
  TempDir dir;
  StoryLog s(dir.path(), 1);
  s.append_all_of_story();
  auto p = open_lab(*s.log, dir / "p.sqlite");
  must(p->catch_up_all());

  // The registry: the newest event per folder wins; other streams are ignored.
  const lab::Rows sc = must(p->scenarios());
  REQUIRE(sc.rows.size() == 3);
  CHECK(text(sc, 0, "dir") == "scenarios/disk");
  CHECK(text(sc, 0, "status") == "rejected");
  CHECK(text(sc, 0, "reason") == "manifest.json: changed file");
  CHECK(text(sc, 0, "id") == "NULL");
  CHECK(text(sc, 1, "dir") == "scenarios/perm");
  CHECK(text(sc, 1, "status") == "loaded");
  CHECK(text(sc, 1, "version") == "1.1.0");
  CHECK(text(sc, 1, "reason") == "NULL");
  CHECK(text(sc, 1, "manifest_blob_sha256") == text(sc, 1, "manifest_sha256"));
  CHECK(text(sc, 1, "seq") ==
        std::to_string(s.story.find("lab/scenarios", events::kScenarioLoaded, 2)));
  CHECK(text(sc, 2, "dir") == "scenarios/unsigned");
  CHECK(text(sc, 2, "reason") == "package.sig.json: missing");

  const lab::Rows list = must(p->attempts());
  REQUIRE(list.rows.size() == s.story.attempts.size());
  for (const aura::testing::AttemptPlan& plan : s.story.attempts) {
    CAPTURE(plan.id);
    auto d = must(p->attempt(plan.id));
    REQUIRE(d.has_value());
    const lab::Rows& a = d->attempt;
    const std::string stream = "attempt/" + plan.id;
    CHECK(text(a, 0, "attempt") == plan.id);
    CHECK(text(a, 0, "mode") == plan.mode);
    CHECK(text(a, 0, "seed") == "18446744073709551557");  // above 2^63: kept exactly
    CHECK(text(a, 0, "phase") == "done");
    CHECK(text(a, 0, "confidence") == "75");
    CHECK(text(a, 0, "expect") == "mode 0644 \"drifted\"\nback");
    CHECK(text(a, 0, "probes") == std::to_string(plan.probes));
    CHECK(text(a, 0, "spent") == std::to_string(2 * plan.probes));
    CHECK(text(a, 0, "probe_budget") == "5");
    CHECK(text(a, 0, "first_seq") == std::to_string(s.story.find(stream, events::kAttemptStarted)));
    CHECK(d->probes.rows.size() == size_t(plan.probes));
    if (plan.verdict.empty()) {
      CHECK(text(a, 0, "abandon_reason") == "out of time");
      CHECK(text(a, 0, "verdict") == "NULL");
      CHECK(text(a, 0, "ir_revision") == "NULL");
      CHECK(d->interventions.rows.empty());
      CHECK(d->gate_results.rows.empty());
      continue;
    }
    CHECK(text(a, 0, "verdict") == plan.verdict);
    CHECK(text(a, 0, "recovered") == (plan.verdict == "NOT_RECOVERED" ? "0" : "1"));
    CHECK(text(a, 0, "ir_revision") == (plan.second_revision ? "2" : "1"));
    CHECK(text(a, 0, "scripts_pending") == "0");
    CHECK(text(a, 0, "scripts_authorized") == (plan.script ? "1" : "0"));
    CHECK(text(a, 0, "last_seq") == text(a, 0, "last_seq"));
    CHECK(d->interventions.rows.size() == (plan.second_revision ? 2u : 1u));
    CHECK(text(d->interventions, 0, "blob_sha256") == text(d->interventions, 0, "ir_sha256"));
    // Scripts: one per revision that listed it; only the current revision's was authorised.
    const size_t scripts = plan.script ? (plan.second_revision ? 2 : 1) : 0;
    REQUIRE(d->scripts.rows.size() == scripts);
    if (plan.script) {
      CHECK(text(d->scripts, scripts - 1, "status") == "pending_execution");
      CHECK(text(d->scripts, scripts - 1, "authorized_seq") ==
            std::to_string(s.story.find(stream, events::kScriptAuthorized)));
      if (scripts == 2) CHECK(text(d->scripts, 0, "status") == "pending_feedback");
    }
    // Evidence: each probe's output (with its request's call) and the action's output.
    const size_t outputs = size_t(plan.probes) - (plan.probe_without_output ? 1 : 0);
    REQUIRE(d->evidence.rows.size() == outputs + 1);
    CHECK(text(d->evidence, 0, "evidence_id") == "ev-1");
    CHECK(text(d->evidence, 0, "kind") == "probe.output");
    CHECK(text(d->evidence, 0, "truncated") == "1");
    CHECK(text(d->evidence, 0, "error") == "NULL");
    CHECK(text(d->evidence, 0, "call") ==
          R"({"call":"file.stat","params":{"path":"/etc/app/f1"}})");
    CHECK(text(d->evidence, 0, "seq") ==
          std::to_string(s.story.find(stream, events::kProbeCompleted)));
    const size_t act = outputs;
    CHECK(text(d->evidence, act, "evidence_id") == "act-1");
    CHECK(text(d->evidence, act, "kind") == "action.output");
    CHECK(text(d->evidence, act, "exit_code") == (plan.failed_action ? "1" : "0"));
    CHECK(text(d->evidence, act, "probe") == "NULL");
    if (plan.mode == "judge") {
      CHECK(text(d->evidence, act, "call") == "NULL");
      CHECK(text(d->evidence, act, "script_sha256").size() == 64);
    } else {
      CHECK(text(d->evidence, act, "script_sha256") == "NULL");
    }
    // Gate: five properties citing their facts, one verdict.
    const uint64_t gate = s.story.find(stream, events::kGateStarted);
    REQUIRE(d->gate_results.rows.size() == 5);
    CHECK(text(d->gate_results, 0, "property") == "primary");
    CHECK(text(d->gate_results, 0, "gate") == std::to_string(gate));
    CHECK(text(d->gate_results, 0, "cited") ==
          "[" + std::to_string(s.story.find(stream, events::kGateFact, 0)) + "," +
              std::to_string(s.story.find(stream, events::kGateFact, 1)) + "]");
    CHECK(text(d->gate_results, 1, "status") == (plan.verdict == "VERIFIED" ? "pass" : "fail"));
    REQUIRE(d->gate_verdicts.rows.size() == 1);
    CHECK(text(d->gate_verdicts, 0, "verdict") == plan.verdict);
    // Receipt only for VERIFIED.
    if (plan.verdict == "VERIFIED") {
      REQUIRE(d->receipt.rows.size() == 1);
      CHECK(text(d->receipt, 0, "receipt_sha256") == text(a, 0, "receipt_sha256"));
      CHECK(text(d->receipt, 0, "first_seq") == text(a, 0, "first_seq"));
      CHECK(text(d->receipt, 0, "seq") ==
            std::to_string(s.story.find(stream, events::kReceiptIssued)));
    } else {
      CHECK(d->receipt.rows.empty());
      CHECK(text(a, 0, "receipt_sha256") == "NULL");
    }
  }
  CHECK_FALSE(must(p->attempt("ffffffffffffffff")).has_value());
  CHECK_FALSE(must(p->attempt("not-an-id")).has_value());
}

TEST_CASE("lab projections: applying every event a second time changes nothing") {
  TempDir dir;
  StoryLog s(dir.path(), 1);
  s.append_all_of_story();
  auto p = open_lab(*s.log, dir / "p.sqlite");
  must(p->rebuild_all());
  const std::string before = dump_all(*p);
  // Straight through each projection's apply (below the projector's position guard), each
  // event twice, after the whole log was applied: old phase changes, old inserts, old upserts.
  // Checked after every event, so a write that a later event happens to undo is still caught.
  for (const StoredEvent& e : all_events(*s.log)) {
    CAPTURE(e.seq);
    CAPTURE(e.type);
    Transaction txn(p->db());
    REQUIRE(txn.begin().is_ok());
    for (const auto& projection : p->projections()) {
      REQUIRE(projection->begin_batch(p->db()).is_ok());
      REQUIRE(projection->apply(p->db(), view_of(e)).is_ok());
      REQUIRE(projection->apply(p->db(), view_of(e)).is_ok());
      REQUIRE(projection->end_batch(p->db()).is_ok());
    }
    REQUIRE(txn.commit().is_ok());
    REQUIRE(dump_all(*p) == before);
  }
  // At the frontier too: a fresh database fed each event twice in a row, in batches of one
  // event and in one batch of all, ends where the rebuild did.
  for (bool one_batch : {false, true}) {
    CAPTURE(one_batch);
    auto twice = open_lab(*s.log, dir / (one_batch ? "twice-one.sqlite" : "twice.sqlite"));
    must(twice->catch_up_all(1));  // creates the schema (the log's events are applied)
    must(twice->rebuild_all());
    for (const auto& projection : twice->projections()) {
      for (const std::string& table : projection->tables()) {
        REQUIRE(twice->db().exec("DELETE FROM " + table).is_ok());
      }
    }
    const std::vector<StoredEvent> events = all_events(*s.log);
    Transaction txn(twice->db());
    REQUIRE(txn.begin().is_ok());
    for (const auto& projection : twice->projections()) {
      if (one_batch) REQUIRE(projection->begin_batch(twice->db()).is_ok());
      for (const StoredEvent& e : events) {
        if (!one_batch) REQUIRE(projection->begin_batch(twice->db()).is_ok());
        REQUIRE(projection->apply(twice->db(), view_of(e)).is_ok());
        REQUIRE(projection->apply(twice->db(), view_of(e)).is_ok());
        if (!one_batch) REQUIRE(projection->end_batch(twice->db()).is_ok());
      }
      if (one_batch) REQUIRE(projection->end_batch(twice->db()).is_ok());
    }
    REQUIRE(txn.commit().is_ok());
    CHECK(dump_all(*twice) == before);
  }
  // And through the projectors: everything is already applied.
  for (const auto& r : must(p->catch_up_all())) CHECK(r.events_applied == 0);
  CHECK(dump_all(*p) == before);
}

TEST_CASE("lab projections: a database built from another log is refused, naming the projection") {
  TempDir dir;
  StoryLog a(dir / "a", 1);
  a.append_all_of_story();
  StoryLog b(dir / "b", 2);  // a different history: hashes differ from seq 1 on
  b.append_all_of_story();
  {
    auto built = open_lab(*a.log, dir / "p.sqlite");
    must(built->catch_up_all());
  }
  auto wrong = open_lab(*b.log, dir / "p.sqlite");
  const std::string before = dump_all(*wrong);
  Status s = wrong->serve_check_all();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("projection scenarios was built from another log") != std::string::npos);
  for (const lab::ProjectionState& st : wrong->states()) {
    CAPTURE(st.name);
    REQUIRE_FALSE(st.serve.is_ok());
    CHECK(st.serve.message().find("projection " + st.name + " was built from another log") !=
          std::string::npos);
  }
  auto scenarios = wrong->scenarios();
  REQUIRE_FALSE(scenarios.ok());
  CHECK(scenarios.status().message().find("projection scenarios") != std::string::npos);
  auto attempts = wrong->attempts();
  REQUIRE_FALSE(attempts.ok());
  CHECK(attempts.status().message().find("projection attempts") != std::string::npos);
  auto one = wrong->attempt(a.story.attempts[0].id);
  REQUIRE_FALSE(one.ok());
  CHECK(one.status().message().find("was built from another log") != std::string::npos);
  auto caught = wrong->catch_up_all();
  REQUIRE_FALSE(caught.ok());
  CHECK(caught.status().message().find("was built from another log") != std::string::npos);
  CHECK(dump_all(*wrong) == before);

  // A rebuild against the other log starts over and then serves.
  must(wrong->rebuild_all());
  CHECK(wrong->serve_check_all().is_ok());
  CHECK(must(wrong->attempts()).rows.size() == b.story.attempts.size());
}

TEST_CASE(
    "lab projections: a malformed payload in a projected stream fails the batch naming the seq "
    "and the member, and rolls the whole batch back") {
  const std::string id = "00000000000000ff";
  const std::string stream = "attempt/" + id;
  const std::string head = R"({"v":1,"attempt":")" + id + "\"";
  struct Bad {
    const char* what;
    EventDraft draft;
    const char* member;
  };
  const std::string digest(64, 'a');
  const std::vector<Bad> cases = {
      {"confidence not a number",
       {stream, events::kAttemptPredicted, "learner:x",
        head + R"(,"hypothesis":"h","expect":"e","confidence":"high"})"},
       "member \"confidence\": not a non-negative integer"},
      {"confidence above 100",
       {stream, events::kAttemptPredicted, "learner:x",
        head + R"(,"hypothesis":"h","expect":"e","confidence":101})"},
       "member \"confidence\": above 100"},
      {"unknown phase",
       {stream, events::kAttemptPhase, "engine", head + R"(,"from":"observe","to":"flying"})"},
       "member \"to\": \"flying\" is not one of"},
      {"call missing",
       {stream, events::kProbeRequested, "learner:x", head + R"(,"probe":1,"cost":1,"spent":1})"},
       "member \"call\": missing"},
      {"duplicate member",
       {stream, events::kGateProperty, "engine",
        head + R"(,"gate":1,"property":"twin","status":"pass","status":"fail","reason":"",)"
               R"("cited":[]})"},
       "member \"status\": duplicate member"},
      {"cited not seqs",
       {stream, events::kGateProperty, "engine",
        head + R"(,"gate":1,"property":"twin","status":"pass","reason":"","cited":[1,-2]})"},
       "member \"cited\": element 1"},
      {"version 2",
       {stream, events::kReceiptIssued, "engine", R"({"v":2,"attempt":")" + id + "\"}"},
       "member \"v\": version 2 is not supported"},
      {"v not first",
       {stream, events::kAttemptAbandoned, "learner:x",
        R"({"attempt":")" + id + R"(","v":1,"reason":"x"})"},
       "member \"v\": not the first member"},
      {"attempt of another stream",
       {stream, events::kAttemptAbandoned, "learner:x",
        R"({"v":1,"attempt":"00000000000000fe","reason":"x"})"},
       "member \"attempt\": \"00000000000000fe\" is not the stream's"},
      {"digest in capitals",
       {stream, events::kReceiptIssued, "engine",
        head + R"(,"receipt_sha256":")" + std::string(64, 'A') +
            R"(","first_seq":1,"last_seq":2,"checkpoint_size":2})"},
       "member \"receipt_sha256\": not 64 lowercase hex digits"},
      {"script not an object",
       {stream, events::kInterventionSubmitted, "learner:x",
        head + R"(,"revision":1,"ir_sha256":")" + digest + R"(","scripts":[7]})"},
       "member \"scripts[0]\": not an object"},
      {"nested scenario member",
       {stream, events::kAttemptStarted, "learner:x",
        head +
            R"(,"learner":"x","mode":"learn","seed":1,"scenario":{"id":"s","version":"1",)"
            R"("package_digest":")" +
            digest + R"(","manifest_sha256":")" + digest + R"("},"probe_budget":3})"},
       "member \"scenario.publisher\": missing"},
      {"registry digest",
       {"lab/scenarios", events::kScenarioLoaded, "engine",
        R"({"v":1,"dir":"d","id":"i","version":"1","family":"f","title":"t",)"
        R"("package_digest":"xyz","manifest_sha256":")" +
            digest + R"(","publisher":"p"})"},
       "member \"package_digest\": not 64 lowercase hex digits"},
      {"registry reason",
       {"lab/scenarios", events::kScenarioRejected, "engine", R"({"v":1,"dir":"d","reason":null})"},
       "member \"reason\": not a string"},
      {"the demo's attempt stream (not 16 hex digits)",
       {"attempt/demo-01", events::kAttemptStarted, "learner:demo",
        R"({"scenario":"demo","phase":"observe"})"},
       "stream \"attempt/demo-01\" is under attempt/ but is not"},
      {"an attempt stream in capitals, of an event only the receipt projection reads",
       {"attempt/00000000000000FF", events::kReceiptIssued, "engine",
        R"({"v":1,"attempt":"00000000000000FF"})"},
       "is under attempt/ but is not"},
      {"verdict unknown",
       {stream, events::kGateVerdict, "engine",
        head + R"(,"gate":1,"verdict":"MAYBE","recovered":true,"result":{}})"},
       "member \"verdict\": \"MAYBE\" is not one of"},
  };
  for (const Bad& bad : cases) {
    const std::string what = bad.what;
    CAPTURE(what);
    TempDir dir;
    StoryLog s(dir.path(), 1);
    const size_t n = s.story.drafts.size();
    append_story(*s.log, s.story, 0, n / 2);
    auto p = open_lab(*s.log, dir / "p.sqlite");
    must(p->catch_up_all());
    const std::string before = dump_all(*p);
    // Good events, the bad one, more good events: all in one batch.
    append_story(*s.log, s.story, n / 2, 10);
    must(s.log->append(bad.draft));
    const uint64_t bad_seq = s.log->head().seq;
    append_story(*s.log, s.story, n / 2 + 10, n - n / 2 - 10);
    auto r = p->catch_up_all(100000);
    REQUIRE_FALSE(r.ok());
    const std::string& m = r.status().message();
    CHECK(m.find("applying seq " + std::to_string(bad_seq)) != std::string::npos);
    CHECK(m.find(bad.member) != std::string::npos);
    CHECK(m.find(bad.draft.type) != std::string::npos);
    CHECK(dump_all(*p) == before);
    for (const lab::ProjectionState& st : p->states()) {
      REQUIRE(st.position.has_value());
      CHECK(st.position->last_seq == n / 2);
    }
    // Batches before the bad event commit; the log is then stuck at it, never past it.
    auto small = p->catch_up_all(3);
    REQUIRE_FALSE(small.ok());
    for (const lab::ProjectionState& st : p->states()) {
      CHECK(st.position->last_seq < bad_seq);
      CHECK(st.position->last_seq + 3 >= bad_seq);
    }
    CHECK(p->serve_check_all().is_ok());  // what was committed still serves
  }
}

TEST_CASE("lab projections: attempt streams are recognised by their exact name") {
  CHECK(lab::attempt_id_of_stream("attempt/0123456789abcdef") == "0123456789abcdef");
  CHECK(lab::attempt_id_of_stream("attempt/0123456789ABCDEF").empty());
  CHECK(lab::attempt_id_of_stream("attempt/0123456789abcde").empty());
  CHECK(lab::attempt_id_of_stream("attempt/0123456789abcdef0").empty());
  CHECK(lab::attempt_id_of_stream("attempt/demo-0123456789a").empty());
  CHECK(lab::attempt_id_of_stream("attempts/0123456789abcdef").empty());
  CHECK(lab::attempt_key("0000000000000001") == 1);
  CHECK(lab::attempt_key("ffffffffffffffff") == -1);
  CHECK(lab::attempt_key("8000000000000000") == INT64_MIN);
}
