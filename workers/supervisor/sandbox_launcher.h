// The lab's Launcher: runs the runner through the sandbox (workers/sandbox), with the writer
// socket's runner end as fd 3 and the token in its environment, and turns what the sandbox
// measured into the supervisor's HostFacts.
#pragma once

#include <string>
#include <vector>

#include "workers/sandbox/sandbox.h"
#include "workers/supervisor/supervisor.h"

namespace aura::supervisor {

// HostFacts of a finished sandbox run (field for field).
HostFacts host_facts(const sandbox::RunResult& r);

// A Launcher that runs `argv` in the sandbox under `profile`. AURA_WRITER_FD=3 and
// AURA_WRITER_TOKEN=<token> are added to `options.env` (which otherwise keeps its defaults).
Launcher sandbox_launcher(sandbox::Profile profile, std::vector<std::string> argv,
                          std::vector<sandbox::PackageMount> packages, sandbox::RunOptions options);

}  // namespace aura::supervisor
