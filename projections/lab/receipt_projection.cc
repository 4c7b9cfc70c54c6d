#include "projections/lab/receipt_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

Status ReceiptProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE receipts ("
      "attempt TEXT NOT NULL UNIQUE, receipt_sha256 TEXT NOT NULL, blob_sha256 TEXT, "
      "first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, checkpoint_size INTEGER NOT NULL, "
      "seq INTEGER NOT NULL)");
}

Status ReceiptProjection::apply(SqliteDb& db, const EventView& event) {
  if (event.type != ev::kReceiptIssued) return Status::ok();
  LAB_TRY(id, attempt_of(event));
  if (id.empty()) return Status::ok();
  LAB_TRY(p, ev::ReceiptIssued::decode(reader_, event));
  std::optional<std::string> blob;
  for (const EvidenceRef& ref : p.refs)
    if (ref.id == "receipt") blob = to_hex(ref.sha256);
  // An older receipt never replaces a newer one (re-applying is a no-op).
  return exec_cached(db,
                     "INSERT INTO receipts(attempt, receipt_sha256, blob_sha256, first_seq, "
                     "last_seq, checkpoint_size, seq) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                     "ON CONFLICT(attempt) DO UPDATE SET receipt_sha256 = excluded.receipt_sha256, "
                     "blob_sha256 = excluded.blob_sha256, first_seq = excluded.first_seq, "
                     "last_seq = excluded.last_seq, checkpoint_size = excluded.checkpoint_size, "
                     "seq = excluded.seq WHERE excluded.seq > receipts.seq",
                     id, p.receipt_sha256, blob, sql_int(p.first_seq), sql_int(p.last_seq),
                     sql_int(p.checkpoint_size), static_cast<int64_t>(event.seq));
}

}  // namespace aura::lab
