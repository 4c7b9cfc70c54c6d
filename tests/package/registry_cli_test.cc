// `aura setup` and `aura scenario load`, black-box: what they sign, what they record in the
// stream lab/scenarios (read back with `aura log dump`), and the exit status.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/common/install_layout.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/package/package.h"
#include "tests/cli/cli_util.h"
#include "tests/package/registry_events.h"
#include "tests/scenario/sample_manifest.h"

using aura::testing::CliOptions;
using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::registry;
using aura::testing::registry_of_type;
using aura::testing::RegistryEvent;
using aura::testing::replace_one;
using aura::testing::run_aura;
using aura::testing::sample_manifest;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

// A package folder NAME under ROOT/scenarios with the sample manifest (id = NAME), a file, and
// the SHA256SUMS a publisher commits with them (unless `committed_sums` is false).
fs::path write_package(const Lab& lab, const std::string& name, const std::string& manifest = "",
                       bool committed_sums = true) {
  const fs::path dir = lab / "scenarios" / name;
  fs::create_directories(dir / "worlds" / "common" / "fleet");
  const std::string m = manifest.empty() ? sample_manifest(name) : manifest;
  const std::string inventory = "web1 web\n";
  write_file(dir / "manifest.json", m);
  write_file(dir / "worlds" / "common" / "fleet" / "inventory.conf", inventory);
  if (committed_sums) {
    write_file(dir / "SHA256SUMS",
               aura::format_sha256sums({{"manifest.json", aura::sha256(m), m.size()},
                                        {"worlds/common/fleet/inventory.conf",
                                         aura::sha256(inventory), inventory.size()}}));
  }
  return dir;
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string abs_dir(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

}  // namespace

TEST_CASE(
    "setup: creates the keys; a package as committed is signed, recorded and loaded; run again, "
    "it is kept") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = write_package(lab, "t1-sample");
  const std::string scenarios = (lab / "scenarios").string();

  CliResult r = lab.aura({"setup", "--scenarios", scenarios, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json first(r.last_line());
  CHECK(first.boolean("ok") == true);
  CHECK(first.boolean("lab_key_created") == true);
  CHECK(first.boolean("publisher_key_created") == true);
  CHECK(first.u64("signed") == 1);
  CHECK(first.u64("kept") == 0);
  CHECK(first.u64("loaded") == 1);
  CHECK(fs::exists(lab.keys() / "lab.key"));
  CHECK(fs::exists(lab.keys() / "publisher.key"));
  CHECK_MESSAGE(contains(r.out, "its files match its SHA256SUMS"), r.describe());
  CHECK_MESSAGE(contains(r.out, "loaded   t1-sample 1.0.0"), r.describe());
  const std::string sums = read_file(pkg / "SHA256SUMS");
  const std::string sig = read_file(pkg / "package.sig.json");

  // The package verifies on its own with the operator's trust store.
  CHECK(lab.aura({"scenario", "verify", pkg.string()}).exit_code == 0);

  std::vector<RegistryEvent> events = registry(lab);
  REQUIRE(events.size() == 2);
  // The signing first, by the operator's key, then the load.
  const RegistryEvent& signing = events[0];
  CHECK(signing.type == aura::events::kScenarioSigned);
  CHECK(signing.actor == "operator");
  CHECK(signing.first_member == "v");
  CHECK(signing.dir == abs_dir(pkg));
  CHECK(signing.id == "t1-sample");
  CHECK(signing.command == "setup");
  CHECK(signing.sums == "matched");
  CHECK(signing.publisher == first.str("publisher"));
  CHECK(signing.package_digest == aura::to_hex(aura::sha256(sums)));
  const RegistryEvent& e = events[1];
  CHECK(e.type == aura::events::kScenarioLoaded);
  CHECK(e.actor == "engine");
  CHECK(e.first_member == "v");
  CHECK(e.dir == abs_dir(pkg));
  CHECK(e.id == "t1-sample");
  const std::string manifest = read_file(pkg / "manifest.json");
  CHECK(e.manifest_sha256 == aura::to_hex(aura::sha256(manifest)));
  CHECK(e.ref_id == "manifest");
  CHECK(e.ref_kind == "scenario.manifest");
  CHECK(e.ref_sha256 == e.manifest_sha256);
  CHECK(e.ref_bytes == manifest.size());
  // The manifest blob is stored: verify checks every referenced blob.
  r = run_aura({"log", "verify", "--data", lab.data().string(), "--keys", lab.keys().string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());

  // Again: the keys are kept, the package (which verifies) kept as signed, and loaded again.
  r = lab.aura({"setup", "--scenarios", scenarios, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json second(r.last_line());
  CHECK(second.boolean("lab_key_created") == false);
  CHECK(second.boolean("publisher_key_created") == false);
  CHECK(second.str("publisher") == first.str("publisher"));
  CHECK(second.u64("signed") == 0);
  CHECK(second.u64("kept") == 1);
  CHECK(read_file(pkg / "SHA256SUMS") == sums);
  CHECK(read_file(pkg / "package.sig.json") == sig);
  events = registry(lab);
  REQUIRE(events.size() == 3);
  CHECK(events[2].type == aura::events::kScenarioLoaded);
  CHECK(events[2].ref_sha256 == events[1].ref_sha256);
}

// Signing a package nothing says is as published is the operator's explicit act: set-up refuses
// one that came without a SHA256SUMS, leaves it untouched, and says how to sign it on purpose.
TEST_CASE("setup: a package without SHA256SUMS is refused, untouched, and not signed") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = write_package(lab, "t1-sample", "", false);
  CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string(), "--json"});
  CHECK(r.exit_code == 1);
  Json j(r.last_line());
  CHECK(j.u64("signed") == 0);
  CHECK(j.u64("loaded") == 0);
  CHECK(j.u64("rejected") == 1);
  CHECK_FALSE(fs::exists(pkg / "SHA256SUMS"));
  CHECK_FALSE(fs::exists(pkg / "package.sig.json"));
  CHECK(registry_of_type(lab, aura::events::kScenarioSigned).empty());
  const auto rejected = registry_of_type(lab, aura::events::kScenarioRejected);
  REQUIRE(rejected.size() == 1);
  CHECK_MESSAGE(contains(rejected[0].reason, "it has no SHA256SUMS"), rejected[0].reason);
  CHECK_MESSAGE(contains(rejected[0].reason, "aura scenario sign " + pkg.string()),
                rejected[0].reason);

  // Signed on purpose, it is kept by the next set-up and loads.
  REQUIRE(lab.aura({"scenario", "sign", pkg.string()}).exit_code == 0);
  r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(Json(r.last_line()).u64("kept") == 1);
  CHECK(registry_of_type(lab, aura::events::kScenarioSigned).size() == 1);
}

TEST_CASE(
    "scenario load: the default folder is the bundled packages, never the working folder's; "
    "setup --help describes the command") {
  Lab lab;
  write_package(lab, "t1-sample");  // a ./scenarios in the working folder, not the default
  REQUIRE(lab.aura({"keys", "init-publisher"}).exit_code == 0);
  CliOptions in_root;
  in_root.cwd = lab.root();
  // load (unlike setup) writes nothing into the folders it reads: the source tree stays as it is.
  CliResult r = run_aura(
      {"scenario", "load", "--data", lab.data().string(), "--keys", lab.keys().string()}, in_root);
  const fs::path bundled = aura::install_layout().source_root / "scenarios";
  std::vector<std::string> dirs;
  for (auto type : {aura::events::kScenarioLoaded, aura::events::kScenarioRejected}) {
    for (const auto& e : registry_of_type(lab, type)) dirs.push_back(e.dir);
  }
  std::sort(dirs.begin(), dirs.end());
  const std::vector<std::string> expected = {abs_dir(bundled / "o1-fleet-drift"),
                                             abs_dir(bundled / "o2-service-chain"),
                                             abs_dir(bundled / "t0-config-drift")};
  CHECK_MESSAGE(dirs == expected, r.describe());

  r = run_aura({"setup", "--help"});
  CHECK(r.exit_code == 0);
  CHECK_MESSAGE(contains(r.out + r.err, "--scenarios"), r.describe());
  CHECK_MESSAGE(contains(r.out + r.err, "publisher"), r.describe());
}

TEST_CASE("scenario load: a file changed after signing is recorded as rejected, naming it") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = write_package(lab, "t1-sample");
  REQUIRE(lab.aura({"setup", "--scenarios", (lab / "scenarios").string()}).exit_code == 0);
  write_file(pkg / "worlds" / "common" / "fleet" / "inventory.conf", "web1 web\nweb9 web\n");

  CliResult r =
      lab.aura({"scenario", "load", "--scenarios", (lab / "scenarios").string(), "--json"});
  CHECK(r.exit_code == 1);
  Json j(r.last_line());
  CHECK(j.boolean("ok") == false);
  CHECK(j.u64("rejected") == 1);
  const auto events = registry(lab);
  REQUIRE(events.size() == 3);  // setup's signing and load, then this rejection
  const RegistryEvent& e = events.back();
  CHECK(e.type == aura::events::kScenarioRejected);
  CHECK(e.first_member == "v");
  CHECK(e.dir == abs_dir(pkg));
  CHECK_MESSAGE(contains(e.reason, "changed file \"worlds/common/fleet/inventory.conf\""),
                e.reason);
  CHECK(e.ref_id.empty());  // nothing referenced
}

TEST_CASE("scenario load: a package signed by a key outside the trust store is rejected") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = write_package(lab, "t1-sample");
  REQUIRE(lab.aura({"setup", "--scenarios", (lab / "scenarios").string()}).exit_code == 0);
  // Another publisher, whose key this lab never trusted, re-signs the package.
  // (Run where no default data folder exists, so that signing is not recorded anywhere.)
  const fs::path other = lab / "other-keys";
  const CliOptions in_root{lab.root()};
  REQUIRE(run_aura({"keys", "init-publisher", "--keys", other.string()}, in_root).exit_code == 0);
  REQUIRE(
      run_aura({"scenario", "sign", pkg.string(), "--keys", other.string()}, in_root).exit_code ==
      0);

  CliResult r = lab.aura({"scenario", "load", pkg.string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains(r.out, "rejected"), r.describe());
  const auto events = registry(lab);
  REQUIRE(events.size() == 3);  // setup's signing and load, then this rejection
  const RegistryEvent& e = events.back();
  CHECK(e.type == aura::events::kScenarioRejected);
  CHECK_MESSAGE(contains(e.reason, "unknown key: signed by \"aura.publisher/"), e.reason);
  CHECK_MESSAGE(contains(e.reason, "which is not in the trust store"), e.reason);
}

TEST_CASE(
    "scenario load: every folder is recorded; an unknown driver or bad manifest rejects one") {
  Lab lab(Lab::Keys::kNone);
  const fs::path good = write_package(lab, "a-good");
  const fs::path nodriver =
      write_package(lab, "b-nodriver",
                    replace_one(sample_manifest("b-nodriver"), R"("driver": "filetree")",
                                R"("driver": "nosuch")"));
  const fs::path invalid = write_package(
      lab, "c-invalid",
      replace_one(sample_manifest("c-invalid"), R"("role": "control")", R"("role": "twin")"));
  fs::create_directories(lab / "scenarios" / "not-a-package");  // no manifest.json: skipped

  CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string(), "--json"});
  CHECK(r.exit_code == 1);
  Json j(r.last_line());
  CHECK(j.u64("loaded") == 1);
  CHECK(j.u64("rejected") == 2);
  CHECK(j.u64("signed") == 2);  // the invalid manifest is not signed
  auto events = registry(lab);
  REQUIRE(events.size() == 5);
  CHECK(events[0].type == aura::events::kScenarioSigned);
  CHECK(events[0].dir == abs_dir(good));
  CHECK(events[1].type == aura::events::kScenarioLoaded);
  CHECK(events[1].dir == abs_dir(good));
  CHECK(events[2].type == aura::events::kScenarioSigned);
  CHECK(events[2].dir == abs_dir(nodriver));
  CHECK(events[3].type == aura::events::kScenarioRejected);
  CHECK(events[3].dir == abs_dir(nodriver));
  CHECK(events[3].reason == "unknown world driver \"nosuch\"");
  CHECK(events[4].type == aura::events::kScenarioRejected);
  CHECK(events[4].dir == abs_dir(invalid));
  CHECK_MESSAGE(contains(events[4].reason,
                         "manifest.json: worlds: needs exactly one world with role \"control\""),
                events[4].reason);
  CHECK_FALSE(fs::exists(invalid / "package.sig.json"));

  // Loading the good one alone records it alone, and succeeds.
  r = lab.aura({"scenario", "load", good.string()});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  events = registry(lab);
  REQUIRE(events.size() == 6);
  CHECK(events[5].type == aura::events::kScenarioLoaded);
}

TEST_CASE("scenario load: without a trust store nothing is recorded") {
  Lab lab;  // lab key only, no publisher key
  const fs::path pkg = write_package(lab, "t1-sample");
  CliResult r = lab.aura({"scenario", "load", pkg.string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains(r.err, "publisher trust store"), r.describe());
  CHECK_MESSAGE(contains(r.err, "aura setup"), r.describe());
  r = lab.aura({"scenario", "load", "--scenarios", (lab / "missing").string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains(r.err, "not found"), r.describe());
  CHECK_FALSE(fs::exists(lab.data()));
}
