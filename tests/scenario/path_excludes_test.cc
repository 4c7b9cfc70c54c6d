// A path parameter's `excludes`: prefixes under which a call is refused even when an allowed
// prefix covers the path (O1's file.write may change /srv/ but never the Ansible project under
// /srv/ansible/). Parsed by parse_manifest, enforced by the call validator.
#include <doctest/doctest.h>

#include <string>

#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "tests/scenario/sample_manifest.h"

using namespace aura;
using namespace aura::scenario;
using aura::testing::replace_one;
using aura::testing::sample_manifest;

namespace {

constexpr std::string_view kPath =
    R"("path": {"type": "path", "prefixes": ["/fleet/", "/nodes/"], "max_bytes": 256})";

// The sample with its first probe's path parameter given `excludes_json`.
Result<Manifest> with_excludes(std::string_view excludes_json) {
  return parse_manifest(replace_one(
      sample_manifest(), kPath,
      R"("path": {"type": "path", "prefixes": ["/fleet/", "/nodes/"], "max_bytes": 256, "excludes": )" +
          std::string(excludes_json) + "}"));
}

std::string read(std::string_view path) {
  return R"({"call":"file.read","params":{"path":")" + std::string(path) + R"("}})";
}

}  // namespace

TEST_CASE("path excludes: parsed in order; a sample without them has none") {
  auto plain = parse_manifest(sample_manifest());
  REQUIRE(plain.ok());
  CHECK(plain->probes[0].params[0].path_excludes.empty());
  auto m = with_excludes(R"(["/fleet/ansible/", "/nodes/keys/"])");
  REQUIRE_MESSAGE(m.ok(), m.status().message());
  CHECK(m->probes[0].params[0].path_excludes ==
        std::vector<std::string>{"/fleet/ansible/", "/nodes/keys/"});
}

TEST_CASE("path excludes: a malformed list is refused naming the entry") {
  struct Case {
    const char* json;
    const char* error;
  };
  for (const Case& c : {
           Case{R"([])", "probes[0].params.path.excludes: "},
           Case{R"(["fleet/x/"])", "probes[0].params.path.excludes[0]: \"fleet/x/\" must be"},
           Case{R"(["/fleet/x"])", "probes[0].params.path.excludes[0]: \"/fleet/x\" must be"},
           Case{R"(["/fleet/x/", "/fleet/x/"])",
                "probes[0].params.path.excludes[1]: \"/fleet/x/\" is listed twice"},
           Case{R"("/fleet/x/")", "probes[0].params.path.excludes: "},
       }) {
    CAPTURE(c.json);
    auto m = with_excludes(c.json);
    REQUIRE_FALSE(m.ok());
    CHECK_MESSAGE(m.status().message().find(c.error) != std::string::npos, m.status().message());
  }
}

TEST_CASE("path excludes: a path at or under an excluded prefix is refused, naming it") {
  auto m = with_excludes(R"(["/fleet/ansible/"])");
  REQUIRE(m.ok());
  auto call = [&](std::string_view path) {
    return parse_call(read(path), m->probes, *m, "probes[0]");
  };
  CHECK(call("/fleet/host_vars/web2.conf").ok());
  CHECK(call("/fleet/ansiblex/site.yml").ok());  // whole components: not under /fleet/ansible/
  for (std::string_view bad :
       {"/fleet/ansible/site.yml", "/fleet/ansible/roles/site/tasks/x.yml", "/fleet/ansible"}) {
    CAPTURE(bad);
    auto r = call(bad);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kInvalidArgument);
    CHECK(r.status().message() ==
          "probes[0]: params.path: \"" + std::string(bad) +
              "\" is under /fleet/ansible/, which this call may not change");
  }
  // Outside every allowed prefix stays the prefix error.
  auto r = call("/etc/passwd");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("is not under /fleet/, /nodes/") != std::string::npos);
}
