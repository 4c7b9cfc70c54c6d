// The "nodes" world driver: a world is a small fleet of namespace nodes (workers/nsworld) on a
// world network of its own (workers/netns), built from the signed package. Probes and actions
// run as `aura-runner` inside a node, one supervised run each: a call cgroup of its own, the
// node root's file capabilities only, no_new_privs, the seccomp allowlist, output back only
// through the run's writer socket. Gray-path scripts run the same way. Checks and fingerprints
// are the supervisor's own code reading the node from outside (workers/inspect), with the
// learner's processes frozen. Design: docs/WORLDS.md ("The nodes driver").
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/world/world_driver.h"
#include "workers/sandbox/cgroup.h"

namespace aura::workers::nodes {

class NodesWorld;

inline constexpr std::string_view kDriverName = "nodes";

// The calls a nodes world runs through aura-runner (docs/RUNNER.md). The check calls the
// supervisor evaluates itself are in checks.h.
struct OpShape {
  std::string_view name;
  bool action;  // false: a probe (read-only)
  std::vector<std::pair<std::string_view, scenario::ParamType>> args;
};
const std::vector<OpShape>& op_shapes();

// Where a tool the lab ships (aura-runner, aura-svcman, aura-app, aura-holder) is: $AURA_TOOLS_DIR
// when set, else PREFIX/libexec/aura for an installed aura, or beside this executable and in the
// build tree's workers/ folders (engine/common/install_layout.h). kUnavailable if missing.
Result<std::string> tool_path(std::string_view name);

// The digest of the isolation every call of a nodes world runs under (bound into receipts and
// each run's run.started).
std::string nodes_profile_digest();
// The confinement every nodes world applies, as canonical text derived from the policy objects
// (the runner seccomp program, the call capability set, node and call limits, deadlines, the
// read-only image): nodes_profile_digest() covers it, and each world's build record adds its own
// mount plan (world_record.cc).
std::string nodes_policy_text();

class NodesDriver final : public world::WorldDriver {
 public:
  NodesDriver();
  ~NodesDriver() override;
  std::string_view name() const override { return kDriverName; }
  void configure(const world::WorldHost& host) override;
  Status check_manifest(const scenario::Manifest& manifest) const override;
  Result<std::unique_ptr<world::World>> create(const std::filesystem::path& package_dir,
                                               const scenario::Manifest& manifest,
                                               std::string_view world_id, uint64_t seed,
                                               const std::filesystem::path& work_dir) override;
  Result<std::unique_ptr<world::World>> open(const scenario::Manifest& manifest,
                                             std::string_view world_id,
                                             const std::filesystem::path& work_dir) override;
  Status destroy(std::unique_ptr<world::World> world) override;
  // Ends the world's holder (if it is still the process world.json names), then reaps and
  // records every name whose owner is gone, then removes the folder.
  Status discard(const std::filesystem::path& work_dir) override;
  std::string profile_digest() const override;
  std::string capabilities_json() const override;
  // Worlds share only the cgroup tree (per-run groups are thread-safe) and the ledger
  // (appends under a file lock); each has its own holder, network, nodes and folders.
  bool concurrent_worlds() const override { return true; }

 private:
  Result<sandbox::CgroupTree*> tree();
  Result<std::unique_ptr<NodesWorld>> new_world();
  world::WorldHost host_;
  bool configured_ = false;
  std::mutex tree_mu_;  // tree_ is detected once, by whichever world needs it first
  std::unique_ptr<sandbox::CgroupTree> tree_;
};

}  // namespace aura::workers::nodes
