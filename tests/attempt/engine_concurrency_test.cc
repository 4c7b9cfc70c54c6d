// Many learners at once (issue 26, item 2): commands of different attempts run in parallel, and
// the commands of one attempt one at a time. The engine runs on the real lab (t0 on the filetree
// driver, real RocksDB log); the one test double is a driver wrapper whose first probe waits on a
// latch the test opens, so "A's command is still running" is a fact of the test, not a timing.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "engine/attempt/attempt_engine.h"
#include "engine/world/world_driver.h"
#include "tests/attempt/engine_lab.h"

using namespace aura;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

// Opened once; the first probe to arrive waits on it (and says it arrived).
struct Latch {
  std::mutex mu;
  std::condition_variable cv;
  bool claimed = false, arrived = false, open = false;

  // True for the one caller that must wait.
  bool claim() {
    std::lock_guard lock(mu);
    if (claimed) return false;
    claimed = arrived = true;
    cv.notify_all();
    return true;
  }
  void wait_open() {
    std::unique_lock lock(mu);
    cv.wait(lock, [&] { return open; });
  }
  bool wait_arrived(std::chrono::seconds limit) {
    std::unique_lock lock(mu);
    return cv.wait_for(lock, limit, [&] { return arrived; });
  }
  void release() {
    std::lock_guard lock(mu);
    open = true;
    cv.notify_all();
  }
};

// The real world, its first probe held on the latch.
class HeldWorld : public world::World {
 public:
  HeldWorld(std::unique_ptr<world::World> w, Latch& latch) : w_(std::move(w)), latch_(latch) {}
  std::unique_ptr<world::World> release() { return std::move(w_); }

  const std::string& id() const override { return w_->id(); }
  void bind_attempt(std::string_view attempt) override { w_->bind_attempt(attempt); }
  Status persist() override { return w_->persist(); }
  Result<world::CallOutput> probe(const scenario::Call& call, uint64_t max_bytes) override {
    if (latch_.claim()) latch_.wait_open();
    return w_->probe(call, max_bytes);
  }
  Result<world::CallOutput> act(const scenario::Call& call) override { return w_->act(call); }
  void begin_rollback() override { w_->begin_rollback(); }
  Result<world::CallOutput> run_script(const scenario::Target& target,
                                       std::string_view script) override {
    return w_->run_script(target, script);
  }
  Result<world::CheckOutput> check(const scenario::CheckSpec& check) override {
    return w_->check(check);
  }
  Result<std::string> fingerprint() override { return w_->fingerprint(); }
  Result<std::string> changes() override { return w_->changes(); }
  Result<world::BuildRecord> build_record() override { return w_->build_record(); }
  Result<world::Readback> read_back(const scenario::Call& action,
                                    const world::AppliedCall& applied) override {
    return w_->read_back(action, applied);
  }

 private:
  std::unique_ptr<world::World> w_;
  Latch& latch_;
};

class HeldDriver : public world::WorldDriver {
 public:
  HeldDriver(std::unique_ptr<world::WorldDriver> d, Latch& latch)
      : d_(std::move(d)), latch_(latch) {}
  std::string_view name() const override { return d_->name(); }
  void configure(const world::WorldHost& host) override { d_->configure(host); }
  Status check_manifest(const scenario::Manifest& m) const override {
    return d_->check_manifest(m);
  }
  Result<std::unique_ptr<world::World>> create(const std::filesystem::path& package_dir,
                                               const scenario::Manifest& m,
                                               std::string_view world_id, uint64_t seed,
                                               const std::filesystem::path& work_dir) override {
    return wrap(d_->create(package_dir, m, world_id, seed, work_dir));
  }
  Result<std::unique_ptr<world::World>> open(const scenario::Manifest& m, std::string_view world_id,
                                             const std::filesystem::path& work_dir) override {
    return wrap(d_->open(m, world_id, work_dir));
  }
  Status destroy(std::unique_ptr<world::World> w) override {
    return d_->destroy(static_cast<HeldWorld&>(*w).release());
  }
  Status discard(const std::filesystem::path& work_dir) override { return d_->discard(work_dir); }
  bool concurrent_worlds() const override { return d_->concurrent_worlds(); }
  std::string profile_digest() const override { return d_->profile_digest(); }
  std::string capabilities_json() const override { return d_->capabilities_json(); }

 private:
  Result<std::unique_ptr<world::World>> wrap(Result<std::unique_ptr<world::World>> w) {
    if (!w.ok()) return w.status();
    return std::unique_ptr<world::World>(new HeldWorld(std::move(w).value(), latch_));
  }
  std::unique_ptr<world::WorldDriver> d_;
  Latch& latch_;
};

}  // namespace

TEST_CASE("engine: a command held on one attempt holds no other attempt; its own wait") {
  EngineLab lab;
  Latch latch;
  attempt::EngineContext ctx = lab.session->context;
  const attempt::DriverFactory real = ctx.drivers;
  ctx.drivers = [&](std::string_view name) -> std::unique_ptr<world::WorldDriver> {
    auto d = real(name);
    return d ? std::make_unique<HeldDriver>(std::move(d), latch) : nullptr;
  };
  attempt::AttemptEngine engine(ctx);

  auto started = [&](const char* learner) {
    attempt::StartRequest req;
    req.learner = learner;
    req.scenario_id = std::string(kT0);
    req.seed = 11;
    auto id = engine.start(req);
    REQUIRE_MESSAGE(id.ok(), id.status().message());
    Status s = engine.predict(*id, learner, "stale-override", "a stale override on web2", 70);
    REQUIRE_MESSAGE(s.is_ok(), s.message());
    return *id;
  };
  const std::string a = started("alice"), b = started("bob");
  const std::string call = lab.judge("gold").probe_calls_json.at(0);

  // Alice's probe is held inside her world.
  auto held = std::async(std::launch::async, [&] { return engine.probe(a, "alice", call); });
  REQUIRE(latch.wait_arrived(60s));

  // Bob's commands run meanwhile: a probe and a submission (a lock across attempts would keep
  // them waiting until the latch opens, which it does only after they are done).
  auto bobs = std::async(std::launch::async, [&] {
    auto p = engine.probe(b, "bob", call);
    if (!p.ok()) return p.status();
    auto rev = engine.submit(b, "bob", lab.judge("gold").ir_json);
    return rev.ok() ? Status::ok() : rev.status();
  });
  const bool bob_ran = bobs.wait_for(120s) == std::future_status::ready;
  if (!bob_ran) latch.release();  // so the futures can end
  REQUIRE_MESSAGE(bob_ran, "bob's commands waited for alice's probe");
  const Status bob = bobs.get();
  CHECK_MESSAGE(bob.is_ok(), bob.message());
  auto bob_state = engine.state(b);
  REQUIRE(bob_state.ok());
  CHECK(bob_state->phase == attempt::Phase::kContract);

  // Alice's second command waits for her first: it cannot finish while the first is held.
  auto second = std::async(std::launch::async, [&] { return engine.probe(a, "alice", call); });
  CHECK(second.wait_for(300ms) == std::future_status::timeout);
  CHECK(held.wait_for(0s) == std::future_status::timeout);

  latch.release();
  auto first = held.get();
  REQUIRE_MESSAGE(first.ok(), first.status().message());
  auto next = second.get();
  REQUIRE_MESSAGE(next.ok(), next.status().message());
  // In order, each charged once: the second saw what the first spent.
  CHECK(first->probe == 1);
  CHECK(next->probe == 2);
  CHECK(next->spent == first->spent + next->cost);

  for (const auto& [id, learner] : {std::pair{a, "alice"}, std::pair{b, "bob"}}) {
    Status s = engine.abandon(id, learner, "done");
    CHECK_MESSAGE(s.is_ok(), s.message());
  }
}
