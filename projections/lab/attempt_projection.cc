#include "projections/lab/attempt_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

namespace {

constexpr std::string_view kColumns =
    "attempt, scenario_id, scenario_version, package_digest, manifest_sha256, publisher, "
    "learner, mode, seed, phase, hypothesis, expect, confidence, probe_budget, spent, probes, "
    "ir_revision, ir_sha256, scripts_pending, scripts_authorized, verdict, recovered, "
    "receipt_sha256, abandon_reason, first_seq, last_seq, started_ts_us, updated_ts_us";

std::optional<std::string> opt_text(const Statement& st, int col) {
  if (st.column_type(col) == SQLITE_NULL) return std::nullopt;
  return st.column_text(col);
}

std::optional<int64_t> opt_int(const Statement& st, int col) {
  if (st.column_type(col) == SQLITE_NULL) return std::nullopt;
  return st.column_int(col);
}

}  // namespace

Status AttemptProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE attempts ("
      "attempt_key INTEGER NOT NULL UNIQUE, attempt TEXT NOT NULL, scenario_id TEXT NOT NULL, "
      "scenario_version TEXT NOT NULL, package_digest TEXT NOT NULL, "
      "manifest_sha256 TEXT NOT NULL, publisher TEXT NOT NULL, learner TEXT NOT NULL, "
      "mode TEXT NOT NULL, seed TEXT NOT NULL, phase TEXT NOT NULL, hypothesis TEXT, expect TEXT, "
      "confidence INTEGER, probe_budget INTEGER NOT NULL, spent INTEGER NOT NULL, "
      "probes INTEGER NOT NULL, ir_revision INTEGER, ir_sha256 TEXT, "
      "scripts_pending INTEGER NOT NULL, scripts_authorized INTEGER NOT NULL, verdict TEXT, "
      "recovered INTEGER, receipt_sha256 TEXT, abandon_reason TEXT, "
      "first_seq INTEGER PRIMARY KEY, last_seq INTEGER NOT NULL, started_ts_us INTEGER NOT NULL, "
      "updated_ts_us INTEGER NOT NULL)");
}

Status AttemptProjection::begin_batch(SqliteDb& db) {
  (void)db;
  rows_.clear();
  absent_.clear();
  return Status::ok();
}

Status AttemptProjection::end_batch(SqliteDb& db) {
  static const std::string sql =
      "INSERT OR REPLACE INTO attempts(attempt_key, " + std::string(kColumns) +
      ") VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, "
      "?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29)";
  for (const auto& [key, r] : rows_) {
    if (!r.dirty) continue;
    AURA_RETURN_IF_ERROR(exec_cached(
        db, sql, key, r.attempt, r.scenario_id, r.scenario_version, r.package_digest,
        r.manifest_sha256, r.publisher, r.learner, r.mode, r.seed, r.phase, r.hypothesis, r.expect,
        r.confidence, r.probe_budget, r.spent, r.probes, r.ir_revision, r.ir_sha256,
        r.scripts_pending, r.scripts_authorized, r.verdict, r.recovered, r.receipt_sha256,
        r.abandon_reason, r.first_seq, r.last_seq, r.started_ts_us, r.updated_ts_us));
  }
  rows_.clear();
  absent_.clear();
  return Status::ok();
}

Result<AttemptProjection::Row*> AttemptProjection::find(SqliteDb& db, int64_t key) {
  if (auto it = rows_.find(key); it != rows_.end()) return &it->second;
  if (absent_.count(key)) return static_cast<Row*>(nullptr);
  static const std::string sql =
      "SELECT " + std::string(kColumns) + " FROM attempts WHERE attempt_key = ?1";
  auto st = db.cached(sql);
  if (!st.ok()) return st.status();
  Statement& q = **st;
  AURA_RETURN_IF_ERROR(q.bind(1, key));
  auto found = q.step();
  if (!found.ok()) return found.status();
  if (!*found) {
    absent_.insert(key);
    return static_cast<Row*>(nullptr);
  }
  Row r;
  int c = 0;
  for (std::string* s :
       {&r.attempt, &r.scenario_id, &r.scenario_version, &r.package_digest, &r.manifest_sha256,
        &r.publisher, &r.learner, &r.mode, &r.seed, &r.phase}) {
    *s = q.column_text(c++);
  }
  r.hypothesis = opt_text(q, c++);
  r.expect = opt_text(q, c++);
  r.confidence = opt_int(q, c++);
  r.probe_budget = q.column_int(c++);
  r.spent = q.column_int(c++);
  r.probes = q.column_int(c++);
  r.ir_revision = opt_int(q, c++);
  r.ir_sha256 = opt_text(q, c++);
  r.scripts_pending = q.column_int(c++);
  r.scripts_authorized = q.column_int(c++);
  r.verdict = opt_text(q, c++);
  r.recovered = opt_int(q, c++);
  r.receipt_sha256 = opt_text(q, c++);
  r.abandon_reason = opt_text(q, c++);
  r.first_seq = q.column_int(c++);
  r.last_seq = q.column_int(c++);
  r.started_ts_us = q.column_int(c++);
  r.updated_ts_us = q.column_int(c++);
  q.reset();
  return &rows_.emplace(key, std::move(r)).first->second;
}

Result<AttemptProjection::Row> AttemptProjection::started(const EventView& event,
                                                          std::string_view id) {
  const Members& m = payload_.members();
  LAB_TRY(learner, m.str("learner"));
  LAB_TRY(mode, m.one_of("mode", {"learn", "judge"}));
  LAB_TRY(seed, m.u64("seed"));
  LAB_TRY(scenario, m.object("scenario"));
  LAB_TRY(scenario_id, scenario.str("id"));
  LAB_TRY(version, scenario.str("version"));
  LAB_TRY(package_digest, scenario.sha256_hex("package_digest"));
  LAB_TRY(manifest_sha256, scenario.sha256_hex("manifest_sha256"));
  LAB_TRY(publisher, scenario.str("publisher"));
  LAB_TRY(probe_budget, m.count("probe_budget"));
  Row r;
  r.attempt = std::string(id);
  r.scenario_id = std::string(scenario_id);
  r.scenario_version = std::string(version);
  r.package_digest = std::string(package_digest);
  r.manifest_sha256 = std::string(manifest_sha256);
  r.publisher = std::string(publisher);
  r.learner = std::string(learner);
  r.mode = std::string(mode);
  // A u64, kept as its decimal text (SQLite has no unsigned 64-bit integer).
  r.seed = std::to_string(seed);
  r.phase = "observe";
  r.probe_budget = probe_budget;
  r.first_seq = r.last_seq = static_cast<int64_t>(event.seq);
  r.started_ts_us = r.updated_ts_us = static_cast<int64_t>(event.ts_us);
  r.dirty = true;
  return r;
}

Status AttemptProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view id = attempt_id_of_stream(event.stream);
  if (id.empty()) return Status::ok();
  const std::string_view type = event.type;
  // Other events of the stream (probe results, facts, gate runs ...) change nothing here.
  if (type != "attempt.started" && type != "attempt.phase" && type != "attempt.predicted" &&
      type != "probe.requested" && type != "intervention.submitted" &&
      type != "script.authorized" && type != "attempt.verified" && type != "gate.verdict" &&
      type != "receipt.issued" && type != "attempt.abandoned") {
    return Status::ok();
  }
  AURA_RETURN_IF_ERROR(payload_.parse(event));
  const Members& m = payload_.members();
  const int64_t key = attempt_key(id);
  const auto seq = static_cast<int64_t>(event.seq);
  if (type == "attempt.started") {
    LAB_TRY(fresh, started(event, id));
    LAB_TRY(row, find(db, key));
    // A second attempt.started for the same ID keeps the first (so does a re-applied one).
    if (row == nullptr) {
      absent_.erase(key);
      rows_.emplace(key, std::move(fresh));
    }
    return Status::ok();
  }

  // Every member is read (and so checked) before the row is looked at: whether an event is
  // malformed never depends on what was applied before it.
  std::string_view text1, text2;
  int64_t n1 = 0, n2 = 0;
  bool flag = false;
  if (type == "attempt.phase") {
    LAB_TRY(to, m.one_of("to", kPhases));
    text1 = to;
  } else if (type == "attempt.predicted") {
    LAB_TRY(hypothesis, m.str("hypothesis"));
    LAB_TRY(expect, m.str("expect"));
    LAB_TRY(confidence, m.count("confidence"));
    if (confidence > 100) return m.error("confidence", "above 100");
    text1 = hypothesis;
    text2 = expect;
    n1 = confidence;
  } else if (type == "probe.requested") {
    LAB_TRY(probe, m.count("probe"));
    LAB_TRY(spent, m.count("spent"));
    n1 = probe;
    n2 = spent;
  } else if (type == "intervention.submitted") {
    LAB_TRY(revision, m.count("revision"));
    LAB_TRY(ir_sha256, m.sha256_hex("ir_sha256"));
    LAB_TRY(scripts, m.array("scripts"));
    n1 = revision;
    text1 = ir_sha256;
    n2 = static_cast<int64_t>(scripts.size());
  } else if (type == "script.authorized") {
    LAB_TRY(revision, m.count("revision"));
    LAB_TRY(sha256, m.sha256_hex("sha256"));
    (void)sha256;  // checked, not kept (the interventions projection keeps it)
    n1 = revision;
  } else if (type == "attempt.verified") {
    LAB_TRY(recovered, m.boolean("recovered"));
    flag = recovered;
  } else if (type == "gate.verdict") {
    LAB_TRY(verdict, m.one_of("verdict", {"NOT_RECOVERED", "RECOVERED_UNPROVEN", "VERIFIED"}));
    LAB_TRY(recovered, m.boolean("recovered"));
    text1 = verdict;
    flag = recovered;
  } else if (type == "receipt.issued") {
    LAB_TRY(receipt, m.sha256_hex("receipt_sha256"));
    text1 = receipt;
  } else {  // attempt.abandoned
    LAB_TRY(reason, m.str("reason"));
    text1 = reason;
  }

  LAB_TRY(row, find(db, key));
  // No row yet (an event before attempt.started), or an event already applied.
  if (row == nullptr || row->last_seq >= seq) return Status::ok();
  Row& r = *row;
  if (type == "attempt.phase") {
    r.phase = std::string(text1);
  } else if (type == "attempt.predicted") {
    r.hypothesis = std::string(text1);
    r.expect = std::string(text2);
    r.confidence = n1;
  } else if (type == "probe.requested") {
    r.probes = n1;
    r.spent = n2;
  } else if (type == "intervention.submitted") {
    r.ir_revision = n1;
    r.ir_sha256 = std::string(text1);
    r.scripts_pending = n2;
    r.scripts_authorized = 0;
  } else if (type == "script.authorized") {
    // Only an authorisation of the current revision's scripts moves the counts.
    if (r.ir_revision == n1 && r.scripts_pending > 0) {
      --r.scripts_pending;
      ++r.scripts_authorized;
    }
  } else if (type == "attempt.verified") {
    r.recovered = flag ? 1 : 0;
  } else if (type == "gate.verdict") {
    r.verdict = std::string(text1);
    r.recovered = flag ? 1 : 0;
  } else if (type == "receipt.issued") {
    r.receipt_sha256 = std::string(text1);
  } else {
    r.abandon_reason = std::string(text1);
  }
  r.last_seq = seq;
  r.updated_ts_us = static_cast<int64_t>(event.ts_us);
  r.dirty = true;
  return Status::ok();
}

}  // namespace aura::lab
