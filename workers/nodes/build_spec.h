// The "build" recipe of a nodes-driver world (docs/WORLDS.md, "The nodes driver"): the nodes,
// their roles, the package folders copied onto each node's root, the owners and modes set after
// the copy, the services started, and the state a fingerprint covers. Parsed strictly: unknown or
// duplicate members, bad names and unsafe paths are refused naming the JSON path.
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
  // The Linux capabilities the service keeps (bits, CAP_*), from "linux_caps": names out of
  // service_linux_cap_names(). None declared: none kept. The service and everything it starts
  // also get no_new_privs and the lab's seccomp allowlist (docs/SANDBOX.md).
  uint64_t linux_caps = 0;
  // Programs besides argv[0] the service runs as part of itself (a service manager's units), by
  // absolute path in the node. Any other program found running in the node's own group is
  // quarantined before a check (docs/SANDBOX.md, "Strays").
  std::vector<std::string> programs;
};

// The Linux capabilities a service may be given, by name (lowercase, without CAP_), with their
// bits.
struct ServiceLinuxCap {
  std::string_view name;
  int bit;
};
const std::vector<ServiceLinuxCap>& service_linux_cap_names();

struct NodeSpec {
  std::string name;  // [a-z][a-z0-9-]{0,15}, unique in the world
  std::vector<std::string> roles;
  // Package folders (no ','), each staged from the package's verified bytes, mounted read-only
  // at /aura/pkg/<layer> in this node only, and copied onto / in order.
  std::vector<std::string> layers;
  std::vector<OwnerSpec> owners;
  std::vector<ServiceSpec> services;  // started in order
  // Kernel filesystems mounted before the layers are copied: "shm" (an 8 MiB tmpfs on
  // /dev/shm, for POSIX semaphores: Ansible's worker queues), "pts" (a devpts instance of the
  // node's own on /dev/pts, /dev/ptmx linked to it).
  std::vector<std::string> mounts;
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
//  var_override: `path` is an Ansible project on the node with `role`; an override is a file
//    host_vars/<host>.yml there that sets `var` to another value than group_vars/<group>.yml
//    does (read as vars_file.h reads them). Term kind "path": the first such file by name, on
//    the project's node; term kind "node": every node named by such a file.
//  stale_override: an override (as above) whose value names a path that does not exist on the
//    node it is for (a release folder that was removed, say); a file for a host that is not a
//    node of the world never matches.
//  no_page (term kind "node"): the nodes with `role` whose web server config `path` names, in
//    its first `root <folder>;` line, a folder that holds no regular file `index` (or that has
//    no such line, or cannot be read): the nodes that serve no page, whatever put them there.
struct SelectorSpec {
  std::string name;  // a selector term of the manifest
  std::string kind;  // "first_untraversable", "var_override", "stale_override", "no_page"
  std::string role;
  std::string path;
  std::string user;   // first_untraversable
  std::string var;    // the override kinds
  std::string group;  // the override kinds
  std::string index;  // no_page: a file name ("index.html")
};

struct BuildSpec {
  std::vector<NodeSpec> nodes;
  std::vector<StateSpec> state;
  std::vector<SelectorSpec> selectors;
  const SelectorSpec* find_selector(std::string_view name) const;

  const NodeSpec* find(std::string_view node) const;
};

// Read with the strict reader (engine/json): `where` names the recipe in errors, before the JSON
// path inside it ("worlds[0].build: nodes[0].name: not [a-z][a-z0-9-]{0,15}"). A build is one
// recipe, or {"variants": [recipe, ...]} (1..16): the seed picks variants[seed % n], so seeds
// vary node names, paths and which link is broken while every variant is checked at load.
Result<std::vector<BuildSpec>> parse_build_variants(std::string_view json, std::string_view where);
Result<BuildSpec> parse_build(std::string_view json, std::string_view where, uint64_t seed = 0);

// Shared name rules.
bool is_node_name(std::string_view name);
bool is_service_name(std::string_view name);
bool is_clean_absolute(std::string_view path);
bool is_octal_mode(std::string_view mode);

}  // namespace aura::workers::nodes
