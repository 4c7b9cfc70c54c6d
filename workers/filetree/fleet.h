// The fleet a filetree world holds: an inventory of nodes and their roles, a source of truth
// (group vars overlaid by each node's host vars, as Ansible's group_vars/host_vars) and every
// node's rendered config. File syntax, paths and the render rule: docs/WORLDS.md, "Fleet".
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/status.h"
#include "workers/filetree/world_fs.h"

namespace aura::workers::filetree {

inline constexpr std::string_view kInventoryPath = "/fleet/inventory.conf";
inline constexpr std::string_view kGroupVarsPath = "/fleet/group_vars.conf";
inline constexpr uint64_t kMaxConfigBytes = 64 << 10;  // any one fleet file
inline constexpr size_t kMaxNodes = 256;
inline constexpr size_t kMaxVars = 256;  // entries of one file
inline constexpr size_t kMaxValueBytes = 1024;

std::string host_vars_path(std::string_view node);  // "/fleet/host_vars/<node>.conf"
std::string app_conf_path(std::string_view node);   // "/nodes/<node>/app.conf"

bool is_fleet_name(std::string_view name);  // keys, node and role names: [a-z][a-z0-9_-]{0,63}
bool is_var_value(std::string_view value);  // at most kMaxValueBytes, no control character

// A key=value file: entries in file order, keys unique.
struct Vars {
  std::vector<std::pair<std::string, std::string>> entries;
  const std::string* find(std::string_view key) const;
};

// Lines are "key=value" (no space around '='), blank, or comments starting with '#'. Refuses
// (kInvalidArgument, "<file>:<line>: ...") a bad key or value, a duplicate key, a line without
// '=' and more than kMaxVars entries.
Result<Vars> parse_vars(std::string_view text, std::string_view file);

// `text` (a valid vars file) with `key` set to `value`: the first line of `key` is replaced,
// or a line is appended; comments and other lines are kept.
std::string with_var_set(std::string_view text, std::string_view key, std::string_view value);
// `text` without the lines of `key`.
std::string with_var_unset(std::string_view text, std::string_view key);

struct SourcedValue {
  std::string value;
  std::string source;  // the world path of the file the value came from
};
using Effective = std::map<std::string, SourcedValue>;

// The rendered app.conf of `node`: one header comment, then "key=value\n" sorted by key.
std::string render_app_conf(std::string_view node, const Effective& vars);

struct Node {
  std::string name;
  std::string role;
};

// One world's fleet. load() reads the inventory and the group vars; the rest is read on
// demand. Errors reading the world's files are kNotFound / kInvalidArgument (the world's state:
// the call fails) or kIo (the host failed). Borrows `world`, which must outlive it.
class Fleet {
 public:
  static Result<Fleet> load(const WorldFs& world);

  const std::vector<Node>& nodes() const { return nodes_; }  // sorted by name
  const Node* find(std::string_view name) const;
  const Vars& group_vars() const { return group_; }

  Result<std::string> host_vars_text(std::string_view node) const;  // "" when missing
  Result<Vars> host_vars(std::string_view node) const;
  Result<Effective> effective(std::string_view node) const;
  Result<std::string> render(std::string_view node) const;

  // A stale_override selector (filetree_world.h, SelectorRule): the nodes whose host vars set
  // `var` to a value other than the group's `var` that names no folder holding the regular file
  // `file` (a value that is not a normalised absolute path names none), sorted. With var
  // app_root and file index.html it names t0's cause, wherever it is.
  Result<std::vector<std::string>> stale_overrides(std::string_view var,
                                                   std::string_view file) const;
  // A no_page selector: the nodes whose rendered app.conf (what the node serves from) sets `var`
  // to a value that names no folder holding the regular file `file`, or does not set it, or
  // cannot be read as a vars file, sorted. The nodes that answer 404, whatever the cause.
  Result<std::vector<std::string>> without_file(std::string_view var, std::string_view file) const;

 private:
  explicit Fleet(const WorldFs& world) : world_(&world) {}
  // Whether `value` (a var's value) names a folder holding the regular file `file`; a value that
  // is not a normalised absolute path names none.
  Result<bool> folder_holds(std::string_view value, std::string_view file) const;
  const WorldFs* world_;
  std::vector<Node> nodes_;
  Vars group_;
};

// Reads a fleet file of at most kMaxConfigBytes (more is refused).
Result<std::string> read_config(const WorldFs& world, std::string_view path);

}  // namespace aura::workers::filetree
