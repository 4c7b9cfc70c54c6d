// `aura sandbox run [--profile NAME] [--json] -- CMD [ARGS...]`: one command in the runner
// sandbox exactly as a probe runs (workers/sandbox, docs/SANDBOX.md), its output passed through,
// then the host-stamped facts. For operators checking a profile, and for black-box isolation
// tests.
#include <unistd.h>

#include <iostream>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/common/json_writer.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/sandbox/sandbox.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

// Exit status when the sandbox itself could not run the command (as env(1) and timeout(1) do).
constexpr int kSandboxFailed = 125;

void write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) return;
    done += size_t(n);
  }
}

int sandbox_run(Invocation& inv) {
  auto profile = sandbox::named_profile(inv.get("profile", "probe"));
  if (!profile.ok()) return inv.fail(profile.status(), 2);
  for (auto [flag, field] :
       {std::pair<const char*, uint64_t*>{"deadline-ms", &profile->wall_deadline_ms},
        {"pids", &profile->pids_max}}) {
    auto v = inv.get_u64(flag, *field);
    if (!v.ok()) return inv.fail(v.status(), 2);
    *field = *v;
  }
  auto mem = inv.get_u64("memory-mb", profile->memory_bytes >> 20);
  if (!mem.ok()) return inv.fail(mem.status(), 2);
  profile->memory_bytes = *mem << 20;

  sandbox::RunOptions options;
  options.state_dir =
      fs::absolute(inv.has("state") ? fs::path(inv.get("state")) : inv.data_dir / "sandbox");
  options.forbidden_paths = {fs::absolute(inv.data_dir), fs::absolute(inv.keys_dir)};
  // What an earlier process left behind is removed before this run starts.
  auto reaped = sandbox::reap(options.state_dir);
  if (!reaped.ok()) return inv.fail(reaped.status(), kSandboxFailed);

  auto r = sandbox::run(*profile, inv.positional, {}, options);
  if (!r.ok()) return inv.fail(r.status(), kSandboxFailed);
  write_all(1, r->stdout_bytes);
  write_all(2, r->stderr_bytes);

  JsonWriter facts;
  facts.str("run", r->run_id)
      .str("profile", profile->name)
      .str("profile_digest", to_hex(r->profile_digest));
  if (r->exited) {
    facts.num("exit_code", int64_t(r->exit_code));
  } else {
    facts.num("signal", int64_t(r->term_signal));
  }
  facts.boolean("killed_by_deadline", r->killed_by_deadline)
      .num("cpu_ns", r->cpu_ns)
      .num("wall_ns", r->wall_ns);
  if (r->peak_memory_known) facts.num("peak_memory_bytes", r->peak_memory_bytes);
  facts.num("oom_kills", r->oom_kills)
      .num("pids_limit_hits", r->pids_limit_hits)
      .boolean("stdout_truncated", r->stdout_truncated)
      .boolean("stderr_truncated", r->stderr_truncated)
      .num("reaped_runs", uint64_t(reaped->runs_reaped));
  const std::string json = facts.done();
  if (inv.json) {
    std::cout << "\n";
    inv.emit_json(JsonWriter().boolean("ok", true).raw("facts", json).done());
  } else {
    std::cerr << "sandbox: run " << r->run_id << " (profile " << profile->name << ", "
              << to_hex(r->profile_digest).substr(0, 16) << "): "
              << (r->exited ? "exit " + std::to_string(r->exit_code)
                            : "signal " + std::to_string(r->term_signal))
              << (r->killed_by_deadline ? ", killed at the deadline" : "") << "; cpu "
              << r->cpu_ns / 1000 << " us, wall " << r->wall_ns / 1000 << " us"
              << (r->peak_memory_known
                      ? ", peak memory " + std::to_string(r->peak_memory_bytes >> 10) + " KiB"
                      : "")
              << (r->oom_kills ? ", " + std::to_string(r->oom_kills) + " OOM kill(s)" : "")
              << (r->pids_limit_hits ? ", pids limit hit" : "")
              << (r->stdout_truncated || r->stderr_truncated ? ", output truncated" : "") << "\n";
  }
  return r->exited ? r->exit_code : 128 + r->term_signal;
}

}  // namespace

void register_sandbox_commands(CommandTable& r) {
  r.add({"sandbox run",
         "CMD [ARGS...]",
         "run one command in the runner sandbox exactly as a probe would, and print the facts",
         "Usage: aura sandbox run [options] -- CMD [ARGS...] (options before the --).\n"
         "The same namespaces (user, mount, PID, network, IPC, UTS, cgroup), overlay root, cgroup "
         "limits, seccomp\nallowlist and deadline as a probe (docs/SANDBOX.md). CMD is an absolute "
         "path inside the sandbox.\nIts stdout and stderr are passed through; then the facts the "
         "supervisor measured are printed\n(on stderr, or with --json as the last stdout line). "
         "Leftovers of an earlier process are reaped first.\nExit status: the command's (128 + "
         "signal when killed), 125 when the sandbox could not run it, 2 on\nusage errors.",
         {{"profile", "NAME", "probe (default) or script"},
          {"deadline-ms", "N", "wall-clock deadline (default: the profile's)"},
          {"memory-mb", "N", "memory limit in MiB (default: the profile's)"},
          {"pids", "N", "processes and threads at once (default: the profile's)"},
          {"state", "DIR", "the sandbox state folder (default DATA/sandbox)"}},
         1,
         64,
         sandbox_run});
}

}  // namespace aura::cli
