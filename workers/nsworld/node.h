// One node of a namespace world: a long-lived init process in user, mount, PID, IPC and UTS
// namespaces of its own, joined to the node's network namespace (from a WorldNetwork), on an
// overlay root built like a runner sandbox's (workers/sandbox/mounts.h), in a cgroup of its own.
// Commands run inside the node by joining its namespaces (exec()), as probes, actions and the
// node's services do. Everything the node makes is in the leak ledger; destroy() removes it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "engine/common/status.h"
#include "workers/sandbox/cgroup.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/sandbox/mounts.h"

namespace aura::nsworld {

struct NodeOptions {
  std::string hostname;         // the node's name inside
  std::filesystem::path netns;  // /run/netns/<name> to join; empty: a fresh one with lo only
  std::vector<std::string> lower_paths;          // the read-only image (same path inside)
  std::vector<sandbox::PackageMount> packages;   // package folders (overlays) and files
  std::vector<std::filesystem::path> forbidden;  // never part of the image (data, keys)
  std::filesystem::path state_dir;               // ledger and stage folders
  uint64_t tmpfs_bytes = 128ull << 20;           // the root's upper layers
  uint32_t uid_base = 0;  // root inside is uid_base outside; 0: claim a range of the node's own
  uint32_t id_count = 65'536;
  // The ledger owner token its names are recorded under (LeakLedger::self_owner() when empty):
  // a world that outlives this process is owned by its holder process (workers/nodes).
  std::string owner;
  sandbox::CgroupLimits limits;
};

struct ExecResult {
  bool exited = false;
  int exit_code = -1;
  int term_signal = 0;
  bool timed_out = false;
  std::string out, err;  // each capped at the exec's cap
  bool out_truncated = false, err_truncated = false;
  uint64_t wall_ns = 0;        // fork to reap, on the host's monotonic clock
  sandbox::CgroupUsage usage;  // of the call group (ExecOptions::group), else zero
  bool usage_known = false;
};

// How a command run in a node is confined beyond the node's namespaces and cgroup.
enum class Confinement {
  // No Linux capabilities (no_new_privs) and the runner sandbox's seccomp allowlist.
  kRunner,
  // Probes, actions and learner scripts: the node root's file capabilities only (kCallCaps:
  // chown, DAC override and read-search, fowner, fsetid, kill -- all bounded by the node's user
  // namespace), no_new_privs and the runner sandbox's seccomp allowlist.
  kCall,
  // A node's service (nginx, sshd, a service manager) and everything it starts: the
  // Linux capabilities ExecOptions::linux_caps names (the package declares them per service),
  // no_new_privs and the runner sandbox's seccomp allowlist, set by the host before the exec so
  // nothing inside the node can undo them.
  kService,
  // The lab's own setup steps, before anything of the scenario runs: the node root's
  // capabilities, which reach nothing outside the node's user namespace.
  kNodeRoot,
};

// The Linux capabilities Confinement::kCall keeps.
uint64_t call_linux_caps();

struct ExecOptions {
  std::chrono::milliseconds deadline{10'000};
  size_t cap = 1 << 20;  // stdout and stderr, each
  Confinement confine = Confinement::kRunner;
  uint64_t linux_caps = 0;  // kService: the capability bits kept (CAP_*)
  // A descriptor the command gets as fd 3 (the runner's end of its writer socket), or -1.
  int pass_fd = -1;
  // Non-empty: the command runs in a cgroup of its own, `<node id>-<group>` ([a-z0-9]{1,16}),
  // made with `limits` and recorded under the node (destroy() removes it). Empty: the node's.
  std::string group;
  sandbox::CgroupLimits limits;
  // With a group: keep it after the command ends when processes are left in it (an action's or
  // script's daemons, frozen for checks and killed with the node); false: kill them and remove
  // the group (probes leave nothing behind).
  bool keep_group = false;
  // argv[0] is a program on the host (the lab's own, e.g. aura-runner), never a path in the node:
  // the command's process joins only the cgroup and execve's it on the host, so the host's loader
  // and libraries load it and nothing the node holds (its ld.so.preload, loader or binaries) is
  // read before main. It gets the node's namespaces and root, and a join spec (the confinement's
  // capabilities and seccomp filter), at fixed descriptors (workers/nsworld/join.h) and joins the
  // node itself first thing (nsworld::join_node), with `env` plus AURA_NODE_JOIN=1. Requires a
  // filtered confinement (not kNodeRoot).
  bool host_program = false;
};

// One overlay of the node's read-only image: mounted at `inside`, its upper folder `upper`
// (relative to the node's stage, Layers::stage) over the host folder `lower`.
struct OverlayLayer {
  std::string inside, upper, lower;
};

// A node's writable layers, opened from the host (Node::layers): O_PATH folders, read with
// *at() calls that follow no symlink and cross no mount.
struct Layers {
  int stage = -1;  // the stage tmpfs: each OverlayLayer::upper is under it
  int root = -1;   // the root tmpfs (every path the image's mounts do not cover)
  Layers() = default;
  Layers(Layers&& o) noexcept;
  Layers& operator=(Layers&&) = delete;
  ~Layers();
};

// What is needed to re-attach to a node another process started (Node::state(), Node::attach).
struct NodeState {
  std::string id;
  pid_t init_pid = -1;
  std::string init_start;  // the init's start time (/proc/<pid>/stat field 22): pid reuse guard
  std::filesystem::path stage;
  std::filesystem::path state_dir;
  uint32_t uid_base = 0;
  std::string owner;
  std::vector<OverlayLayer> overlays;
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
  Result<ExecResult> exec(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                          const ExecOptions& options);

  // The cgroup ids of the node's call groups that still exist, sorted (the node's own excluded).
  Result<std::vector<std::string>> call_groups() const;
  // Kills every process of call group `id` and removes it.
  Status remove_call_group(const std::string& id);
  // Moves `pids` (processes of the node's own group) into the node's quarantine group
  // (`<id>-q`, made on first use): a call group, so checks freeze it and destroy() kills it. A
  // pid that is gone by then is skipped.
  Status quarantine(const std::vector<pid_t>& pids);
  std::string quarantine_group() const { return id_ + "-q"; }

  // The node's writable layers as the host holds them: the init hands its stage and root to
  // its keeper before pivot_root (nothing inside can reach them afterwards), and the keeper
  // keeps them open for the node's life. Never read through the node's own view.
  Result<Layers> layers() const;
  const std::vector<OverlayLayer>& overlays() const { return overlays_; }

  NodeState state() const;
  uint32_t uid_base() const { return uid_base_; }
  // Re-attaches to a node started by another process. kFailedPrecondition when its init is
  // gone or is not the same process (pid reuse).
  static Result<std::unique_ptr<Node>> attach(const NodeState& state, sandbox::CgroupTree& tree);
  // Forgets the node without destroying it (it lives on for a later attach()).
  void detach() { live_ = false; }

  // Kills every process of the node, removes its cgroup and stage folder. Idempotent.
  Status destroy();

 private:
  Node() = default;
  std::string id_;
  pid_t keeper_ = -1;  // the host-side process that made the node's init (its parent)
  pid_t init_ = -1;
  std::filesystem::path stage_;
  sandbox::CgroupTree* tree_ = nullptr;
  std::unique_ptr<sandbox::LeakLedger> ledger_;
  std::filesystem::path state_dir_;
  std::string owner_;
  uint32_t uid_base_ = 0;
  std::vector<OverlayLayer> overlays_;
  bool live_ = false;
};

}  // namespace aura::nsworld
