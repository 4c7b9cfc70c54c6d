// The front's link to the daemon (app/serve/daemon_link.h) against the daemon double: quick
// reads pipelined on one connection, each answered by its own reply; other calls on their own
// connections; a pipe the daemon closes mid-call (the read goes again, alone) and one it leaves
// unanswered (the calls time out, the next starts a fresh connection).
#include "app/serve/daemon_link.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <string>
#include <vector>

#include "tests/serve/daemon_double.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::serve;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

std::string attempt_id(size_t i) {
  std::string id = "00000000000000" + std::string(1, "0123456789abcdef"[i / 16]) +
                   std::string(1, "0123456789abcdef"[i % 16]);
  return id;
}

rpc::Request state_of(const std::string& attempt) {
  return rpc::Request{"attempt.state", rpc::new_request_id(), rpc::AuthKind::kToken,
                      std::string(64, 'a'), "{\"attempt\":\"" + attempt + "\"}"};
}

// A daemon double and one loop's link to it.
struct Linked {
  TempDir dir;
  DaemonDouble d{dir.path() / "daemon.sock"};
  asio::io_context ioc{1};
  DaemonLink link{ioc.get_executor(), options(d)};

  static DaemonLinkOptions options(const DaemonDouble& d) {
    DaemonLinkOptions o;
    o.socket = d.socket();
    o.daemon_uid = ::getuid();
    return o;
  }

  // Runs `calls` at once on the loop (the front's way) and gives each one's answer, or its
  // error as "error: ...".
  std::vector<std::string> run_at_once(const std::vector<rpc::Request>& calls,
                                       std::chrono::milliseconds timeout) {
    std::vector<std::string> out(calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
      asio::co_spawn(
          ioc,
          [&, i]() -> asio::awaitable<void> {
            auto r = co_await link.call(calls[i], timeout);
            out[i] = r.ok() ? r->body_json : "error: " + r.status().message();
          },
          asio::detached);
    }
    ioc.restart();
    ioc.run();
    return out;
  }
};

}  // namespace

TEST_CASE("daemon link: quick reads share one pipelined connection, each gets its own answer") {
  Linked t;
  DaemonDouble& d = t.d;
  auto run_at_once = [&t](const std::vector<rpc::Request>& calls, std::chrono::milliseconds to) {
    return t.run_at_once(calls, to);
  };

  std::vector<rpc::Request> calls;
  for (size_t i = 0; i < 100; ++i) calls.push_back(state_of(attempt_id(i)));
  auto got = run_at_once(calls, 10s);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK_MESSAGE(got[i].find("\"attempt\":\"" + attempt_id(i) + "\"") != std::string::npos,
                  "call " << i << " got " << got[i]);
  }
  CHECK(d.connections() == 1);
  CHECK(d.seen().size() == 100);

  // A command is not pipelined: each of two at once has a connection to itself.
  std::vector<rpc::Request> commands;
  for (int i = 0; i < 2; ++i) {
    commands.push_back(rpc::Request{"attempt.command", rpc::new_request_id(), rpc::AuthKind::kToken,
                                    std::string(64, 'a'),
                                    R"({"attempt":"0000000000000001","command":"predict"})"});
  }
  d.set_handler([](const rpc::Request& r) {
    DoubleAnswer a = DaemonDouble::default_answer(r);
    if (r.op == "attempt.command") a.delay = 300ms;  // both are under way together
    return a;
  });
  got = run_at_once(commands, 10s);
  for (const auto& g : got) CHECK(g.find("\"op\":\"attempt.command\"") != std::string::npos);
  CHECK(d.connections() == 3);
  // The pipe is still there for the next reads.
  got = run_at_once({state_of(attempt_id(7))}, 10s);
  CHECK(got[0].find(attempt_id(7)) != std::string::npos);
  CHECK(d.connections() == 3);
}

TEST_CASE(
    "daemon link: a pipe closed mid-call is read again alone; one left unanswered times out") {
  Linked t;
  DaemonDouble& d = t.d;
  auto run_at_once = [&t](const std::vector<rpc::Request>& calls, std::chrono::milliseconds to) {
    return t.run_at_once(calls, to);
  };

  // The daemon closes the pipe on the first read of "dead": that read, and those queued behind
  // it, are each asked again on a connection of their own and answered.
  bool closed_once = false;
  std::mutex mu;
  d.set_handler([&](const rpc::Request& r) {
    DoubleAnswer a = DaemonDouble::default_answer(r);
    std::lock_guard lock(mu);
    if (r.args_json.find(attempt_id(200)) != std::string::npos && !closed_once) {
      closed_once = true;
      a.close = true;
    }
    return a;
  });
  std::vector<rpc::Request> calls;
  for (size_t i = 0; i < 5; ++i) calls.push_back(state_of(attempt_id(200 + i)));
  auto got = run_at_once(calls, 10s);
  for (size_t i = 0; i < calls.size(); ++i) {
    CHECK_MESSAGE(got[i].find(attempt_id(200 + i)) != std::string::npos, got[i]);
  }
  CHECK(closed_once);

  // A read the daemon does not answer within its time: it and the one behind it fail as timed
  // out (neither is asked again); the next read goes on a fresh connection and is answered.
  // Two connections in all: the silent pipe and the fresh one.
  d.set_handler([](const rpc::Request& r) {
    DoubleAnswer a = DaemonDouble::default_answer(r);
    if (r.args_json.find("00000000000000ff") != std::string::npos) a.delay = 1500ms;
    return a;
  });
  d.clear();
  const size_t before = d.connections();
  got = run_at_once({state_of("00000000000000ff"), state_of(attempt_id(1))}, 300ms);
  CHECK(got[0].find("timed out") != std::string::npos);
  CHECK(got[1].find("timed out") != std::string::npos);
  CHECK(d.seen().size() == 1);  // the second waited behind the first, unread
  got = run_at_once({state_of(attempt_id(2))}, 5s);
  CHECK(got[0].find(attempt_id(2)) != std::string::npos);
  CHECK(d.connections() == before + 2);
}
