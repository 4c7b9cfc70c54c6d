#include "engine/log/snapshot.h"

#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "tests/log/log_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::first_problem;
using aura::testing::open_log;
using aura::testing::sample;
using aura::testing::TempDir;

namespace {
std::vector<NoteVerifierKey> pinned() { return {aura::testing::test_signer().verifier()}; }
}  // namespace

TEST_CASE("snapshot: taken during concurrent appends, restores to a log that verifies") {
  TempDir dir;
  auto blobs = BlobStore::open(dir / "data/blobs");
  REQUIRE(blobs.ok());
  auto log = open_log(dir / "data/log", 100, false, nullptr, &*blobs);
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> appended{0};
  std::vector<std::thread> writers;
  for (int t = 0; t < 4; ++t) {
    writers.emplace_back([&, t] {
      for (uint64_t i = 0; !stop; ++i) {
        EventDraft d = sample(i, "writer/" + std::to_string(t));
        if (i % 50 == 7) {
          auto b = blobs->put(as_bytes("output " + std::to_string(t) + "/" + std::to_string(i)));
          if (!b.ok()) continue;
          d.payload =
              R"({"refs":[)" +
              evidence_ref_json({"ev-" + std::to_string(i), b->sha256, "probe.output", b->bytes}) +
              "]}";
        }
        if (log->append(d).ok()) ++appended;
      }
    });
  }
  while (appended < 500) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto m = make_snapshot(*log, *blobs, dir / "snap", aura::testing::test_signer());
  const uint64_t at_snapshot = appended;
  while (appended < at_snapshot + 200) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  stop = true;
  for (auto& t : writers) t.join();
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  CHECK(m->head_seq >= 500);
  CHECK(m->head_seq < log->head().seq);  // appends went on after the snapshot

  auto restored = restore_snapshot(dir / "snap", dir / "restored", pinned());
  REQUIRE_MESSAGE(restored.ok(), restored.status().message());
  auto rlog = open_log(dir / "restored/log", 100, true);
  CHECK(rlog->head().seq == m->head_seq);
  CHECK(rlog->head().hash == m->head_hash);
  auto rblobs = BlobStore::open(dir / "restored/blobs");
  REQUIRE(rblobs.ok());
  auto r = aura::testing::verify(*rlog, &*rblobs);
  CHECK_MESSAGE(r.ok(), first_problem(r));
  CHECK(r.blobs_checked > 0);
  // The same events as the live log up to the snapshot's head.
  CHECK(log->get(m->head_seq)->hash == m->head_hash);
  // The restored log reopens for writing with the same head and continues the chain.
  rlog.reset();
  auto wlog = open_log(dir / "restored/log", 100);
  CHECK(wlog->head().hash == m->head_hash);
  REQUIRE(wlog->append(sample(1)).ok());
  CHECK(wlog->get(m->head_seq + 1)->prev_hash == m->head_hash);
}

TEST_CASE("snapshot: restore refuses a non-empty target and changes nothing there") {
  TempDir dir;
  auto blobs = BlobStore::open(dir / "data/blobs");
  auto log = open_log(dir / "data/log");
  REQUIRE(log->append(sample(1)).ok());
  REQUIRE(make_snapshot(*log, *blobs, dir / "snap", aura::testing::test_signer()).ok());
  std::filesystem::create_directories(dir / "target");
  std::ofstream(dir / "target/keep.txt") << "mine";
  auto r = restore_snapshot(dir / "snap", dir / "target", pinned());
  CHECK(r.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(r.status().message().find("not empty") != std::string::npos);
  CHECK(std::distance(std::filesystem::directory_iterator(dir / "target"), {}) == 1);
  // A snapshot into a non-empty folder is refused too.
  CHECK_FALSE(make_snapshot(*log, *blobs, dir / "target", aura::testing::test_signer()).ok());
}

TEST_CASE("snapshot: a changed, missing or extra file, or another key, is refused") {
  TempDir dir;
  auto blobs = BlobStore::open(dir / "data/blobs");
  auto log = open_log(dir / "data/log");
  for (int i = 0; i < 50; ++i) REQUIRE(log->append(sample(i)).ok());
  REQUIRE(make_snapshot(*log, *blobs, dir / "snap", aura::testing::test_signer()).ok());
  REQUIRE(check_snapshot(dir / "snap", pinned()).ok());

  std::filesystem::path some_file;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir / "snap/log")) {
    if (e.is_regular_file() && e.path().filename().string().starts_with("MANIFEST"))
      some_file = e.path();
  }
  REQUIRE_FALSE(some_file.empty());

  SUBCASE("another key") {
    NoteSigner other("aura.lab/other", Ed25519KeyPair::from_seed(Ed25519Seed{3}));
    std::vector<NoteVerifierKey> wrong = {other.verifier()};
    CHECK(check_snapshot(dir / "snap", wrong).status().message().find("snapshot manifest") !=
          std::string::npos);
  }
  SUBCASE("a changed file") {
    std::fstream f(some_file, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('\x55');
    f.close();
    CHECK(check_snapshot(dir / "snap", pinned())
              .status()
              .message()
              .find("differs from the manifest") != std::string::npos);
  }
  SUBCASE("a missing file") {
    std::filesystem::remove(some_file);
    CHECK(check_snapshot(dir / "snap", pinned()).status().message().find("is missing") !=
          std::string::npos);
  }
  SUBCASE("an extra file") {
    std::ofstream(dir / "snap/log/EXTRA.sst") << "x";
    CHECK(check_snapshot(dir / "snap", pinned()).status().message().find("not in the manifest") !=
          std::string::npos);
  }
  SUBCASE("a manifest with an unsafe path") {
    CHECK(parse_snapshot_manifest(
              R"({"version":1,"origin":"o","head_seq":1,"head_hash":")" + std::string(64, '0') +
              R"(","merkle_root":")" + std::string(64, '0') +
              R"(","created_us":1,"files":[{"path":"log/../../etc/passwd","sha256":")" +
              std::string(64, '0') + R"(","bytes":1}]})")
              .status()
              .message()
              .find("unsafe path") != std::string::npos);
  }
}
