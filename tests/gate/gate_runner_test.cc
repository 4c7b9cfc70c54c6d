// The gate runner's two modes against a world driver double (no world runs a process): learn
// mode stops at the first property that fails, builds no world for the later ones and records
// only what it ran; judge mode runs all five properties, in parallel when the driver allows it,
// and appends them property by property in the gate's order. The recorded facts are graded as
// the attempt engine grades them.
#include "engine/gate/gate_runner.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tests/support/log_lab.h"

using namespace aura::gate;
using aura::scenario::CheckKind;
using aura::scenario::WorldRole;
namespace world = aura::world;

namespace {

// A world whose one check fails on the world named `failing` and passes elsewhere; its
// fingerprint never changes, so repeat and reversal pass.
class FakeWorld : public world::World {
 public:
  FakeWorld(std::string id, bool fails) : id_(std::move(id)), fails_(fails) {}
  const std::string& id() const override { return id_; }
  aura::Result<world::CallOutput> probe(const aura::scenario::Call&, uint64_t) override {
    return world::CallOutput{};
  }
  aura::Result<world::CallOutput> act(const aura::scenario::Call&) override {
    return world::CallOutput{};
  }
  aura::Result<world::CallOutput> run_script(const aura::scenario::Target&,
                                             std::string_view) override {
    return world::CallOutput{};
  }
  aura::Result<world::CheckOutput> check(const aura::scenario::CheckSpec&) override {
    return world::CheckOutput{!fails_, fails_ ? "404" : "200"};
  }
  aura::Result<std::string> fingerprint() override { return std::string(64, 'a'); }

 private:
  std::string id_;
  bool fails_;
};

// Builds FakeWorlds and remembers, in order, which world each create() built.
class FakeDriver : public world::WorldDriver {
 public:
  FakeDriver(std::string failing, bool concurrent)
      : failing_(std::move(failing)), concurrent_(concurrent) {}
  std::string_view name() const override { return "fake"; }
  aura::Status check_manifest(const aura::scenario::Manifest&) const override {
    return aura::Status::ok();
  }
  aura::Result<std::unique_ptr<world::World>> create(const std::filesystem::path&,
                                                     const aura::scenario::Manifest&,
                                                     std::string_view world_id, uint64_t,
                                                     const std::filesystem::path&) override {
    std::lock_guard lock(mu_);
    built_.emplace_back(world_id);
    return std::unique_ptr<world::World>(
        std::make_unique<FakeWorld>(std::string(world_id), world_id == failing_));
  }
  aura::Result<std::unique_ptr<world::World>> open(const aura::scenario::Manifest&,
                                                   std::string_view,
                                                   const std::filesystem::path&) override {
    return aura::Status::unavailable("fake worlds do not persist");
  }
  aura::Status destroy(std::unique_ptr<world::World>) override { return aura::Status::ok(); }
  bool concurrent_worlds() const override { return concurrent_; }
  std::string profile_digest() const override { return std::string(64, '0'); }
  std::string capabilities_json() const override { return "{}"; }

  std::vector<std::string> built() {
    std::lock_guard lock(mu_);
    auto b = built_;
    std::sort(b.begin(), b.end());
    return b;
  }

 private:
  std::mutex mu_;
  std::vector<std::string> built_;
  std::string failing_;
  bool concurrent_;
};

// One postcondition on every world; a primary, one twin, a control.
struct Gate {
  aura::testing::LogLab lab;
  aura::scenario::Manifest manifest;
  aura::intervention::Intervention ir;
  GateSpec spec;
  FakeDriver driver;
  std::vector<Property> progressed;

  Gate(std::string failing, bool concurrent) : driver(std::move(failing), concurrent) {
    const std::vector<WorldRole> all = {WorldRole::kPrimary, WorldRole::kTwin, WorldRole::kControl};
    aura::scenario::CheckSpec check;
    check.id = "page-ok";
    check.call = "http.expect";
    check.params_json = "{}";
    check.roles = all;
    manifest.checks = {check};
    spec.checks = {{"page-ok", CheckKind::kPostcondition, all}};
    spec.primary_world = "primary";
    spec.twin_worlds = {"twin-1"};
    spec.control_world = "control";
  }

  aura::Result<GateRunOutput> run(bool stop_at_first_failure, unsigned parallel) {
    GateRunInput in;
    in.attempt_id = "0123456789abcdef";
    in.gate_seq = 1;
    in.manifest = &manifest;
    in.driver = &driver;
    in.ir = &ir;
    in.spec = &spec;
    in.work_dir = lab.dir / "gate";
    in.stop_at_first_failure = stop_at_first_failure;
    in.parallel = parallel;
    in.progress = [this](Property p, Outcome) { progressed.push_back(p); };
    return run_gate(in, *lab.log, *lab.blobs);
  }
};

std::vector<Property> properties_of(const std::vector<Fact>& facts) {
  std::vector<Property> out;
  for (const Fact& f : facts)
    if (out.empty() || out.back() != f.property) out.push_back(f.property);
  return out;
}

}  // namespace

TEST_CASE("gate runner: learn mode stops at the first failing property and builds no more") {
  Gate g("twin-1", true);
  auto out = g.run(true, 5);  // learn mode never runs properties in parallel, whatever is asked
  REQUIRE_MESSAGE(out.ok(), out.status().message());
  CHECK(out->not_run ==
        std::vector<Property>{Property::kControl, Property::kRepeat, Property::kReversal});
  CHECK(g.driver.built() == std::vector<std::string>{"primary", "twin-1"});
  CHECK(properties_of(out->facts) == std::vector<Property>{Property::kPrimary, Property::kTwin});
  CHECK(g.progressed == std::vector<Property>{Property::kPrimary, Property::kTwin});
  CHECK(g.lab.log->head().seq == out->event_seqs.size());  // only what ran is in the log
  const GateResult r = grade(g.spec, out->facts, out->not_run);
  CHECK(r.recovered);
  CHECK(r.verdict == Verdict::kRecoveredUnproven);
  CHECK(r.properties[size_t(Property::kPrimary)].status == Outcome::kPass);
  CHECK(r.properties[size_t(Property::kTwin)].status == Outcome::kFail);
  for (Property p : {Property::kControl, Property::kRepeat, Property::kReversal})
    CHECK(r.properties[size_t(p)].status == Outcome::kNotRun);
}

TEST_CASE("gate runner: learn mode runs every property when none fails") {
  Gate g("none", false);
  auto out = g.run(true, 1);
  REQUIRE_MESSAGE(out.ok(), out.status().message());
  CHECK(out->not_run.empty());
  CHECK(g.driver.built() ==
        std::vector<std::string>{"control", "primary", "primary", "primary", "twin-1"});
  CHECK(grade(g.spec, out->facts, out->not_run).verdict == Verdict::kVerified);
}

TEST_CASE("gate runner: judge mode runs all five properties and appends them in order") {
  for (const unsigned parallel : {1u, 2u, 5u}) {
    INFO("parallel " << parallel);
    Gate g("twin-1", true);
    auto out = g.run(false, parallel);
    REQUIRE_MESSAGE(out.ok(), out.status().message());
    CHECK(out->not_run.empty());
    // Every property built its worlds, the ones after the failing twin included.
    CHECK(g.driver.built() ==
          std::vector<std::string>{"control", "primary", "primary", "primary", "twin-1"});
    const std::vector<Property> all(std::begin(kProperties), std::end(kProperties));
    CHECK(properties_of(out->facts) == all);  // in the gate's order, whatever ran first
    CHECK(g.progressed == all);
    CHECK(std::is_sorted(out->event_seqs.begin(), out->event_seqs.end()));
    const GateResult r = grade(g.spec, out->facts, out->not_run);
    CHECK(r.verdict == Verdict::kRecoveredUnproven);
    for (Property p : kProperties) {
      CAPTURE(property_name(p));
      CHECK(r.properties[size_t(p)].status ==
            (p == Property::kTwin ? Outcome::kFail : Outcome::kPass));
    }
  }
}
