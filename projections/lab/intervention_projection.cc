#include "projections/lab/intervention_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

Status InterventionProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE interventions ("
      "attempt TEXT NOT NULL, revision INTEGER NOT NULL, ir_sha256 TEXT NOT NULL, "
      "blob_sha256 TEXT, scripts INTEGER NOT NULL, seq INTEGER NOT NULL, "
      "UNIQUE(attempt, revision));"
      "CREATE TABLE scripts ("
      "attempt TEXT NOT NULL, revision INTEGER NOT NULL, sha256 TEXT NOT NULL, "
      "status TEXT NOT NULL, submitted_seq INTEGER NOT NULL, authorized_seq INTEGER, "
      "UNIQUE(attempt, revision, sha256))");
}

Status InterventionProjection::submitted(SqliteDb& db, const EventView& event,
                                         std::string_view id) {
  LAB_TRY(p, ev::InterventionSubmitted::decode(reader_, event));
  const std::string ir_id = "ir-" + std::to_string(p.revision);
  std::optional<std::string> blob;
  for (const EvidenceRef& ref : p.refs)
    if (ref.id == ir_id) blob = to_hex(ref.sha256);
  const auto seq = static_cast<int64_t>(event.seq);
  const int64_t revision = sql_int(p.revision);
  // Rows are written once: a revision submitted again (or re-applied) keeps the first.
  AURA_RETURN_IF_ERROR(exec_cached(
      db,
      "INSERT INTO interventions(attempt, revision, ir_sha256, blob_sha256, scripts, seq) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(attempt, revision) DO NOTHING",
      id, revision, p.ir_sha256, blob, static_cast<int64_t>(p.scripts.size()), seq));
  for (const auto& script : p.scripts) {
    AURA_RETURN_IF_ERROR(
        exec_cached(db,
                    "INSERT INTO scripts(attempt, revision, sha256, status, submitted_seq) "
                    "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(attempt, revision, sha256) DO NOTHING",
                    id, revision, script.sha256, script.status, seq));
  }
  return Status::ok();
}

Status InterventionProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view type = event.type;
  if (type != ev::kInterventionSubmitted && type != ev::kScriptAuthorized) return Status::ok();
  LAB_TRY(id, attempt_of(event));
  if (id.empty()) return Status::ok();
  if (type == ev::kInterventionSubmitted) return submitted(db, event, id);
  LAB_TRY(p, ev::ScriptAuthorized::decode(reader_, event));
  // The first authorisation is kept.
  return exec_cached(db,
                     "UPDATE scripts SET status = 'pending_execution', authorized_seq = ?4 "
                     "WHERE attempt = ?1 AND revision = ?2 AND sha256 = ?3 "
                     "AND authorized_seq IS NULL",
                     id, sql_int(p.revision), p.sha256, static_cast<int64_t>(event.seq));
}

}  // namespace aura::lab
