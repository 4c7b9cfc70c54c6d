#include "projections/lab/attempt_projection.h"

#include "projections/lab/sql.h"

// Each update names its own columns before these; ?1 attempt_key, ?2 seq, ?3 ts_us. The guard
// makes an event already applied (seq <= last_seq) a no-op.
#define ATTEMPT_UPDATE(set_columns)    \
  "UPDATE attempts SET " set_columns   \
  "last_seq = ?2, updated_ts_us = ?3 " \
  "WHERE attempt_key = ?1 AND last_seq < ?2"

namespace aura::lab {

Status AttemptProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE attempts ("
      "attempt_key INTEGER PRIMARY KEY, attempt TEXT NOT NULL, scenario_id TEXT NOT NULL, "
      "scenario_version TEXT NOT NULL, "
      "package_digest TEXT NOT NULL, manifest_sha256 TEXT NOT NULL, publisher TEXT NOT NULL, "
      "learner TEXT NOT NULL, mode TEXT NOT NULL, seed TEXT NOT NULL, phase TEXT NOT NULL, "
      "hypothesis TEXT, expect TEXT, confidence INTEGER, probe_budget INTEGER NOT NULL, "
      "spent INTEGER NOT NULL, probes INTEGER NOT NULL, ir_revision INTEGER, ir_sha256 TEXT, "
      "scripts_pending INTEGER NOT NULL, scripts_authorized INTEGER NOT NULL, verdict TEXT, "
      "recovered INTEGER, receipt_sha256 TEXT, abandon_reason TEXT, "
      "first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, started_ts_us INTEGER NOT NULL, "
      "updated_ts_us INTEGER NOT NULL)");
}

Status AttemptProjection::started(SqliteDb& db, const EventView& event, std::string_view id) {
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
  const auto seq = static_cast<int64_t>(event.seq);
  const auto ts = static_cast<int64_t>(event.ts_us);
  // A second attempt.started for the same ID keeps the first (so does a re-applied one). The
  // seed is a u64, kept as its decimal text (SQLite has no unsigned 64-bit integer).
  return exec_cached(db,
                     "INSERT INTO attempts(attempt_key, attempt, scenario_id, scenario_version, "
                     "package_digest, manifest_sha256, publisher, learner, mode, seed, phase, "
                     "probe_budget, spent, probes, scripts_pending, scripts_authorized, "
                     "first_seq, last_seq, started_ts_us, updated_ts_us) "
                     "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'observe', ?11, 0, 0, 0, 0, "
                     "?12, ?12, ?13, ?13) ON CONFLICT(attempt_key) DO NOTHING",
                     attempt_key(id), id, scenario_id, version, package_digest, manifest_sha256,
                     publisher, learner, mode, std::to_string(seed), probe_budget, seq, ts);
}

Status AttemptProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view id = attempt_id_of_stream(event.stream);
  if (id.empty()) return Status::ok();
  const auto seq = static_cast<int64_t>(event.seq);
  const auto ts = static_cast<int64_t>(event.ts_us);
  const std::string_view type = event.type;

  // Other events of the stream (probe results, facts, gate runs ...) change nothing here.
  if (type != "attempt.started" && type != "attempt.phase" && type != "attempt.predicted" &&
      type != "probe.requested" && type != "intervention.submitted" &&
      type != "script.authorized" && type != "attempt.verified" && type != "gate.verdict" &&
      type != "receipt.issued" && type != "attempt.abandoned") {
    return Status::ok();
  }
  AURA_RETURN_IF_ERROR(payload_.parse(event));
  const int64_t key = attempt_key(id);
  const Members& m = payload_.members();
  if (type == "attempt.started") return started(db, event, id);
  if (type == "attempt.phase") {
    LAB_TRY(to, m.one_of("to", kPhases));
    return exec_cached(db, ATTEMPT_UPDATE("phase = ?4, "), key, seq, ts, to);
  }
  if (type == "attempt.predicted") {
    LAB_TRY(hypothesis, m.str("hypothesis"));
    LAB_TRY(expect, m.str("expect"));
    LAB_TRY(confidence, m.count("confidence"));
    if (confidence > 100) return m.error("confidence", "above 100");
    return exec_cached(db, ATTEMPT_UPDATE("hypothesis = ?4, expect = ?5, confidence = ?6, "), key,
                       seq, ts, hypothesis, expect, confidence);
  }
  if (type == "probe.requested") {
    LAB_TRY(probe, m.count("probe"));
    LAB_TRY(spent, m.count("spent"));
    return exec_cached(db, ATTEMPT_UPDATE("probes = ?4, spent = ?5, "), key, seq, ts, probe, spent);
  }
  if (type == "intervention.submitted") {
    LAB_TRY(revision, m.count("revision"));
    LAB_TRY(ir_sha256, m.sha256_hex("ir_sha256"));
    LAB_TRY(scripts, m.array("scripts"));
    const auto pending = static_cast<int64_t>(scripts.size());
    return exec_cached(db,
                       ATTEMPT_UPDATE("ir_revision = ?4, ir_sha256 = ?5, scripts_pending = ?6, "
                                      "scripts_authorized = 0, "),
                       key, seq, ts, revision, ir_sha256, pending);
  }
  if (type == "script.authorized") {
    LAB_TRY(revision, m.count("revision"));
    LAB_TRY(sha256, m.sha256_hex("sha256"));
    (void)sha256;
    // Only an authorisation of the current revision's scripts moves the counts.
    return exec_cached(
        db,
        ATTEMPT_UPDATE("scripts_pending = CASE WHEN ir_revision IS ?4 AND scripts_pending > 0 "
                       "THEN scripts_pending - 1 ELSE scripts_pending END, "
                       "scripts_authorized = CASE WHEN ir_revision IS ?4 AND scripts_pending > 0 "
                       "THEN scripts_authorized + 1 ELSE scripts_authorized END, "),
        key, seq, ts, revision);
  }
  if (type == "attempt.verified") {
    LAB_TRY(recovered, m.boolean("recovered"));
    return exec_cached(db, ATTEMPT_UPDATE("recovered = ?4, "), key, seq, ts, recovered);
  }
  if (type == "gate.verdict") {
    LAB_TRY(verdict, m.one_of("verdict", {"NOT_RECOVERED", "RECOVERED_UNPROVEN", "VERIFIED"}));
    LAB_TRY(recovered, m.boolean("recovered"));
    return exec_cached(db, ATTEMPT_UPDATE("verdict = ?4, recovered = ?5, "), key, seq, ts, verdict,
                       recovered);
  }
  if (type == "receipt.issued") {
    LAB_TRY(receipt, m.sha256_hex("receipt_sha256"));
    return exec_cached(db, ATTEMPT_UPDATE("receipt_sha256 = ?4, "), key, seq, ts, receipt);
  }
  LAB_TRY(reason, m.str("reason"));  // attempt.abandoned
  return exec_cached(db, ATTEMPT_UPDATE("abandon_reason = ?4, "), key, seq, ts, reason);
}

#undef ATTEMPT_UPDATE

}  // namespace aura::lab
