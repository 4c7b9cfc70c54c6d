// supervise_run with a plain fork launcher (a test double that isolates the supervisor from the
// sandbox; the sandbox launcher is tested with the sandbox): the run's events come in order, the
// runner's evidence arrives through the writer, the host facts come from the wait status and not
// from anything the runner says, and a runner killed mid-run is recorded as ended by its signal.
#include "workers/supervisor/supervisor.h"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>

#include "engine/blob/evidence_ref.h"
#include "engine/events/event_types.h"
#include "engine/writer/frame.h"
#include "tests/log/log_test_util.h"
#include "tests/support/log_lab.h"
#include "tests/support/wait_until.h"

using namespace aura;
using namespace aura::supervisor;
// Bounds the writer of each run (the runs end within milliseconds): a hang guard.
using aura::testing::kHangGuard;

namespace {

struct Lab : aura::testing::LogLab {
  writer::RunTokens tokens;
  writer::RunBinding binding() const {
    writer::RunBinding b;
    b.attempt = "0123456789abcdef";
    b.world = "primary";
    b.kinds = {"probe.output"};
    return b;
  }
  std::vector<std::pair<std::string, std::string>> events() const {
    std::vector<std::pair<std::string, std::string>> out;
    REQUIRE(log->read_stream("attempt/0123456789abcdef", 1,
                             [&](const EventView& e) {
                               out.emplace_back(std::string(e.type), std::string(e.payload));
                               return true;
                             })
                .is_ok());
    return out;
  }
};

// Forks a runner that runs `body(fd, token)` with stdout captured; measures from waitpid.
Launcher fork_launcher(std::function<void(int, const std::string&)> body) {
  return [body](int runner_fd, const std::string& token) -> Result<HostFacts> {
    int out[2];
    if (::pipe(out) != 0) return Status::io("pipe");
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid < 0) return Status::io("fork");
    if (pid == 0) {
      ::dup2(out[1], 1);
      body(runner_fd, token);
      ::_exit(3);
    }
    ::close(out[1]);
    HostFacts f;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(out[0], buf, sizeof buf)) > 0) f.stdout_bytes.append(buf, size_t(n));
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    f.wall_ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                             std::chrono::steady_clock::now() - start)
                             .count());
    f.exited = WIFEXITED(status);
    f.exit_code = f.exited ? WEXITSTATUS(status) : -1;
    f.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    f.profile_digest = std::string(64, 'd');
    return f;
  };
}

std::string probe_frame(std::string_view bytes) {
  return writer::evidence_frame("probe.output", R"({"stream":"stdout","truncated":false})", bytes);
}

}  // namespace

TEST_CASE("supervisor: run.started, the runner's evidence, then run.ended with host facts") {
  Lab lab;
  auto rec = supervise_run(lab.binding(), fork_launcher([](int fd, const std::string& token) {
                             (void)writer::send_frame(fd, writer::hello_frame(token));
                             (void)writer::send_frame(fd, probe_frame("listening on :8080\n"));
                             (void)!::write(1, "to stdout\n", 10);
                           }),
                           *lab.log, *lab.blobs, lab.tokens, kHangGuard);
  REQUIRE_MESSAGE(rec.ok(), rec.status().message());
  CHECK(rec->evidence.accepted == 1);
  CHECK(rec->facts.exited);
  CHECK(rec->facts.exit_code == 3);
  const auto evs = lab.events();
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].first == events::kRunStarted);
  CHECK(evs[1].first == events::kRunnerEvidence);
  CHECK(evs[2].first == events::kRunEnded);
  CHECK(evs[2].second.find(R"("exit_code":3)") != std::string::npos);
  CHECK(evs[2].second.find(R"("accepted":1)") != std::string::npos);
  CHECK(evs[2].second.find(R"("run":")" + rec->run_id + "\"") != std::string::npos);
  // The stdout blob is what the runner wrote.
  auto refs = extract_refs(evs[2].second);
  REQUIRE(refs.ok());
  REQUIRE(refs->size() == 2);
  CHECK(*lab.blobs->get((*refs)[0].sha256) == "to stdout\n");
}

TEST_CASE("supervisor: a runner's claims about its run are refused; the measured facts stand") {
  Lab lab;
  auto rec = supervise_run(
      lab.binding(), fork_launcher([](int fd, const std::string& token) {
        (void)writer::send_frame(fd, writer::hello_frame(token));
        (void)writer::send_frame(
            fd, writer::evidence_frame(
                    "probe.output",
                    R"({"stream":"stdout","truncated":false,"exit_code":0,"cpu_ns":1})", ""));
        ::_exit(7);
      }),
      *lab.log, *lab.blobs, lab.tokens, kHangGuard);
  REQUIRE(rec.ok());
  CHECK(rec->evidence.rejected);
  const auto evs = lab.events();
  REQUIRE(evs.size() == 3);
  CHECK(evs[1].first == events::kEvidenceRejected);
  CHECK(evs[2].first == events::kRunEnded);
  CHECK(evs[2].second.find(R"("exit_code":7)") != std::string::npos);
  CHECK(evs[2].second.find(R"("rejected":true)") != std::string::npos);
}

TEST_CASE("supervisor: a runner killed mid-run leaves whole frames and is recorded by signal") {
  Lab lab;
  auto rec = supervise_run(lab.binding(), fork_launcher([](int fd, const std::string& token) {
                             (void)writer::send_frame(fd, writer::hello_frame(token));
                             (void)writer::send_frame(fd, probe_frame("partial work"));
                             ::raise(SIGKILL);
                           }),
                           *lab.log, *lab.blobs, lab.tokens, kHangGuard);
  REQUIRE(rec.ok());
  CHECK_FALSE(rec->facts.exited);
  CHECK(rec->facts.term_signal == SIGKILL);
  const auto evs = lab.events();
  REQUIRE(evs.size() == 3);
  CHECK(evs[1].first == events::kRunnerEvidence);
  CHECK(evs[2].second.find(R"("signal":9)") != std::string::npos);
  CHECK(aura::testing::verify(*lab.log, &*lab.blobs).ok());

  // A later run cannot reuse a token: each run gets its own, and an old one is refused.
  auto again =
      supervise_run(lab.binding(), fork_launcher([](int fd, const std::string&) {
                      (void)writer::send_frame(fd, writer::hello_frame(std::string(64, '0')));
                    }),
                    *lab.log, *lab.blobs, lab.tokens, kHangGuard);
  REQUIRE(again.ok());
  CHECK(again->evidence.rejected);
  CHECK(again->run_id != rec->run_id);
}
