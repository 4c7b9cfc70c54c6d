// `aura keys init-publisher`, `aura scenario sign` and `aura scenario verify`, black-box.
#include <doctest/doctest.h>

#include "tests/cli/cli_util.h"
#include "tests/scenario/sample_manifest.h"

using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::Lab;
using aura::testing::read_file;
using aura::testing::write_file;
namespace fs = std::filesystem;

namespace {

void write_package(const fs::path& dir) {
  fs::create_directories(dir / "files");
  write_file(dir / "manifest.json", aura::testing::sample_manifest("example.hello"));
  write_file(dir / "files" / "hello.txt", "hello\n");
}

}  // namespace

TEST_CASE("scenario cli: init-publisher, sign and verify round trip; a changed file fails") {
  Lab lab;  // a lab, so that `sign --data` can record the signing
  const fs::path pkg = lab / "pkg";
  write_package(pkg);

  CliResult r = lab.aura({"scenario", "sign", pkg.string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("aura keys init-publisher") != std::string::npos, r.describe());

  r = lab.aura({"keys", "init-publisher", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json init(r.last_line());
  CHECK(init.boolean("created") == true);
  r = lab.aura({"keys", "init-publisher", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(Json(r.last_line()).boolean("created") == false);
  CHECK(Json(r.last_line()).str("public_key") == init.str("public_key"));

  r = lab.aura({"scenario", "sign", pkg.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json sign(r.last_line());
  REQUIRE(sign.ok());
  CHECK(sign.str("id") == "example.hello");
  CHECK(sign.boolean("recorded") == true);  // in the lab's log: scenario.signed

  r = lab.aura({"scenario", "verify", pkg.string(), "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  Json verify(r.last_line());
  CHECK(verify.boolean("ok") == true);
  CHECK(verify.str("package_digest") == sign.str("package_digest"));
  CHECK(verify.str("publisher") == init.str("name"));
  CHECK(r.out.find("sha256:" + *sign.str("package_digest")) != std::string::npos);

  write_file(pkg / "files" / "hello.txt", "tampered\n");
  r = lab.aura({"scenario", "verify", pkg.string(), "--json"});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("changed file \"files/hello.txt\"") != std::string::npos, r.describe());
  CHECK(Json(r.last_line()).boolean("ok") == false);
}

TEST_CASE("scenario cli: verify refuses a trust store inside the package, and a missing one") {
  Lab lab;
  const fs::path pkg = lab / "pkg";
  write_package(pkg);
  REQUIRE(lab.aura({"keys", "init-publisher"}).exit_code == 0);
  REQUIRE(lab.aura({"scenario", "sign", pkg.string()}).exit_code == 0);
  CliResult r = lab.aura({"scenario", "verify", pkg.string(), "--trust", (pkg / "files").string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("lies inside the package") != std::string::npos, r.describe());
  r = lab.aura({"scenario", "verify", pkg.string(), "--trust", (lab / "none").string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("not found") != std::string::npos, r.describe());
  // A key file inside the package is never used to sign it.
  fs::copy_file(lab.keys() / "publisher.key", pkg / "publisher.key");
  r = lab.aura({"scenario", "sign", pkg.string(), "--key", (pkg / "publisher.key").string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("lies inside the package") != std::string::npos, r.describe());
}

TEST_CASE(
    "scenario cli: sign without a data folder signs and records nothing; given a data folder it "
    "cannot record in, it signs nothing") {
  Lab lab(Lab::Keys::kNone);  // a publisher key only: no lab
  const fs::path pkg = lab / "pkg";
  write_package(pkg);
  REQUIRE(lab.aura({"keys", "init-publisher"}).exit_code == 0);

  // --data given, but no lab key to open its log with: refused before anything is signed.
  CliResult r = lab.aura({"scenario", "sign", pkg.string()});
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.err.find("nothing signed") != std::string::npos, r.describe());
  CHECK_MESSAGE(r.err.find("aura keys init") != std::string::npos, r.describe());
  CHECK_FALSE(fs::exists(pkg / "package.sig.json"));
  CHECK_FALSE(fs::exists(pkg / "SHA256SUMS"));

  // No --data and no ./var/aura: a publisher signing outside any lab.
  aura::testing::CliOptions in_root;
  in_root.cwd = lab.root();
  r = aura::testing::run_aura(
      {"scenario", "sign", pkg.string(), "--keys", lab.keys().string(), "--json"}, in_root);
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(Json(r.last_line()).boolean("recorded") == false);
  CHECK_MESSAGE(r.out.find("not recorded: no data folder at var/aura") != std::string::npos,
                r.describe());
  CHECK(fs::exists(pkg / "package.sig.json"));
  CHECK_FALSE(fs::exists(lab / "var"));
  CHECK_FALSE(fs::exists(lab.data()));
}
