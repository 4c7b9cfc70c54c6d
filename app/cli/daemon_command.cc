// `aura daemon`: the engine daemon in the foreground (docs/formats/daemon-protocol.md). Its log
// lines (JSON, one per line) go to stderr; SIGINT or SIGTERM stop it, and what it started ends.
#include <signal.h>

#include <chrono>
#include <condition_variable>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/daemon/daemon.h"
#include "app/lab/front_user.h"
#include "app/lab/scenario_registry.h"
#include "engine/common/json_writer.h"
#include "engine/common/memory.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

int daemon_main(Invocation& inv) {
  bound_allocator();  // before any thread: bursts of large requests give their memory back
  daemon::Options o;
  o.folders = {inv.data_dir, inv.keys_dir};
  o.socket = inv.has("socket") ? fs::path(inv.get("socket")) : daemon::default_socket(inv.data_dir);
  o.scenarios =
      inv.has("scenarios") ? fs::path(inv.get("scenarios")) : app::default_scenarios_dir();
  o.front_user = inv.get("front-user", app::default_front_user());
  o.operator_token = inv.has("operator-token-file") ? fs::path(inv.get("operator-token-file"))
                                                    : inv.keys_dir / "operator.token";
  o.receipts_dir = inv.data_dir / "receipts";
  auto queue = inv.get_u64("judge-queue", 4);
  if (!queue.ok()) return inv.fail(queue.status(), 2);
  if (*queue < 1 || *queue > 64) return inv.fail(Status::invalid("--judge-queue must be 1..64"), 2);
  o.judge_queue_limit = *queue;
  auto idle = inv.get_u64("idle-expiry", 1800);
  if (!idle.ok()) return inv.fail(idle.status(), 2);
  if (*idle < 10 || *idle > 7 * 86400) {
    return inv.fail(Status::invalid("--idle-expiry must be 10..604800 seconds"), 2);
  }
  o.live_idle = std::chrono::seconds(*idle);
  auto grace = inv.get_u64("stop-grace", 10);
  if (!grace.ok()) return inv.fail(grace.status(), 2);
  if (*grace > 3600) return inv.fail(Status::invalid("--stop-grace must be 0..3600"), 2);

  // Every thread the daemon starts inherits this mask; one thread waits for the signals.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto d = daemon::Daemon::open(o, [](const std::string& line) { std::cerr << line << std::endl; });
  if (!d.ok()) return inv.fail(d.status());
  // Set once everything the daemon holds has ended; the signal thread waits for it at most the
  // grace period, then ends the process: a judge run or gate still running is cut short, its
  // worlds ending with this process as they would after a kill (docs/WORLDS.md, "Lifetime").
  std::mutex done_mu;
  std::condition_variable done_cv;
  bool done = false;
  std::thread signals([&] {
    int sig = 0;
    sigwait(&set, &sig);
    std::cerr << JsonWriter().str("event", "stopping").num("signal", sig).done() << std::endl;
    (*d)->stop();
    std::unique_lock lock(done_mu);
    if (!done_cv.wait_for(lock, std::chrono::seconds(*grace), [&] { return done; })) {
      std::cerr << JsonWriter()
                       .str("event", "stopped")
                       .str("detail", "a judge run or gate was still running after the " +
                                          std::to_string(*grace) +
                                          " s grace: ended with the process, unfinished")
                       .done()
                << std::endl;
      std::_Exit(0);
    }
  });
  Status s = (*d)->serve();
  // serve() can also end on its own (an accept error): wake the waiting thread.
  ::kill(::getpid(), SIGTERM);
  d->reset();  // the judge run and every world the daemon holds end here
  {
    std::lock_guard lock(done_mu);
    done = true;
  }
  done_cv.notify_all();
  signals.join();
  if (!s.is_ok()) return inv.fail(s);
  std::cerr << JsonWriter().str("event", "stopped").done() << std::endl;
  return 0;
}

}  // namespace

void register_daemon_commands(CommandTable& r) {
  r.add(
      {"daemon",
       "",
       "run the engine daemon: the lab kept running behind a Unix socket for aura serve and the "
       "CLI",
       "Owns the data folder, the keys, the attempt engine, the projections, the judge queue and\n"
       "the worlds, and serves them over a Unix socket (docs/formats/daemon-protocol.md) to root\n"
       "and to the front's user only. Sets the lab up on first use (as 'aura setup' does, with "
       "the\n"
       "bundled packages of --scenarios). Logs JSON lines on stderr. SIGINT or SIGTERM stop it:\n"
       "it stops accepting, drops queued judge runs, waits up to --stop-grace seconds for a\n"
       "judge run or gate in progress to end, and otherwise ends the process with it unfinished\n"
       "(its worlds end with the process). Every live world it holds ends with it.",
       {{"socket", "PATH", "the daemon's socket (default DATA/../run/daemon.sock)"},
        {"front-user", "NAME",
         "the one unprivileged user served: the HTTP front's (default $AURA_FRONT_USER, else "
         "aura-web)"},
        {"operator-token-file", "FILE",
         "the operator token, read on every operator request (default KEYS/operator.token)"},
        {"scenarios", "DIR",
         "on first use, the packages to set the lab up with (default: the bundled ones, "
         "PREFIX/share/aura/scenarios installed, the source tree's scenarios/ in a build)"},
        {"judge-queue", "N", "judge runs that may wait (1..64, default 4)"},
        {"idle-expiry", "SECONDS",
         "a learner's live attempt with no command for this long is ended and its world freed "
         "(10..604800, default 1800)"},
        {"stop-grace", "SECONDS",
         "on SIGINT/SIGTERM, how long a judge run or gate in progress may go on (default 10)"}},
       0,
       0,
       daemon_main});
}

}  // namespace aura::cli
