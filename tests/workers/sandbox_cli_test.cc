// `aura sandbox run` black-box: the command's output passes through, the facts are printed
// (stderr, or the last JSON line), the exit status is the command's, 125 when the sandbox
// refuses, 2 on usage errors; the data and keys folders are not visible inside.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "engine/events/event_types.h"
#include "tests/cli/cli_util.h"
#include "workers/sandbox/leak_ledger.h"

using namespace aura::testing;

namespace {

// `aura sandbox run FLAGS... --data DATA --keys KEYS -- CMD...` (Lab::aura would put the folder
// flags after `--`, where they belong to the command).
CliResult sandbox_run(const Lab& lab, std::vector<std::string> flags,
                      const std::vector<std::string>& cmd) {
  std::vector<std::string> args{"sandbox", "run"};
  args.insert(args.end(), flags.begin(), flags.end());
  args.insert(args.end(), {"--data", lab.data().string(), "--keys", lab.keys().string(), "--"});
  args.insert(args.end(), cmd.begin(), cmd.end());
  return run_aura(args);
}

}  // namespace

TEST_CASE("aura sandbox run: output, facts and exit status") {
  Lab lab;
  CliResult r = sandbox_run(lab, {"--json"}, {"/bin/sh", "-c", "id -u; exit 3"});
  CHECK_MESSAGE(r.exit_code == 3, r.describe());
  CHECK(r.out.rfind("0\n", 0) == 0);  // root inside (mapped to an unprivileged uid outside)
  Json j(r.last_line());
  REQUIRE(j.ok());
  CHECK(j.boolean("ok") == true);
  CHECK(r.last_line().find(R"("exit_code":3)") != std::string::npos);
  CHECK(r.last_line().find(R"("profile":"probe")") != std::string::npos);
  CHECK(r.last_line().find(R"("killed_by_deadline":false)") != std::string::npos);

  r = sandbox_run(lab, {"--deadline-ms", "300"}, {"/bin/sleep", "30"});
  CHECK_MESSAGE(r.exit_code == 137, r.describe());
  CHECK(r.err.find("killed at the deadline") != std::string::npos);

  r = sandbox_run(lab, {}, {"/bin/ls", lab.data().string(), lab.keys().string()});
  CHECK(r.exit_code != 0);
  CHECK(r.err.find("No such file or directory") != std::string::npos);
}

TEST_CASE("aura sandbox run: refusals") {
  Lab lab;
  CliResult r = sandbox_run(lab, {}, {"bin/true"});
  CHECK(r.exit_code == 125);
  CHECK(r.err.find("absolute path") != std::string::npos);
  r = sandbox_run(lab, {"--profile", "nope"}, {"/bin/true"});
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("probe") != std::string::npos);
  r = lab.aura({"sandbox", "run"});
  CHECK(r.exit_code == 2);
}

TEST_CASE("aura worker: reaps what a dead process left, records it and the capabilities") {
  Lab lab;
  // A stage folder recorded by a process that is gone (pid 1 with another start time).
  const std::filesystem::path state = lab.data() / "sandbox";
  const std::filesystem::path left = state / "runs" / "deadbeefdeadbeef";
  std::filesystem::create_directories(left);
  REQUIRE(aura::sandbox::LeakLedger(state, "1.1")
              .record("deadbeefdeadbeef", aura::sandbox::ResourceKind::kDir, left)
              .is_ok());
  CliResult r = lab.aura({"worker", "--json"});
  CHECK_MESSAGE(r.exit_code == 0, r.describe());
  CHECK_FALSE(std::filesystem::exists(left));
  CHECK(r.last_line().find(R"("reaped":{"runs":1,"paths":1,)") != std::string::npos);
  CHECK(r.out.find("capabilities: ") != std::string::npos);
  // Both facts are events: the reap and the measurement.
  r = lab.aura({"log", "tail", "--json"});
  CHECK(r.out.find(aura::events::kSupervisorReaped) != std::string::npos);
  CHECK(r.out.find(aura::events::kCapabilitiesMeasured) != std::string::npos);
  // Nothing left: a second start reaps nothing and records no reap.
  r = lab.aura({"worker", "--json"});
  CHECK(r.last_line().find(R"("reaped":{"runs":0,"paths":0,"seq":0,)") != std::string::npos);
  CHECK(lab.aura({"worker", "--watch", "0"}).exit_code == 2);
  CHECK(lab.aura({"worker", "--help"}).exit_code == 0);
}
