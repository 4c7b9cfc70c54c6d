// The daemon's live attempts (app/daemon/live_attempts.h): per-client and total limits with
// the wait they name, the engine's held worlds as the truth, idle expiry. Time is passed in.
#include "app/daemon/live_attempts.h"

#include <doctest/doctest.h>

using namespace aura::daemon;
using namespace std::chrono_literals;

namespace {

LiveLimits limits(size_t per_client, size_t total) {
  LiveLimits l;
  l.per_client = per_client;
  l.total = total;
  l.idle = 600s;
  return l;
}

}  // namespace

TEST_CASE("live attempts: a client's limit is 429, the lab's is 503, each saying when") {
  LiveAttempts live(limits(2, 3));
  const auto t0 = SteadyClock::now();
  std::vector<std::string> held;
  CHECK_FALSE(live.reserve("10.0.0.1", held, t0));
  live.bind("10.0.0.1", "a1", t0);
  held.push_back("a1");
  CHECK_FALSE(live.reserve("10.0.0.1", held, t0 + 60s));
  // A start under way counts as much as a live one.
  auto third = live.reserve("10.0.0.1", held, t0 + 60s);
  REQUIRE(third);
  CHECK(third->status == 429);
  CHECK(third->message.find("2 live attempts") != std::string::npos);
  // Its oldest (a1, touched at t0) expires at t0 + 600 s: 540 s from t0 + 60 s (+1, rounded up).
  CHECK(third->retry_after_s == 541);
  live.bind("10.0.0.1", "a2", t0 + 60s);
  held.push_back("a2");
  // Another client: one place left in all, then none.
  CHECK_FALSE(live.reserve("10.0.0.2", held, t0 + 60s));
  auto full = live.reserve("10.0.0.3", held, t0 + 60s);
  REQUIRE(full);
  CHECK(full->status == 503);
  // A start that failed gives its place back.
  live.unreserve("10.0.0.2");
  CHECK_FALSE(live.reserve("10.0.0.3", held, t0 + 60s));
  // The machine's own root ("") has no per-client limit, but the total holds for it too.
  live.unreserve("10.0.0.3");
  CHECK_FALSE(live.reserve("", held, t0 + 60s));
  auto root_full = live.reserve("", held, t0 + 60s);
  REQUIRE(root_full);
  CHECK(root_full->status == 503);
}

TEST_CASE("live attempts: what the engine holds is the truth") {
  LiveAttempts live(limits(1, 4));
  const auto t0 = SteadyClock::now();
  CHECK_FALSE(live.reserve("c", {}, t0));
  live.bind("c", "a1", t0);
  CHECK(live.client_of("a1") == "c");
  CHECK(live.reserve("c", {"a1"}, t0));  // at its one
  // a1 done (the engine no longer holds its world): the client may start another.
  CHECK_FALSE(live.reserve("c", {}, t0));
  CHECK(live.client_of("a1").empty());
  // A world held but unknown here (opened after a restart) is the machine's and counts.
  live.bind("c", "a2", t0);
  CHECK(live.expired({"a2", "x9"}, t0).empty());
  CHECK(live.live() == 2);
  CHECK(live.client_of("x9").empty());
}

TEST_CASE("live attempts: idle ones expire, oldest first; a command starts the idle time again") {
  LiveAttempts live(limits(5, 10));
  const auto t0 = SteadyClock::now();
  std::vector<std::string> held;
  for (const char* a : {"a1", "a2", "a3"}) {
    REQUIRE_FALSE(live.reserve("c", held, t0));
    live.bind("c", a, t0);
    held.push_back(a);
  }
  live.touch("a1", t0 + 300s);
  live.touch("a3", t0 + 100s);
  CHECK(live.expired(held, t0 + 599s).empty());
  CHECK(live.expired(held, t0 + 600s) == std::vector<std::string>{"a2"});
  CHECK(live.expired(held, t0 + 900s) == std::vector<std::string>{"a2", "a3", "a1"});
}

TEST_CASE("live attempts: the machine's size and the file limit both bound the total") {
  // Files alone: (4096 - 1024) / 16.
  CHECK(LiveAttempts::total_for_machine(1, 4096, 16) == 192);
  // A file limit at its default leaves the floor.
  CHECK(LiveAttempts::total_for_machine(1, 1024, 16) == 2);
  // Memory alone: a world as large as the machine's memory.
  CHECK(LiveAttempts::total_for_machine(uint64_t(1) << 50, uint64_t(1) << 20, 1) == 2);
}
