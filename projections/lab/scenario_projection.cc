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
  const bool loaded = event.type == ev::kScenarioLoaded;
  if (!loaded && event.type != ev::kScenarioRejected) return Status::ok();
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
    LAB_TRY(p, ev::ScenarioRejected::decode(reader_, event));
    return exec_cached(db, kUpsert, p.dir, std::string_view("rejected"), p.reason, SqlNull{},
                       SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{}, SqlNull{},
                       seq);
  }
  LAB_TRY(p, ev::ScenarioLoaded::decode(reader_, event));
  std::optional<std::string> manifest_blob;
  for (const EvidenceRef& ref : p.refs)
    if (ref.id == "manifest") manifest_blob = to_hex(ref.sha256);
  return exec_cached(db, kUpsert, p.dir, std::string_view("loaded"), SqlNull{}, p.id, p.version,
                     p.family, p.title, p.package_digest, p.manifest_sha256, p.publisher,
                     manifest_blob, seq);
}

}  // namespace aura::lab
