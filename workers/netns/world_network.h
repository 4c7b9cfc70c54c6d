// A multi-node world's network: one network namespace per node, joined by a bridge that lives
// in a network namespace of the world's own ("the switch"), never in the host's. Each veth pair
// is created inside the switch namespace with its peer moved straight into the node, so no veth
// end, address or route ever appears in the host's namespace. Nodes get addresses on one /24
// and no default route: nothing a node sends can leave the world. Design: docs/SANDBOX.md
// ("World networks").
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "workers/sandbox/leak_ledger.h"

namespace aura::netns {

inline constexpr size_t kMaxNodes = 32;

class WorldNetwork {
 public:
  // Creates the switch and one namespace per node (names [a-z][a-z0-9-]{0,15}, unique), all
  // named "aura-<tag>-..." (tag: 8..16 lowercase hex, unique per world). On failure everything
  // already made is removed before returning.
  // With `ledger`, every namespace name is recorded (kind netns, run id = tag) before it is
  // made and released after it is gone, so a later supervisor's sandbox::reap() removes the
  // names a dead one left. The ledger must outlive the world network.
  static Result<WorldNetwork> create(std::string_view tag, const std::vector<std::string>& nodes,
                                     sandbox::LeakLedger* ledger = nullptr);

  // Takes charge of a world network another process created with `tag` and `nodes` (it is
  // checked to exist): destroy() then removes it. For re-attaching to a live world.
  static Result<WorldNetwork> adopt(std::string_view tag, const std::vector<std::string>& nodes,
                                    sandbox::LeakLedger* ledger = nullptr);
  // Forgets the network without removing it (it lives on for a later adopt()).
  void detach() { live_ = false; }

  WorldNetwork() = default;
  WorldNetwork(WorldNetwork&& other) noexcept;  // the moved-from object owns nothing
  WorldNetwork& operator=(WorldNetwork&& other) noexcept;
  ~WorldNetwork();  // destroys what is left

  // Removes every namespace it made (and with them the bridge and veths). Idempotent.
  Status destroy();

  const std::string& tag() const { return tag_; }
  const std::vector<std::string>& nodes() const { return nodes_; }
  std::string netns_name(std::string_view node) const;  // "aura-<tag>-n-<node>"
  std::string switch_name() const;                      // "aura-<tag>-sw"
  std::string address(std::string_view node) const;     // "10.77.0.<index+1>"
  // Every name this world registered (its namespaces under /run/netns), for leak accounting.
  std::vector<std::string> registered_names() const;

  // Runs `fn` in a forked child that has joined `node`'s network namespace (and only that);
  // returns its exit status (128 + signal when killed). `fn`'s return value is the exit code.
  Result<int> run_in(std::string_view node, const std::function<int()>& fn) const;

 private:
  Status add_netns(const std::string& name);

  std::string tag_;
  std::vector<std::string> nodes_;
  bool live_ = false;
  sandbox::LeakLedger* ledger_ = nullptr;
};

// Runs /usr/sbin/ip (or /sbin/ip, /bin/ip) with `args`, no shell; kUnavailable when there is
// no ip binary, kIo naming the command and its stderr when it fails.
Status run_ip(const std::vector<std::string>& args);

// Names under /run/netns starting with `prefix`.
std::vector<std::string> netns_names_with_prefix(std::string_view prefix);

}  // namespace aura::netns
