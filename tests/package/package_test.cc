#include "engine/package/package.h"

#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "engine/scenario/scenario_package.h"
#include "engine/sign/dsse_format.h"
#include "tests/package/package_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::testing;
namespace fs = std::filesystem;

namespace {

// A signed sample package in a fresh folder, with its signer and a trust store holding it.
struct Signed {
  TempDir tmp;
  fs::path dir = tmp.path() / "pkg";
  NoteSigner signer = fresh_signer("aura.publisher/test");
  TrustStore trust = trust_of({signer.verifier()});

  Signed() {
    write_sample_tree(dir);
    auto s = sign_package(dir, signer);
    REQUIRE_MESSAGE(s.ok(), s.status().message());
  }
};

// The files forge() should cover for the sample tree.
const std::vector<std::string> kSampleFiles = {"README.md", "files/deep/probe.sh",
                                               "files/hello.txt", "manifest.json"};

}  // namespace

TEST_CASE("package: sign then load returns the exact manifest bytes, fields, files and digest") {
  Signed p;
  auto loaded = load_package(p.dir, p.trust);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(loaded->id == "net.dns-outage");
  CHECK(loaded->version == "2.1.0-rc.1");
  CHECK(loaded->family == "network");
  CHECK(loaded->title == "DNS outage on the primary");
  CHECK(loaded->manifest_bytes == read_file(p.dir / "manifest.json"));
  CHECK(loaded->package_digest == sha256(read_file(p.dir / "SHA256SUMS")));
  CHECK(loaded->publisher == "aura.publisher/test");
  CHECK(loaded->publisher_key == p.signer.verifier());
  REQUIRE(loaded->files.size() == kSampleFiles.size());
  for (size_t i = 0; i < kSampleFiles.size(); ++i) {
    CHECK(loaded->files[i].path == kSampleFiles[i]);
    const std::string bytes = read_file(p.dir / kSampleFiles[i]);
    CHECK(loaded->files[i].sha256 == sha256(bytes));
    CHECK(loaded->files[i].bytes == bytes.size());
  }
}

TEST_CASE("package: the documented test vector signs to the documented bytes and loads") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "hello";
  write_vector_tree(dir);
  const NoteSigner signer = vector_signer();
  CHECK(format_verifier_key(signer.verifier()) ==
        "aura.publisher/example+02e60056+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4");
  auto s = sign_package(dir, signer);
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  CHECK(kVectorManifest.size() == 819);
  CHECK(read_file(dir / "SHA256SUMS") ==
        "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03  files/hello.txt\n"
        "1ced3c7cdd6eed325713f4c6d8b579916b59be5b0419404ec526a02c42db82e0  manifest.json\n");
  CHECK(to_hex(s->manifest_sha256) ==
        "1ced3c7cdd6eed325713f4c6d8b579916b59be5b0419404ec526a02c42db82e0");
  CHECK(to_hex(s->package_digest) ==
        "d2fa4f70794fad43438a7719221063384722a7491bb4e6b3d15fbbeca5d3396e");
  CHECK(package_payload_json("example.hello", "1.0.0", s->manifest_sha256, s->package_digest) ==
        R"({"version":1,"id":"example.hello","package_version":"1.0.0",)"
        R"("manifest_sha256":"1ced3c7cdd6eed325713f4c6d8b579916b59be5b0419404ec526a02c42db82e0",)"
        R"("sums_sha256":"d2fa4f70794fad43438a7719221063384722a7491bb4e6b3d15fbbeca5d3396e"})");
  CHECK(read_file(dir / "package.sig.json") ==
        R"({"payloadType":"application/vnd.aura.package+json","payload":"eyJ2ZXJzaW9uIjoxLCJpZCI6)"
        R"(ImV4YW1wbGUuaGVsbG8iLCJwYWNrYWdlX3ZlcnNpb24iOiIxLjAuMCIsIm1hbmlmZXN0X3NoYTI1NiI6IjFjZW)"
        R"(QzYzdjZGQ2ZWVkMzI1NzEzZjRjNmQ4YjU3OTkxNmI1OWJlNWIwNDE5NDA0ZWM1MjZhMDJjNDJkYjgyZTAiLCJz)"
        R"(dW1zX3NoYTI1NiI6ImQyZmE0ZjcwNzk0ZmFkNDM0MzhhNzcxOTIyMTA2MzM4NDcyMmE3NDkxYmI0ZTZiM2QxNW)"
        R"(ZiYmVjYTVkMzM5NmUifQ==","signatures":[{"keyid":"aura.publisher/example+02e60056","sig")"
        R"(:"VXY3/2TN39IM/8wyqCjKf4pY7FKoKfoR4xhHxwwaPbI3DDmtZTiNNIqcbxsn7hLT0QPXpc4/VC6GDwoNkbM1)"
        R"(DQ=="}]})");
  auto loaded = load_package(dir, trust_of({signer.verifier()}));
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(to_hex(loaded->package_digest) ==
        "d2fa4f70794fad43438a7719221063384722a7491bb4e6b3d15fbbeca5d3396e");
}

TEST_CASE("package load: a changed shipped file is refused, naming the file") {
  Signed p;
  write_file(p.dir / "files" / "deep" / "probe.sh", "#!/bin/sh\necho pwned\n");
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "changed file \"files/deep/probe.sh\""), m);
}

TEST_CASE("package load: a changed manifest.json is refused as a changed file") {
  Signed p;
  std::string manifest = read_file(p.dir / "manifest.json");
  manifest.replace(manifest.find("DNS outage"), 3, "NTP");
  write_file(p.dir / "manifest.json", manifest);
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "changed file \"manifest.json\""), m);
}

TEST_CASE("package load: an edited SHA256SUMS is refused as a digest mismatch") {
  Signed p;
  // Re-list a changed file with its new digest: SHA256SUMS is then self-consistent, but is
  // no longer the signed one.
  write_file(p.dir / "README.md", "# changed\n");
  std::vector<PackageFile> listed;
  for (const auto& f : kSampleFiles) listed.push_back({f, sha256(read_file(p.dir / f)), 0});
  write_file(p.dir / "SHA256SUMS", format_sha256sums(listed));
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "SHA256SUMS digest mismatch"), m);
  CHECK_MESSAGE(contains(m, "does not match the signature"), m);
}

TEST_CASE("package load: a signature by a key not in the trust store is refused as unknown") {
  Signed p;
  const NoteSigner stranger = fresh_signer("aura.publisher/stranger");
  const std::string m = load_error(p.dir, trust_of({stranger.verifier()}));
  CHECK_MESSAGE(contains(m, "unknown key"), m);
  CHECK_MESSAGE(contains(m, "aura.publisher/test+"), m);
  // An empty trust store trusts nothing.
  const std::string empty = load_error(p.dir, TrustStore());
  CHECK_MESSAGE(contains(empty, "unknown key"), empty);
  CHECK_MESSAGE(contains(empty, "holds no keys"), empty);
}

TEST_CASE("package load: a second trusted key still verifies, and is named as the publisher") {
  Signed p;
  const NoteSigner other = fresh_signer("aura.publisher/other");
  auto loaded = load_package(p.dir, trust_of({other.verifier(), p.signer.verifier()}));
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(loaded->publisher == "aura.publisher/test");
  // Re-signed by the other key, it loads with the same trust store, naming that key.
  REQUIRE(sign_package(p.dir, other).ok());
  auto again = load_package(p.dir, trust_of({other.verifier(), p.signer.verifier()}));
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(again->publisher == "aura.publisher/other");
  CHECK(again->package_digest == loaded->package_digest);  // same tree, same sums
}

TEST_CASE("package load: a bad signature by a trusted key is refused as a bad signature") {
  Signed p;
  std::string env = read_file(p.dir / "package.sig.json");
  const size_t at = env.find("\"sig\":\"") + 7;
  env[at] = env[at] == 'A' ? 'B' : 'A';
  write_file(p.dir / "package.sig.json", env);
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "bad signature"), m);
}

TEST_CASE("package load: an unsigned package is refused as not signed") {
  Signed p;
  fs::remove(p.dir / "package.sig.json");
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "package.sig.json is missing"), m);
  CHECK_MESSAGE(contains(m, "not signed"), m);
}

TEST_CASE("package load: an extra file is refused, naming it") {
  for (const std::string extra : {"zz-extra.txt", "files/deep/extra.sh", "A-first"}) {
    CAPTURE(extra);
    Signed p;
    write_file(p.dir / extra, "surprise\n");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "extra file \"" + extra + "\""), m);
  }
}

TEST_CASE("package load: a missing file is refused, naming it") {
  for (const std::string gone : {"README.md", "files/hello.txt", "manifest.json"}) {
    CAPTURE(gone);
    Signed p;
    fs::remove(p.dir / gone);
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "missing file \"" + gone + "\""), m);
  }
}

TEST_CASE("package load: a symlink is refused, even one standing in for a listed file") {
  {
    Signed p;
    fs::create_symlink("/etc/passwd", p.dir / "files" / "link");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "symlink \"files/link\""), m);
  }
  {
    // Same bytes behind a symlink: still refused.
    Signed p;
    fs::rename(p.dir / "README.md", p.tmp.path() / "README.md");
    fs::create_symlink(p.tmp.path() / "README.md", p.dir / "README.md");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "symlink \"README.md\""), m);
  }
  {
    Signed p;
    fs::create_symlink(p.tmp.path(), p.dir / "files" / "up");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "symlink \"files/up\""), m);
  }
  {
    Signed p;  // the signature file itself
    fs::rename(p.dir / "package.sig.json", p.tmp.path() / "sig");
    fs::create_symlink(p.tmp.path() / "sig", p.dir / "package.sig.json");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "package.sig.json is a symlink"), m);
  }
}

TEST_CASE("package load: a special file (FIFO) is refused, naming it") {
  Signed p;
  REQUIRE(::mkfifo((p.dir / "files" / "pipe").c_str(), 0644) == 0);
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "special file \"files/pipe\""), m);
}

TEST_CASE("package load: a file with an unsafe name is refused, naming it") {
  Signed p;
  write_file(p.dir / "files" / "bad name;rm", "x");
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "unsafe path \"files/bad name;rm\""), m);
}

TEST_CASE("package sums: unsafe, unsorted, duplicate and malformed lines are refused") {
  const std::string h(64, 'a');
  struct Case {
    std::string text, reason;
  };
  for (const Case& c : {
           Case{h + "  ../../etc/shadow\n", "unsafe path"},
           Case{h + "  /etc/shadow\n", "unsafe path"},
           Case{h + "  a//b\n", "unsafe path"},
           Case{h + "  ./a\n", "unsafe path"},
           Case{h + "  a/\n", "unsafe path"},
           Case{h + "  b\n" + h + "  a\n", "out of order"},
           Case{h + "  a\n" + h + "  a\n", "repeated"},
           Case{h + " a\n", "not \"<64 lowercase hex>  <path>\""},
           Case{std::string(64, 'A') + "  a\n", "not \"<64 lowercase hex>  <path>\""},
           Case{h + "  a", "newline"},
           Case{h + "  SHA256SUMS\n", "never covered"},
           Case{h + "  package.sig.json\n", "never covered"},
       }) {
    CAPTURE(c.text);
    auto r = parse_sha256sums(c.text);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), c.reason), r.status().message());
  }
  auto ok = parse_sha256sums(h + "  a/b\n" + h + "  a0\n" + h + "  sub/SHA256SUMS\n");
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  CHECK(ok->size() == 3);
}

TEST_CASE("package load: a SHA256SUMS listing an escaping path is refused, though signed") {
  Signed p;
  forge(p.dir, kSampleFiles, p.signer, "net.dns-outage", "2.1.0-rc.1");
  std::string sums = read_file(p.dir / "SHA256SUMS");
  sums.replace(sums.find("README.md"), 9, "../../etc/x");
  write_file(p.dir / "SHA256SUMS", sums);
  // Re-sign a payload over those exact sums.
  const std::string payload = package_payload_json(
      "net.dns-outage", "2.1.0-rc.1", sha256(read_file(p.dir / "manifest.json")), sha256(sums));
  write_file(p.dir / "package.sig.json",
             dsse_sign(package_format::kPayloadType, payload, p.signer));
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "unsafe path \"../../etc/x\""), m);
}

TEST_CASE("package load: an envelope signed for another payload type is refused") {
  Signed p;
  forge(p.dir, kSampleFiles, p.signer, "net.dns-outage", "2.1.0-rc.1",
        dsse_format::kPayloadTypeSnapshot);
  const std::string m = load_error(p.dir, p.trust);
  CHECK_MESSAGE(contains(m, "wrong payload type"), m);
  CHECK_MESSAGE(contains(m, "application/vnd.aura.snapshot+json"), m);
}

TEST_CASE("package load: a payload naming another id or version is refused") {
  {
    Signed p;
    forge(p.dir, kSampleFiles, p.signer, "net.other", "2.1.0-rc.1");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "names id \"net.other\" but manifest.json has id \"net.dns-outage\""),
                  m);
  }
  {
    Signed p;
    forge(p.dir, kSampleFiles, p.signer, "net.dns-outage", "9.9");
    const std::string m = load_error(p.dir, p.trust);
    CHECK_MESSAGE(contains(m, "names package_version \"9.9\""), m);
  }
}

TEST_CASE("package load: a signed manifest that is invalid is refused, naming the field") {
  struct Case {
    std::string manifest, reason;
  };
  for (const Case& c : {
           Case{"[1,2,3]", "manifest.json: not a JSON object"},
           Case{"\"id\"", "manifest.json: not a JSON object"},
           Case{"{\"id\":", "manifest.json: does not parse as JSON"},
           Case{R"({"version":"1","family":"f","title":"t"})",
                "manifest.json: missing required field \"id\""},
           Case{R"({"id":"Bad_ID","version":"1","family":"f","title":"t"})",
                "manifest.json: field \"id\" is \"Bad_ID\"; it must match"},
           Case{R"({"id":7,"version":"1","family":"f","title":"t"})",
                "manifest.json: field \"id\" is not a string"},
           Case{R"({"id":"a","version":"1 0","family":"f","title":"t"})",
                "manifest.json: field \"version\" is \"1 0\""},
           Case{R"({"id":"a","version":"1","title":"t"})",
                "manifest.json: missing required field \"family\""},
           Case{R"({"id":"a","version":"1","family":"f","title":""})",
                "manifest.json: field \"title\" is \"\""},
           Case{R"({"id":"a","version":"1","family":"f","title":"t","id":"b"})",
                "manifest.json: duplicate field \"id\""},
       }) {
    CAPTURE(c.manifest);
    TempDir tmp;
    const fs::path dir = tmp.path() / "pkg";
    write_file(dir / "manifest.json", c.manifest);
    const NoteSigner signer = fresh_signer("aura.publisher/test");
    forge(dir, {"manifest.json"}, signer, "a", "1");
    const std::string m = load_error(dir, trust_of({signer.verifier()}));
    CHECK_MESSAGE(contains(m, c.reason), m);
    // sign_package refuses to sign it in the first place.
    auto s = sign_package(dir, signer);
    REQUIRE_FALSE(s.ok());
    CHECK_MESSAGE(contains(s.status().message(), c.reason), s.status().message());
  }
}

TEST_CASE(
    "scenario package load: a signed manifest outside the full schema is refused, naming its "
    "path") {
  struct Case {
    std::string from, to, reason;
  };
  const std::string valid = sample_manifest("a", "1");
  for (const Case& c : {
           Case{R"("schema": 1,)", R"("schema": 1, "colour": "red",)",
                "manifest.json: colour: unknown member"},
           Case{R"("cost": 1,)", R"("cost": 1, "timeout_ms": 5,)",
                "manifest.json: probes[0].timeout_ms: unknown member"},
           Case{R"("role": "control")", R"("role": "twin")",
                "manifest.json: worlds: needs exactly one world with role \"control\""},
           Case{R"("prefixes": ["/srv/"])", R"("prefixes": ["srv/"])",
                "manifest.json: actions[1].params.path.prefixes[0]: \"srv/\" must be absolute"},
       }) {
    CAPTURE(c.to);
    TempDir tmp;
    const fs::path dir = tmp.path() / "pkg";
    write_file(dir / "manifest.json", replace_one(valid, c.from, c.to));
    const NoteSigner signer = fresh_signer("aura.publisher/test");
    forge(dir, {"manifest.json"}, signer, "a", "1");
    const TrustStore trust = trust_of({signer.verifier()});
    // The package layer checks its own fields only; the scenario layer adds the full schema.
    CHECK(load_package(dir, trust).ok());
    auto loaded = scenario::load_scenario_package(dir, trust);
    REQUIRE_FALSE(loaded.ok());
    const std::string m = loaded.status().message();
    CHECK_MESSAGE(contains(m, "package " + dir.string() + ": " + c.reason), m);
    auto s = scenario::sign_scenario_package(dir, signer);
    REQUIRE_FALSE(s.ok());
    CHECK_MESSAGE(contains(s.status().message(), c.reason), s.status().message());
  }
  // The unchanged manifest signs and loads.
  TempDir tmp;
  write_file(tmp.path() / "manifest.json", valid);
  const NoteSigner signer = fresh_signer("aura.publisher/test");
  REQUIRE(scenario::sign_scenario_package(tmp.path(), signer).ok());
  auto loaded = scenario::load_scenario_package(tmp.path(), trust_of({signer.verifier()}));
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(loaded->manifest_bytes == valid);
}

TEST_CASE("package manifest header: reads id, version, family and title, whatever else is there") {
  auto h = parse_manifest_header(
      R"({"briefing":"x","id":"a.b-c_d","version":"1.0+build.5","family":"f","title":"T",)"
      R"("worlds":[1,{"x":null}]})");
  REQUIRE_MESSAGE(h.ok(), h.status().message());
  CHECK(h->id == "a.b-c_d");
  CHECK(h->version == "1.0+build.5");
}

TEST_CASE("package ids and versions: the documented patterns, bounds included") {
  CHECK(is_valid_package_id("a"));
  CHECK(is_valid_package_id("0net.dns-outage_2"));
  CHECK(is_valid_package_id(std::string(64, 'a')));
  CHECK_FALSE(is_valid_package_id(std::string(65, 'a')));
  CHECK_FALSE(is_valid_package_id(""));
  CHECK_FALSE(is_valid_package_id(".a"));
  CHECK_FALSE(is_valid_package_id("-a"));
  CHECK_FALSE(is_valid_package_id("A"));
  CHECK_FALSE(is_valid_package_id("a/b"));
  CHECK(is_valid_package_version("1"));
  CHECK(is_valid_package_version(std::string(32, '9')));
  CHECK_FALSE(is_valid_package_version(std::string(33, '9')));
  CHECK_FALSE(is_valid_package_version(""));
  CHECK_FALSE(is_valid_package_version("1_0"));
}

TEST_CASE("package sign: refuses symlinks, special files, unsafe names and no manifest") {
  TempDir tmp;
  const fs::path dir = tmp.path() / "pkg";
  const NoteSigner signer = fresh_signer("aura.publisher/test");
  write_vector_tree(dir);
  fs::create_symlink("/etc/passwd", dir / "files" / "link");
  auto r = sign_package(dir, signer);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(contains(r.status().message(), "symlink \"files/link\""), r.status().message());
  CHECK_FALSE(fs::exists(dir / "SHA256SUMS"));  // nothing written
  fs::remove(dir / "files" / "link");

  REQUIRE(::mkfifo((dir / "fifo").c_str(), 0644) == 0);
  r = sign_package(dir, signer);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(contains(r.status().message(), "special file \"fifo\""), r.status().message());
  fs::remove(dir / "fifo");

  write_file(dir / "has space", "x");
  r = sign_package(dir, signer);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(contains(r.status().message(), "unsafe path \"has space\""), r.status().message());
  fs::remove(dir / "has space");

  fs::remove(dir / "manifest.json");
  r = sign_package(dir, signer);
  REQUIRE_FALSE(r.ok());
  CHECK_MESSAGE(contains(r.status().message(), "manifest.json is missing"), r.status().message());
  CHECK_FALSE(fs::exists(dir / "package.sig.json"));
}

TEST_CASE("package sign: signing again after a change replaces the sums and signature") {
  Signed p;
  const std::string old_sums = read_file(p.dir / "SHA256SUMS");
  write_file(p.dir / "files" / "new.txt", "new\n");
  CHECK(contains(load_error(p.dir, p.trust), "extra file \"files/new.txt\""));
  auto s = sign_package(p.dir, p.signer);
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  CHECK(read_file(p.dir / "SHA256SUMS") != old_sums);
  auto loaded = load_package(p.dir, p.trust);
  REQUIRE_MESSAGE(loaded.ok(), loaded.status().message());
  CHECK(loaded->files.size() == kSampleFiles.size() + 1);
  // No temporary files are left behind.
  for (const auto& e : fs::directory_iterator(p.dir)) {
    CHECK_MESSAGE(e.path().filename().string()[0] != '.', e.path());
  }
}

TEST_CASE("package limits: an oversize manifest, too many files and too many bytes are refused") {
  const NoteSigner signer = fresh_signer("aura.publisher/test");
  {
    TempDir tmp;
    const fs::path dir = tmp.path() / "pkg";
    std::string big = R"({"id":"a","version":"1","family":"f","title":"t","pad":")";
    big += std::string(package_format::kMaxManifestBytes, 'x') + "\"}";
    write_file(dir / "manifest.json", big);
    auto r = sign_package(dir, signer);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), "more than the 1048576 allowed"),
                  r.status().message());
    forge(dir, {"manifest.json"}, signer, "a", "1");
    const std::string m = load_error(dir, trust_of({signer.verifier()}));
    CHECK_MESSAGE(contains(m, "more than the 1048576 allowed"), m);
  }
  {
    TempDir tmp;
    const fs::path dir = tmp.path() / "pkg";
    write_vector_tree(dir);
    for (size_t i = 0; i < package_format::kMaxFiles; ++i) {
      std::ofstream(dir / ("f" + std::to_string(i)));
    }
    auto r = sign_package(dir, signer);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), "more than 10000 files"), r.status().message());
  }
  {
    // A sparse file just over the total: refused from its size, before it is read.
    TempDir tmp;
    const fs::path dir = tmp.path() / "pkg";
    write_vector_tree(dir);
    write_file(dir / "big.img", "");
    fs::resize_file(dir / "big.img", package_format::kMaxTotalBytes);
    auto r = sign_package(dir, signer);
    REQUIRE_FALSE(r.ok());
    CHECK_MESSAGE(contains(r.status().message(), "files total more than 268435456 bytes"),
                  r.status().message());
  }
}

TEST_CASE(
    "package sign: only_if_sums_match signs a tree that matches its SHA256SUMS, keeping its "
    "bytes") {
  Signed p;
  const std::string sums = read_file(p.dir / "SHA256SUMS");
  fs::remove(p.dir / "package.sig.json");
  const NoteSigner other = fresh_signer("aura.publisher/other");
  auto s = sign_package(p.dir, other, {.only_if_sums_match = true});
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  CHECK(read_file(p.dir / "SHA256SUMS") == sums);
  CHECK(s->package_digest == sha256(sums));
  CHECK(load_package(p.dir, trust_of({other.verifier()})).ok());
}

TEST_CASE(
    "package sign: only_if_sums_match refuses a changed, missing or unlisted file, naming it, "
    "and writes nothing") {
  struct Case {
    const char* what;
    std::function<void(const fs::path&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"changed", [](const fs::path& d) { write_file(d / "files" / "hello.txt", "hellO\n"); },
       "changed file \"files/hello.txt\": its SHA-256 is "},
      {"changed manifest",
       [](const fs::path& d) {
         write_file(d / "manifest.json", read_file(d / "manifest.json") + " ");
       },
       "changed file \"manifest.json\""},
      {"missing", [](const fs::path& d) { fs::remove(d / "files" / "deep" / "probe.sh"); },
       "missing file \"files/deep/probe.sh\" (listed in SHA256SUMS)"},
      {"unlisted", [](const fs::path& d) { write_file(d / "files" / "extra.txt", "x\n"); },
       "extra file \"files/extra.txt\" (not in SHA256SUMS)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    Signed p;
    fs::remove(p.dir / "package.sig.json");
    const std::string sums = read_file(p.dir / "SHA256SUMS");
    c.edit(p.dir);
    auto s = sign_package(p.dir, p.signer, {.only_if_sums_match = true});
    REQUIRE_FALSE(s.ok());
    CHECK(s.status().code() == ErrorCode::kCorruption);
    CHECK_MESSAGE(contains(s.status().message(), c.message), s.status().message());
    CHECK(read_file(p.dir / "SHA256SUMS") == sums);
    CHECK_FALSE(fs::exists(p.dir / "package.sig.json"));
  }
}

TEST_CASE("package sign: only_if_sums_match refuses a package without a SHA256SUMS") {
  TempDir tmp;
  write_sample_tree(tmp.path());
  auto s =
      sign_package(tmp.path(), fresh_signer("aura.publisher/test"), {.only_if_sums_match = true});
  REQUIRE_FALSE(s.ok());
  CHECK(s.status().code() == ErrorCode::kNotFound);
  CHECK_MESSAGE(contains(s.status().message(), "SHA256SUMS is missing"), s.status().message());
  CHECK_FALSE(fs::exists(tmp.path() / "SHA256SUMS"));
  CHECK_FALSE(fs::exists(tmp.path() / "package.sig.json"));
}
