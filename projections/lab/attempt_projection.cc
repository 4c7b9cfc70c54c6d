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
  LAB_TRY(p, ev::AttemptStarted::decode(reader_, event));
  Row r;
  r.attempt = std::string(id);
  r.scenario_id = std::move(p.scenario.id);
  r.scenario_version = std::move(p.scenario.version);
  r.package_digest = std::move(p.scenario.package_digest);
  r.manifest_sha256 = std::move(p.scenario.manifest_sha256);
  r.publisher = std::move(p.scenario.publisher);
  r.learner = std::move(p.learner);
  r.mode = std::move(p.mode);
  // A u64, kept as its decimal text (SQLite has no unsigned 64-bit integer).
  r.seed = std::to_string(p.seed);
  r.phase = "observe";
  r.probe_budget = sql_int(p.probe_budget);
  r.first_seq = r.last_seq = static_cast<int64_t>(event.seq);
  r.started_ts_us = r.updated_ts_us = static_cast<int64_t>(event.ts_us);
  r.dirty = true;
  return r;
}

// Every member is read (and so checked) before the row is looked at: whether an event is
// malformed never depends on what was applied before it.
template <class T, class F>
Status AttemptProjection::update(SqliteDb& db, const EventView& event, int64_t key, F change) {
  LAB_TRY(p, T::decode(reader_, event));
  LAB_TRY(row, find(db, key));
  // No row yet (an event before attempt.started), or an event already applied.
  const auto seq = static_cast<int64_t>(event.seq);
  if (row == nullptr || row->last_seq >= seq) return Status::ok();
  Row& r = *row;
  change(r, p);
  r.last_seq = seq;
  r.updated_ts_us = static_cast<int64_t>(event.ts_us);
  r.dirty = true;
  return Status::ok();
}

Status AttemptProjection::apply(SqliteDb& db, const EventView& event) {
  LAB_TRY(id, attempt_of(event));
  if (id.empty()) return Status::ok();
  const std::string_view type = event.type;
  const int64_t key = attempt_key(id);
  if (type == ev::kAttemptStarted) {
    LAB_TRY(fresh, started(event, id));
    LAB_TRY(row, find(db, key));
    // A second attempt.started for the same ID keeps the first (so does a re-applied one).
    if (row == nullptr) {
      absent_.erase(key);
      rows_.emplace(key, std::move(fresh));
    }
    return Status::ok();
  }
  if (type == ev::kAttemptPhase) {
    return update<ev::AttemptPhase>(db, event, key,
                                    [](Row& r, ev::AttemptPhase& p) { r.phase = std::move(p.to); });
  }
  if (type == ev::kAttemptPredicted) {
    return update<ev::AttemptPredicted>(db, event, key, [](Row& r, ev::AttemptPredicted& p) {
      r.hypothesis = std::move(p.hypothesis);
      r.expect = std::move(p.expect);
      r.confidence = sql_int(p.confidence);
    });
  }
  if (type == ev::kProbeRequested) {
    return update<ev::ProbeRequested>(db, event, key, [](Row& r, ev::ProbeRequested& p) {
      r.probes = sql_int(p.probe);
      r.spent = sql_int(p.spent);
    });
  }
  if (type == ev::kInterventionSubmitted) {
    return update<ev::InterventionSubmitted>(
        db, event, key, [](Row& r, ev::InterventionSubmitted& p) {
          r.ir_revision = sql_int(p.revision);
          r.ir_sha256 = std::move(p.ir_sha256);
          r.scripts_pending = static_cast<int64_t>(p.scripts.size());
          r.scripts_authorized = 0;
        });
  }
  if (type == ev::kScriptAuthorized) {
    return update<ev::ScriptAuthorized>(db, event, key, [](Row& r, ev::ScriptAuthorized& p) {
      // Only an authorisation of the current revision's scripts moves the counts.
      if (r.ir_revision == sql_int(p.revision) && r.scripts_pending > 0) {
        --r.scripts_pending;
        ++r.scripts_authorized;
      }
    });
  }
  if (type == ev::kAttemptVerified) {
    return update<ev::AttemptVerified>(
        db, event, key, [](Row& r, ev::AttemptVerified& p) { r.recovered = p.recovered ? 1 : 0; });
  }
  if (type == ev::kGateVerdict) {
    return update<ev::GateVerdict>(db, event, key, [](Row& r, ev::GateVerdict& p) {
      r.verdict = std::move(p.verdict);
      r.recovered = p.recovered ? 1 : 0;
    });
  }
  if (type == ev::kReceiptIssued) {
    return update<ev::ReceiptIssued>(db, event, key, [](Row& r, ev::ReceiptIssued& p) {
      r.receipt_sha256 = std::move(p.receipt_sha256);
    });
  }
  if (type == ev::kAttemptAbandoned) {
    return update<ev::AttemptAbandoned>(db, event, key, [](Row& r, ev::AttemptAbandoned& p) {
      r.abandon_reason = std::move(p.reason);
    });
  }
  // Other events of the stream (probe results, facts, gate runs ...) change nothing here.
  return Status::ok();
}

}  // namespace aura::lab
