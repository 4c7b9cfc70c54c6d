#include "projections/lab/evidence_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

namespace {

// Evidence rows are written once: an id seen again (or a re-applied event) keeps the first.
constexpr std::string_view kInsertActionOutput =
    "INSERT INTO evidence(attempt, evidence_id, sha256, kind, bytes, probe, action_index, call, "
    "script_sha256, truncated, exit_code, error, seq) "
    "VALUES(?1, ?2, ?3, ?4, ?5, NULL, ?6, ?7, ?8, NULL, ?9, ?10, ?11) "
    "ON CONFLICT(attempt, evidence_id) DO NOTHING";
// A probe's output takes its call from the probe's request.
constexpr std::string_view kInsertProbeOutput =
    "INSERT INTO evidence(attempt, evidence_id, sha256, kind, bytes, probe, action_index, call, "
    "script_sha256, truncated, exit_code, error, seq) "
    "VALUES(?1, ?2, ?3, ?4, ?5, ?6, NULL, "
    "(SELECT call FROM probes WHERE attempt = ?1 AND probe = ?6), NULL, ?7, ?8, ?9, ?10) "
    "ON CONFLICT(attempt, evidence_id) DO NOTHING";

}  // namespace

Status EvidenceProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE probes ("
      "attempt TEXT NOT NULL, probe INTEGER NOT NULL, call TEXT NOT NULL, cost INTEGER NOT NULL, "
      "spent INTEGER NOT NULL, requested_seq INTEGER NOT NULL, "
      "UNIQUE(attempt, probe));"
      "CREATE TABLE evidence ("
      "attempt TEXT NOT NULL, evidence_id TEXT NOT NULL, sha256 TEXT NOT NULL, "
      "kind TEXT NOT NULL, bytes INTEGER NOT NULL, probe INTEGER, action_index INTEGER, "
      "call TEXT, script_sha256 TEXT, truncated INTEGER, exit_code INTEGER, error TEXT, "
      "seq INTEGER NOT NULL, UNIQUE(attempt, evidence_id))");
}

Status EvidenceProjection::probe_completed(SqliteDb& db, const EventView& event,
                                           std::string_view id) {
  LAB_TRY(p, ev::ProbeCompleted::decode(reader_, event));
  const auto seq = static_cast<int64_t>(event.seq);
  // A probe that produced no output lists no ref for its evidence id: no evidence row.
  for (const EvidenceRef& ref : p.refs) {
    if (ref.id != p.evidence) continue;
    return exec_cached(db, kInsertProbeOutput, id, ref.id, to_hex(ref.sha256), ref.kind,
                       static_cast<int64_t>(ref.bytes), sql_int(p.probe), p.truncated, p.exit_code,
                       p.error, seq);
  }
  return Status::ok();
}

Status EvidenceProjection::action_completed(SqliteDb& db, const EventView& event,
                                            std::string_view id) {
  LAB_TRY(p, ev::ActionCompleted::decode(reader_, event));
  const auto seq = static_cast<int64_t>(event.seq);
  for (const EvidenceRef& ref : p.refs) {
    if (ref.kind != "action.output") continue;
    AURA_RETURN_IF_ERROR(exec_cached(db, kInsertActionOutput, id, ref.id, to_hex(ref.sha256),
                                     ref.kind, static_cast<int64_t>(ref.bytes), sql_int(p.index),
                                     p.call, p.script_sha256, p.exit_code, p.error, seq));
  }
  return Status::ok();
}

Status EvidenceProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view type = event.type;
  if (type != ev::kProbeRequested && type != ev::kProbeCompleted && type != ev::kActionCompleted) {
    return Status::ok();
  }
  LAB_TRY(id, attempt_of(event));
  if (id.empty()) return Status::ok();
  if (type == ev::kProbeCompleted) return probe_completed(db, event, id);
  if (type == ev::kActionCompleted) return action_completed(db, event, id);
  LAB_TRY(p, ev::ProbeRequested::decode(reader_, event));
  return exec_cached(db,
                     "INSERT INTO probes(attempt, probe, call, cost, spent, requested_seq) "
                     "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(attempt, probe) DO NOTHING",
                     id, sql_int(p.probe), p.call, sql_int(p.cost), sql_int(p.spent),
                     static_cast<int64_t>(event.seq));
}

}  // namespace aura::lab
