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
  const Members& m = payload_.members();
  LAB_TRY(revision, m.count("revision"));
  LAB_TRY(ir_sha256, m.sha256_hex("ir_sha256"));
  LAB_TRY(scripts, m.array("scripts"));
  const std::string ir_id = "ir-" + std::to_string(revision);
  LAB_TRY(ref, payload_.ref(ir_id));
  std::optional<std::string> blob;
  if (ref) blob = to_hex(ref->sha256);
  const auto seq = static_cast<int64_t>(event.seq);
  // Rows are written once: a revision submitted again (or re-applied) keeps the first.
  AURA_RETURN_IF_ERROR(exec_cached(
      db,
      "INSERT INTO interventions(attempt, revision, ir_sha256, blob_sha256, scripts, seq) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(attempt, revision) DO NOTHING",
      id, revision, ir_sha256, blob, static_cast<int64_t>(scripts.size()), seq));
  size_t i = 0;
  for (simdjson::dom::element e : scripts) {
    const std::string path = "scripts[" + std::to_string(i++) + "]";
    simdjson::dom::object o;
    if (e.get_object().get(o) != simdjson::SUCCESS) return m.error(path, "not an object");
    Members script;
    AURA_RETURN_IF_ERROR(script.load(o, event.type, path + "."));
    LAB_TRY(sha256, script.sha256_hex("sha256"));
    LAB_TRY(status, script.one_of("status", {"pending_feedback", "pending_execution"}));
    AURA_RETURN_IF_ERROR(
        exec_cached(db,
                    "INSERT INTO scripts(attempt, revision, sha256, status, submitted_seq) "
                    "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(attempt, revision, sha256) DO NOTHING",
                    id, revision, sha256, status, seq));
  }
  return Status::ok();
}

Status InterventionProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view type = event.type;
  if (type != "intervention.submitted" && type != "script.authorized") return Status::ok();
  const std::string_view id = attempt_id_of_stream(event.stream);
  if (id.empty()) return Status::ok();
  AURA_RETURN_IF_ERROR(payload_.parse(event));
  if (type == "intervention.submitted") return submitted(db, event, id);
  const Members& m = payload_.members();
  LAB_TRY(revision, m.count("revision"));
  LAB_TRY(sha256, m.sha256_hex("sha256"));
  // The first authorisation is kept.
  return exec_cached(db,
                     "UPDATE scripts SET status = 'pending_execution', authorized_seq = ?4 "
                     "WHERE attempt = ?1 AND revision = ?2 AND sha256 = ?3 "
                     "AND authorized_seq IS NULL",
                     id, revision, sha256, static_cast<int64_t>(event.seq));
}

}  // namespace aura::lab
