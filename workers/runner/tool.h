// A node tool the runner executes for an op (nginx, aura-svcman): stdin empty, stdout and
// stderr into one pipe captured up to the op's cap, a clean environment (never the writer's
// token or socket), its own process group, and a deadline at which the group is killed.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "workers/runner/op.h"

namespace aura::runner {

// A runaway guard, never a speed bar: a converge of three nodes takes seconds on an idle machine
// and must still finish on one many times slower and busy (a verdict must not depend on speed).
inline constexpr std::chrono::seconds kToolDeadline{180};

// The deadline report_tool() gives a tool: kToolDeadline unless set_tool_deadline() shortened it
// (the runner's AURA_TOOL_DEADLINE_S, which only its starter sets: a test that must see a tool
// killed need not wait three minutes).
std::chrono::seconds tool_deadline();
// Sets tool_deadline() to `s`, 1 s to kToolDeadline; anything else is refused.
Status set_tool_deadline(std::chrono::seconds s);

struct ToolRun {
  std::string output;      // stdout and stderr together, at most the cap
  bool truncated = false;  // the tool wrote more than the cap
  bool timed_out = false;  // killed at the deadline
  int wait_status = 0;
};

// Where a tool runs besides the defaults: a working folder (else the runner's), and variables
// added to the clean environment (ansible-playbook needs HOME and a UTF-8 locale).
struct ToolPlace {
  std::string cwd;
  std::vector<std::string> env;  // NAME=value, added to PATH and LC_ALL=C (or replacing one)
};

// Runs argv (argv[0] an absolute path). A world error when it cannot be started (the exec's
// or chdir's errno, reported by the child on a close-on-exec pipe).
Result<ToolRun> run_tool(const std::vector<std::string>& argv, size_t cap,
                         std::chrono::milliseconds deadline, const ToolPlace& place = {});

// Runs argv with kToolDeadline and writes its output, then "killed: ..." when it timed out, then
// "exit N" (or "exit signal N") as the last line, which is kept whatever the cap cuts from the
// output. Ok when the tool exited 0, else failure_in_output().
Status report_tool(const std::vector<std::string>& argv, Output& out, const ToolPlace& place = {});

}  // namespace aura::runner
