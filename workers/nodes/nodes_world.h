// A live nodes world: its holder process, world network and nodes, and what it was built from.
// Internal to the nodes driver (nodes_driver.h is the contract).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/scenario/manifest.h"
#include "engine/world/world_driver.h"
#include "workers/inspect/layer_read.h"
#include "workers/inspect/node_view.h"
#include "workers/netns/world_network.h"
#include "workers/nodes/build_spec.h"
#include "workers/nsworld/node.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/supervisor/supervisor.h"

namespace aura::workers::nodes {

// The process that owns a world's names in the leak ledger (aura-holder, holder_main.cc). When
// the process that made the world is gone (its pipe closes) it tears the world down, unless it
// was told to persist; a persisting holder lives until destroy.
struct Holder {
  pid_t pid = -1;
  std::string owner;   // LeakLedger owner token of the holder
  int pipe = -1;       // our end; closing it ends a holder that was not told to persist
  bool child = false;  // a child of this process (to reap)
};

struct LiveNode {
  const NodeSpec* spec = nullptr;
  std::string address;  // on the world network
  std::unique_ptr<nsworld::Node> node;
  // The node's /etc/passwd and /etc/group as built from the package, read before any service or
  // call ran: the identities checks compare numbers against (never the live files).
  std::string passwd, group;
  // The paths the checks compare against the image, as built (checks.h record_built).
  std::string built;
  // The mounts (ids) of the node's read-only image, recorded at build: a process runs an image
  // program only from one of them (inspect::NodeView::host_backed_mounts).
  std::set<uint64_t> image_mounts;
  // The node's writable layers as built (world_changes.cc): one "<escaped path>\t<entry>" line
  // per entry, what changes() compares the layers with.
  std::string pristine;
};

class NodesWorld final : public world::World {
 public:
  NodesWorld(const world::WorldHost& host, sandbox::CgroupTree& tree);
  ~NodesWorld() override;  // detaches: only NodesDriver::destroy removes a world

  const std::string& id() const override { return world_id_; }
  void bind_attempt(std::string_view attempt) override { attempt_ = attempt; }
  Status persist() override;
  Result<world::CallOutput> probe(const scenario::Call& call, uint64_t max_output_bytes) override;
  Result<world::CallOutput> act(const scenario::Call& call) override;
  void begin_rollback() override { rolling_back_ = true; }
  Result<world::CallOutput> run_script(const scenario::Target& target,
                                       std::string_view script) override;
  Result<world::CheckOutput> check(const scenario::CheckSpec& check) override;
  Result<std::string> fingerprint() override;
  // world_changes.cc: every node's writable layers against the world as built.
  Result<std::string> changes() override;
  // world_record.cc: the policy, programs and layers it was built with, and the ACK readback.
  Result<world::BuildRecord> build_record() override;
  Result<world::Readback> read_back(const scenario::Call& action,
                                    const world::AppliedCall& applied) override;

  // Builds the world (the driver checked the manifest). On failure, the caller destroys it.
  Status build(const std::filesystem::path& package_dir, const scenario::Manifest& manifest,
               std::string_view world_id, uint64_t seed, const std::filesystem::path& work_dir);
  // Re-attaches to a world build() made (its state file in work_dir).
  Status reopen(const scenario::Manifest& manifest, std::string_view world_id,
                const std::filesystem::path& work_dir);
  // Removes everything: processes, nodes, network, ledger names, the work folder.
  Status destroy();

  const std::vector<LiveNode>& nodes() const { return nodes_; }

 private:
  Status load_spec(const scenario::Manifest& manifest, std::string_view world_id, uint64_t seed);
  Result<std::vector<LiveNode*>> resolve(const scenario::Target* target);
  LiveNode* find_node(std::string_view name);
  struct Override {
    std::string host;  // the file's stem
    std::string file;  // absolute path in the project's node
  };
  Result<std::vector<Override>> overrides(const SelectorSpec& sel, LiveNode& project);
  std::vector<LiveNode*> with_role(std::string_view role);
  Status can_run() const;
  // The call's path-kind targets on node `n`, by parameter name; nullopt when a selector matches
  // nothing there (or the node lacks the selector's role).
  Result<std::optional<std::map<std::string, std::string>>> resolve_paths(
      const scenario::Call& call, LiveNode& n);
  static Result<world::CallOutput> unresolved(const Status& why);
  // With the writer: argv is the host's aura-runner, joined into the node (host_program), and the
  // writer holds its evidence to one frame of at most `max_output_bytes`.
  Result<supervisor::RunRecord> supervised(nsworld::Node& node, const std::string& kind,
                                           const std::vector<std::string>& argv,
                                           nsworld::ExecOptions options, bool with_writer = true,
                                           uint64_t max_output_bytes = 0);
  Result<world::CallOutput> run_calls(const scenario::Call& call, bool action, uint64_t cap);
  Status freeze_learner(bool freeze);
  // Every entry of `n`'s writable layers, read from the host; and all nodes' as built.
  Result<inspect::LayerState> read_layers(const LiveNode& n) const;
  Status record_pristine();
  Result<std::optional<world::CheckOutput>> converge_first(const scenario::CheckSpec& spec);
  // The node's processes (comm uid gid, counted) and listeners (with their owners' names).
  Result<std::string> live_state(nsworld::Node& node, const inspect::NodeView& view);
  // What tells a world in motion from one at rest, as text compared between two moments: every
  // node's live_state and pids, first line "starting" while a managed service is starting.
  std::string motion();
  Status write_state() const;
  // binaries_ for the manifest's checks, from `tools` (inside path -> host path of the lab's
  // own programs) and the read-only image (the same path on the host).
  Status hash_binaries(const scenario::Manifest& manifest,
                       const std::map<std::string, std::string>& tools);
  Status hash_program(const std::string& inside, const std::map<std::string, std::string>& tools,
                      const std::string& where);
  // Moves every process of `n`'s own group that runs none of its services' programs (by
  // content, binaries_) into the node's quarantine group, a call group checks freeze.
  Status quarantine_strays(LiveNode& n);

  world::WorldHost host_;
  sandbox::CgroupTree* tree_;
  std::string world_id_, attempt_, scenario_, version_;
  uint64_t seed_ = 0;
  std::filesystem::path work_dir_;
  BuildSpec spec_;
  std::vector<scenario::TargetTerm> terms_;
  // The runner's reading probes (file.read, dir.list) by name: the path prefixes the catalog
  // allows and excludes, one a line, handed to the runner so it refuses a symlink that leads out
  // of them before it reads anything.
  struct ReadBounds {
    std::string within, without;
  };
  std::map<std::string, ReadBounds> read_bounds_;
  Holder holder_;
  std::unique_ptr<sandbox::LeakLedger> ledger_;
  std::unique_ptr<netns::WorldNetwork> net_;
  std::vector<LiveNode> nodes_;
  // SHA-256 (hex) of each program the manifest's checks identify processes by (`exe`,
  // `listener_exe`) and of each service's programs (paths inside a node), hashed from the
  // image on the host at build.
  std::map<std::string, std::string> binaries_;
  // SHA-256 (hex) of the SHA256SUMS the staged layers were checked against (build_record).
  std::string package_sums_sha256_;
  bool runs_ansible_ = false;  // the catalog or a check runs the Ansible project
  // What each selector first resolved to: a path selector on each node ("<node>\n<selector>" ->
  // path), a node selector ("\n<selector>" -> node names, one per line); and whether the actions
  // now are the rollback, which resolves a selector to that (begin_rollback).
  std::map<std::string, std::string> resolved_;
  bool rolling_back_ = false;
};

}  // namespace aura::workers::nodes
