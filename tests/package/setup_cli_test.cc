// `aura setup` on the bundled packages and their committed SHA256SUMS, and `aura scenario sign`
// as the explicit, recorded way to sign a change, black-box through the real binary on a copy of
// the repository's scenarios folder (AURA_SCENARIOS).
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "tests/cli/cli_util.h"
#include "tests/package/registry_events.h"

using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kBundled = {"o1-fleet-drift", "o2-service-chain", "t0-config-drift"};
constexpr const char* kT0 = "t0-config-drift";

fs::path bundled_source() {
  const char* src = std::getenv("AURA_SCENARIOS");
  REQUIRE_MESSAGE(src != nullptr, "AURA_SCENARIOS is not set (run through meson)");
  return src;
}

// Copies the bundled packages `names` into ROOT/scenarios as the repository holds them: their
// files and committed SHA256SUMS, without a signature a set-up on this machine may have left.
fs::path copy_bundled(const Lab& lab, const std::vector<std::string>& names = kBundled) {
  const fs::path scenarios = lab / "scenarios";
  for (const std::string& name : names) {
    fs::create_directories(scenarios / name);
    fs::copy(bundled_source() / name, scenarios / name, fs::copy_options::recursive);
    fs::remove(scenarios / name / "package.sig.json");
  }
  return scenarios;
}

std::string abs_dir(const fs::path& p) { return fs::absolute(p).lexically_normal().string(); }

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// The first file the package's SHA256SUMS lists, other than manifest.json.
std::string a_listed_file(const fs::path& pkg) {
  std::istringstream sums(read_file(pkg / "SHA256SUMS"));
  for (std::string line; std::getline(sums, line);) {
    REQUIRE(line.size() > 66);
    if (line.substr(66) != "manifest.json") return line.substr(66);
  }
  FAIL("SHA256SUMS lists no shipped file");
  return "";
}

// `setup --json` on ROOT/scenarios: the run and its JSON line.
struct SetupRun {
  CliResult r;
  Json json;
};
SetupRun setup(const Lab& lab) {
  CliResult r = lab.aura({"setup", "--scenarios", (lab / "scenarios").string(), "--json"});
  Json j(r.last_line());
  REQUIRE_MESSAGE(j.ok(), r.describe());
  return {std::move(r), std::move(j)};
}

// A refused package: setup exits 1, the others load, and the package is recorded as rejected
// with a reason holding `what`, never signed, its SHA256SUMS as committed.
void check_refused(const Lab& lab, const fs::path& pkg, const std::string& what, size_t others) {
  const std::string sums = read_file(pkg / "SHA256SUMS");
  SetupRun s = setup(lab);
  CHECK_MESSAGE(s.r.exit_code == 1, s.r.describe());
  CHECK(s.json.boolean("ok") == false);
  CHECK(s.json.u64("rejected") == 1u);
  CHECK(s.json.u64("loaded") == others);
  CHECK(s.json.u64("signed") == others);
  CHECK_MESSAGE(contains(s.r.out, "rejected " + pkg.string() + ": "), s.r.describe());
  CHECK_MESSAGE(contains(s.r.out, what), s.r.describe());
  CHECK_MESSAGE(contains(s.r.out, "aura scenario sign " + pkg.string()), s.r.describe());
  CHECK_FALSE(fs::exists(pkg / "package.sig.json"));
  CHECK(read_file(pkg / "SHA256SUMS") == sums);
  const auto rejected = registry_of_type(lab, aura::events::kScenarioRejected);
  REQUIRE(rejected.size() == 1);
  CHECK(rejected[0].dir == abs_dir(pkg));
  CHECK_MESSAGE(contains(rejected[0].reason, what), rejected[0].reason);
  for (const RegistryEvent& e : registry_of_type(lab, aura::events::kScenarioSigned)) {
    CHECK(e.dir != abs_dir(pkg));
  }
}

}  // namespace

TEST_CASE(
    "setup: the bundled packages as committed are signed, their SHA256SUMS kept, recorded and "
    "loaded; run again, they are kept as signed") {
  Lab lab(Lab::Keys::kNone);
  const fs::path scenarios = copy_bundled(lab);
  SetupRun first = setup(lab);
  REQUIRE_MESSAGE(first.r.exit_code == 0, first.r.describe());
  CHECK(first.json.u64("signed") == kBundled.size());
  CHECK(first.json.u64("kept") == 0u);
  CHECK(first.json.u64("loaded") == kBundled.size());
  const std::string publisher = first.json.str("publisher").value_or("?");

  const auto signings = registry_of_type(lab, aura::events::kScenarioSigned);
  REQUIRE(signings.size() == kBundled.size());
  for (size_t i = 0; i < kBundled.size(); ++i) {
    CAPTURE(kBundled[i]);
    const fs::path pkg = scenarios / kBundled[i];
    // The committed sums are what the signature covers, byte for byte.
    const std::string sums = read_file(pkg / "SHA256SUMS");
    CHECK(sums == read_file(bundled_source() / kBundled[i] / "SHA256SUMS"));
    CHECK(fs::exists(pkg / "package.sig.json"));
    const RegistryEvent& e = signings[i];
    CHECK(e.actor == "operator");
    CHECK(e.first_member == "v");
    CHECK(e.dir == abs_dir(pkg));
    CHECK(e.id == kBundled[i]);
    CHECK(e.command == "setup");
    CHECK(e.sums == "matched");
    CHECK(e.publisher == publisher);
    CHECK(e.package_digest == aura::to_hex(aura::sha256(sums)));
    CHECK(e.manifest_sha256 == aura::to_hex(aura::sha256(read_file(pkg / "manifest.json"))));
  }
  // Each scenario.loaded carries what its manifest requires of the machine, as the manifest
  // says it (the capability panel's labs come from it, docs/CAPABILITIES.md).
  const auto loaded = registry_of_type(lab, aura::events::kScenarioLoaded);
  REQUIRE(loaded.size() == kBundled.size());
  for (const RegistryEvent& e : loaded) {
    CAPTURE(e.id);
    Json manifest(read_file(scenarios / e.id / "manifest.json"));
    REQUIRE(manifest.ok());
    simdjson::dom::object declared;
    REQUIRE(manifest.root()["requires"].get(declared) == simdjson::SUCCESS);
    std::string capabilities = simdjson::minify(declared["capabilities"]);
    CHECK(e.requires_json == R"({"capabilities":)" + capabilities + R"(,"optional":[]})");
  }

  SetupRun again = setup(lab);
  REQUIRE_MESSAGE(again.r.exit_code == 0, again.r.describe());
  CHECK(again.json.u64("signed") == 0u);
  CHECK(again.json.u64("kept") == kBundled.size());
  CHECK(again.json.u64("loaded") == kBundled.size());
  CHECK_MESSAGE(contains(again.r.out, "kept     t0-config-drift"), again.r.describe());
  CHECK(registry_of_type(lab, aura::events::kScenarioSigned).size() == kBundled.size());
}

TEST_CASE(
    "setup: one changed byte in a bundled package's file refuses that package, naming the "
    "file, and leaves it unsigned; the other packages are signed and load") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = copy_bundled(lab) / kT0;
  const std::string file = a_listed_file(pkg);
  std::string bytes = read_file(pkg / file);
  REQUIRE_FALSE(bytes.empty());
  bytes[0] ^= 1;
  write_file(pkg / file, bytes);
  check_refused(lab, pkg, "changed file \"" + file + "\": its SHA-256 is ", kBundled.size() - 1);
}

TEST_CASE(
    "setup: a missing file or a file SHA256SUMS does not list refuses the package, naming it") {
  SUBCASE("missing") {
    Lab lab(Lab::Keys::kNone);
    const fs::path pkg = copy_bundled(lab, {kT0}) / kT0;
    const std::string file = a_listed_file(pkg);
    fs::remove(pkg / file);
    check_refused(lab, pkg, "missing file \"" + file + "\" (listed in SHA256SUMS)", 0);
  }
  SUBCASE("not listed") {
    Lab lab(Lab::Keys::kNone);
    const fs::path pkg = copy_bundled(lab, {kT0}) / kT0;
    write_file(pkg / "worlds" / "notes.txt", "an operator's note\n");
    check_refused(lab, pkg, "extra file \"worlds/notes.txt\" (not in SHA256SUMS)", 0);
  }
}

TEST_CASE(
    "setup: after 'aura scenario sign' of an edited bundled package, setup keeps and loads it, "
    "and the log records the signing with the signer") {
  Lab lab(Lab::Keys::kNone);
  const fs::path pkg = copy_bundled(lab, {kT0}) / kT0;
  const std::string file = a_listed_file(pkg);
  write_file(pkg / file, read_file(pkg / file) + "\n");
  REQUIRE(setup(lab).r.exit_code == 1);

  CliResult sign = lab.aura({"scenario", "sign", pkg.string(), "--json"});
  REQUIRE_MESSAGE(sign.exit_code == 0, sign.describe());
  Json signed_json(sign.last_line());
  CHECK(signed_json.boolean("recorded") == true);
  CHECK_MESSAGE(contains(sign.out, "recorded:  scenario.signed in lab/scenarios at seq "),
                sign.describe());
  CliResult key = lab.aura({"keys", "init-publisher", "--json"});  // keeps the setup's key
  REQUIRE_MESSAGE(key.exit_code == 0, key.describe());
  Json publisher(key.last_line());

  SetupRun s = setup(lab);
  REQUIRE_MESSAGE(s.r.exit_code == 0, s.r.describe());
  CHECK(s.json.u64("kept") == 1u);
  CHECK(s.json.u64("signed") == 0u);
  CHECK_MESSAGE(contains(s.r.out, "kept     t0-config-drift"), s.r.describe());

  const auto signings = registry_of_type(lab, aura::events::kScenarioSigned);
  REQUIRE(signings.size() == 1);
  const RegistryEvent& e = signings[0];
  CHECK(e.seq == signed_json.u64("seq"));
  CHECK(e.actor == "operator");
  CHECK(e.first_member == "v");
  CHECK(e.command == "scenario sign");
  CHECK(e.sums == "written");
  CHECK(e.dir == abs_dir(pkg));
  CHECK(e.id == kT0);
  CHECK(e.version == signed_json.str("version"));
  CHECK(e.package_digest == signed_json.str("package_digest"));
  CHECK(e.package_digest == aura::to_hex(aura::sha256(read_file(pkg / "SHA256SUMS"))));
  CHECK(e.manifest_sha256 == signed_json.str("manifest_sha256"));
  CHECK(e.publisher == publisher.str("name"));
  CHECK(e.publisher_key == publisher.str("public_key"));
  const auto loaded = registry_of_type(lab, aura::events::kScenarioLoaded);
  REQUIRE(loaded.size() == 1);
  CHECK(loaded[0].package_digest == e.package_digest);
}

TEST_CASE(
    "setup: the capability panel lists a lab per bundled package, available exactly when every "
    "capability its manifest requires was measured available") {
  Lab lab(Lab::Keys::kNone);
  copy_bundled(lab);
  SetupRun run = setup(lab);
  REQUIRE_MESSAGE(run.r.exit_code == 0, run.r.describe());
  CliResult show = lab.aura({"caps", "show", "--json"});
  REQUIRE_MESSAGE(show.exit_code == 0, show.describe());
  Json panel(show.last_line());
  REQUIRE(panel.ok());
  std::vector<std::string> available;
  for (auto c : panel.root()["capabilities"].get_array()) {
    if (c["available"].get_int64().value() != 0)
      available.emplace_back(c["name"].get_string().value());
  }
  std::vector<std::string> labs;
  for (auto row : panel.root()["labs"].get_array()) {
    const std::string id(row["lab"].get_string().value());
    CAPTURE(id);
    labs.push_back(id);
    Json manifest(read_file(lab / "scenarios" / id / "manifest.json"));
    REQUIRE(manifest.ok());
    CHECK(row["title"].get_string().value() == manifest.str("title").value_or("?"));
    std::vector<std::string> missing;
    for (auto need : manifest.root()["requires"]["capabilities"].get_array()) {
      const std::string name(need.get_string().value());
      if (std::find(available.begin(), available.end(), name) == available.end())
        missing.push_back(name);
    }
    CHECK((row["available"].get_int64().value() != 0) == missing.empty());
    for (const std::string& m : missing) {
      CHECK(std::string(row["reason"].get_string().value()).find(m) != std::string::npos);
    }
  }
  CHECK(labs == kBundled);  // ordered by lab id; no kernel lab without its package

  // `aura caps` judges the loaded scenarios against the measurement it has just made.
  CliResult measured = lab.aura({"caps", "--no-record"});
  REQUIRE_MESSAGE(measured.exit_code == 0, measured.describe());
  for (const std::string& id : kBundled) {
    CAPTURE(id);
    CHECK(contains(measured.out, "\n  " + id + " "));
  }
}
