// The daemon's gate pool (app/daemon/gate_pool.h): at most `workers` gates at once, the rest in
// order of arrival with their place told, per-learner and whole-queue bounds. Jobs here wait on
// latches the test opens, so which gate runs when is a fact of the test, not of timing.
#include "app/daemon/gate_pool.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace aura;
using namespace aura::daemon;
using namespace std::chrono_literals;

namespace {

// Gates that start, record it, and end when the test lets each go.
struct Gates {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> started;
  std::vector<std::string> released;

  std::function<void()> job(const std::string& name) {
    return [this, name] {
      std::unique_lock lock(mu);
      started.push_back(name);
      cv.notify_all();
      cv.wait(lock,
              [&] { return std::find(released.begin(), released.end(), name) != released.end(); });
    };
  }
  void release(const std::string& name) {
    std::lock_guard lock(mu);
    released.push_back(name);
    cv.notify_all();
  }
  // Waits (60 s at most: a hang guard) until `n` gates have started.
  bool until_started(size_t n) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, 60s, [&] { return started.size() >= n; });
  }
  std::vector<std::string> started_now() {
    std::lock_guard lock(mu);
    return started;
  }
};

}  // namespace

TEST_CASE("gate pool: two run at once, the rest wait in order and are told their place") {
  Gates g;
  GatePool pool(2, 8, 2);
  auto a = pool.submit("ann", "t0", g.job("a"));
  auto b = pool.submit("bob", "t0", g.job("b"));
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(a->position == 0);
  CHECK(b->position == 0);
  CHECK_FALSE(a->expected_wait_s);  // no gate has run yet: no estimate
  REQUIRE(g.until_started(2));
  auto c = pool.submit("cat", "t0", g.job("c"));
  auto d = pool.submit("dan", "t0", g.job("d"));
  auto e = pool.submit("eve", "t0", g.job("e"));
  REQUIRE((c.ok() && d.ok() && e.ok()));
  CHECK(c->position == 1);
  CHECK(d->position == 2);
  CHECK(e->position == 3);
  CHECK(pool.running() == 2);
  CHECK(pool.waiting() == 3);

  // One ends: the first waiting starts, not a later one.
  g.release("a");
  REQUIRE(g.until_started(3));
  CHECK(g.started_now()[2] == "c");
  // With a gate run, the wait is estimated: the next in line waits one round.
  g.release("b");
  REQUIRE(g.until_started(4));
  CHECK(g.started_now()[3] == "d");
  auto f = pool.submit("fay", "t0", g.job("f"));
  REQUIRE(f.ok());
  CHECK(f->position == 2);  // behind e
  REQUIRE(f->expected_wait_s);
  CHECK(*f->expected_wait_s >= 0);
  for (const char* name : {"c", "d", "e", "f"}) g.release(name);
  REQUIRE(g.until_started(6));
  pool.stop();
  CHECK(pool.running() == 0);
}

TEST_CASE("gate pool: a learner holds at most its share; a full queue refuses; stop drops") {
  Gates g;
  GatePool pool(1, 2, 2);
  REQUIRE(pool.submit("ann", "t0", g.job("a1")).ok());
  REQUIRE(g.until_started(1));
  REQUIRE(pool.submit("ann", "t0", g.job("a2")).ok());
  auto third = pool.submit("ann", "t0", g.job("a3"));
  REQUIRE_FALSE(third.ok());
  CHECK(third.status().code() == ErrorCode::kBusy);
  CHECK(third.status().message().find("you already have 2 gates") != std::string::npos);
  // Another learner still has a place, until the queue is full.
  REQUIRE(pool.submit("bob", "t0", g.job("b1")).ok());
  auto full = pool.submit("cat", "t0", g.job("c1"));
  REQUIRE_FALSE(full.ok());
  CHECK(full.status().code() == ErrorCode::kBusy);
  CHECK(full.status().message().find("the gate queue is full (2 gates waiting)") !=
        std::string::npos);
  // Stopping drops the waiting gates (never started) once the running one ends.
  g.release("a1");
  REQUIRE(g.until_started(2));
  g.release("a2");
  g.release("b1");
  pool.stop();
  auto late = pool.submit("dan", "t0", g.job("d1"));
  REQUIRE_FALSE(late.ok());
  CHECK(late.status().code() == ErrorCode::kUnavailable);
}

TEST_CASE("gate pool: the wait told is the gates ahead by their kinds, not one mean for all") {
  Gates g;
  GatePool pool(1, 8, 2);
  // One gate of each kind has run: a slow kind (held 400 ms) and a quick one.
  REQUIRE(pool.submit("ann", "o2", g.job("slow1")).ok());
  REQUIRE(g.until_started(1));
  std::this_thread::sleep_for(400ms);
  g.release("slow1");
  REQUIRE(pool.submit("ann", "t0", g.job("quick1")).ok());
  REQUIRE(g.until_started(2));
  g.release("quick1");
  // Behind a quick gate just started, a queued gate waits about nothing...
  REQUIRE(pool.submit("bob", "t0", g.job("quick2")).ok());
  REQUIRE(g.until_started(3));
  auto behind_quick = pool.submit("cat", "o2", g.job("slow2"));
  REQUIRE(behind_quick.ok());
  CHECK(behind_quick->position == 1);
  REQUIRE(behind_quick->expected_wait_s);
  // ...and a third, behind that slow one too, waits about a slow gate more: the two differ by
  // the slow kind's mean, where one mean for all would have told both nearly alike.
  auto behind_slow = pool.submit("dan", "t0", g.job("quick3"));
  REQUIRE(behind_slow.ok());
  CHECK(behind_slow->position == 2);
  REQUIRE(behind_slow->expected_wait_s);
  CHECK(*behind_slow->expected_wait_s - *behind_quick->expected_wait_s > 0.3);
  for (const char* name : {"quick2", "slow2", "quick3"}) g.release(name);
  REQUIRE(g.until_started(5));
  pool.stop();
}

TEST_CASE("gate pool: sized from the machine, never below one") {
  CHECK(GatePool::workers_for_machine(0) >= 1);
  // No machine holds a gate of an exabyte: one worker still runs.
  CHECK(GatePool::workers_for_machine(uint64_t(1) << 60) == 1);
  CHECK(GatePool::workers_for_machine(1) <= std::max(1u, std::thread::hardware_concurrency()));
}
