// A writer connection under test: a real log and blob store (LogLab), a run's binding and its
// token, and a forked runner process on the other end of a fresh SOCK_SEQPACKET pair.
#pragma once

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/writer/evidence_writer.h"
#include "tests/log/log_test_util.h"
#include "tests/support/log_lab.h"
#include "tests/support/wait_until.h"

namespace aura::testing {

struct Recorded {
  std::string type, actor, payload;
};

struct WriterLab : LogLab {
  writer::RunTokens tokens;
  writer::RunBinding binding;
  std::string token;  // issued for binding.run_id

  WriterLab() {
    binding.run_id = "00000000000000a1";
    binding.attempt = "0123456789abcdef";
    binding.world = "primary";
    binding.kinds = {"probe.output", "runner.note"};
    auto t = tokens.issue(binding.run_id);
    REQUIRE(t.ok());
    token = *t;
  }

  // Forks a runner that runs `body` on its end of a fresh socketpair, serves the supervisor's
  // end until the runner is done, and reaps the runner. The default deadline is a hang guard
  // (the runners here end within milliseconds); a test of the time-out passes its own.
  writer::ConnectionReport run(const std::function<void(int)>& body,
                               std::chrono::milliseconds deadline = kHangGuard,
                               const std::optional<writer::RunBinding>& as = std::nullopt) {
    int sv[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      ::close(sv[0]);
      body(sv[1]);
      ::_exit(0);
    }
    ::close(sv[1]);
    auto r = writer::serve_connection(sv[0], as ? *as : binding, tokens, *log, *blobs,
                                      std::chrono::steady_clock::now() + deadline);
    ::close(sv[0]);
    int status = 0;
    ::kill(pid, SIGKILL);  // a runner still sleeping after a time-out
    ::waitpid(pid, &status, 0);
    REQUIRE_MESSAGE(r.ok(), r.status().message());
    return *r;
  }

  // The events of the binding's stream, in order.
  std::vector<Recorded> events() const {
    std::vector<Recorded> out;
    REQUIRE(
        log->read_stream(
               binding.stream(), 1,
               [&](const EventView& e) {
                 out.push_back({std::string(e.type), std::string(e.actor), std::string(e.payload)});
                 return true;
               })
            .is_ok());
    return out;
  }

  void check_log_verifies() const {
    const auto report = verify(*log, &*blobs);
    CHECK_MESSAGE(report.ok(), "log verify failed");
  }
};

}  // namespace aura::testing
