#include "projections/core/projector.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include "engine/crypto/sha256.h"

namespace aura {

namespace {

constexpr std::string_view kCreatePosition =
    "CREATE TABLE IF NOT EXISTS _position ("
    "name TEXT PRIMARY KEY, schema_version INTEGER NOT NULL, "
    "last_seq INTEGER NOT NULL, last_hash TEXT NOT NULL)";

std::string quote_ident(std::string_view id) {
  std::string out = "\"";
  for (char c : id) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// canonical_dump

Result<std::string> canonical_dump(SqliteDb& db, const Projection& projection) {
  std::vector<std::string> tables = projection.tables();
  std::sort(tables.begin(), tables.end());
  std::string out;
  for (const std::string& table : tables) {
    auto probe = db.prepare("SELECT * FROM " + quote_ident(table));
    if (!probe.ok()) return probe.status();
    int cols = probe->column_count();
    std::string sql = "SELECT * FROM " + quote_ident(table);
    for (int c = 1; c <= cols; ++c) sql += (c == 1 ? " ORDER BY " : ", ") + std::to_string(c);
    auto st = db.prepare(sql);
    if (!st.ok()) return st.status();
    out += "table " + table + "\n";
    for (;;) {
      auto row = st->step();
      if (!row.ok()) return row.status();
      if (!*row) break;
      for (int c = 0; c < cols; ++c) {
        if (c > 0) out += '|';
        switch (st->column_type(c)) {
          case SQLITE_NULL:
            out += "N";
            break;
          case SQLITE_INTEGER:
            out += "i" + std::to_string(st->column_int(c));
            break;
          case SQLITE_FLOAT: {
            char buf[40];
            std::snprintf(buf, sizeof buf, "f%.17g", st->column_double(c));
            out += buf;
            break;
          }
          case SQLITE_TEXT: {
            std::string t = st->column_text(c);
            out += "t" + std::to_string(t.size()) + ":" + t;
            break;
          }
          default: {
            std::string b = st->column_blob(c);
            out += "b" + std::to_string(b.size()) + ":" + to_hex(as_bytes(b));
            break;
          }
        }
      }
      out += '\n';
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Projector

Projector::Projector(const EventLog& log, SqliteDb& db, Projection& projection)
    : log_(log), db_(db), projection_(projection) {}

Status Projector::ensure_position_table() const { return db_.exec(kCreatePosition); }

Result<std::optional<ProjectionPosition>> Projector::position() const {
  AURA_RETURN_IF_ERROR(ensure_position_table());
  auto st = db_.cached("SELECT schema_version, last_seq, last_hash FROM _position WHERE name = ?");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  AURA_RETURN_IF_ERROR(q.bind(1, projection_.name()));
  auto row = q.step();
  if (!row.ok()) return row.status();
  if (!*row) return std::optional<ProjectionPosition>();
  ProjectionPosition pos;
  pos.schema_version = static_cast<int>(q.column_int(0));
  pos.last_seq = static_cast<uint64_t>(q.column_int(1));
  std::string hex = q.column_text(2);
  q.reset();
  auto hash = digest_from_hex(hex);
  if (!hash) {
    return Status::corruption("projection " + std::string(projection_.name()) +
                              ": stored last_hash is not a SHA-256 hex digest");
  }
  pos.last_hash = *hash;
  return std::optional<ProjectionPosition>(pos);
}

Status Projector::write_position(const ProjectionPosition& pos) {
  auto st = db_.cached(
      "INSERT INTO _position(name, schema_version, last_seq, last_hash) VALUES(?, ?, ?, ?) "
      "ON CONFLICT(name) DO UPDATE SET schema_version = excluded.schema_version, "
      "last_seq = excluded.last_seq, last_hash = excluded.last_hash");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  AURA_RETURN_IF_ERROR(q.bind(1, projection_.name()));
  AURA_RETURN_IF_ERROR(q.bind(2, int64_t{pos.schema_version}));
  AURA_RETURN_IF_ERROR(q.bind(3, static_cast<int64_t>(pos.last_seq)));
  AURA_RETURN_IF_ERROR(q.bind(4, to_hex(pos.last_hash)));
  return q.run();
}

Status Projector::check_against_log(const ProjectionPosition& pos) const {
  const std::string name(projection_.name());
  if (pos.last_seq == 0) return Status::ok();
  LogHead head = log_.head();
  if (pos.last_seq > head.seq) {
    return Status::failed_precondition(
        "projection " + name + " was built from another log: it has applied seq " +
        std::to_string(pos.last_seq) + " but the log ends at seq " + std::to_string(head.seq));
  }
  auto ev = log_.get(pos.last_seq);
  if (!ev.ok()) return ev.status().with_context("projection " + name + ": reading the log");
  if (ev->hash != pos.last_hash) {
    return Status::failed_precondition("projection " + name +
                                       " was built from another log: hash at seq " +
                                       std::to_string(pos.last_seq) + " differs (projection " +
                                       to_hex(pos.last_hash) + ", log " + to_hex(ev->hash) + ")");
  }
  return Status::ok();
}

Status Projector::serve_check() const {
  const std::string name(projection_.name());
  auto pos = position();
  if (!pos.ok()) return pos.status();
  if (!pos->has_value()) {
    return Status::failed_precondition("projection " + name + " has not been built yet");
  }
  if ((*pos)->schema_version != projection_.schema_version()) {
    return Status::failed_precondition(
        "projection " + name + " was built with schema version " +
        std::to_string((*pos)->schema_version) + " but this build expects " +
        std::to_string(projection_.schema_version()) + "; rebuild it");
  }
  return check_against_log(**pos);
}

Status Projector::reset() {
  AURA_RETURN_IF_ERROR(ensure_position_table());
  Transaction txn(db_);
  AURA_RETURN_IF_ERROR(txn.begin());
  for (const std::string& table : projection_.tables()) {
    AURA_RETURN_IF_ERROR(db_.exec("DROP TABLE IF EXISTS " + quote_ident(table)));
  }
  AURA_RETURN_IF_ERROR(projection_.create_schema(db_));
  ProjectionPosition pos;
  pos.schema_version = projection_.schema_version();
  AURA_RETURN_IF_ERROR(write_position(pos));
  return txn.commit();
}

Result<ProjectionPosition> Projector::prepare() {
  auto pos = position();
  if (!pos.ok()) return pos.status();
  if (pos->has_value() && (*pos)->schema_version == projection_.schema_version()) {
    return **pos;
  }
  AURA_RETURN_IF_ERROR(reset());
  ProjectionPosition fresh;
  fresh.schema_version = projection_.schema_version();
  return fresh;
}

Result<uint64_t> Projector::catch_up(size_t max_events_per_txn) {
  if (max_events_per_txn == 0) return Status::invalid("catch_up: max_events_per_txn must be > 0");
  auto prepared = prepare();
  if (!prepared.ok()) return prepared.status();
  ProjectionPosition pos = *prepared;
  AURA_RETURN_IF_ERROR(check_against_log(pos));

  const std::string name(projection_.name());
  const uint64_t head = log_.head().seq;
  uint64_t applied = 0;
  while (pos.last_seq < head) {
    const uint64_t from = pos.last_seq + 1;
    const uint64_t to = std::min<uint64_t>(head, pos.last_seq + max_events_per_txn);
    Transaction txn(db_);
    AURA_RETURN_IF_ERROR(txn.begin());
    // Re-read the position inside the write transaction: another projector on the same
    // database may have moved it since.
    auto now = position();
    if (!now.ok()) return now.status();
    if (!now->has_value() || (*now)->last_seq != pos.last_seq ||
        (*now)->last_hash != pos.last_hash ||
        (*now)->schema_version != projection_.schema_version()) {
      return Status::busy("projection " + name + ": position moved under this projector");
    }
    ProjectionPosition next = pos;
    Status apply_status;
    AURA_RETURN_IF_ERROR(projection_.begin_batch(db_));
    AURA_RETURN_IF_ERROR(log_.read_range(from, to, [&](const EventView& e) {
      if (e.seq != next.last_seq + 1 || e.prev_hash != next.last_hash) {
        apply_status = Status::corruption(
            "projection " + name + ": event at seq " + std::to_string(e.seq) +
            " does not chain onto the applied position " + std::to_string(next.last_seq));
        return false;
      }
      apply_status = projection_.apply(db_, e);
      if (!apply_status.is_ok()) {
        apply_status = apply_status.with_context("projection " + name + ": applying seq " +
                                                 std::to_string(e.seq));
        return false;
      }
      next.last_seq = e.seq;
      next.last_hash = e.hash;
      return true;
    }));
    AURA_RETURN_IF_ERROR(apply_status);
    if (next.last_seq != to) {
      return Status::corruption("projection " + name + ": the log returned events up to seq " +
                                std::to_string(next.last_seq) + ", expected " + std::to_string(to));
    }
    AURA_RETURN_IF_ERROR(projection_.end_batch(db_).with_context("projection " + name));
    AURA_RETURN_IF_ERROR(write_position(next));
    AURA_RETURN_IF_ERROR(txn.commit());
    applied += next.last_seq - pos.last_seq;
    pos = next;
  }
  return applied;
}

Result<uint64_t> Projector::rebuild(size_t max_events_per_txn) {
  if (max_events_per_txn == 0) return Status::invalid("rebuild: max_events_per_txn must be > 0");
  AURA_RETURN_IF_ERROR(reset());
  return catch_up(max_events_per_txn);
}

Result<std::vector<uint64_t>> Projector::catch_up_together(std::span<Projector* const> group,
                                                           size_t max_events_per_txn) {
  if (max_events_per_txn == 0) {
    return Status::invalid("catch_up_together: max_events_per_txn must be > 0");
  }
  if (group.empty()) return std::vector<uint64_t>();
  const EventLog& log = group[0]->log_;
  SqliteDb& db = group[0]->db_;
  std::vector<ProjectionPosition> pos;
  for (Projector* p : group) {
    if (&p->log_ != &log || &p->db_ != &db) {
      return Status::invalid("catch_up_together: the projectors must share one log and database");
    }
    auto prepared = p->prepare();
    if (!prepared.ok()) return prepared.status();
    AURA_RETURN_IF_ERROR(p->check_against_log(*prepared));
    pos.push_back(*prepared);
  }

  const uint64_t head = log.head().seq;
  std::vector<uint64_t> applied(group.size(), 0);
  for (;;) {
    uint64_t low = head;
    for (const ProjectionPosition& p : pos) low = std::min(low, p.last_seq);
    if (low >= head) break;
    const uint64_t from = low + 1;
    const uint64_t to = std::min<uint64_t>(head, low + max_events_per_txn);
    Transaction txn(db);
    AURA_RETURN_IF_ERROR(txn.begin());
    for (size_t i = 0; i < group.size(); ++i) {
      auto now = group[i]->position();
      if (!now.ok()) return now.status();
      if (!now->has_value() || (*now)->last_seq != pos[i].last_seq ||
          (*now)->last_hash != pos[i].last_hash ||
          (*now)->schema_version != group[i]->projection_.schema_version()) {
        return Status::busy("projection " + std::string(group[i]->projection_.name()) +
                            ": position moved under this projector");
      }
    }
    std::vector<ProjectionPosition> next = pos;
    Status apply_status;
    for (Projector* p : group) AURA_RETURN_IF_ERROR(p->projection_.begin_batch(db));
    AURA_RETURN_IF_ERROR(log.read_range(from, to, [&](const EventView& e) {
      for (size_t i = 0; i < group.size(); ++i) {
        if (e.seq <= next[i].last_seq) continue;
        const std::string_view name = group[i]->projection_.name();
        if (e.seq != next[i].last_seq + 1 || e.prev_hash != next[i].last_hash) {
          apply_status = Status::corruption(
              "projection " + std::string(name) + ": event at seq " + std::to_string(e.seq) +
              " does not chain onto the applied position " + std::to_string(next[i].last_seq));
          return false;
        }
        apply_status = group[i]->projection_.apply(db, e);
        if (!apply_status.is_ok()) {
          apply_status = apply_status.with_context("projection " + std::string(name) +
                                                   ": applying seq " + std::to_string(e.seq));
          return false;
        }
        next[i].last_seq = e.seq;
        next[i].last_hash = e.hash;
      }
      return true;
    }));
    AURA_RETURN_IF_ERROR(apply_status);
    for (size_t i = 0; i < group.size(); ++i) {
      if (next[i].last_seq == pos[i].last_seq) continue;
      const std::string name(group[i]->projection_.name());
      if (next[i].last_seq != to) {
        return Status::corruption("projection " + name + ": the log returned events up to seq " +
                                  std::to_string(next[i].last_seq) + ", expected " +
                                  std::to_string(to));
      }
      AURA_RETURN_IF_ERROR(group[i]->projection_.end_batch(db).with_context("projection " + name));
      AURA_RETURN_IF_ERROR(group[i]->write_position(next[i]));
    }
    AURA_RETURN_IF_ERROR(txn.commit());
    for (size_t i = 0; i < group.size(); ++i) applied[i] += next[i].last_seq - pos[i].last_seq;
    pos = std::move(next);
  }
  return applied;
}

Result<std::vector<uint64_t>> Projector::rebuild_together(std::span<Projector* const> group,
                                                          size_t max_events_per_txn) {
  if (max_events_per_txn == 0) {
    return Status::invalid("rebuild_together: max_events_per_txn must be > 0");
  }
  for (Projector* p : group) AURA_RETURN_IF_ERROR(p->reset());
  return catch_up_together(group, max_events_per_txn);
}

Result<bool> Projector::apply_event(const EventView& event) {
  const std::string name(projection_.name());
  auto prepared = prepare();
  if (!prepared.ok()) return prepared.status();
  ProjectionPosition pos = *prepared;
  AURA_RETURN_IF_ERROR(check_against_log(pos));
  if (event.seq == pos.last_seq && event.hash != pos.last_hash) {
    return Status::failed_precondition("projection " + name + ": event at seq " +
                                       std::to_string(event.seq) +
                                       " differs from the one already applied");
  }
  if (event.seq <= pos.last_seq) return false;
  if (event.seq != pos.last_seq + 1 || event.prev_hash != pos.last_hash) {
    return Status::failed_precondition(
        "projection " + name + ": event at seq " + std::to_string(event.seq) +
        " is not the next one after applied seq " + std::to_string(pos.last_seq));
  }
  Transaction txn(db_);
  AURA_RETURN_IF_ERROR(txn.begin());
  AURA_RETURN_IF_ERROR(projection_.begin_batch(db_));
  AURA_RETURN_IF_ERROR(
      projection_.apply(db_, event)
          .with_context("projection " + name + ": applying seq " + std::to_string(event.seq)));
  AURA_RETURN_IF_ERROR(projection_.end_batch(db_).with_context("projection " + name));
  ProjectionPosition next = pos;
  next.last_seq = event.seq;
  next.last_hash = event.hash;
  AURA_RETURN_IF_ERROR(write_position(next));
  AURA_RETURN_IF_ERROR(txn.commit());
  return true;
}

}  // namespace aura
