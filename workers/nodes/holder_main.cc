// aura-holder: the process that owns a nodes world's names in the leak ledger, so that a world
// lives exactly as long as the process that made it, unless that process made it persist.
// Started by the driver (workers/nodes/nodes_world.cc) with fd 3 the read end of a pipe whose
// write end only the world's creator holds. 'P' on the pipe: the world persists (a learner's
// live world, reopened by later commands) and the holder waits for destroy() to end it. The pipe
// closing without 'P' means the creator is gone, however it ended (SIGKILL included): the holder
// tears the world down -- every process, cgroup, network namespace, stage folder and uid range
// recorded under its owner token -- and exits. So does a persisted world's holder once the world's
// data folder is gone. The node keepers watch this process (a pidfd), so
// a holder that is itself killed still takes the nodes' processes with it; the names it could not
// remove are left to the next reap (sandbox::reap, reap_orphans). Design: docs/WORLDS.md.
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "workers/sandbox/leak_ledger.h"

namespace {
constexpr unsigned kPersistCheckSeconds = 2;
}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] != '/') {
    std::fprintf(stderr, "usage: aura-holder STATE_DIR  (fd 3: the creator's pipe)\n");
    return 2;
  }
  ::signal(SIGHUP, SIG_IGN);
  ::signal(SIGINT, SIG_IGN);
  ::signal(SIGPIPE, SIG_IGN);
  bool persist = false;
  for (;;) {
    char c;
    const ssize_t n = ::read(3, &c, 1);
    if (n == 1 && c == 'P') persist = true;
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) break;
  }
  ::close(3);
  // A persisted world lives until destroy() tears it down and SIGKILLs this process, or until its
  // data folder is gone (a test's temporary lab removed, an operator's rm -r): nothing can reopen
  // it then, so the holder tears it down as if its creator had ended.
  if (persist) {
    while (::access(argv[1], F_OK) == 0) ::sleep(kPersistCheckSeconds);
  }
  auto report = aura::sandbox::reap_owner(argv[1], aura::sandbox::LeakLedger::self_owner());
  if (!report.ok()) {
    std::fprintf(stderr, "aura-holder: %s\n", report.status().message().c_str());
    return 1;
  }
  for (const std::string& f : report->failures)
    std::fprintf(stderr, "aura-holder: %s\n", f.c_str());
  return report->failures.empty() ? 0 : 1;
}
