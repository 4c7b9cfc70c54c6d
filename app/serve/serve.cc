#include "app/serve/serve.h"

#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <iostream>
#include <optional>
#include <thread>

#include "app/lab/front_user.h"
#include "app/rpc/client.h"
#include "app/serve/daemon_keeper.h"
#include "app/serve/daemon_reach.h"
#include "app/serve/http_server.h"
#include "app/serve/privileges.h"
#include "engine/common/install_layout.h"
#include "engine/common/memory.h"

namespace aura::serve {
namespace {

using Clock = std::chrono::steady_clock;

// First use sets the lab up (keys, bundled scenarios signed and loaded, the capability panel
// measured): about a minute here. The hang guard is far above it.
constexpr std::chrono::minutes kDaemonStartGuard{15};
constexpr std::chrono::seconds kProgressEvery{5};

// The front may hold max_connections client sockets and its daemon connections at once.
void raise_open_files_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    (void)::setrlimit(RLIMIT_NOFILE, &r);
  }
}

sigset_t stop_signals() {
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGINT);
  sigaddset(&s, SIGTERM);
  return s;
}

// A stop signal within `ms` (they are blocked; this takes one that is pending).
bool stop_signal_within(int ms) {
  sigset_t s = stop_signals();
  timespec ts{ms / 1000, long(ms % 1000) * 1'000'000};
  return ::sigtimedwait(&s, nullptr, &ts) > 0;
}

}  // namespace

std::filesystem::path default_socket(const std::filesystem::path& data) {
  std::filesystem::path d = data;
  if (!d.has_filename()) d = d.parent_path();  // "var/aura/"
  return d.parent_path() / "run" / "daemon.sock";
}

std::filesystem::path default_ui_dir() { return bundled_ui_dir(); }

Status health_round_trip(const std::filesystem::path& socket) {
  auto c = rpc::Client::connect(socket);
  if (!c.ok()) return c.status();
  rpc::Request q{"health", rpc::new_request_id(), rpc::AuthKind::kNone, "", "{}"};
  auto r = c->call(q, std::chrono::seconds(5));
  if (!r.ok()) return r.status();
  if (r->error || r->status != 200) {
    return Status::unavailable("health answered status " + std::to_string(r->status));
  }
  return Status::ok();
}

bool daemon_answers(const std::filesystem::path& socket) {
  return health_round_trip(socket).is_ok();
}

Status run(const ServeOptions& o, const std::function<void(std::string_view)>& say) {
  bound_allocator();  // before any thread: bursts of large bodies give their memory back
  const bool tls = !o.tls_cert.empty() || !o.tls_key.empty();
  if (tls && (o.tls_cert.empty() || o.tls_key.empty())) {
    return Status::invalid("--tls-cert and --tls-key go together");
  }
  AURA_RETURN_IF_ERROR(check_listen_address(o.listen, tls));
  // As root, a missing front user is made here (as set-up makes it): a new machine has none.
  if (::geteuid() == 0) {
    bool created = false;
    AURA_RETURN_IF_ERROR(app::ensure_front_user(o.user, &created));
    if (created) say("created the front's user " + o.user + " (a system user with no login)");
  }
  UserIds user;
  AURA_ASSIGN_OR_RETURN(user, lookup_front_user(o.user));
  // Root (it binds, then drops to the user), or the user itself (a service manager started it
  // so: nothing to drop; it can start no daemon).
  const bool as_user = ::geteuid() != 0;
  if (as_user && ::geteuid() != user.uid) {
    return Status::failed_precondition(
        "aura serve starts as root (it binds its port, then drops to the user " + o.user +
        ") or as " + o.user + " itself, not as uid " + std::to_string(::geteuid()));
  }
  const std::filesystem::path socket = o.socket.empty() ? default_socket(o.data) : o.socket;

  // Stop signals are taken by sigtimedwait from here on, in every thread started later.
  sigset_t stops = stop_signals();
  ::pthread_sigmask(SIG_BLOCK, &stops, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  std::optional<DaemonKeeper> keeper;
  if (daemon_answers(socket)) {
    say("engine daemon: answering on " + socket.string());
    if (!o.operator_token_file.empty()) {
      say("note: --operator-token-file is the daemon's setting; the running daemon keeps its own");
    }
  } else if (!o.start_daemon) {
    return Status::unavailable("no engine daemon answers on " + socket.string());
  } else if (as_user) {
    return Status::unavailable("no engine daemon answers on " + socket.string() + "; started as " +
                               o.user +
                               ", aura serve cannot start one (start 'aura daemon' as "
                               "root, or aura serve as root)");
  } else {
    say("engine daemon: none answers on " + socket.string() + "; starting one (data " +
        o.data.string() + ", keys " + o.keys.string() + ")");
    DaemonCommand cmd;
    cmd.data = o.data;
    cmd.keys = o.keys;
    cmd.socket = socket;
    cmd.front_user = o.user;
    cmd.operator_token_file = o.operator_token_file;
    cmd.scenarios = o.scenarios;
    auto started = DaemonKeeper::start(cmd);
    if (!started.ok()) return started.status();
    keeper.emplace(std::move(started).value());
    const auto began = Clock::now();
    auto next_say = began + kProgressEvery;
    while (!daemon_answers(socket)) {
      int code = 0;
      if (keeper->exited(&code)) {
        return Status::unavailable("the engine daemon exited (status " + std::to_string(code) +
                                   ") before it answered; its messages are above");
      }
      if (stop_signal_within(500)) {
        say("stopped before serving; stopping the engine daemon");
        return keeper->stop();
      }
      if (Clock::now() - began > kDaemonStartGuard) {
        (void)keeper->stop();
        return Status::unavailable("the engine daemon did not answer within 15 minutes");
      }
      if (Clock::now() >= next_say) {
        auto secs = std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - began);
        say("waiting for the engine daemon (first use sets the lab up: keys, scenarios, "
            "capability panel; about a minute)... " +
            std::to_string(secs.count()) + " s");
        next_say += kProgressEvery;
      }
    }
    say("engine daemon: answering on " + socket.string());
  }

  // The socket's folder, opened now: after the drop the front connects through this handle, so
  // the folders above it need not admit the front's user (a data folder under a 0700 parent).
  auto reach = DaemonReach::open(socket);
  if (!reach.ok()) return reach.status();

  raise_open_files_limit();
  ServerOptions so;
  so.listen_address = o.listen;
  so.port = o.port;
  so.tls_cert = o.tls_cert;
  so.tls_key = o.tls_key;
  so.socket = reach->connect_path();
  so.socket_label = socket;
  so.ui_dir = o.ui.empty() ? default_ui_dir() : o.ui;
  so.extra_origins = o.origins;
  so.limits = o.limits;
  so.threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  so.log = &std::cerr;
  auto server = Server::create(so);
  if (!server.ok()) return server.status();

  // The packages hold the answers: as root the front covers them in a mount namespace of its
  // own (a source checkout leaves them world-readable); as its user it must not read them.
  const std::filesystem::path packages =
      o.scenarios.empty() ? bundled_scenarios_dir() : o.scenarios;
  if (!as_user) AURA_RETURN_IF_ERROR(hide_folders({packages}));
  AURA_RETURN_IF_ERROR(drop_privileges(user));
  AURA_RETURN_IF_ERROR(check_cannot_open({o.data, o.keys},
                                         "the folder must be 0700 root; 'aura setup' makes it so"));
  AURA_RETURN_IF_ERROR(check_cannot_open(
      {packages},
      "the scenario packages hold the answers: start aura serve as root (it hides "
      "them from the front), or make the folder 0700 root"));
  // The URL only once the daemon answered this process as it now is: a front that cannot reach
  // it would answer 503 to every request for as long as it ran.
  if (Status h = health_round_trip(so.socket); !h.is_ok()) {
    const std::string problem = reach->problem();
    return Status::unavailable(
        "the front, as " + o.user + " (uid " + std::to_string(user.uid) +
        "), cannot reach the engine daemon at " + socket.string() + ": " +
        (problem.empty() ? h.message() : problem + " (" + h.message() + ")") +
        "; the daemon makes its socket's folder 0750 root:<the front's group> and the socket "
        "0660: start both with the same front user");
  }
  if (so.ui_dir.empty()) say("browser lab: not built (/ says how to build it)");
  say("AURA lab: " + (*server)->url());

  // The first stop signal drains (answers being written are finished, for up to the grace);
  // a second one stops at once.
  std::atomic<bool> done{false};
  std::thread waiter([&] {
    bool draining = false;
    while (!done.load()) {
      if (!stop_signal_within(200)) continue;
      if (draining) {
        (*server)->stop();
        return;
      }
      draining = true;
      say("stopping: finishing the answers under way (up to " +
          std::to_string(o.drain_grace.count()) + " s; a second signal stops at once)");
      (*server)->drain(o.drain_grace);
    }
  });
  (*server)->run();
  done = true;
  waiter.join();
  say("stopping");
  server->reset();
  if (keeper) {
    say("stopping the engine daemon (it reaps its worlds)");
    AURA_RETURN_IF_ERROR(keeper->stop());
  }
  return Status::ok();
}

}  // namespace aura::serve
