// The "build" recipe of a nodes-driver world (docs/WORLDS.md, "The nodes driver"): the nodes,
// their roles, the package folders copied onto each node's root, the owners and modes set after
// the copy, the services started, and the state a fingerprint covers. Parsed strictly: unknown
// members, bad names and unsafe paths are refused naming the JSON path.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::workers::nodes {

inline constexpr size_t kMaxNodes = 8;

struct OwnerSpec {
  std::string path;   // absolute, normalised
  std::string owner;  // user name or number ("" keeps it)
  std::string group;  // group name or number ("" keeps it)
  std::string mode;   // octal text ("" keeps it)
};

struct ServiceSpec {
  std::string name;               // [a-z][a-z0-9-]{0,31}
  std::vector<std::string> argv;  // argv[0] absolute; started as the node's root, in background
  uint16_t ready_tcp = 0;         // ready once something listens on this TCP port
  std::string ready_unix;         // ... or on this Unix socket path
};

struct NodeSpec {
  std::string name;  // [a-z][a-z0-9-]{0,15}, unique in the world
  std::vector<std::string> roles;
  std::vector<std::string> layers;  // package folders, copied onto / in order
  std::vector<OwnerSpec> owners;
  std::vector<ServiceSpec> services;  // started in order
};

struct StateSpec {
  std::vector<std::string> roles;    // nodes with any of these roles ("*": every node)
  std::vector<std::string> paths;    // trees whose files, modes and owners are the state
  std::vector<std::string> entries;  // single entries (type, mode, owner), not walked
};

// How a selector term of the manifest resolves in this world (its parameters can differ per
// world: a twin's broken link is elsewhere). Kinds:
//  first_untraversable (term kind "path"): on each node with `role`, the first folder on `path`
//    (from "/" down, `path` included) that `user` -- with its primary group and every group of
//    the node's /etc/group listing it -- cannot search; no match when every folder is searchable.
struct SelectorSpec {
  std::string name;  // a selector term of the manifest
  std::string kind;  // "first_untraversable"
  std::string role;
  std::string path;
  std::string user;
};

struct BuildSpec {
  std::vector<NodeSpec> nodes;
  std::vector<StateSpec> state;
  std::vector<SelectorSpec> selectors;
  const SelectorSpec* find_selector(std::string_view name) const;

  const NodeSpec* find(std::string_view node) const;
};

// `where` prefixes errors ("worlds[0].build"). A build is one recipe, or {"variants": [recipe,
// ...]} (1..16): the seed picks variants[seed % n], so seeds vary node names, paths and which
// link is broken while every variant is checked at load.
Result<std::vector<BuildSpec>> parse_build_variants(std::string_view json, std::string_view where);
Result<BuildSpec> parse_build(std::string_view json, std::string_view where, uint64_t seed = 0);

// Shared name rules.
bool is_node_name(std::string_view name);
bool is_service_name(std::string_view name);
bool is_clean_absolute(std::string_view path);
bool is_octal_mode(std::string_view mode);

}  // namespace aura::workers::nodes
