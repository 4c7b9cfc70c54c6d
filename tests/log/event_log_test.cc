#include "engine/log/event_log.h"

#include <doctest/doctest.h>

#include <set>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "engine/checkpoint/checkpoint.h"
#include "engine/events/event_types.h"
#include "engine/log/data_dir.h"
#include "tests/log/log_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::open_log;
using aura::testing::sample;
using aura::testing::TempDir;

TEST_CASE("event log: appends get consecutive seqs from 1, chained hashes, and survive reopen") {
  TempDir dir;
  Digest last{};
  {
    auto log = open_log(dir.path());
    CHECK(log->head().seq == 0);
    for (uint64_t i = 1; i <= 10; ++i) {
      auto a = log->append(sample(i));
      REQUIRE(a.ok());
      CHECK(a->seq == i);
      auto ev = log->get(i);
      REQUIRE(ev.ok());
      CHECK(ev->prev_hash == last);
      CHECK(ev->hash == a->hash);
      CHECK(ev->payload == sample(i).payload);
      last = a->hash;
    }
  }
  auto log = open_log(dir.path());
  CHECK(log->head().seq == 10);
  CHECK(log->head().hash == last);
  auto a = log->append(sample(11));
  REQUIRE(a.ok());
  CHECK(a->seq == 11);
  CHECK(log->get(11)->prev_hash == last);
  CHECK(aura::testing::verify(*log).ok());
}

TEST_CASE("event log: payload bytes are kept verbatim, whitespace and key order included") {
  TempDir dir;
  auto log = open_log(dir.path());
  const std::string odd = "{ \"b\" : 1,\n  \"a\":[ true ,null ], \"u\":\"\\u00e9\xc3\xa9\" }";
  REQUIRE(log->append({"s", "t.x", "a", odd}).ok());
  CHECK(log->get(1)->payload == odd);
}

TEST_CASE("event log: bad input is refused with a clear error and appends nothing") {
  TempDir dir;
  auto log = open_log(dir.path());
  REQUIRE(log->append(sample(1)).ok());
  const Digest head = log->head().hash;
  struct Case {
    EventDraft d;
    const char* expect;
  } cases[] = {
      {{"s", "t", "a", "not json"}, "payload: not valid UTF-8 JSON"},
      {{"s", "t", "a", "{\"x\":\"\xc3\x28\"}"}, "payload: not valid UTF-8 JSON"},
      {{"s", "", "a", "{}"}, "type: empty"},
      {{"s", "t", "a", "{\"x\":\"" + std::string(2 << 20, 'y') + "\"}"}, "payload: 2097160 bytes"},
  };
  for (const auto& c : cases) {
    auto r = log->append(c.d);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().message().find(c.expect) != std::string::npos);
  }
  // A batch with one bad event appends none of it.
  std::vector<EventDraft> batch = {sample(2), {"s", "t", "a", "[]"}};
  auto r = log->append_all(batch);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("event 1") != std::string::npos);
  CHECK(log->head().seq == 1);
  CHECK(log->head().hash == head);
}

TEST_CASE("event log: an event may reference only blobs already stored") {
  TempDir dir;
  auto blobs = BlobStore::open(dir / "blobs");
  REQUIRE(blobs.ok());
  auto stored = blobs->put(as_bytes(std::string_view("probe output\n")));
  REQUIRE(stored.ok());
  const EvidenceRef good{"ev-1", stored->sha256, "probe.output", stored->bytes};
  const EvidenceRef absent{"ev-2", sha256("never stored"), "probe.output", 12};
  const EvidenceRef wrong_size{"ev-3", stored->sha256, "probe.output", stored->bytes + 1};
  auto with = [](const EvidenceRef& r) {
    return EventDraft{"attempt/1", events::kProbeCompleted, "supervisor",
                      R"({"refs":[)" + evidence_ref_json(r) + "]}"};
  };
  {
    auto unbacked = open_log(dir / "plain");
    auto r = unbacked->append(with(good));
    CHECK(r.status().message().find("no blob store") != std::string::npos);
    CHECK(unbacked->head().seq == 0);
  }
  auto log = open_log(dir / "log", 1000, false, nullptr, &*blobs);
  REQUIRE(log->append(with(good)).ok());
  auto r = log->append(with(absent));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("refs ev-2: not stored before the event") != std::string::npos);
  r = log->append(with(wrong_size));
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("refs ev-3") != std::string::npos);
  CHECK(log->head().seq == 1);
}

TEST_CASE("event log: many threads appending at once get one total order and the chain verifies") {
  TempDir dir;
  auto log = open_log(dir.path(), 100);
  constexpr int kThreads = 16, kEach = 150;
  std::vector<std::vector<Appended>> got(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t) {
    ts.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        auto a = log->append(sample(uint64_t(t) * 1000 + i, "thread/" + std::to_string(t)));
        if (a.ok()) got[t].push_back(*a);
      }
    });
  }
  for (auto& t : ts) t.join();
  std::set<uint64_t> seqs;
  for (int t = 0; t < kThreads; ++t) {
    REQUIRE(got[t].size() == kEach);
    // Each thread's own appends are in increasing order.
    for (int i = 1; i < kEach; ++i) CHECK(got[t][i].seq > got[t][i - 1].seq);
    for (auto& a : got[t]) {
      seqs.insert(a.seq);
      CHECK(log->get(a.seq)->hash == a.hash);
    }
  }
  CHECK(seqs.size() == size_t(kThreads * kEach));
  CHECK(*seqs.begin() == 1);
  CHECK(*seqs.rbegin() == uint64_t(kThreads * kEach));
  auto r = aura::testing::verify(*log);
  CHECK_MESSAGE(r.ok(), aura::testing::first_problem(r));
  CHECK(r.checkpoints_checked >= 20);
  // Each stream reads back through the index, in order, with only its events.
  std::vector<uint64_t> s3;
  REQUIRE(log->read_stream("thread/3", 0,
                           [&](const EventView& ev) {
                             s3.push_back(ev.seq);
                             return true;
                           })
              .is_ok());
  CHECK(s3.size() == size_t(kEach));
  CHECK(std::is_sorted(s3.begin(), s3.end()));
}

TEST_CASE("event log: checkpoints are signed every N events and on demand, and match the tree") {
  TempDir dir;
  auto log = open_log(dir.path(), 10);
  for (int i = 0; i < 25; ++i) REQUIRE(log->append(sample(i)).ok());
  auto list = log->checkpoints();
  REQUIRE(list.ok());
  REQUIRE(list->size() == 2);
  CHECK((*list)[0].size == 10);
  CHECK((*list)[1].size == 20);
  auto c = log->checkpoint();
  REQUIRE(c.ok());
  CHECK(c->size == 25);
  auto again = log->checkpoint();  // same head: the same checkpoint, no new one
  REQUIRE(again.ok());
  CHECK(again->signed_note == c->signed_note);
  CHECK(log->checkpoints()->size() == 3);
  const NoteVerifierKey keys[] = {aura::testing::test_signer().verifier()};
  auto cp = open_checkpoint(c->signed_note, keys);
  REQUIRE(cp.ok());
  CHECK(cp->origin == log->origin());
  CHECK(cp->size == 25);
  CHECK(cp->root == *log->root_at(25));
  CHECK(cp->chain_head == log->head().hash);
  // Inclusion and consistency proofs from the stored nodes verify against it.
  for (uint64_t seq = 1; seq <= 25; ++seq) {
    auto p = merkle::inclusion_proof(seq - 1, 25, log->nodes());
    REQUIRE(p.ok());
    CHECK(
        merkle::verify_inclusion(merkle::leaf_hash(log->get(seq)->hash), seq - 1, 25, *p, cp->root)
            .is_ok());
  }
  auto cons = merkle::consistency_proof(10, 25, log->nodes());
  REQUIRE(cons.ok());
  CHECK(merkle::verify_consistency(10, 25, *cons, *log->root_at(10), cp->root).is_ok());
}

TEST_CASE("event log: the empty log has no checkpoint and a log without signer refuses one") {
  TempDir dir;
  auto log = open_log(dir.path());
  CHECK(log->checkpoint().status().message().find("empty") != std::string::npos);
  EventLog::Options o;
  auto unsigned_log = EventLog::open(dir / "other", o);
  REQUIRE(unsigned_log.ok());
  CHECK((*unsigned_log)->checkpoint().status().message().find("no signing key") !=
        std::string::npos);
}

TEST_CASE("event log: a read-only open sees the log and refuses appends") {
  TempDir dir;
  {
    auto log = open_log(dir.path());
    for (int i = 0; i < 3; ++i) REQUIRE(log->append(sample(i)).ok());
  }
  auto ro = open_log(dir.path(), 1000, true);
  CHECK(ro->head().seq == 3);
  auto r = ro->append(sample(4));
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  EventLog::Options o;
  o.read_only = true;
  CHECK(EventLog::open(dir / "nothing-here", o).status().code() == ErrorCode::kNotFound);
}

TEST_CASE("data dir: a second writer is told which pid holds the folder") {
  TempDir dir;
  auto first = DataDir::open_writer(dir.path());
  REQUIRE(first.ok());
  auto second = DataDir::open_writer(dir.path());
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == ErrorCode::kBusy);
  CHECK(second.status().message().find("in use by pid " + std::to_string(::getpid())) !=
        std::string::npos);
  CHECK(DataDir::holder(dir.path()) == ::getpid());
  CHECK(DataDir::open_reader(dir.path()).ok());
  first = DataDir::open_reader(dir.path());  // releases the lock
  CHECK(DataDir::open_writer(dir.path()).ok());
}

TEST_CASE("data dir: keys inside the data folder are detected") {
  CHECK(path_is_within("/a/b/c", "/a/b"));
  CHECK(path_is_within("/a/b", "/a/b"));
  CHECK(path_is_within("/a/b/../b/c", "/a/b"));
  CHECK_FALSE(path_is_within("/a/bc", "/a/b"));
  CHECK_FALSE(path_is_within("/a", "/a/b"));
}

TEST_CASE("event log: timestamps never go backwards even if the clock does") {
  TempDir dir;
  EventLog::Options o;
  uint64_t now = 5000;
  o.clock_us = [&] { return now; };
  auto log = EventLog::open(dir.path(), o);
  REQUIRE(log.ok());
  REQUIRE((*log)->append(sample(1)).ok());
  now = 1000;
  REQUIRE((*log)->append(sample(2)).ok());
  CHECK((*log)->get(2)->ts_us == 5000);
}
