// CLI commands on a lab whose daemon is running: the command goes to the daemon over its socket
// (DATA/../run/daemon.sock, as root) instead of failing because the daemon holds the data folder.
#pragma once

#include <optional>

#include "app/cli/cli.h"

namespace aura::cli {

// `aura judge SCENARIO` through the daemon's judge queue, followed to its verdicts and printed as
// the in-process judge prints them (the exit code and --json alike). nullopt when no daemon
// answers on the data folder's socket: the caller runs the judge itself.
std::optional<int> forward_judge(Invocation& inv);

// `aura log snapshot --out DIR` made by the daemon (operator.snapshot into DIR, as root needs no
// operator token), printed as the in-process command prints it; nullopt when no daemon answers.
std::optional<int> forward_snapshot(Invocation& inv);

// `aura log checkpoint` (operator.checkpoint: the signed note printed) and `aura caps` when it
// records (operator.refresh: measured and recorded by the daemon) through the daemon; nullopt
// when no daemon answers.
std::optional<int> forward_operator(Invocation& inv);

// `aura attempt start|predict|probe|submit|authorize|apply|ack|verify|gate|receipt|reflect|
// abandon|reset` through the daemon's attempt ops (root on the machine needs no attempt token):
// the answer's members, then the attempt's phase and next step. `gate` follows the attempt until
// its verdict. nullopt for any other command, or when no daemon answers.
std::optional<int> forward_attempt(Invocation& inv);

}  // namespace aura::cli
