#include "projections/streams/stream_projection.h"

namespace aura {

Status StreamProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE streams (stream TEXT PRIMARY KEY, events INTEGER NOT NULL, "
      "first_seq INTEGER NOT NULL, last_seq INTEGER NOT NULL, last_type TEXT NOT NULL)");
}

Status StreamProjection::apply(SqliteDb& db, const EventView& event) {
  auto st = db.cached(
      "INSERT INTO streams(stream, events, first_seq, last_seq, last_type) "
      "VALUES(?1, 1, ?2, ?2, ?3) "
      "ON CONFLICT(stream) DO UPDATE SET events = events + 1, last_seq = excluded.last_seq, "
      "last_type = excluded.last_type");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  AURA_RETURN_IF_ERROR(q.bind(1, event.stream));
  AURA_RETURN_IF_ERROR(q.bind(2, static_cast<int64_t>(event.seq)));
  AURA_RETURN_IF_ERROR(q.bind(3, event.type));
  return q.run();
}

Result<std::vector<StreamRow>> StreamProjection::all_streams(SqliteDb& db) {
  auto st = db.prepare(
      "SELECT stream, events, first_seq, last_seq, last_type FROM streams "
      "ORDER BY stream COLLATE BINARY");
  if (!st.ok()) return st.status();
  std::vector<StreamRow> rows;
  for (;;) {
    auto row = st->step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    rows.push_back({st->column_text(0), st->column_int(1), st->column_int(2), st->column_int(3),
                    st->column_text(4)});
  }
  return rows;
}

}  // namespace aura
