// Feeds one projection from the event log. The projection's position (last seq and hash
// applied, and the schema version it was built with) lives in the `_position` table of the same
// database and is written in the same transaction as the rows, so a crash at any point leaves
// rows and position in agreement.
//
// Before applying anything and before serving, the stored (last_seq, last_hash) is checked
// against the log: a database built from another log (or a log that was cut back) is refused
// and nothing changes. Each applied event must also chain onto the previous one (prev_hash).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "projections/core/projection.h"
#include "projections/core/sqlite_db.h"

namespace aura {

struct ProjectionPosition {
  int schema_version = 0;
  uint64_t last_seq = 0;
  Digest last_hash{};  // 32 zero bytes at seq 0
};

class Projector {
 public:
  static constexpr size_t kDefaultBatch = 1000;

  // All three must outlive the projector.
  Projector(const EventLog& log, SqliteDb& db, Projection& projection);

  // Applies every event after the stored position up to the log's head, at most
  // `max_events_per_txn` per transaction (each together with its new position). Creates the
  // schema on first use; rebuilds from seq 1 when the stored schema version differs. Returns the
  // number of events applied. On error the failing batch is rolled back (earlier batches stay).
  Result<uint64_t> catch_up(size_t max_events_per_txn = kDefaultBatch);

  // Drops the projection's tables and replays the log from seq 1. Returns events applied.
  Result<uint64_t> rebuild(size_t max_events_per_txn = kDefaultBatch);

  // catch_up for several projectors over the same log and database in one pass: each batch of
  // events is read once and applied to every projector behind it, in one transaction that also
  // writes each moved position. Same guarantees as catch_up for each projector; a failure rolls
  // back the whole batch for all of them. Returns events applied per projector, in order.
  static Result<std::vector<uint64_t>> catch_up_together(std::span<Projector* const> group,
                                                         size_t max_events_per_txn = kDefaultBatch);
  // rebuild for several projectors: each is reset, then they catch up together from seq 1.
  static Result<std::vector<uint64_t>> rebuild_together(std::span<Projector* const> group,
                                                        size_t max_events_per_txn = kDefaultBatch);

  // Applies one event if it is the next one (seq = last_seq + 1), in its own transaction.
  // An event at or below the position is already applied: returns false and changes nothing
  // (refused if it is the event at last_seq but its hash differs). A gap is refused.
  Result<bool> apply_event(const EventView& event);

  // For readers: ok when the stored position exists, has the current schema version and its
  // hash matches the log's event at that seq. Says what is wrong otherwise. The projection may
  // still lag behind the head; `position()` tells by how much.
  Status serve_check() const;

  // The stored position; nullopt if this projection was never set up in the database.
  Result<std::optional<ProjectionPosition>> position() const;

 private:
  Status ensure_position_table() const;
  // Creates the schema (first use) or rebuilds it (version change); returns the position.
  Result<ProjectionPosition> prepare();
  // Drops and recreates the tables and resets the position, in one transaction.
  Status reset();
  Status check_against_log(const ProjectionPosition& pos) const;
  Status write_position(const ProjectionPosition& pos);

  const EventLog& log_;
  SqliteDb& db_;
  Projection& projection_;
};

}  // namespace aura
