// The projection framework against a real RocksDB log and real SQLite files: incremental equals
// rebuild, rebuilds are byte-identical, a failed batch rolls back whole, a database from another
// log is refused, and re-applying events changes nothing.
#include "projections/core/projector.h"

#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/events/event_types.h"
#include "projections/core/sqlite_db.h"
#include "projections/streams/stream_projection.h"
#include "tests/log/log_test_util.h"
#include "tests/projections/projection_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::append_samples;
using aura::testing::FailingProjection;
using aura::testing::must;
using aura::testing::open_db;
using aura::testing::open_log;
using aura::testing::TempDir;

namespace {

std::string dump(SqliteDb& db) {
  StreamProjection p;
  return must(canonical_dump(db, p));
}

ProjectionPosition stored_position(EventLog& log, SqliteDb& db) {
  StreamProjection p;
  Projector projector(log, db, p);
  auto pos = must(projector.position());
  REQUIRE(pos.has_value());
  return *pos;
}

}  // namespace

TEST_CASE("sqlite_db: opens in WAL mode and an error names the SQL that failed") {
  TempDir dir;
  auto db = open_db(dir / "p.db");
  auto st = db->prepare("PRAGMA journal_mode");
  REQUIRE(st.ok());
  REQUIRE(must(st->step()));
  CHECK(st->column_text(0) == "wal");
  Status s = db->exec("INSERT INTO no_such_table VALUES(1)");
  CHECK_FALSE(s.is_ok());
  CHECK(s.message().find("INSERT INTO no_such_table") != std::string::npos);
  auto bad = db->prepare("SELEKT 1");
  CHECK_FALSE(bad.ok());
  CHECK(bad.status().message().find("SELEKT 1") != std::string::npos);
}

TEST_CASE("sqlite_db: a transaction not committed is rolled back at scope end") {
  TempDir dir;
  auto db = open_db(dir / "p.db");
  REQUIRE(db->exec("CREATE TABLE t(x INTEGER)").is_ok());
  {
    Transaction txn(*db);
    REQUIRE(txn.begin().is_ok());
    REQUIRE(db->exec("INSERT INTO t VALUES(1)").is_ok());
  }
  CHECK_FALSE(db->in_transaction());
  auto st = must(db->prepare("SELECT count(*) FROM t"));
  REQUIRE(must(st.step()));
  CHECK(st.column_int(0) == 0);
}

TEST_CASE("projections: catch_up in several batches gives exactly the rows of one rebuild") {
  TempDir dir;
  auto log = open_log(dir / "log");
  append_samples(*log, 1, 300);

  auto inc_db = open_db(dir / "inc.db");
  StreamProjection inc_p;
  Projector inc(*log, *inc_db, inc_p);
  CHECK(must(inc.catch_up(37)) == 300);
  append_samples(*log, 301, 700);
  CHECK(must(inc.catch_up(13)) == 700);
  CHECK(inc.serve_check().is_ok());

  auto full_db = open_db(dir / "full.db");
  StreamProjection full_p;
  Projector full(*log, *full_db, full_p);
  CHECK(must(full.rebuild(100000)) == 1000);

  CHECK(dump(*inc_db) == dump(*full_db));
  CHECK(stored_position(*log, *inc_db).last_seq == 1000);
  CHECK(stored_position(*log, *inc_db).last_hash == log->head().hash);

  // The rows say what the log says: sample(i) goes to stream attempt/(i % 5).
  auto rows = must(StreamProjection::all_streams(*inc_db));
  REQUIRE(rows.size() == 5);
  for (size_t k = 0; k < 5; ++k) {
    CHECK(rows[k].stream == "attempt/" + std::to_string(k));
    CHECK(rows[k].events == 200);
    CHECK(rows[k].last_type == events::kProbeCompleted);
  }
  CHECK(rows[1].first_seq == 1);
  CHECK(rows[0].last_seq == 1000);
}

TEST_CASE("projections: two rebuilds give byte-identical query results") {
  TempDir dir;
  auto log = open_log(dir / "log");
  append_samples(*log, 1, 500);
  auto a = open_db(dir / "a.db");
  auto b = open_db(dir / "b.db");
  StreamProjection pa, pb;
  Projector ja(*log, *a, pa), jb(*log, *b, pb);
  REQUIRE(must(ja.rebuild(64)) == 500);
  std::string first = dump(*a);
  REQUIRE(must(ja.rebuild(7)) == 500);
  REQUIRE(must(jb.rebuild(1000)) == 500);
  CHECK(dump(*a) == first);
  CHECK(dump(*b) == first);
  CHECK(must(StreamProjection::all_streams(*a)) == must(StreamProjection::all_streams(*b)));
  CHECK(first.find("table streams\n") == 0);
}

TEST_CASE(
    "projections: a failure at the K-th apply rolls the batch back; a later catch_up "
    "equals a clean rebuild") {
  TempDir dir;
  auto log = open_log(dir / "log");
  append_samples(*log, 1, 250);
  auto db = open_db(dir / "p.db");
  {
    StreamProjection ok_p;
    Projector warm(*log, *db, ok_p);
    REQUIRE(must(warm.catch_up(50)) == 250);
  }
  append_samples(*log, 251, 200);
  const std::string before = dump(*db);
  const ProjectionPosition pos_before = stored_position(*log, *db);

  for (uint64_t k : {1, 17, 50}) {
    CAPTURE(k);
    FailingProjection failing(k);
    Projector p(*log, *db, failing);
    auto r = p.catch_up(50);  // the first batch fails at its k-th event
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find("injected failure") != std::string::npos);
    CHECK(r.status().message().find("seq " + std::to_string(250 + k)) != std::string::npos);
    CHECK_FALSE(db->in_transaction());
    CHECK(dump(*db) == before);
    const ProjectionPosition pos = stored_position(*log, *db);
    CHECK(pos.last_seq == pos_before.last_seq);
    CHECK(pos.last_hash == pos_before.last_hash);
  }

  // A failure in a later batch keeps the batches before it.
  {
    FailingProjection failing(75);
    Projector p(*log, *db, failing);
    REQUIRE_FALSE(p.catch_up(50).ok());
    CHECK(stored_position(*log, *db).last_seq == 300);
  }

  StreamProjection ok_p;
  Projector resumed(*log, *db, ok_p);
  CHECK(must(resumed.catch_up(50)) == 150);

  auto clean = open_db(dir / "clean.db");
  StreamProjection clean_p;
  Projector clean_j(*log, *clean, clean_p);
  REQUIRE(must(clean_j.rebuild()) == 450);
  CHECK(dump(*db) == dump(*clean));
}

TEST_CASE(
    "projections: a database built from another log refuses to serve and to catch up, "
    "naming the seq") {
  TempDir dir;
  auto log_a = open_log(dir / "a");
  auto log_b = open_log(dir / "b");
  append_samples(*log_a, 1, 40);
  // Same seqs, different events (so different hashes from seq 1 on).
  append_samples(*log_b, 1001, 60);

  auto db = open_db(dir / "p.db");
  StreamProjection pa;
  Projector built(*log_a, *db, pa);
  REQUIRE(must(built.catch_up(16)) == 40);
  const std::string before = dump(*db);

  StreamProjection pb;
  Projector wrong(*log_b, *db, pb);
  Status serve = wrong.serve_check();
  REQUIRE_FALSE(serve.is_ok());
  CHECK(serve.message().find("projection streams was built from another log: hash at seq 40 "
                             "differs") != std::string::npos);
  auto r = wrong.catch_up(16);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("hash at seq 40 differs") != std::string::npos);
  CHECK(dump(*db) == before);
  CHECK(stored_position(*log_a, *db).last_seq == 40);
  CHECK(stored_position(*log_a, *db).last_hash == log_a->head().hash);

  // A log shorter than the position is another log too.
  auto log_c = open_log(dir / "c");
  append_samples(*log_c, 1, 10);
  StreamProjection pc;
  Projector shorter(*log_c, *db, pc);
  Status s = shorter.serve_check();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("applied seq 40") != std::string::npos);
  CHECK_FALSE(shorter.catch_up().ok());
  CHECK(dump(*db) == before);

  // The right log still serves, and rebuild against the other log starts over from it.
  CHECK(built.serve_check().is_ok());
  CHECK(must(wrong.rebuild()) == 60);
  CHECK(wrong.serve_check().is_ok());
  CHECK_FALSE(built.serve_check().is_ok());
}

TEST_CASE("projections: applying events that are already applied changes nothing") {
  TempDir dir;
  auto log = open_log(dir / "log");
  append_samples(*log, 1, 120);
  auto db = open_db(dir / "p.db");
  StreamProjection p;
  Projector j(*log, *db, p);
  REQUIRE(must(j.catch_up(25)) == 120);
  const std::string before = dump(*db);

  CHECK(must(j.catch_up(25)) == 0);
  CHECK(must(j.catch_up(1)) == 0);
  CHECK(dump(*db) == before);

  for (uint64_t seq : {1, 60, 120}) {
    StoredEvent e = must(log->get(seq));
    EventView v{e.seq, e.prev_hash, e.ts_us, e.stream, e.type, e.actor, e.payload, e.hash};
    CHECK(must(j.apply_event(v)) == false);
  }
  CHECK(dump(*db) == before);
  CHECK(stored_position(*log, *db).last_seq == 120);

  // The last applied seq with a different hash is refused, and so is a gap.
  StoredEvent last = must(log->get(120));
  EventView forged{last.seq,  last.prev_hash, last.ts_us,   last.stream,
                   last.type, last.actor,     last.payload, Digest{1}};
  CHECK_FALSE(j.apply_event(forged).ok());
  append_samples(*log, 121, 2);
  StoredEvent gap = must(log->get(122));
  EventView gv{gap.seq,  gap.prev_hash, gap.ts_us,   gap.stream,
               gap.type, gap.actor,     gap.payload, gap.hash};
  CHECK_FALSE(j.apply_event(gv).ok());
  CHECK(dump(*db) == before);

  // The next one applies once; applying it again changes nothing.
  StoredEvent next = must(log->get(121));
  EventView nv{next.seq,  next.prev_hash, next.ts_us,   next.stream,
               next.type, next.actor,     next.payload, next.hash};
  CHECK(must(j.apply_event(nv)) == true);
  const std::string after = dump(*db);
  CHECK(after != before);
  CHECK(must(j.apply_event(nv)) == false);
  CHECK(dump(*db) == after);
}

TEST_CASE("projections: a schema version change forces a rebuild from seq 1") {
  TempDir dir;
  auto log = open_log(dir / "log");
  append_samples(*log, 1, 30);
  auto db = open_db(dir / "p.db");
  StreamProjection v1;
  Projector j1(*log, *db, v1);
  REQUIRE(must(j1.catch_up()) == 30);
  // Plant a row the rebuild must drop.
  REQUIRE(db->exec("INSERT INTO streams VALUES('stale', 1, 1, 1, 'x')").is_ok());

  FailingProjection v2(0, /*schema_version=*/2);  // never fails
  Projector j2(*log, *db, v2);
  Status s = j2.serve_check();
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.message().find("schema version 1") != std::string::npos);
  CHECK(must(j2.catch_up()) == 30);
  CHECK(j2.serve_check().is_ok());
  CHECK(stored_position(*log, *db).schema_version == 2);
  for (const auto& row : must(StreamProjection::all_streams(*db))) CHECK(row.stream != "stale");
}
