// `aura bench sandbox`: what starting a sandboxed runner costs, against bubblewrap measured in
// the same run, and what creating and destroying a 3-node world network costs.
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/common/json_writer.h"
#include "workers/netns/world_network.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/sandbox/sandbox.h"

extern char** environ;

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double us_since(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// One sandboxed /bin/true with everything a probe gets, the writer socketpair included.
Result<double> sandbox_start(const sandbox::Profile& profile, const sandbox::RunOptions& base) {
  const auto t = Clock::now();
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    return Status::io("socketpair failed");
  }
  sandbox::RunOptions o = base;
  o.pass_fd = sv[1];
  auto r = sandbox::run(profile, {"/bin/true"}, {}, o);
  ::close(sv[0]);
  ::close(sv[1]);
  if (!r.ok()) return r.status();
  if (!r->exited || r->exit_code != 0) return Status::io("sandboxed /bin/true did not exit 0");
  return us_since(t);
}

// The peer: bwrap --unshare-all with a read-only /usr (this machine's /bin and /lib are links
// into it), a fresh /proc, /dev and /tmp.
Result<double> bwrap_start(const char* bwrap) {
  std::vector<std::string> args = {bwrap,       "--unshare-all", "--die-with-parent",
                                   "--ro-bind", "/usr",          "/usr",
                                   "--symlink", "usr/bin",       "/bin",
                                   "--symlink", "usr/lib",       "/lib",
                                   "--symlink", "usr/lib64",     "/lib64",
                                   "--symlink", "usr/sbin",      "/sbin",
                                   "--proc",    "/proc",         "--dev",
                                   "/dev",      "--tmpfs",       "/tmp",
                                   "/bin/true"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto t = Clock::now();
  pid_t pid;
  if (::posix_spawn(&pid, bwrap, nullptr, nullptr, argv.data(), environ) != 0) {
    return Status::io("spawning bwrap failed");
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return Status::io("bwrap did not exit 0");
  return us_since(t);
}

const char* find_bwrap() {
  for (const char* p : {"/usr/bin/bwrap", "/bin/bwrap"})
    if (::access(p, X_OK) == 0) return p;
  return nullptr;
}

int bench_sandbox(Invocation& inv) {
  auto runs = inv.get_u64("runs", 200);
  auto worlds = inv.get_u64("worlds", 20);
  if (!runs.ok()) return inv.fail(runs.status(), 2);
  if (!worlds.ok()) return inv.fail(worlds.status(), 2);
  if (*runs == 0 || *worlds == 0)
    return inv.fail(Status::invalid("--runs and --worlds must be > 0"), 2);
  const char* bwrap = find_bwrap();
  if (bwrap == nullptr) {
    return inv.fail(
        Status::unavailable("bwrap (Debian's bubblewrap) is not installed: the peer "
                            "cannot be measured"));
  }
  auto root = make_bench_root(inv, "/tmp/aura-bench-sandbox-XXXXXX");
  if (!root.ok()) return inv.fail(root.status());
  sandbox::RunOptions options;
  options.state_dir = *root / "state";
  options.forbidden_paths = {fs::absolute(inv.data_dir), fs::absolute(inv.keys_dir)};
  const sandbox::Profile profile;
  std::cout << "bench sandbox: " << *runs << " sandboxed /bin/true and " << *runs
            << " bwrap --unshare-all /bin/true, interleaved; " << *worlds
            << " 3-node world networks\n";

  std::vector<double> ours, peer;
  for (uint64_t i = 0; i < *runs; ++i) {
    auto a = sandbox_start(profile, options);
    if (!a.ok()) return inv.fail(a.status().with_context("sandbox run " + std::to_string(i)));
    ours.push_back(*a);
    auto b = bwrap_start(bwrap);
    if (!b.ok()) return inv.fail(b.status().with_context("bwrap run " + std::to_string(i)));
    peer.push_back(*b);
    if ((i + 1) % 50 == 0) std::cerr << "  " << (i + 1) << "/" << *runs << " starts\n";
  }
  std::vector<double> world_ms;
  for (uint64_t i = 0; i < *worlds; ++i) {
    char tag[17];
    std::snprintf(tag, sizeof tag, "b%07x%08x", unsigned(::getpid()) & 0xfffffff, unsigned(i));
    const auto t = Clock::now();
    auto w = netns::WorldNetwork::create(tag, {"node1", "node2", "node3"});
    if (!w.ok()) return inv.fail(w.status().with_context("world network"));
    if (Status s = w->destroy(); !s.is_ok()) return inv.fail(s);
    world_ms.push_back(us_since(t) / 1000.0);
  }
  std::error_code ec;
  if (!inv.has("keep")) fs::remove_all(*root, ec);

  const double m = percentile(ours, 0.5), p99 = percentile(ours, 0.99);
  const double bm = percentile(peer, 0.5), bp99 = percentile(peer, 0.99);
  const double wm = percentile(world_ms, 0.5);
  std::printf(
      "  sandbox start (all namespaces, overlay, cgroup, seccomp, socketpair), reaped:\n"
      "    median %.0f us, p99 %.0f us\n"
      "  peer bwrap --unshare-all: median %.0f us, p99 %.0f us\n"
      "  ratio (ours / bwrap, medians): %.2f (aim: at most 0.50)\n"
      "  3-node world network create + destroy: median %.1f ms\n",
      m, p99, bm, bp99, m / bm, wm);
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .num("runs", *runs)
                    .real("start_median_us", m)
                    .real("start_p99_us", p99)
                    .real("bwrap_median_us", bm)
                    .real("bwrap_p99_us", bp99)
                    .real("world3_create_destroy_median_ms", wm)
                    .done());
  return 0;
}

}  // namespace

void register_bench_sandbox_commands(CommandTable& r) {
  r.add({"bench sandbox",
         "",
         "measure starting a sandboxed runner against bwrap, and a 3-node world network",
         "Starts /bin/true in the runner sandbox with everything a probe gets (user, mount, PID, "
         "network, IPC,\nUTS and cgroup namespaces, the overlay root, the cgroup, the seccomp "
         "filter and a writer socketpair)\nand reaps it, interleaved with bwrap --unshare-all "
         "/bin/true (Debian's bubblewrap) as the peer;\nthen creates and destroys 3-node world "
         "networks. Prints medians and p99s (JSON: start_median_us,\nstart_p99_us, "
         "bwrap_median_us, world3_create_destroy_median_ms). Needs root.",
         {{"runs", "N", "sandbox starts and bwrap starts each (default 200)"},
          {"worlds", "N", "world networks created and destroyed (default 20)"},
          {"keep", "DIR", "work in DIR and keep it (default: a temporary folder, removed)"}},
         0,
         0,
         bench_sandbox});
}

}  // namespace aura::cli
