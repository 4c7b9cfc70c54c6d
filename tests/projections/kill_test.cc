// A projector process killed with SIGKILL mid-catch-up: the parent resumes and gets exactly what
// a clean rebuild gives. The child is this test binary re-executed with a doctest filter that
// selects only the child case (so it starts with no threads and shares nothing with the parent).
//
// Rounds use a seeded RNG; the seed is printed, and AURA_PROJ_KILL_SEED replays it.
#include <doctest/doctest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "projections/core/projector.h"
#include "projections/streams/stream_projection.h"
#include "tests/projections/projection_test_util.h"
#include "tests/support/spawn_self.h"
#include "tests/support/temp_dir.h"

extern char** environ;

using namespace aura;
using aura::testing::append_samples;
using aura::testing::must;
using aura::testing::open_db;
using aura::testing::open_log;
using aura::testing::TempDir;

namespace {

constexpr const char* kChildCase = "projections child: catch up until killed";
constexpr uint64_t kEvents = 20000;

}  // namespace

// Runs only in the child (the parent's run skips it: the variables are unset).
TEST_CASE("projections child: catch up until killed" *
          doctest::skip(std::getenv("AURA_PROJ_CHILD_LOG") == nullptr ||
                        std::getenv("AURA_PROJ_CHILD_DB") == nullptr)) {
  const char* log_dir = std::getenv("AURA_PROJ_CHILD_LOG");
  const char* db_file = std::getenv("AURA_PROJ_CHILD_DB");
  auto log = open_log(log_dir, 1000, /*read_only=*/true);
  auto db = open_db(db_file);
  StreamProjection p;
  Projector j(*log, *db, p);
  for (;;) {
    // Rebuild over and over so a kill can land in any phase: drop, create, batch, commit.
    auto r = j.rebuild(7);
    if (!r.ok()) std::_Exit(3);
  }
}

TEST_CASE("projections: a projector killed mid-batch resumes to the same result as a rebuild") {
  TempDir dir;
  const std::string log_dir = (dir / "log").string();
  {
    auto log = open_log(log_dir);
    append_samples(*log, 1, kEvents);
  }
  auto log = open_log(log_dir, 1000, /*read_only=*/true);
  auto clean = open_db(dir / "clean.db");
  StreamProjection clean_p;
  Projector clean_j(*log, *clean, clean_p);
  REQUIRE(must(clean_j.rebuild()) == kEvents);
  const std::string expected = must(canonical_dump(*clean, clean_p));

  const uint64_t seed = aura::testing::seed_from_env("AURA_PROJ_KILL_SEED");
  MESSAGE("AURA_PROJ_KILL_SEED=" << seed);
  std::mt19937_64 rng(seed);
  // At least 3 rounds, more while 6 s last (a budget for coverage, not a bar). A kill that lands
  // before the child has opened the log leaves nothing to resume, and on a slow or busy machine
  // more of them do: rounds go on until one lands mid-replay, up to kMaxRounds (a hang guard).
  constexpr int kMaxRounds = 20;
  const auto budget = std::chrono::steady_clock::now() + std::chrono::seconds(6);
  int rounds = 0;
  int mid_replay = 0;  // rounds whose kill left a partly replayed database
  while (rounds < 3 || (rounds < 12 && std::chrono::steady_clock::now() < budget) ||
         (mid_replay == 0 && rounds < kMaxRounds)) {
    ++rounds;
    const std::string db_file = (dir / ("killed" + std::to_string(rounds) + ".db")).string();
    // Some rounds start from a partly built database, others from nothing.
    if (rounds % 2 == 0) {
      auto db = open_db(db_file);
      StreamProjection p;
      Projector j(*log, *db, p);
      REQUIRE(must(j.rebuild()) == kEvents);
    }
    pid_t pid = aura::testing::spawn_self_case(
        kChildCase, {"AURA_PROJ_CHILD_LOG=" + log_dir, "AURA_PROJ_CHILD_DB=" + db_file});
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 400));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CAPTURE(rounds);
    // Killed, not exited on its own (an exit would mean the child failed or never ran).
    CHECK(WIFSIGNALED(status));

    auto db = open_db(db_file);
    StreamProjection p;
    Projector j(*log, *db, p);
    auto pos = must(j.position());
    if (pos.has_value()) {
      CHECK(pos->last_seq <= kEvents);
      if (pos->last_seq > 0 && pos->last_seq < kEvents) ++mid_replay;
    }
    must(j.catch_up(1000));
    CHECK(j.serve_check().is_ok());
    CHECK(must(canonical_dump(*db, p)) == expected);
    CHECK(must(j.position())->last_seq == kEvents);
  }
  MESSAGE(mid_replay << " of " << rounds << " kills landed mid-replay");
  CHECK(mid_replay > 0);
}
