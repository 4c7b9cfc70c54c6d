// `aura caps` through the real binary: the JSON panel, the recorded event, and `aura caps show`
// answering from the capabilities projection.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tests/cli/cli_util.h"

using aura::testing::CliResult;
using aura::testing::Json;
using aura::testing::Lab;

TEST_CASE("cli caps: --json --no-record prints the panel and records nothing") {
  Lab lab;
  CliResult r = lab.aura({"caps", "--json", "--no-record"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("sched_ext") != std::string::npos);
  CHECK(r.out.find("\nlabs (the scenarios loaded in --data)\n") != std::string::npos);
  CHECK(r.out.find("no scenario loaded") != std::string::npos);
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.root()["ok"].get_bool().value());
  std::set<std::string> names;
  for (auto c : j.root()["capabilities"].get_array()) {
    simdjson::dom::object o = c.get_object();
    CHECK(o.size() == 3);
    names.insert(std::string(o["name"].get_string().value()));
    bool available = false;
    CHECK(o["available"].get(available) == simdjson::SUCCESS);
    CHECK_FALSE(o["reason"].get_string().value().empty());
  }
  for (const char* n :
       {"ns_user", "ns_mount", "ns_pid", "ns_net", "ns_ipc", "ns_uts", "overlayfs", "seccomp",
        "bpf", "btf", "bpf_ringbuf", "sched_ext", "kvm", "cgroups", "cgroup_v1_memory", "cgroup_v2",
        "tool_nginx", "tool_ansible-playbook", "tool_bwrap"}) {
    CAPTURE(n);
    CHECK(names.count(n) == 1);
  }
  CHECK_FALSE(std::filesystem::exists(lab.data() / "log"));
}

TEST_CASE("cli caps: records one capabilities.measured event that caps show reads back") {
  Lab lab;
  CliResult r = lab.aura({"caps", "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());
  CHECK(r.out.find("recorded as seq 1 (capabilities.measured, stream lab/capabilities)") !=
        std::string::npos);
  CHECK(*lab.head().u64("head_seq") == 1);
  Json measured(r.last_line());
  REQUIRE(measured.ok());

  CliResult show = lab.aura({"caps", "show", "--json"});
  REQUIRE_MESSAGE(show.exit_code == 0, show.describe());
  Json shown(show.last_line());
  REQUIRE(shown.ok());
  // Every measured capability is in the projection with the same availability and reason.
  size_t n = 0;
  for (auto c : measured.root()["capabilities"].get_array()) {
    ++n;
    const std::string_view name = c["name"].get_string().value();
    bool found = false;
    for (auto row : shown.root()["capabilities"].get_array()) {
      if (row["name"].get_string().value() != name) continue;
      found = true;
      CHECK((row["available"].get_int64().value() != 0) == c["available"].get_bool().value());
      CHECK(row["reason"].get_string().value() == c["reason"].get_string().value());
    }
    CAPTURE(name);
    CHECK(found);
  }
  CHECK(shown.root()["capabilities"].get_array().size() == n);
  // Labs are the scenarios loaded in the data folder (docs/CAPABILITIES.md): none here.
  CHECK(shown.root()["labs"].get_array().size() == 0);
  CHECK(show.out.find("no scenario loaded") != std::string::npos);
}

TEST_CASE("cli caps: --help documents both commands") {
  CliResult h = aura::testing::run_aura({"caps", "--help"});
  CHECK(h.exit_code == 0);
  CHECK(h.out.find("usage: aura caps") != std::string::npos);
  CHECK(h.out.find("--no-record") != std::string::npos);
  CliResult s = aura::testing::run_aura({"caps", "show", "--help"});
  CHECK(s.exit_code == 0);
  CHECK(s.out.find("usage: aura caps show") != std::string::npos);
}
