#include "workers/nodes/build_spec.h"

#include <linux/capability.h>

#include <algorithm>
#include <array>
#include <optional>

#include "engine/json/json_reader.h"
#include "engine/json/value_type.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"
#include "engine/scenario/manifest_format.h"
#include "workers/runner/vars_file.h"

namespace aura::workers::nodes {
namespace {

namespace strict = ::aura::json;
namespace sj = aura::scenario::call_reader;
using strict::Array;
using strict::Object;
using strict::Value;

// A build recipe is cut from the manifest (at most kMaxBuildBytes minified). Bounds no valid
// recipe comes near, checked on the whole document before any member is read; each list and
// text below has its own, tighter bound.
constexpr size_t kMaxBuildDepth = 16;
constexpr size_t kMaxBuildMembers = 16;       // the most: "selectors"
constexpr size_t kMaxBuildElements = 256;     // the most: a node's "owners"
constexpr size_t kMaxBuildStringBytes = 256;  // the most: a path, an argv word, a layer

strict::Limits build_limits(std::string_view where) {
  strict::Limits limits;
  limits.max_bytes = scenario::manifest_format::kMaxBuildBytes;
  limits.max_depth = kMaxBuildDepth;
  limits.max_members = kMaxBuildMembers;
  limits.max_elements = kMaxBuildElements;
  limits.max_string_bytes = kMaxBuildStringBytes;
  limits.style = strict::PathStyle::kRelative;
  limits.prefix = where.empty() ? std::string() : std::string(where) + ": ";
  return limits;
}

Status expected(const Value& v, std::string_view what) {
  return v.error("expected " + std::string(what) + ", found " + std::string(strict::type_name(v)));
}

Result<Object> object_of(const Value& v) {
  auto o = v.as_object();
  if (!o.ok()) return expected(v, "an object");
  return o;
}

// An array of at most `max_items`.
Result<Array> array_of(const Value& v, size_t max_items) {
  auto a = v.as_array();
  if (!a.ok()) return expected(v, "an array");
  if (a->size() > max_items) return v.error("at most " + std::to_string(max_items) + " items");
  return a;
}

// `names` looked up in `o` (each marked read), then any other member refused.
Result<std::vector<std::optional<Value>>> members_of(const Object& o,
                                                     std::span<const std::string_view> names) {
  std::vector<std::optional<Value>> out;
  for (std::string_view name : names) out.push_back(o.optional_value(name));
  AURA_RETURN_IF_ERROR(o.done());
  return out;
}

Result<std::string> text(const Value& v, size_t max_bytes) {
  auto s = v.as_string();
  if (!s.ok()) return expected(v, "a string");
  if (s->empty() || s->size() > max_bytes)
    return v.error("must be 1.." + std::to_string(max_bytes) + " bytes");
  if (sj::has_control(*s)) return v.error("control characters");
  return std::string(*s);
}

Result<std::vector<std::string>> texts(const Value& v, size_t max_items, size_t max_bytes) {
  Array a;
  AURA_ASSIGN_OR_RETURN(a, array_of(v, max_items));
  std::vector<std::string> out;
  for (const Value& e : a.elements()) {
    std::string s;
    AURA_ASSIGN_OR_RETURN(s, text(e, max_bytes));
    out.push_back(std::move(s));
  }
  return out;
}

bool lower_name(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

bool id_name(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  const bool number = std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (number) return s.size() <= 10;
  return (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'
             ? std::all_of(s.begin(), s.end(),
                           [](char c) {
                             return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
                                    c == '-';
                           })
             : false;
}

Result<OwnerSpec> parse_owner(const Value& v) {
  static constexpr std::array<std::string_view, 4> kNames = {"path", "owner", "group", "mode"};
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(v));
  std::vector<std::optional<Value>> m;
  AURA_ASSIGN_OR_RETURN(m, members_of(o, kNames));
  OwnerSpec s;
  if (!m[0]) return o.error("path", "required");
  AURA_ASSIGN_OR_RETURN(s.path, text(*m[0], 256));
  if (!is_clean_absolute(s.path) || s.path == "/")
    return m[0]->error("not a normalised absolute path below /");
  if (m[1]) AURA_ASSIGN_OR_RETURN(s.owner, text(*m[1], 32));
  if (m[2]) AURA_ASSIGN_OR_RETURN(s.group, text(*m[2], 32));
  if (m[3]) AURA_ASSIGN_OR_RETURN(s.mode, text(*m[3], 4));
  if (!s.owner.empty() && !id_name(s.owner)) return m[1]->error("not a user");
  if (!s.group.empty() && !id_name(s.group)) return m[2]->error("not a group");
  if (!s.mode.empty() && !is_octal_mode(s.mode)) return m[3]->error("3 or 4 octal digits");
  if (s.owner.empty() && s.group.empty() && s.mode.empty())
    return v.error("sets nothing (owner, group or mode)");
  return s;
}

Result<ServiceSpec> parse_service(const Value& v) {
  static constexpr std::array<std::string_view, 5> kNames = {"name", "argv", "ready", "linux_caps",
                                                             "programs"};
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(v));
  std::vector<std::optional<Value>> m;
  AURA_ASSIGN_OR_RETURN(m, members_of(o, kNames));
  ServiceSpec s;
  if (!m[0] || !m[1]) return v.error("name and argv are required");
  AURA_ASSIGN_OR_RETURN(s.name, text(*m[0], 32));
  if (!is_service_name(s.name)) return m[0]->error("not [a-z][a-z0-9-]{0,31}");
  AURA_ASSIGN_OR_RETURN(s.argv, texts(*m[1], 32, 256));
  if (s.argv.empty() || !is_clean_absolute(s.argv[0]))
    return o.error("argv[0]", "must be an absolute path");
  if (m[2]) {
    static constexpr std::array<std::string_view, 2> kReady = {"tcp", "unix"};
    Object ready;
    AURA_ASSIGN_OR_RETURN(ready, object_of(*m[2]));
    std::vector<std::optional<Value>> r;
    AURA_ASSIGN_OR_RETURN(r, members_of(ready, kReady));
    if (bool(r[0]) == bool(r[1])) return m[2]->error("exactly one of tcp and unix");
    if (r[0]) {
      auto port = r[0]->as_i64();
      if (!port.ok() || *port < 1 || *port > 65535) return r[0]->error("a port 1..65535");
      s.ready_tcp = uint16_t(*port);
    } else {
      AURA_ASSIGN_OR_RETURN(s.ready_unix, text(*r[1], 108));
      if (!is_clean_absolute(s.ready_unix)) return r[1]->error("must be an absolute path");
    }
  }
  if (m[3]) {
    std::vector<std::string> names;
    AURA_ASSIGN_OR_RETURN(names, texts(*m[3], 16, 32));
    const std::vector<Value> items = m[3]->as_array()->elements();
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& known = service_linux_cap_names();
      auto it = std::find_if(known.begin(), known.end(),
                             [&](const ServiceLinuxCap& c) { return c.name == names[i]; });
      if (it == known.end()) {
        std::string allowed;
        for (const auto& c : known) allowed += (allowed.empty() ? "" : ", ") + std::string(c.name);
        return items[i].error("\"" + names[i] +
                              "\" is not a Linux capability a service may hold (" + allowed + ")");
      }
      s.linux_caps |= 1ull << it->bit;
    }
  }
  if (m[4]) {
    AURA_ASSIGN_OR_RETURN(s.programs, texts(*m[4], 8, 256));
    const std::vector<Value> items = m[4]->as_array()->elements();
    for (size_t i = 0; i < s.programs.size(); ++i) {
      if (!is_clean_absolute(s.programs[i])) return items[i].error("must be an absolute path");
    }
  }
  return s;
}

// Each element of the array `v` (at most `max`) read by `parse`, appended to `out`.
template <class T, class Parse>
Status each(const Value& v, size_t max, Parse parse, std::vector<T>& out) {
  Array a;
  AURA_ASSIGN_OR_RETURN(a, array_of(v, max));
  for (const Value& e : a.elements()) {
    T item;
    AURA_ASSIGN_OR_RETURN(item, parse(e));
    out.push_back(std::move(item));
  }
  return Status::ok();
}

Result<NodeSpec> parse_node(const Value& v) {
  static constexpr std::array<std::string_view, 6> kNames = {"name",   "roles",    "layers",
                                                             "owners", "services", "mounts"};
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(v));
  std::vector<std::optional<Value>> m;
  AURA_ASSIGN_OR_RETURN(m, members_of(o, kNames));
  NodeSpec n;
  if (!m[0] || !m[1] || !m[2]) return v.error("name, roles and layers are required");
  AURA_ASSIGN_OR_RETURN(n.name, text(*m[0], 16));
  if (!is_node_name(n.name)) return m[0]->error("not [a-z][a-z0-9-]{0,15}");
  AURA_ASSIGN_OR_RETURN(n.roles, texts(*m[1], 8, 64));
  const std::vector<Value> roles = m[1]->as_array()->elements();
  for (size_t i = 0; i < n.roles.size(); ++i) {
    if (!lower_name(n.roles[i], 64)) return roles[i].error("not a role name");
  }
  AURA_ASSIGN_OR_RETURN(n.layers, texts(*m[2], 16, 256));
  if (n.layers.empty()) return m[2]->error("at least one");
  const std::vector<Value> layers = m[2]->as_array()->elements();
  for (size_t i = 0; i < n.layers.size(); ++i) {
    if (!is_safe_package_path(n.layers[i])) return layers[i].error("not a safe package path");
    // A node sees the layer at /aura/pkg/<layer>, a mount point: overlay options cannot hold ','.
    if (n.layers[i].find(',') != std::string::npos)
      return layers[i].error("a layer path cannot hold ',' (it is a mount point in the node)");
  }
  if (m[3]) AURA_RETURN_IF_ERROR(each(*m[3], 256, parse_owner, n.owners));
  if (m[4]) AURA_RETURN_IF_ERROR(each(*m[4], 8, parse_service, n.services));
  if (m[5]) {
    AURA_ASSIGN_OR_RETURN(n.mounts, texts(*m[5], 2, 8));
    const std::vector<Value> mounts = m[5]->as_array()->elements();
    for (size_t i = 0; i < n.mounts.size(); ++i) {
      if (n.mounts[i] != "shm" && n.mounts[i] != "pts")
        return mounts[i].error("\"" + n.mounts[i] + "\" is not one of: shm, pts");
    }
  }
  return n;
}

}  // namespace

bool is_node_name(std::string_view name) { return lower_name(name, 16); }

const std::vector<ServiceLinuxCap>& service_linux_cap_names() {
  // What a server, an SSH daemon or a service manager needs inside its node, and no more: never
  // sys_admin, sys_ptrace, net_admin, net_raw, sys_module, mknod, setpcap, setfcap or
  // sys_resource (docs/SANDBOX.md says why each is left out).
  static const std::vector<ServiceLinuxCap> kNames = {
      {"chown", CAP_CHOWN},
      {"dac_override", CAP_DAC_OVERRIDE},
      {"dac_read_search", CAP_DAC_READ_SEARCH},
      {"fowner", CAP_FOWNER},
      {"fsetid", CAP_FSETID},
      {"kill", CAP_KILL},
      {"setgid", CAP_SETGID},
      {"setuid", CAP_SETUID},
      {"net_bind_service", CAP_NET_BIND_SERVICE},
      {"sys_chroot", CAP_SYS_CHROOT},
  };
  return kNames;
}
bool is_service_name(std::string_view name) { return lower_name(name, 32); }

bool is_clean_absolute(std::string_view path) {
  return scenario::is_normalised_absolute_path(path) &&
         path.find_first_of(std::string_view("\0\n", 2)) == std::string_view::npos;
}

bool is_octal_mode(std::string_view mode) {
  if (mode.size() != 3 && mode.size() != 4) return false;
  return std::all_of(mode.begin(), mode.end(), [](char c) { return c >= '0' && c <= '7'; });
}

const NodeSpec* BuildSpec::find(std::string_view node) const {
  for (const auto& n : nodes)
    if (n.name == node) return &n;
  return nullptr;
}

namespace {

Result<BuildSpec> parse_one(const Value& root) {
  static constexpr std::array<std::string_view, 3> kNames = {"nodes", "state", "selectors"};
  Object top;
  AURA_ASSIGN_OR_RETURN(top, object_of(root));
  std::vector<std::optional<Value>> m;
  AURA_ASSIGN_OR_RETURN(m, members_of(top, kNames));
  if (!m[0]) return top.error("nodes", "required");
  BuildSpec b;
  Array nodes;
  AURA_ASSIGN_OR_RETURN(nodes, array_of(*m[0], kMaxNodes));
  for (const Value& e : nodes.elements()) {
    NodeSpec n;
    AURA_ASSIGN_OR_RETURN(n, parse_node(e));
    if (b.find(n.name) != nullptr) return m[0]->error("node \"" + n.name + "\" appears twice");
    b.nodes.push_back(std::move(n));
  }
  if (b.nodes.empty()) return m[0]->error("at least one node");
  if (m[1]) {
    Array state;
    AURA_ASSIGN_OR_RETURN(state, array_of(*m[1], 32));
    for (const Value& e : state.elements()) {
      static constexpr std::array<std::string_view, 3> kState = {"roles", "paths", "entries"};
      Object so;
      AURA_ASSIGN_OR_RETURN(so, object_of(e));
      std::vector<std::optional<Value>> sm;
      AURA_ASSIGN_OR_RETURN(sm, members_of(so, kState));
      if (!sm[0] || (!sm[1] && !sm[2])) return e.error("roles, and paths or entries, are required");
      StateSpec s;
      AURA_ASSIGN_OR_RETURN(s.roles, texts(*sm[0], 8, 64));
      if (sm[1]) AURA_ASSIGN_OR_RETURN(s.paths, texts(*sm[1], 32, 256));
      if (sm[2]) AURA_ASSIGN_OR_RETURN(s.entries, texts(*sm[2], 64, 256));
      for (const auto* list : {&s.paths, &s.entries}) {
        for (size_t k = 0; k < list->size(); ++k) {
          if (!is_clean_absolute((*list)[k]))
            return e.error("\"" + (*list)[k] + "\" is not a normalised absolute path");
        }
      }
      b.state.push_back(std::move(s));
    }
  }
  if (m[2]) {
    Object sel;
    AURA_ASSIGN_OR_RETURN(sel, object_of(*m[2]));
    if (sel.size() > 16) return m[2]->error("at most 16");
    for (std::string_view name : sel.names()) {
      static constexpr std::array<std::string_view, 7> kSel = {"kind", "role",  "path", "user",
                                                               "var",  "group", "index"};
      Value v;
      AURA_ASSIGN_OR_RETURN(v, sel.value(name));
      SelectorSpec s;
      s.name = std::string(name);
      if (!lower_name(s.name, 64)) return v.error("not a selector name");
      Object so;
      AURA_ASSIGN_OR_RETURN(so, object_of(v));
      std::vector<std::optional<Value>> sm;
      AURA_ASSIGN_OR_RETURN(sm, members_of(so, kSel));
      if (!sm[0] || !sm[1] || !sm[2]) return v.error("kind, role and path are required");
      AURA_ASSIGN_OR_RETURN(s.kind, text(*sm[0], 32));
      const bool untraversable = s.kind == "first_untraversable";
      const bool no_page = s.kind == "no_page";
      if (!untraversable && !no_page && s.kind != "var_override" && s.kind != "stale_override") {
        return sm[0]->error("\"" + s.kind +
                            "\" is not one of: first_untraversable, var_override, "
                            "stale_override, no_page");
      }
      AURA_ASSIGN_OR_RETURN(s.role, text(*sm[1], 64));
      AURA_ASSIGN_OR_RETURN(s.path, text(*sm[2], 256));
      if (!is_clean_absolute(s.path)) return sm[2]->error("not a normalised absolute path");
      if (!no_page && sm[6]) return sm[6]->error("only a no_page rule takes index");
      if (no_page) {
        if (!sm[6] || sm[3] || sm[4] || sm[5])
          return v.error("no_page takes index (and no user, var or group)");
        AURA_ASSIGN_OR_RETURN(s.index, text(*sm[6], 64));
        if (s.index.empty() || s.index.find('/') != std::string::npos || s.index == "." ||
            s.index == "..")
          return sm[6]->error("not a file name");
      } else if (untraversable) {
        if (!sm[3] || sm[4] || sm[5])
          return v.error("first_untraversable takes user (and no var or group)");
        AURA_ASSIGN_OR_RETURN(s.user, text(*sm[3], 32));
        if (!id_name(s.user)) return sm[3]->error("not a user name");
      } else {
        if (sm[3] || !sm[4] || !sm[5])
          return v.error(s.kind + " takes var and group (and no user)");
        AURA_ASSIGN_OR_RETURN(s.var, text(*sm[4], 64));
        if (!runner::is_var_key(s.var)) return sm[4]->error("not a variable name");
        AURA_ASSIGN_OR_RETURN(s.group, text(*sm[5], 64));
        if (!lower_name(s.group, 64)) return sm[5]->error("not a group name");
      }
      b.selectors.push_back(std::move(s));
    }
  }
  return b;
}

}  // namespace

Result<std::vector<BuildSpec>> parse_build_variants(std::string_view json, std::string_view where) {
  strict::Reader reader(build_limits(where));
  Value root;
  AURA_ASSIGN_OR_RETURN(root, reader.parse(json));
  std::vector<BuildSpec> out;
  auto obj = root.as_object();
  if (obj.ok() && obj->has("variants")) {
    Value variants_value;
    AURA_ASSIGN_OR_RETURN(variants_value, obj->value("variants"));
    if (obj->size() != 1) return root.error("\"variants\" stands alone");
    Array variants;
    AURA_ASSIGN_OR_RETURN(variants, array_of(variants_value, 16));
    for (const Value& v : variants.elements()) {
      BuildSpec b;
      AURA_ASSIGN_OR_RETURN(b, parse_one(v));
      out.push_back(std::move(b));
    }
    if (out.empty()) return variants_value.error("at least one");
    return out;
  }
  BuildSpec b;
  AURA_ASSIGN_OR_RETURN(b, parse_one(root));
  out.push_back(std::move(b));
  return out;
}

Result<BuildSpec> parse_build(std::string_view json, std::string_view where, uint64_t seed) {
  std::vector<BuildSpec> all;
  AURA_ASSIGN_OR_RETURN(all, parse_build_variants(json, where));
  return std::move(all[seed % all.size()]);
}

const SelectorSpec* BuildSpec::find_selector(std::string_view name) const {
  for (const auto& s : selectors)
    if (s.name == name) return &s;
  return nullptr;
}

}  // namespace aura::workers::nodes
