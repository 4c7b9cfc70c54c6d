// CLI commands on a lab whose daemon is running: the command goes to the daemon over its socket
// (DATA/../run/daemon.sock, as root) instead of failing because the daemon holds the data folder.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli.h"
#include "engine/log/event.h"
#include "workers/supervisor/supervisor.h"

namespace aura::cli {

// `aura judge SCENARIO` through the daemon's judge queue, followed to its verdicts and printed as
// the in-process judge prints them (the exit code and --json alike). nullopt when no daemon
// answers on the data folder's socket: the caller runs the judge itself.
std::optional<int> forward_judge(Invocation& inv);

// `aura log snapshot --out DIR` made by the daemon (operator.snapshot into DIR, as root needs no
// operator token), printed as the in-process command prints it; nullopt when no daemon answers.
std::optional<int> forward_snapshot(Invocation& inv);

// `aura log checkpoint` (operator.checkpoint: the signed note printed), `aura caps` when it
// records (operator.refresh: measured and recorded by the daemon) and `aura projections
// rebuild` (operator.rebuild: the daemon rebuilds the projections it keeps current) through the
// daemon; nullopt when no daemon answers.
std::optional<int> forward_operator(Invocation& inv);

// `aura attempt start|predict|probe|submit|authorize|apply|ack|verify|gate|receipt|reflect|
// abandon|reset` through the daemon's attempt ops (root on the machine needs no attempt token):
// the answer's members, then the attempt's phase and next step. `gate` follows the attempt until
// its verdict. nullopt for any other command, or when no daemon answers.
std::optional<int> forward_attempt(Invocation& inv);

// `aura log append` (log.append: the event as given, held to the same rules by the daemon) and
// `aura scenario load DIR...` (scenario.load: each folder loaded against the keys folder's trust
// store and recorded by the daemon) through the daemon, printed as the command prints them;
// nullopt when no daemon answers.
std::optional<int> forward_log_append(Invocation& inv, const EventDraft& event);
std::optional<int> forward_scenario_load(Invocation& inv,
                                         const std::vector<std::filesystem::path>& dirs);

// `aura scenario sign DIR` on a lab a daemon holds (scenario.sign: the daemon signs DIR with
// `key` and records it), printed as the command prints it; nullopt when no daemon answers.
std::optional<int> forward_scenario_sign(Invocation& inv, const std::filesystem::path& dir,
                                         const std::filesystem::path& key);

// `aura setup` on a lab a daemon holds (lab.setup: the keys kept, the packages signed, loaded
// and recorded by the daemon, the panel measured), its lines printed; the JSON's members are
// the daemon's, `more` adds the caller's. nullopt when no daemon answers.
std::optional<int> forward_setup(Invocation& inv, const std::vector<std::filesystem::path>& dirs,
                                 const std::function<Status()>& after);

// The lab's daemon as the supervisor, for `aura worker` beside it: `reap` has it reap what an
// earlier process left (operator.reap), `measure` measure and record the capability panel
// (operator.refresh). nullopt when no daemon answers.
struct PanelRecorded {
  uint64_t seq = 0;
  uint64_t available = 0, measured = 0;
};
struct DaemonSupervisor {
  std::function<Result<supervisor::ReapRecord>()> reap;
  std::function<Result<PanelRecorded>()> measure;
};
std::optional<DaemonSupervisor> daemon_supervisor(const Invocation& inv);

}  // namespace aura::cli
