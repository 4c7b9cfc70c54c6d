#include "workers/supervisor/supervisor.h"

#include <sodium.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <span>

#include "engine/blob/evidence_ref.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "workers/sandbox/leak_ledger.h"

namespace aura::supervisor {
namespace {

// Closes a descriptor at scope end unless released.
struct Fd {
  int fd = -1;
  ~Fd() { reset(); }
  void reset() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
};

std::string random_run_id() {
  uint8_t raw[8];
  randombytes_buf(raw, sizeof raw);
  return to_hex(std::span<const uint8_t>(raw, sizeof raw));
}

Result<BlobInfo> put(BlobStore& blobs, std::string_view bytes) {
  return blobs.put(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

JsonWriter header(const writer::RunBinding& b) {
  JsonWriter w;
  w.num("v", 1).str("attempt", b.attempt).str("run", b.run_id).str("world", b.world);
  return w;
}

}  // namespace

Result<RunRecord> supervise_run(writer::RunBinding binding, const Launcher& launch, EventLog& log,
                                BlobStore& blobs, writer::RunTokens& tokens,
                                std::chrono::milliseconds deadline) {
  if (sodium_init() < 0) return Status::unavailable("libsodium failed to initialise");
  if (binding.run_id.empty()) binding.run_id = random_run_id();
  AURA_RETURN_IF_ERROR(binding.validate());
  RunRecord rec;
  rec.run_id = binding.run_id;

  std::string token;
  AURA_ASSIGN_OR_RETURN(token, tokens.issue(binding.run_id));
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
    tokens.end(binding.run_id);
    return Status::io("socketpair: " + file_io::errno_text(errno));
  }
  Fd mine{sv[0]}, theirs{sv[1]};

  JsonArray kinds;
  for (const auto& k : binding.kinds) kinds.str(k);
  auto started = log.append({binding.stream(), events::kRunStarted, "supervisor",
                             header(binding).raw("kinds", kinds.done()).done()});
  if (!started.ok()) {
    tokens.end(binding.run_id);
    return started.status();
  }
  rec.started_seq = started->seq;

  // The writer serves the connection while the launcher runs the runner.
  const auto writer_deadline = std::chrono::steady_clock::now() + deadline;
  auto served = std::async(std::launch::async, [&] {
    return writer::serve_connection(mine.fd, binding, tokens, log, blobs, writer_deadline);
  });
  Result<HostFacts> facts = launch(theirs.fd, token);
  theirs.reset();  // the run is over: with every copy of its end closed the writer sees EOF
  Result<writer::ConnectionReport> evidence = served.get();
  tokens.end(binding.run_id);  // the token is useless from now on
  if (!facts.ok()) return facts.status().with_context("run " + binding.run_id);
  if (!evidence.ok()) return evidence.status().with_context("writer of run " + binding.run_id);
  rec.facts = std::move(facts).value();
  rec.evidence = std::move(evidence).value();

  // What the supervisor measured, appended by the supervisor.
  const HostFacts& f = rec.facts;
  BlobInfo out, err;
  AURA_ASSIGN_OR_RETURN(out, put(blobs, f.stdout_bytes));
  AURA_ASSIGN_OR_RETURN(err, put(blobs, f.stderr_bytes));
  JsonArray refs;
  refs.raw(evidence_ref_json({"stdout", out.sha256, "run.stdout", out.bytes}));
  refs.raw(evidence_ref_json({"stderr", err.sha256, "run.stderr", err.bytes}));
  JsonWriter w = header(binding);
  w.str("profile_digest", f.profile_digest);
  if (f.exited) {
    w.num("exit_code", int64_t(f.exit_code));
  } else {
    w.num("signal", int64_t(f.term_signal));
  }
  w.boolean("killed_by_deadline", f.killed_by_deadline)
      .num("cpu_ns", f.cpu_ns)
      .num("wall_ns", f.wall_ns);
  if (f.peak_memory_known) w.num("peak_memory_bytes", f.peak_memory_bytes);
  w.num("oom_kills", f.oom_kills)
      .num("pids_limit_hits", f.pids_limit_hits)
      .boolean("stdout_truncated", f.stdout_truncated)
      .boolean("stderr_truncated", f.stderr_truncated)
      .raw("evidence", JsonWriter()
                           .num("frames", uint64_t(rec.evidence.frames))
                           .num("accepted", uint64_t(rec.evidence.accepted))
                           .boolean("rejected", rec.evidence.rejected)
                           .boolean("timed_out", rec.evidence.timed_out)
                           .done())
      .raw("refs", refs.done());
  auto ended = log.append({binding.stream(), events::kRunEnded, "supervisor", w.done()});
  if (!ended.ok()) return ended.status();
  rec.ended_seq = ended->seq;
  return rec;
}

Result<ReapRecord> reap_and_record(const std::filesystem::path& state_dir, EventLog& log) {
  ReapRecord rec;
  sandbox::ReapReport report;
  AURA_ASSIGN_OR_RETURN(report, sandbox::reap(state_dir));
  rec.runs_reaped = report.runs_reaped;
  rec.paths_removed = report.paths_removed;
  rec.failures = report.failures;
  // Names other labs' dead processes left after their data folders were removed: found
  // through the machine's run folder, since no data folder names them any more.
  sandbox::ReapReport orphans;
  AURA_ASSIGN_OR_RETURN(orphans, sandbox::reap_orphans());
  rec.orphan_runs_reaped = orphans.runs_reaped;
  rec.failures.insert(rec.failures.end(), orphans.failures.begin(), orphans.failures.end());
  if (rec.runs_reaped == 0 && rec.paths_removed == 0 && rec.orphan_runs_reaped == 0 &&
      rec.failures.empty())
    return rec;
  JsonArray failures;
  for (const auto& f : rec.failures) failures.str(f);
  auto appended = log.append({"lab/supervisor", events::kSupervisorReaped, "supervisor",
                              JsonWriter()
                                  .num("v", 1)
                                  .str("state_dir", state_dir.string())
                                  .num("runs_reaped", uint64_t(rec.runs_reaped))
                                  .num("paths_removed", uint64_t(rec.paths_removed))
                                  .num("orphan_runs_reaped", uint64_t(rec.orphan_runs_reaped))
                                  .raw("failures", failures.done())
                                  .done()});
  if (!appended.ok()) return appended.status();
  rec.seq = appended->seq;
  return rec;
}

}  // namespace aura::supervisor
