#include "workers/supervisor/sandbox_launcher.h"

namespace aura::supervisor {

HostFacts host_facts(const sandbox::RunResult& r) {
  HostFacts f;
  f.profile_digest = to_hex(r.profile_digest);
  f.exited = r.exited;
  f.exit_code = r.exit_code;
  f.term_signal = r.term_signal;
  f.killed_by_deadline = r.killed_by_deadline;
  f.cpu_ns = r.cpu_ns;
  f.peak_memory_bytes = r.peak_memory_bytes;
  f.peak_memory_known = r.peak_memory_known;
  f.oom_kills = r.oom_kills;
  f.pids_limit_hits = r.pids_limit_hits;
  f.wall_ns = r.wall_ns;
  f.stdout_bytes = r.stdout_bytes;
  f.stderr_bytes = r.stderr_bytes;
  f.stdout_truncated = r.stdout_truncated;
  f.stderr_truncated = r.stderr_truncated;
  return f;
}

Launcher sandbox_launcher(sandbox::Profile profile, std::vector<std::string> argv,
                          std::vector<sandbox::PackageMount> packages,
                          sandbox::RunOptions options) {
  return
      [profile = std::move(profile), argv = std::move(argv), packages = std::move(packages),
       options = std::move(options)](int runner_fd, const std::string& token) -> Result<HostFacts> {
        sandbox::RunOptions o = options;
        if (o.env.empty())
          o.env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"};
        o.env.push_back("AURA_WRITER_FD=3");
        o.env.push_back("AURA_WRITER_TOKEN=" + token);
        o.pass_fd = runner_fd;
        sandbox::RunResult r;
        AURA_ASSIGN_OR_RETURN(r, sandbox::run(profile, argv, packages, o));
        return host_facts(r);
      };
}

}  // namespace aura::supervisor
