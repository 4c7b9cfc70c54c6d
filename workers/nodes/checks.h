// The check calls of the nodes driver: evaluated by the supervisor's own code from outside the
// world (workers/inspect: openat2 in the node's root, /proc of the node's cgroup pids, HTTP from
// a child that joined only the node's network namespace), never by a program of the world.
// Identities come from what the learner cannot forge: user and group names from the accounts
// fixed at build, processes by the content of the program they execute (docs/GATE.md).
// Calls and their params: docs/WORLDS.md ("Checks of the nodes driver").
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/check_params.h"
#include "engine/scenario/manifest.h"
#include "engine/world/world_driver.h"
#include "workers/inspect/node_view.h"

namespace aura::workers::nodes {

// How long a node may take to settle (a restarted service to answer and run, a reload's old
// workers to leave) before a check, an ACK readback or a fingerprint takes it as it is, polled
// every kSettlePoll. A runaway guard, never a speed bar: a grade must not depend on how fast or
// busy the machine is. A restarted service answers in well under a second on an idle 2-core
// machine; a state that settles sooner ends the wait sooner.
inline constexpr std::chrono::seconds kSettleGuard{30};
inline constexpr std::chrono::milliseconds kSettlePoll{100};
// How long a failing check is retried even with the world at rest (no process, pid or listener
// changing, no managed service starting): enough for a service that shows no motion while it
// starts on an idle machine; beyond it only motion keeps the check waiting.
inline constexpr std::chrono::seconds kSettleFloor{3};
// Where aura-svcman keeps each service's status ("<name>.status", its "state" field).
inline constexpr std::string_view kSvcmanStateDir = "/run/svcman";

struct CheckNode {
  std::string name;
  std::vector<std::string> roles;
  std::string address;
  pid_t init_pid = -1;
  std::vector<pid_t> pids;  // every process of the node (host pids), from its cgroups
  // /etc/passwd and /etc/group as the package built them (fixed at build): user and group names
  // in checks resolve here, never through the node's live files.
  std::string passwd, group;
  // The paths the checks compare against the image, as built (encode_built text, as_built.h).
  std::string built;
  // The node's read-only image mounts: only a program run from one of them is the image's.
  std::set<uint64_t> image_mounts;
};

struct CheckContext {
  std::vector<CheckNode> nodes;
  // SHA-256 (hex) of each program a check names (`exe`, `listener_exe`), from the image.
  const std::map<std::string, std::string>* binaries = nullptr;
};

std::vector<std::string_view> check_call_names();

// Validates a check's call and params (at package load). `where` prefixes errors.
Status validate_check(const scenario::CheckSpec& check, std::string_view where);

// A check's params, read as validate_check reads them (engine/scenario/check_params.h, against
// the call's declared params): what the world reads a check's params by, never the raw JSON.
// `where` prefixes errors.
Result<scenario::CheckParams> read_check_params(const scenario::CheckSpec& check,
                                                std::string_view where);

// What `node` (with `roles`) must record at build for the manifest's checks, read through
// `view` after the layers, owners and modes and before any service or call: encode_built text.
Result<std::string> record_built(const scenario::Manifest& manifest,
                                 const std::vector<std::string>& roles,
                                 const inspect::NodeView& view);

// Before an ansible.converged check with a `drift` param converges: appends a marker line to
// that file on every node of role `to`, so that the converge must change each of them. The
// nodes it could not drift (the path is no regular file there), named; empty when all were.
Result<std::string> drift_before_converge(const scenario::CheckSpec& check,
                                          const CheckContext& ctx);

// What serves an HTTP check's port on each of its `to` nodes: the processes holding the port's
// listening socket (sorted), by node name. A reload replaces them (nginx's new workers, its old
// ones closing their sockets), a restart too; a node serving nothing has none.
Result<std::map<std::string, std::vector<pid_t>>> port_holders(const scenario::CheckSpec& check,
                                                               const CheckContext& ctx);

// Evaluates the check against the world. Errors only for the host's failures. `may_settle`:
// it failed only in ways a service still coming up may clear (no answer or no process yet);
// a definite failure (a wrong user, a wide mode, a missing file) is false.
Result<world::CheckOutput> run_check(const scenario::CheckSpec& check, const CheckContext& ctx,
                                     bool* may_settle = nullptr);

}  // namespace aura::workers::nodes
