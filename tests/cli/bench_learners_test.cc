// `aura bench learners` (issue 26, item 2) through the real binary: a small run (two t0
// learners, one O2 learner) prints every figure, each sane (counts positive, p50 <= p99, every
// gold walk VERIFIED), and leaves nothing of its lab: its folder removed, no process started
// in it, no name left in its leak ledger. No timing threshold: the figures are the bench's.
// E2e tier: root, real worlds (t0's file trees, O2's nodes with nginx).
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "tests/cli/cli_util.h"
#include "workers/sandbox/leak_ledger.h"

namespace fs = std::filesystem;
using namespace aura::testing;

namespace {

std::set<fs::path> bench_folders() { return entries_starting("/tmp", "aura-bench-learners-"); }

// The member `key` of the object `in` (a path of keys), as a number; nullopt when absent.
std::optional<double> number_at(const Json& j, std::initializer_list<const char*> path) {
  simdjson::dom::element e = j.root();
  for (const char* key : path) {
    if (e[key].get(e)) return std::nullopt;
  }
  double d = 0;
  if (e.get_double().get(d)) return std::nullopt;
  return d;
}

// Processes whose command line names `text`.
std::vector<std::string> processes_naming(const std::string& text) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it("/proc", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string pid = it->path().filename().string();
    if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
    if (pid == std::to_string(::getpid())) continue;
    std::ifstream in(it->path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(text) != std::string::npos) out.push_back(pid);
  }
  return out;
}

}  // namespace

TEST_CASE(
    "bench learners: a small run reports every figure, each sane, and leaves nothing of its "
    "lab") {
  REQUIRE_MESSAGE(::geteuid() == 0, "the e2e tier runs as root");
  const char* scenarios = std::getenv("AURA_SCENARIOS");
  REQUIRE_MESSAGE(scenarios != nullptr, "AURA_SCENARIOS is not set");
  const auto before = bench_folders();
  CliResult r =
      run_aura({"bench", "learners", "--learners", "2", "--o2", "1", "--seconds", "2",
                "--idle-seconds", "2", "--ramp-ms", "200", "--scenarios", scenarios, "--json"});
  REQUIRE_MESSAGE(r.exit_code == 0, r.describe());

  // The lab it ran: named on its first line, gone now.
  const std::string marker = "(a fresh lab in ";
  const size_t at = r.out.find(marker);
  REQUIRE_MESSAGE(at != std::string::npos, r.describe());
  const fs::path root = r.out.substr(at + marker.size(), r.out.find(';', at) - at - marker.size());
  CHECK_MESSAGE(!fs::exists(root), root << " is left");
  for (const auto& p : bench_folders()) CHECK_MESSAGE(before.contains(p), p << " is left");
  CHECK_MESSAGE(processes_naming(root.string()).empty(), "a process of " << root << " is left");
  auto entries = aura::sandbox::LeakLedger(root / "data" / "sandbox").entries();
  REQUIRE(entries.ok());
  for (const auto& e : *entries) {
    CHECK_MESSAGE(e.released, "a name of the lab is left: " << e.run_id << " " << e.path);
  }

  // The printed report: the comparison the issue asks for, stated against the aim.
  CHECK(r.out.find("memory per live world") != std::string::npos);
  CHECK(r.out.find("read p99 while O2 gates ran / idle: ") != std::string::npos);
  CHECK(r.out.find("(aim: at most 2x)") != std::string::npos);
  CHECK(r.out.find("gates: ") != std::string::npos);

  // Its copy as JSON.
  Json j(r.last_line());
  REQUIRE_MESSAGE(j.ok(), r.last_line());
  CHECK(j.u64("learners") == 2u);
  CHECK(j.u64("o2") == 1u);
  for (const char* phase : {"idle", "o2_gates"}) {
    for (const char* what : {"read", "probe"}) {
      CAPTURE(phase);
      CAPTURE(what);
      const auto n = number_at(j, {phase, what, "count"});
      const auto p50 = number_at(j, {phase, what, "p50_ms"});
      const auto p99 = number_at(j, {phase, what, "p99_ms"});
      REQUIRE((n && p50 && p99));
      CHECK(*n > 0);
      CHECK(*p50 > 0);
      CHECK(*p50 <= *p99);
    }
  }
  CHECK(number_at(j, {"o2_gates", "seconds"}).value_or(0) > 0);
  CHECK(j.number("read_p99_ratio").value_or(0) > 0);
  CHECK(j.boolean("aim_met").has_value());
  // Each learner walked at least one attempt to its end, every gate's verdict VERIFIED (the
  // package's gold walks).
  CHECK(number_at(j, {"attempts", "t0"}).value_or(0) >= 2);
  CHECK(number_at(j, {"attempts", "O2"}).value_or(0) >= 1);
  const double gates = j.number("gates").value_or(0);
  CHECK(gates >= 3);
  CHECK(number_at(j, {"verdicts", "VERIFIED"}).value_or(-1) == gates);
  CHECK(j.number("gates_per_min").value_or(0) > 0);
  CHECK(j.number("acks_again").has_value());
  CHECK(j.number("commands").value_or(0) > 0);
  CHECK(j.number("commands_per_s").value_or(0) > 0);
  CHECK(j.number("requests").value_or(0) >= j.number("commands").value_or(0));
  CHECK(number_at(j, {"queue", "queued"}).value_or(-1) <= gates);
  CHECK(number_at(j, {"gate", "t0", "p50_s"}).value_or(0) > 0);
  CHECK(number_at(j, {"gate", "O2", "p50_s"}).value_or(0) > 0);
  for (const char* kind : {"t0", "O2"}) {
    for (const char* command : {"create", "predict", "probe", "intervention", "apply", "ack",
                                "verify", "gate", "receipt", "reflect"}) {
      if (std::string(kind) == "O2" && std::string(command) != "gate" &&
          std::string(command) != "receipt" && std::string(command) != "reflect") {
        continue;  // the O2 learner's first walk to its gate was set-up, not the loaded phase
      }
      CAPTURE(kind);
      CAPTURE(command);
      const auto p50 = number_at(j, {"latencies", kind, command, "p50_ms"});
      const auto p99 = number_at(j, {"latencies", kind, command, "p99_ms"});
      REQUIRE((p50 && p99));
      CHECK(*p50 > 0);
      CHECK(*p50 <= *p99);
    }
  }
  // Memory, measured: one live O2 world (its node's group and processes), a t0 world's files.
  CHECK(number_at(j, {"memory", "O2", "worlds"}) == 1);
  CHECK(number_at(j, {"memory", "O2", "cgroups"}).value_or(0) >= 1);
  CHECK(number_at(j, {"memory", "O2", "processes"}).value_or(0) >= 1);
  CHECK(number_at(j, {"memory", "O2", "cgroup_bytes_per_world"}).value_or(0) > 0);
  CHECK(number_at(j, {"memory", "O2", "pss_bytes_per_world"}).value_or(0) > 0);
  CHECK(number_at(j, {"memory", "t0", "worlds"}).value_or(0) >= 1);
  CHECK(number_at(j, {"memory", "t0", "disk_bytes_per_world"}).value_or(0) > 0);
  CHECK(number_at(j, {"memory", "daemon_pss_bytes"}).value_or(0) > 0);
}
