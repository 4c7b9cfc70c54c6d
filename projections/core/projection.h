// A projection: one SQLite schema plus apply(event). The projector (projector.h) owns the
// position, the transactions and rebuilds; a projection only says how its rows change.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/log/event.h"
#include "projections/core/sqlite_db.h"

namespace aura {

class Projection {
 public:
  virtual ~Projection() = default;

  // Unique among the projections sharing a database; the key of its `_position` row.
  virtual std::string_view name() const = 0;
  // Bump when the schema or the meaning of apply() changes: the projector then rebuilds.
  virtual int schema_version() const = 0;
  // Every table this projection owns (dropped on rebuild, dumped by canonical_dump).
  virtual std::vector<std::string> tables() const = 0;
  // Creates the tables (and indexes) in an empty database. Runs inside a transaction.
  virtual Status create_schema(SqliteDb& db) = 0;
  // Applies one event. Must be deterministic: depend only on the event and existing rows
  // (no clock, no randomness, no outside state). Runs inside the batch's transaction; an error
  // rolls the whole batch back. Events a projection does not care about are ignored (ok).
  virtual Status apply(SqliteDb& db, const EventView& event) = 0;

  // The projector calls begin_batch() inside each batch's transaction before the batch's first
  // apply(), and end_batch() after its last, before writing the position. A projection may keep
  // the rows a batch changes in memory and write them in end_batch() (fewer, ordered writes);
  // begin_batch() must then drop whatever a rolled-back batch left in memory. Whoever calls
  // apply() directly calls these around it too. By default both do nothing.
  virtual Status begin_batch(SqliteDb& db) {
    (void)db;
    return Status::ok();
  }
  virtual Status end_batch(SqliteDb& db) {
    (void)db;
    return Status::ok();
  }
};

// Every row of the projection's tables, in table-name order, each table's rows ordered by all
// columns, serialised with type tags. Two databases with equal dumps answer every query alike.
Result<std::string> canonical_dump(SqliteDb& db, const Projection& projection);

}  // namespace aura
