// Runs one probe step in a forked child with a deadline, so a probe that hangs, crashes or
// changes process state (unshare, seccomp, mounts) never affects the caller. The child writes one
// fixed-size report to a pipe and _exits; it allocates nothing after fork.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace aura::caps {

// What the child step says: err 0 on success, else the errno and the step that failed (a string
// literal: the child never allocates).
struct StepResult {
  int err = 0;  // 0: success; an errno; or -1: `step` is the whole reason
  const char* step = "";
};

// How the child ended, as the parent saw it.
struct ChildOutcome {
  bool ok = false;     // the child reported err 0 and exited 0
  std::string reason;  // "unshare(CLONE_NEWUSER): EPERM (Operation not permitted)", "timed out
                       // after 2000 ms", "killed by signal 31", ...
};

inline constexpr int kProbeTimeoutMs = 2000;

// Forks; the child runs `step` and reports. `step` must not allocate or throw (it runs after
// fork). The child is killed (its whole process group) at the deadline and always reaped.
ChildOutcome run_in_child(const std::function<StepResult()>& step,
                          int timeout_ms = kProbeTimeoutMs);

// How a command ran: its exit code or signal, and the first bytes of its stdout and stderr.
struct CommandOutcome {
  std::string error;  // non-empty when it could not be started (pipe, fork)
  bool timed_out = false;
  int exit_code = -1;  // -1 unless it exited
  int signal = 0;      // the signal that ended it, if any
  std::string output;  // stdout and stderr interleaved, at most kMaxCommandOutputBytes
};

inline constexpr size_t kMaxCommandOutputBytes = 4096;

// Runs argv[0] (an absolute path) with stdin from /dev/null, in its own process group, which is
// killed at the deadline and when the command exits (nothing it started outlives the call).
CommandOutcome run_command(const std::vector<std::string>& argv, int timeout_ms);

// "EPERM (Operation not permitted)".
std::string errno_text(int err);

}  // namespace aura::caps
