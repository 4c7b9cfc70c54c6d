// A process rebuilding the lab projections is killed with SIGKILL at a random moment; the
// parent resumes with catch_up_all and gets exactly what a clean rebuild gives. The child is this
// binary re-executed with a doctest filter that selects only the child case.
//
// The seed is printed; AURA_LAB_KILL_SEED replays it.
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

#include "tests/projections/lab_test_util.h"
#include "tests/support/spawn_self.h"
#include "tests/support/temp_dir.h"

extern char** environ;

using namespace aura;
using aura::testing::dump_all;
using aura::testing::must;
using aura::testing::open_lab;
using aura::testing::open_log;
using aura::testing::query_all;
using aura::testing::StoryLog;
using aura::testing::TempDir;

namespace {

constexpr const char* kChildCase = "lab projections child: rebuild until killed";

}  // namespace

// Runs only in the child (the parent's run skips it: the variables are unset).
TEST_CASE("lab projections child: rebuild until killed" *
          doctest::skip(std::getenv("AURA_LAB_CHILD_LOG") == nullptr ||
                        std::getenv("AURA_LAB_CHILD_DB") == nullptr)) {
  const char* log_dir = std::getenv("AURA_LAB_CHILD_LOG");
  const char* db_file = std::getenv("AURA_LAB_CHILD_DB");
  auto log = open_log(log_dir, 1000, /*read_only=*/true);
  auto p = open_lab(*log, db_file);
  for (;;) {
    // Over and over, in small batches, so a kill can land anywhere: drop, create, batch, commit.
    if (!p->rebuild_all(37).ok()) std::_Exit(3);
  }
}

TEST_CASE("lab projections: a rebuild killed mid-batch resumes to the same result as a rebuild") {
  TempDir dir;
  std::string expected_dump, expected_query;
  uint64_t events = 0;
  {
    StoryLog s(dir / "data", 25);
    s.append_all_of_story(500);
    events = s.log->head().seq;
    auto clean = open_lab(*s.log, dir / "clean.sqlite");
    must(clean->rebuild_all());
    expected_dump = dump_all(*clean);
    expected_query = query_all(*clean);
  }
  const std::string log_dir = (dir / "data" / "log").string();
  auto log = open_log(log_dir, 1000, /*read_only=*/true);

  const uint64_t seed = aura::testing::seed_from_env("AURA_LAB_KILL_SEED");
  MESSAGE("AURA_LAB_KILL_SEED=" << seed);
  std::mt19937_64 rng(seed);
  // At least 3 rounds, more while 8 s last (a budget for coverage, not a bar). A kill that lands
  // before the child has opened the log leaves nothing to resume, and on a slow or busy machine
  // more of them do: rounds go on until one lands mid-replay, up to kMaxRounds (a hang guard).
  constexpr int kMaxRounds = 20;
  const auto budget = std::chrono::steady_clock::now() + std::chrono::seconds(8);
  int rounds = 0, mid_replay = 0;
  while (rounds < 3 || (rounds < 10 && std::chrono::steady_clock::now() < budget) ||
         (mid_replay == 0 && rounds < kMaxRounds)) {
    ++rounds;
    CAPTURE(rounds);
    const std::string db_file = (dir / ("killed" + std::to_string(rounds) + ".sqlite")).string();
    pid_t pid = aura::testing::spawn_self_case(
        kChildCase, {"AURA_LAB_CHILD_LOG=" + log_dir, "AURA_LAB_CHILD_DB=" + db_file});
    std::this_thread::sleep_for(std::chrono::milliseconds(30 + rng() % 600));
    REQUIRE(::kill(pid, SIGKILL) == 0);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status));  // killed, not exited on its own

    auto p = open_lab(*log, db_file);
    for (const lab::ProjectionState& st : p->states()) {
      if (st.position && st.position->last_seq > 0 && st.position->last_seq < events) {
        ++mid_replay;
        break;
      }
    }
    must(p->catch_up_all());
    CHECK(p->serve_check_all().is_ok());
    CHECK(dump_all(*p) == expected_dump);
    CHECK(query_all(*p) == expected_query);
  }
  MESSAGE(mid_replay << " of " << rounds << " kills landed mid-replay");
  CHECK(mid_replay > 0);
}
