// `aura worker`: the supervisor standalone. It does what every supervisor does when it starts --
// reap what an earlier, dead one left (recorded as supervisor.reaped), measure and record the
// capability panel -- and reports what is live (worlds whose holders run). With --watch it stays
// up and reaps again every N seconds until SIGINT or SIGTERM. Runs themselves are started by the
// commands that need them (aura attempt ..., aura judge, aura sandbox run), each acting as its own
// supervisor; serving run requests from a browser comes with `aura serve`.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/capabilities.h"
#include "engine/common/json_writer.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/supervisor/supervisor.h"

namespace aura::cli {
namespace {

namespace fs = std::filesystem;

std::atomic<bool> g_stop{false};
void on_signal(int) { g_stop = true; }

struct Live {
  size_t owners = 0;  // live holders and runs
  size_t names = 0;   // names they recorded and still hold
};

Result<Live> live_of(const fs::path& state_dir) {
  Live live;
  if (!fs::exists(state_dir)) return live;
  sandbox::LeakLedger reg(state_dir);
  std::vector<sandbox::LedgerEntry> entries;
  AURA_ASSIGN_OR_RETURN(entries, reg.entries());
  std::set<std::string> owners;
  for (const auto& e : entries) {
    if (e.released || !sandbox::LeakLedger::owner_alive(e.owner)) continue;
    owners.insert(e.owner);
    ++live.names;
  }
  live.owners = owners.size();
  return live;
}

int worker(Invocation& inv) {
  uint64_t watch = 0;
  if (inv.has("watch")) {
    auto w = inv.get_u64("watch", 0);
    if (!w.ok() || *w == 0 || *w > 86400)
      return inv.fail(Status::invalid("--watch takes 1..86400 seconds"), 2);
    watch = *w;
  }
  const fs::path state_dir = fs::absolute(inv.data_dir / "sandbox");
  // The supervisor: this process on the log, or a running daemon, which holds the data folder
  // and supervises its worlds.
  std::function<Result<supervisor::ReapRecord>()> reap;
  std::function<Result<PanelRecorded>()> measure;
  std::optional<Writer> writer;
  if (auto daemon = daemon_supervisor(inv)) {
    std::cout << "the lab's daemon holds " << inv.data_dir.string()
              << " and supervises its worlds: it reaps and measures\n";
    reap = std::move(daemon->reap);
    measure = std::move(daemon->measure);
  } else {
    auto opened = open_writer(inv);
    if (!opened.ok()) return inv.fail(opened.status());
    writer.emplace(std::move(opened).value());
    EventLog& log = *writer->log;
    reap = [&log, state_dir] { return supervisor::reap_and_record(state_dir, log); };
    measure = [&log]() -> Result<PanelRecorded> {
      auto caps = app::measure_and_record(log);
      if (!caps.ok()) return caps.status();
      return PanelRecorded{caps->seq, caps->available(), caps->measurement.capabilities.size()};
    };
  }

  auto reaped = reap();
  if (!reaped.ok()) return inv.fail(reaped.status().with_context("reap"));
  std::cout << "reaped " << reaped->runs_reaped << " runs or worlds left by an earlier process ("
            << reaped->paths_removed << " names removed)";
  if (reaped->orphan_runs_reaped != 0)
    std::cout << ", and " << reaped->orphan_runs_reaped << " left by dead processes of other labs";
  if (reaped->seq != 0) std::cout << ", recorded as seq " << reaped->seq;
  std::cout << "\n";
  for (const auto& f : reaped->failures) std::cout << "  could not remove: " << f << "\n";

  auto caps = measure();
  if (!caps.ok()) return inv.fail(caps.status());
  std::cout << "capabilities: " << caps->available << " of " << caps->measured
            << " available, recorded as seq " << caps->seq << " (aura caps show)\n";

  auto now_live = live_of(state_dir);
  if (!now_live.ok()) return inv.fail(now_live.status());
  std::cout << "live: " << now_live->owners << " worlds or runs holding " << now_live->names
            << " recorded names\n";

  int rounds = 0;
  if (watch != 0) {
    ::signal(SIGINT, on_signal);
    ::signal(SIGTERM, on_signal);
    std::cout << "watching: reaping every " << watch << " s until SIGINT or SIGTERM" << std::endl;
    while (!g_stop) {
      for (uint64_t i = 0; i < watch * 10 && !g_stop; ++i) ::usleep(100'000);
      if (g_stop) break;
      auto again = reap();
      if (!again.ok()) return inv.fail(again.status().with_context("reap"));
      ++rounds;
      if (again->seq != 0) {
        std::cout << "reaped " << again->runs_reaped << " (seq " << again->seq << ")" << std::endl;
      }
    }
    std::cout << "stopped after " << rounds << " rounds\n";
  }
  JsonArray failures;
  for (const auto& f : reaped->failures) failures.str(f);
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .raw("reaped", JsonWriter()
                                       .num("runs", uint64_t(reaped->runs_reaped))
                                       .num("paths", uint64_t(reaped->paths_removed))
                                       .num("seq", reaped->seq)
                                       .num("orphan_runs", uint64_t(reaped->orphan_runs_reaped))
                                       .raw("failures", failures.done())
                                       .done())
                    .num("capabilities_seq", caps->seq)
                    .num("live_owners", uint64_t(now_live->owners))
                    .num("live_names", uint64_t(now_live->names))
                    .num("watch_rounds", uint64_t(rounds))
                    .done());
  return 0;
}

}  // namespace

void register_worker_commands(CommandTable& r) {
  r.add(
      {"worker",
       "",
       "the supervisor standalone: reap leftovers, record capabilities, report what is live",
       "Does what every supervisor does when it starts (docs/SANDBOX.md, \"Reaping\"): removes "
       "what an earlier,\ndead process left in DATA/sandbox (processes, cgroups, stage folders, "
       "network namespaces, uid\nranges), recorded as one supervisor.reaped event; measures the "
       "capability panel and records it\n(capabilities.measured); prints how many worlds and runs "
       "are live. Worlds a learner keeps (their\nholder process runs) are left alone. With "
       "--watch N it stays up and reaps every N seconds until\nSIGINT or SIGTERM. When the lab's "
       "daemon holds --data, the daemon is the supervisor: it\nreaps and measures when asked "
       "(with --watch, every N seconds).\nWith --json "
       "the last line is {\"ok\":true,\"reaped\":{runs,paths,seq,failures},"
       "\"capabilities_seq\":N,\n\"live_owners\":N,\"live_names\":N,\"watch_rounds\":N}.",
       {{"watch", "N", "stay up, reaping every N seconds (1..86400)"}},
       0,
       0,
       worker});
}

}  // namespace aura::cli
