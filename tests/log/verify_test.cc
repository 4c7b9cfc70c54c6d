// Tampering with a log on disk: verify must fail and name the first bad seq.
#include <doctest/doctest.h>

#include <fstream>

#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/log/event_codec.h"
#include "engine/log/log_verifier.h"
#include "tests/log/log_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::first_problem;
using aura::testing::open_log;
using aura::testing::sample;
using aura::testing::TempDir;

namespace {

constexpr uint64_t kEvents = 300;

// Builds a log of kEvents events (checkpoints every 50) in `dir`.
void build(const std::filesystem::path& dir) {
  auto log = open_log(dir, 50);
  for (uint64_t i = 1; i <= kEvents; ++i) REQUIRE(log->append(sample(i)).ok());
  REQUIRE(log->checkpoint().ok());
}

// Opens the log writable and lets `edit` change raw RocksDB state, as someone with
// disk access would; then returns a fresh read-only view's verify report.
template <class F>
VerifyReport tamper(const std::filesystem::path& dir, F edit, const BlobStore* blobs = nullptr) {
  {
    auto log = open_log(dir, 50);
    edit(*log);
  }
  auto ro = open_log(dir, 50, true);
  return aura::testing::verify(*ro, blobs);
}

std::string raw_get(EventLog& log, uint64_t seq) {
  std::string v;
  REQUIRE(log.db()->Get(rocksdb::ReadOptions(), log.events_cf(), seq_key(seq), &v).ok());
  return v;
}

void raw_put(EventLog& log, uint64_t seq, const std::string& v) {
  REQUIRE(log.db()->Put(rocksdb::WriteOptions(), log.events_cf(), seq_key(seq), v).ok());
}

}  // namespace

TEST_CASE("log verify: an untouched log passes, with every part counted") {
  TempDir dir;
  build(dir.path());
  auto log = open_log(dir.path(), 50, true);
  auto r = aura::testing::verify(*log);
  CHECK_MESSAGE(r.ok(), first_problem(r));
  CHECK(r.events_checked == kEvents);
  CHECK(r.index_entries_checked == kEvents);
  CHECK(r.tree_nodes_checked == kEvents - __builtin_popcountll(kEvents));
  CHECK(r.checkpoints_checked == 6);  // 50, 100, ..., 300; on demand at 300 adds none
  CHECK(r.latest_checkpoint_size == kEvents);
  CHECK(r.uncovered_tail == 0);
}

TEST_CASE("log verify: a flipped byte in any part of a stored event names its seq") {
  // Offsets inside record 123: version, seq, prev_hash, ts, stream, type, payload, own hash.
  for (size_t offset : {0ul, 3ul, 20ul, 45ul, 55ul, 70ul, 120ul, 160ul}) {
    TempDir dir;
    build(dir.path());
    CAPTURE(offset);
    auto r = tamper(dir.path(), [&](EventLog& log) {
      std::string v = raw_get(log, 123);
      REQUIRE(offset < v.size());
      v[offset] ^= 0x20;
      raw_put(log, 123, v);
    });
    REQUIRE_FALSE(r.ok());
    CHECK(r.first_bad_seq() == 123);
  }
}

TEST_CASE(
    "log verify: a flipped byte in the stored hash is caught at its own seq, the head included") {
  for (uint64_t seq : {uint64_t(1), uint64_t(77), kEvents}) {
    TempDir dir;
    build(dir.path());
    CAPTURE(seq);
    auto r = tamper(dir.path(), [&](EventLog& log) {
      std::string v = raw_get(log, seq);
      v[v.size() - 1] ^= 0x01;
      raw_put(log, seq, v);
    });
    REQUIRE_FALSE(r.ok());
    CHECK(r.first_bad_seq() == seq);
    CHECK(first_problem(r).find("stored hash") != std::string::npos);
  }
}

TEST_CASE("log verify: a head record that no longer decodes is named, not an open failure") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    std::string v = raw_get(log, kEvents);
    v[0] = 9;  // unknown version
    raw_put(log, kEvents, v);
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == kEvents);
  CHECK(first_problem(r).find("unknown version 9") != std::string::npos);
}

TEST_CASE("log verify: a deleted event names its seq, in the middle and at the head") {
  for (uint64_t seq : {uint64_t(150), kEvents}) {
    TempDir dir;
    build(dir.path());
    CAPTURE(seq);
    auto r = tamper(dir.path(), [&](EventLog& log) {
      REQUIRE(log.db()->Delete(rocksdb::WriteOptions(), log.events_cf(), seq_key(seq)).ok());
    });
    REQUIRE_FALSE(r.ok());
    CHECK(r.first_bad_seq() == seq);
  }
}

TEST_CASE("log verify: two reordered events name the earlier seq") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    std::string a = raw_get(log, 40), b = raw_get(log, 41);
    raw_put(log, 40, b);
    raw_put(log, 41, a);
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == 40);
  CHECK(first_problem(r).find("moved or reordered") != std::string::npos);
}

TEST_CASE(
    "log verify: a forged event with a recomputed hash is named by its Merkle nodes and next "
    "link") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    auto ev = log.get(60);
    REQUIRE(ev.ok());
    EventDraft forged{ev->stream, ev->type, ev->actor, R"({"forged":true})"};
    raw_put(log, 60, encode_record(60, ev->prev_hash, ev->ts_us, forged, nullptr));
  });
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(r.first_bad_seq() == 60, first_problem(r));
  bool chain_break = false;
  for (const auto& p : r.problems)
    chain_break |= p.seq == 61 && p.what.find("prev_hash") != std::string::npos;
  CHECK(chain_break);
}

TEST_CASE("log verify: a swapped blob names the event that references it") {
  TempDir dir;
  auto blobs = BlobStore::open(dir / "blobs");
  REQUIRE(blobs.ok());
  {
    auto log = open_log(dir / "log", 50, false, nullptr, &*blobs);
    for (uint64_t i = 1; i <= 20; ++i) {
      EventDraft d = sample(i);
      if (i == 12) {
        auto b = blobs->put(as_bytes(std::string_view("probe output: ok\n")));
        REQUIRE(b.ok());
        d.payload = R"({"refs":[)" +
                    evidence_ref_json({"ev-12", b->sha256, "probe.output", b->bytes}) + "]}";
      }
      REQUIRE(log->append(d).ok());
    }
  }
  {
    auto ro = open_log(dir / "log", 50, true);
    auto r = aura::testing::verify(*ro, &*blobs);
    CHECK_MESSAGE(r.ok(), first_problem(r));
    CHECK(r.blobs_checked == 1);
  }
  // Swap the blob's bytes for others of the same length.
  auto d = digest_from_hex(to_hex(sha256(std::string_view("probe output: ok\n"))));
  auto path = blobs->path_of(*d);
  std::filesystem::permissions(path, std::filesystem::perms::owner_write,
                               std::filesystem::perm_options::add);
  std::ofstream(path, std::ios::trunc) << "probe output: NO\n";
  auto ro = open_log(dir / "log", 50, true);
  auto r = aura::testing::verify(*ro, &*blobs);
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == 12);
  CHECK(first_problem(r).find("blob ev-12") != std::string::npos);
}

TEST_CASE("log verify: the stream index is rebuilt and compared") {
  SUBCASE("a missing entry") {
    TempDir dir;
    build(dir.path());
    auto r = tamper(dir.path(), [&](EventLog& log) {
      auto ev = log.get(90);
      REQUIRE(log.db()
                  ->Delete(rocksdb::WriteOptions(), log.stream_cf(),
                           EventLog::stream_key(ev->stream, 90))
                  .ok());
    });
    CHECK(r.first_bad_seq() == 90);
    CHECK(first_problem(r).find("stream index entry missing") != std::string::npos);
  }
  SUBCASE("an entry moved to another stream") {
    TempDir dir;
    build(dir.path());
    auto r = tamper(dir.path(), [&](EventLog& log) {
      auto ev = log.get(91);
      REQUIRE(log.db()
                  ->Delete(rocksdb::WriteOptions(), log.stream_cf(),
                           EventLog::stream_key(ev->stream, 91))
                  .ok());
      REQUIRE(log.db()
                  ->Put(rocksdb::WriteOptions(), log.stream_cf(),
                        EventLog::stream_key("attempt/other", 91), "")
                  .ok());
    });
    CHECK(r.first_bad_seq() == 91);
  }
  SUBCASE("an extra entry") {
    TempDir dir;
    build(dir.path());
    auto r = tamper(dir.path(), [&](EventLog& log) {
      REQUIRE(log.db()
                  ->Put(rocksdb::WriteOptions(), log.stream_cf(),
                        EventLog::stream_key("attempt/extra", 92), "")
                  .ok());
    });
    CHECK(r.first_bad_seq() == 92);
    CHECK(first_problem(r).find("two entries") != std::string::npos);
  }
}

TEST_CASE("log verify: a changed Merkle node is named, under the last seq it covers") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    // Level 3, index 5 covers leaves 40..47, i.e. seqs 41..48.
    std::string bad(32, 'x');
    REQUIRE(
        log.db()->Put(rocksdb::WriteOptions(), log.tree_cf(), EventLog::node_key(3, 5), bad).ok());
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == 48);
  CHECK(first_problem(r).find("tree node (3,5) over seqs 41..48") != std::string::npos);
}

TEST_CASE("log verify: a changed peak in the stored compact range is named at the head") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    std::string v;
    REQUIRE(log.db()->Get(rocksdb::ReadOptions(), log.meta_cf(), "tree", &v).ok());
    v[8 + 5] ^= 1;  // a byte of the first peak
    REQUIRE(log.db()->Put(rocksdb::WriteOptions(), log.meta_cf(), "tree", v).ok());
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == kEvents);
  CHECK(first_problem(r).find("meta tree: peak 0") != std::string::npos);
}

TEST_CASE("log verify: a planted extra Merkle node is named") {
  TempDir dir;
  build(dir.path());
  auto r = tamper(dir.path(), [&](EventLog& log) {
    // Level 2 index 7 exists; level 2 with an end not on a multiple of 4 cannot: plant
    // a node at (level 1, index 200) beyond the 300 leaves' level-1 nodes (150 of them).
    REQUIRE(log.db()
                ->Put(rocksdb::WriteOptions(), log.tree_cf(), EventLog::node_key(1, 200),
                      std::string(32, 'z'))
                .ok());
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == kEvents + 1);
  CHECK(first_problem(r).find("beyond the head") != std::string::npos);
}

TEST_CASE("log verify: a checkpoint signed by another key is refused at its size") {
  TempDir dir;
  build(dir.path());
  NoteSigner other("aura.lab/test-signer", Ed25519KeyPair::from_seed(Ed25519Seed{9}));
  auto r = tamper(dir.path(), [&](EventLog& log) {
    auto list = log.checkpoints();
    REQUIRE(list.ok());
    const NoteVerifierKey k[] = {aura::testing::test_signer().verifier()};
    auto cp = open_checkpoint((*list)[2].signed_note, k);
    REQUIRE(cp.ok());
    auto forged = sign_checkpoint(*cp, other);
    REQUIRE(forged.ok());
    REQUIRE(
        log.db()->Put(rocksdb::WriteOptions(), log.checkpoint_cf(), seq_key(150), *forged).ok());
  });
  REQUIRE_FALSE(r.ok());
  CHECK(r.first_bad_seq() == 150);
  CHECK(first_problem(r).find("checkpoint at size 150") != std::string::npos);
}

TEST_CASE(
    "log verify: a trusted checkpoint is proven extended, and a forked or truncated log is not") {
  TempDir dir;
  build(dir.path());
  std::string trusted;
  {
    auto log = open_log(dir.path(), 50, true);
    trusted = (*log->checkpoints())[1].signed_note;  // size 100
  }
  {
    auto log = open_log(dir.path(), 50, true);
    VerifyOptions o;
    o.keys = {aura::testing::test_signer().verifier()};
    o.trusted_checkpoint = trusted;
    auto r = verify_log(*log, o);
    CHECK_MESSAGE(r.ok(), first_problem(r));
    CHECK(r.trusted_size == 100);
  }
  // A checkpoint from the same origin over different events: a fork.
  std::string forked;
  {
    auto log = open_log(dir.path(), 50, true);
    auto cp = open_checkpoint(trusted, std::vector{aura::testing::test_signer().verifier()});
    REQUIRE(cp.ok());
    cp->root[0] ^= 1;
    forked = *sign_checkpoint(*cp, aura::testing::test_signer());
    VerifyOptions o;
    o.keys = {aura::testing::test_signer().verifier()};
    o.trusted_checkpoint = forked;
    auto r = verify_log(*log, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.first_bad_seq() == 100);
    CHECK(first_problem(r).find("does not extend") != std::string::npos);
  }
  // A checkpoint beyond the head: the log lost events.
  {
    auto log = open_log(dir.path(), 50, true);
    auto cp = open_checkpoint(trusted, std::vector{aura::testing::test_signer().verifier()});
    cp->size = kEvents + 5;
    VerifyOptions o;
    o.keys = {aura::testing::test_signer().verifier()};
    o.trusted_checkpoint = *sign_checkpoint(*cp, aura::testing::test_signer());
    auto r = verify_log(*log, o);
    REQUIRE_FALSE(r.ok());
    CHECK(r.first_bad_seq() == kEvents + 1);
  }
}

TEST_CASE("log verify: --from N checks from N on and still catches damage after N") {
  TempDir dir;
  build(dir.path());
  {
    auto log = open_log(dir.path(), 50, true);
    VerifyOptions o;
    o.keys = {aura::testing::test_signer().verifier()};
    o.from_seq = 200;
    auto r = verify_log(*log, o);
    CHECK_MESSAGE(r.ok(), first_problem(r));
    CHECK(r.events_checked <= kEvents);
  }
  auto r = tamper(dir.path(), [&](EventLog& log) {
    std::string v = raw_get(log, 250);
    v[100] ^= 1;
    raw_put(log, 250, v);
  });
  CHECK(r.first_bad_seq() == 250);
}

TEST_CASE(
    "log verify: a log of more than one verify chunk passes and names damage in a later chunk") {
  TempDir dir;
  const uint64_t n = (1 << 16) + 3000;
  {
    auto log = open_log(dir.path(), 10000);
    std::vector<EventDraft> batch;
    for (uint64_t i = 1; i <= n; ++i) {
      batch.push_back(sample(i));
      if (batch.size() == 500 || i == n) {
        REQUIRE(log->append_all(batch).ok());
        batch.clear();
      }
    }
  }
  {
    auto log = open_log(dir.path(), 10000, true);
    auto r = aura::testing::verify(*log);
    CHECK_MESSAGE(r.ok(), first_problem(r));
    CHECK(r.events_checked == n);
  }
  auto r = tamper(dir.path(), [&](EventLog& log) {
    std::string v = raw_get(log, n - 10);
    v[80] ^= 1;
    raw_put(log, n - 10, v);
  });
  CHECK(r.first_bad_seq() == n - 10);
}
