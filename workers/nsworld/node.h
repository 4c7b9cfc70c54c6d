// One node of a namespace world: a long-lived init process in user, mount, PID, IPC and UTS
// namespaces of its own, joined to the node's network namespace (from a WorldNetwork), on an
// overlay root built like a runner sandbox's (workers/sandbox/mounts.h), in a cgroup of its own.
// Commands run inside the node by joining its namespaces (exec()), as probes, actions and the
// node's services do. Everything the node makes is in the leak registry; destroy() removes it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "workers/sandbox/cgroup.h"
#include "workers/sandbox/mounts.h"
#include "workers/sandbox/registry.h"

namespace aura::nsworld {

struct NodeOptions {
  std::string hostname;         // the node's name inside
  std::filesystem::path netns;  // /run/netns/<name> to join; empty: a fresh one with lo only
  std::vector<std::string> lower_paths;          // the read-only image (same path inside)
  std::vector<sandbox::PackageMount> packages;   // package folders (overlays) and files
  std::vector<std::filesystem::path> forbidden;  // never part of the image (data, keys)
  std::filesystem::path state_dir;               // registry and stage folders
  uint64_t tmpfs_bytes = 128ull << 20;           // the root's upper layers
  uint32_t uid_base = 100'000;                   // root inside is uid_base outside
  uint32_t id_count = 65'536;
  sandbox::CgroupLimits limits;
};

struct ExecResult {
  bool exited = false;
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;
  std::string out, err;  // each capped at the exec's cap
};

// How a command run in a node is confined beyond the node's namespaces and cgroup.
enum class Confinement {
  // Probes, actions, learner scripts: no capabilities (no_new_privs) and the runner sandbox's
  // seccomp allowlist.
  kRunner,
  // The lab's own setup and the node's services (a service manager must switch users): the
  // node root's capabilities, which reach nothing outside the node's user namespace.
  kNodeRoot,
};

class Node {
 public:
  // Starts the node. kUnavailable names a mechanism this machine lacks; on any failure
  // everything already made is removed.
  static Result<std::unique_ptr<Node>> start(const NodeOptions& options, sandbox::CgroupTree& tree);
  ~Node();  // destroy()

  const std::string& id() const { return id_; }
  pid_t init_pid() const { return init_; }

  // Runs argv (absolute inside the node) as the node's root, in all of its namespaces and its
  // cgroup, with `env`, confined as `confine` says; stdout and stderr captured up to `cap`
  // bytes each. A command still running at `deadline` is killed. Background processes it
  // leaves (daemons) stay in the node.
  Result<ExecResult> exec(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          std::chrono::milliseconds deadline, size_t cap = 1 << 20,
                          Confinement confine = Confinement::kRunner);

  // Kills every process of the node, removes its cgroup and stage folder. Idempotent.
  Status destroy();

 private:
  Node() = default;
  std::string id_;
  pid_t keeper_ = -1;  // the host-side process that made the node's init (its parent)
  pid_t init_ = -1;
  std::filesystem::path stage_;
  sandbox::CgroupTree* tree_ = nullptr;
  std::unique_ptr<sandbox::Registry> registry_;
  bool live_ = false;
};

}  // namespace aura::nsworld
