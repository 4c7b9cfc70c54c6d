#include "projections/lab/scenario_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

Status ScenarioProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE scenarios ("
      "dir TEXT PRIMARY KEY, status TEXT NOT NULL, reason TEXT, id TEXT, version TEXT, "
      "family TEXT, title TEXT, package_digest TEXT, manifest_sha256 TEXT, publisher TEXT, "
      "manifest_blob_sha256 TEXT, seq INTEGER NOT NULL) WITHOUT ROWID");
}

Status ScenarioProjection::apply(SqliteDb& db, const EventView& event) {
  if (event.stream != kScenarioStream) return Status::ok();
  const bool loaded = event.type == "scenario.loaded";
  if (!loaded && event.type != "scenario.rejected") return Status::ok();
  AURA_RETURN_IF_ERROR(payload_.parse(event));
  const Members& m = payload_.members();
  LAB_TRY(dir, m.str("dir"));
  if (dir.empty()) return m.error("dir", "empty");
  // An older event for the same folder never replaces a newer one (re-applying is a no-op).
  constexpr std::string_view kUpsert =
      "INSERT INTO scenarios(dir, status, reason, id, version, family, title, package_digest, "
      "manifest_sha256, publisher, manifest_blob_sha256, seq) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
      "ON CONFLICT(dir) DO UPDATE SET status = excluded.status, reason = excluded.reason, "
      "id = excluded.id, version = excluded.version, family = excluded.family, "
      "title = excluded.title, package_digest = excluded.package_digest, "
      "manifest_sha256 = excluded.manifest_sha256, publisher = excluded.publisher, "
      "manifest_blob_sha256 = excluded.manifest_blob_sha256, seq = excluded.seq "
      "WHERE excluded.seq > scenarios.seq";
  const int64_t seq = static_cast<int64_t>(event.seq);
  if (!loaded) {
    LAB_TRY(reason, m.str("reason"));
    return exec_cached(db, kUpsert, dir, std::string_view("rejected"), reason, SqlNull{}, SqlNull{},
                       SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, seq);
  }
  LAB_TRY(id, m.str("id"));
  LAB_TRY(version, m.str("version"));
  LAB_TRY(family, m.str("family"));
  LAB_TRY(title, m.str("title"));
  LAB_TRY(package_digest, m.sha256_hex("package_digest"));
  LAB_TRY(manifest_sha256, m.sha256_hex("manifest_sha256"));
  LAB_TRY(publisher, m.str("publisher"));
  LAB_TRY(manifest_ref, payload_.ref("manifest"));
  std::optional<std::string> manifest_blob;
  if (manifest_ref) manifest_blob = to_hex(manifest_ref->sha256);
  return exec_cached(db, kUpsert, dir, std::string_view("loaded"), SqlNull{}, id, version, family,
                     title, package_digest, manifest_sha256, publisher, manifest_blob, seq);
}

}  // namespace aura::lab
