// The supervisor's side of one run: it binds a writer socket to the run, starts the runner with
// the other end (through a Launcher: the sandbox in the lab, a plain fork in unit tests of this
// file), serves the runner's evidence frames while it runs, and then appends, itself, what it
// measured about the run. The runner's own claims about the run are never used. Contracts:
// docs/WRITER.md, docs/SANDBOX.md ("Host-stamped facts").
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "engine/writer/evidence_writer.h"

namespace aura::supervisor {

// What the supervisor measured about a run (cgroup counters, wait status, its own clock).
struct HostFacts {
  std::string profile_digest;  // 64 hex: the isolation the run had
  bool exited = false;         // true: exit_code is valid; false: term_signal is
  int exit_code = -1;
  int term_signal = 0;
  bool killed_by_deadline = false;
  uint64_t cpu_ns = 0;
  uint64_t peak_memory_bytes = 0;
  bool peak_memory_known = false;
  uint64_t oom_kills = 0;
  uint64_t pids_limit_hits = 0;
  uint64_t wall_ns = 0;
  std::string stdout_bytes, stderr_bytes;  // already capped by the launcher
  bool stdout_truncated = false, stderr_truncated = false;
};

// Starts the runner with `runner_fd` as the writer socket it inherits (the only descriptor it
// gets besides stdio) and the token it must send first (given to it in its environment as
// AURA_WRITER_FD and AURA_WRITER_TOKEN), waits until every process of the run is gone, and
// returns what it measured. An error means the run could not be started or measured.
using Launcher = std::function<Result<HostFacts>(int runner_fd, const std::string& token)>;

struct RunRecord {
  std::string run_id;
  HostFacts facts;
  writer::ConnectionReport evidence;
  uint64_t started_seq = 0;
  uint64_t ended_seq = 0;
};

// Runs one runner under `binding` (whose run_id this fills with a fresh random id when empty):
// appends run.started, serves the writer socket while `launch` runs, closes the token, then
// appends run.ended with the host facts, the stdout/stderr blobs and the evidence summary.
// `deadline` bounds the writer (the launcher enforces the run's own deadline).
Result<RunRecord> supervise_run(writer::RunBinding binding, const Launcher& launch, EventLog& log,
                                BlobStore& blobs, writer::RunTokens& tokens,
                                std::chrono::milliseconds deadline);

// What a starting supervisor found and removed of an earlier, dead one (sandbox::reap over
// `state_dir`), and of dead processes of other labs on the machine (sandbox::reap_orphans),
// recorded as one `supervisor.reaped` event (actor supervisor, stream lab/supervisor) when
// anything was found: runs reaped, paths removed, orphaned runs reaped, failures.
struct ReapRecord {
  int runs_reaped = 0;
  int paths_removed = 0;
  int orphan_runs_reaped = 0;
  std::vector<std::string> failures;
  uint64_t seq = 0;  // the event, 0 when there was nothing to record
};
Result<ReapRecord> reap_and_record(const std::filesystem::path& state_dir, EventLog& log);

}  // namespace aura::supervisor
