// The real path: supervise_run with the sandbox launcher. A runner inside the sandbox (python3
// from the read-only lower image) holds only its writer socket as fd 3; its evidence is recorded,
// its claims about the run are refused, the facts come from the sandbox's measurements, a
// deadline kill is recorded, and from inside it finds neither the data folder nor any other
// socket of the host.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "engine/events/event_types.h"
#include "tests/log/log_test_util.h"
#include "tests/support/log_lab.h"
#include "tests/support/wait_until.h"
#include "tests/workers/sandbox_support.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/supervisor/sandbox_launcher.h"

using namespace aura;
using namespace aura::supervisor;

namespace {

struct Lab : aura::testing::LogLab {
  writer::RunTokens tokens;
  sandbox::RunOptions options() const {
    sandbox::RunOptions o;
    o.state_dir = dir / "state";
    o.forbidden_paths = {data()};
    return o;
  }
  Result<RunRecord> run(const std::string& python, sandbox::Profile profile = {}) {
    writer::RunBinding b;
    b.attempt = "0123456789abcdef";
    b.world = "primary";
    b.kinds = {"probe.output"};
    return supervise_run(
        b, sandbox_launcher(profile, {"/usr/bin/python3", "-c", python}, {}, options()), *log,
        *blobs, tokens, std::chrono::seconds(60));
  }
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    REQUIRE(log->read_stream("attempt/0123456789abcdef", 1,
                             [&](const EventView& e) {
                               out.emplace_back(e.type);
                               return true;
                             })
                .is_ok());
    return out;
  }
  std::string last_payload() const {
    std::string out;
    REQUIRE(log->read_stream("attempt/0123456789abcdef", 1,
                             [&](const EventView& e) {
                               out = std::string(e.payload);
                               return true;
                             })
                .is_ok());
    return out;
  }
};

// A runner in python: `body` runs after `send(frame)` and `hello()` are defined. A frame is the
// version byte (1), the header, a newline and the data (docs/formats/writer-frame.md).
std::string runner(const std::string& body) {
  return "import os, socket, json, sys\n"
         "s = socket.socket(fileno=int(os.environ['AURA_WRITER_FD']))\n"
         "def send(header, data=b''):\n"
         "    s.send(b'\\x01' + json.dumps(header, separators=(',', ':')).encode() + b'\\n' + "
         "data)\n"
         "def hello():\n"
         "    send({'t': 'hello', 'token': os.environ['AURA_WRITER_TOKEN']})\n" +
         body;
}

}  // namespace

TEST_CASE("sandboxed runner: evidence through fd 3, facts from the sandbox") {
  Lab lab;
  auto rec = lab.run(runner(
      "hello()\n"
      "send({'t':'evidence','kind':'probe.output','fields':{'stream':'stdout','truncated':False}},"
      " b'uid inside: ' + str(os.getuid()).encode())\n"
      "print('fds', sorted(int(f) for f in os.listdir('/proc/self/fd')))\n"));
  REQUIRE_MESSAGE(rec.ok(), rec.status().message());
  CHECK(rec->evidence.accepted == 1);
  CHECK(rec->facts.exited);
  CHECK(rec->facts.exit_code == 0);
  CHECK(rec->facts.profile_digest == to_hex(sandbox::profile_digest(sandbox::Profile{})));
  CHECK(rec->facts.cpu_ns > 0);
  // Only stdio and the writer socket (the listing itself opens one more, for the directory).
  CHECK(rec->facts.stdout_bytes.find("fds [0, 1, 2, 3, 4]") != std::string::npos);
  CHECK(lab.types() ==
        std::vector<std::string>{events::kRunStarted, events::kRunnerEvidence, events::kRunEnded});
}

TEST_CASE("sandboxed runner: claims refused, a deadline kill recorded") {
  Lab lab;
  auto claims =
      lab.run(runner("hello()\n"
                     "send({'t':'evidence','kind':'probe.output','sandboxed':False,"
                     "'fields':{'stream':'stdout','truncated':False}}, b'x')\n"));
  REQUIRE(claims.ok());
  CHECK(claims->evidence.rejected);
  CHECK(claims->evidence.reason.find("unknown member \"sandboxed\"") != std::string::npos);

  sandbox::Profile quick;
  quick.wall_deadline_ms = 500;
  auto slow = lab.run(runner("hello()\nimport time\ntime.sleep(60)\n"), quick);
  REQUIRE(slow.ok());
  CHECK(slow->facts.killed_by_deadline);
  CHECK_FALSE(slow->facts.exited);
  CHECK(lab.last_payload().find(R"("killed_by_deadline":true)") != std::string::npos);
  CHECK(aura::testing::verify(*lab.log, &*lab.blobs).ok());
}

TEST_CASE("sandboxed runner: no data folder, no other socket, no other run's writer") {
  Lab lab;
  const std::string data = lab.data().string();
  auto rec = lab.run(
      runner("hello()\n"
             "print('data visible', os.path.exists('" +
             data +
             "'), flush=True)\n"
             "unix = open('/proc/net/unix').read().strip().splitlines()[1:]\n"
             "print('unix sockets', len(unix), flush=True)\n"
             "import stat\n"
             "found = 0\n"
             "for top in ('/run', '/tmp', '/var', '/dev', '/root', '/home', '/etc'):\n"
             "    for root, dirs, files in os.walk(top):\n"
             "        for f in files:\n"
             "            try:\n"
             "                found += stat.S_ISSOCK(os.lstat(os.path.join(root, f)).st_mode)\n"
             "            except OSError:\n"
             "                pass\n"
             "print('sockets found', found, flush=True)\n"));
  REQUIRE_MESSAGE(rec.ok(), rec.status().message());
  INFO("stdout: " << rec->facts.stdout_bytes << " stderr: " << rec->facts.stderr_bytes);
  CHECK(rec->facts.stdout_bytes.find("data visible False") != std::string::npos);
  // Its network namespace is its own: it lists no Unix socket at all (its writer end was made in
  // the supervisor's namespace), so no other run's writer or the engine's socket either.
  CHECK(rec->facts.stdout_bytes.find("unix sockets 0") != std::string::npos);
  CHECK(rec->facts.stdout_bytes.find("sockets found 0") != std::string::npos);
}

TEST_CASE("supervisor start: what a killed supervisor left is reaped and recorded") {
  Lab lab;
  const auto options = lab.options();
  // A supervisor process starts a long run, and is killed while it runs.
  const pid_t dying = ::fork();
  REQUIRE(dying >= 0);
  if (dying == 0) {
    sandbox::Profile p;
    p.wall_deadline_ms = 60'000;
    (void)sandbox::run(p, {"/bin/sleep", "100"}, {}, options);
    ::_exit(0);
  }
  // Killed mid-run: once the run's command, the sleep, is in one of the cgroups it recorded.
  sandbox::LeakLedger ledger(options.state_dir);
  const bool sleeping = aura::testing::wait_until([&] {
    auto entries = ledger.entries();
    if (!entries.ok()) return false;
    for (const auto& e : *entries) {
      if (e.released) continue;
      std::istringstream procs(aura::testing::read_text_file(e.path / "cgroup.procs"));
      for (long pid; procs >> pid;) {
        if (aura::testing::read_text_file("/proc/" + std::to_string(pid) + "/comm") == "sleep\n")
          return true;
      }
    }
    return false;
  });
  REQUIRE(sleeping);
  REQUIRE(std::filesystem::exists(options.state_dir / "runs"));
  REQUIRE_FALSE(std::filesystem::is_empty(options.state_dir / "runs"));
  REQUIRE(::kill(dying, SIGKILL) == 0);
  int status = 0;
  REQUIRE(::waitpid(dying, &status, 0) == dying);

  auto rec = reap_and_record(options.state_dir, *lab.log);
  REQUIRE_MESSAGE(rec.ok(), rec.status().message());
  CHECK(rec->runs_reaped == 1);
  CHECK(rec->failures.empty());
  REQUIRE(rec->seq > 0);
  auto ev = lab.log->get(rec->seq);
  REQUIRE(ev.ok());
  CHECK(ev->type == events::kSupervisorReaped);
  CHECK(ev->actor == "supervisor");
  CHECK(ev->payload.find(R"("runs_reaped":1)") != std::string::npos);
  CHECK(std::filesystem::is_empty(options.state_dir / "runs"));
  // Nothing left: a second start records nothing.
  auto again = reap_and_record(options.state_dir, *lab.log);
  REQUIRE(again.ok());
  CHECK(again->seq == 0);
}
