// The runner sandbox: runs one command in fresh user, mount, PID, network, IPC, UTS and cgroup
// namespaces, on an overlay root built from an explicit read-only list, in its own cgroup, with
// capabilities cut to the profile and a seccomp allowlist. Every fact in RunResult is measured by
// this (the supervisor's) side; a run is fully destroyed before run() returns.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "workers/sandbox/mounts.h"
#include "workers/sandbox/profile.h"

namespace aura::sandbox {

struct RunOptions {
  // Holds the leak ledger and each run's stage folder (runs/<run id>).
  std::filesystem::path state_dir;
  // Folders that must never be part of the lower image (the data and key folders); the state
  // folder is always added.
  std::vector<std::filesystem::path> forbidden_paths;
  // Environment inside; empty means PATH, HOME=/root and LANG=C.UTF-8 only.
  std::vector<std::string> env;
  // One descriptor the command inherits as fd 3 (the runner's end of its writer socket), or -1.
  // Every other descriptor but stdio is closed before execve. Must not be 0, 1 or 2.
  int pass_fd = -1;
};

// Host-stamped facts about one run.
struct RunResult {
  std::string run_id;
  bool exited = false;  // true: exit_code is valid; false: term_signal is
  int exit_code = -1;
  int term_signal = 0;
  bool killed_by_deadline = false;
  uint64_t cpu_ns = 0;  // from the run's cgroup
  uint64_t peak_memory_bytes = 0;
  bool peak_memory_known = false;
  uint64_t oom_kills = 0;        // processes the memory limit killed
  uint64_t pids_limit_hits = 0;  // forks refused by the pids limit
  uint64_t wall_ns = 0;          // clone to reap, on the supervisor's monotonic clock
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  Digest profile_digest{};
};

// Runs argv[0] (an absolute path inside the sandbox) with argv. `packages` are extra host paths
// shown read-only. Errors: kInvalidArgument for a bad profile, argv or lower path; kUnavailable
// when a mechanism is missing on this machine (user namespaces, overlayfs, cgroups, seccomp),
// naming the step that failed; kIo when the host fails. A command that fails is not an error.
// Thread safety: concurrent calls are fine (each run has its own id and cgroup).
Result<RunResult> run(const Profile& profile, const std::vector<std::string>& argv,
                      const std::vector<PackageMount>& packages, const RunOptions& options);

}  // namespace aura::sandbox
