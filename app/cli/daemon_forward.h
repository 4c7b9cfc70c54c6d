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

}  // namespace aura::cli
