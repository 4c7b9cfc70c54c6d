#include "workers/nodes/build_spec.h"

#include <linux/capability.h>
#include <simdjson.h>

#include <algorithm>
#include <array>

#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"
#include "workers/runner/vars_file.h"

namespace aura::workers::nodes {
namespace {

namespace sj = aura::scenario::json;
using sj::Element;

Result<std::string> text(Element v, const std::string& path, size_t max_bytes) {
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, sj::string_of(v, path));
  if (s.empty() || s.size() > max_bytes)
    return Status::invalid(path + ": must be 1.." + std::to_string(max_bytes) + " bytes");
  if (sj::has_control(s)) return Status::invalid(path + ": control characters");
  return std::string(s);
}

Result<std::vector<std::string>> texts(Element v, const std::string& path, size_t max_items,
                                       size_t max_bytes) {
  simdjson::dom::array a;
  if (v.get_array().get(a) != simdjson::SUCCESS)
    return Status::invalid(path + ": expected an array, found " + std::string(sj::type_name(v)));
  std::vector<std::string> out;
  size_t i = 0;
  for (Element e : a) {
    if (out.size() == max_items)
      return Status::invalid(path + ": at most " + std::to_string(max_items) + " items");
    std::string s;
    AURA_ASSIGN_OR_RETURN(s, text(e, sj::index_path(path, i++), max_bytes));
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

Result<OwnerSpec> parse_owner(Element v, const std::string& path) {
  static constexpr std::array<std::string_view, 4> kNames = {"path", "owner", "group", "mode"};
  std::vector<std::optional<Element>> m;
  AURA_ASSIGN_OR_RETURN(m, sj::members_of(v, path, kNames));
  OwnerSpec o;
  if (!m[0]) return Status::invalid(path + ".path: required");
  AURA_ASSIGN_OR_RETURN(o.path, text(*m[0], path + ".path", 256));
  if (!is_clean_absolute(o.path) || o.path == "/")
    return Status::invalid(path + ".path: not a normalised absolute path below /");
  if (m[1]) AURA_ASSIGN_OR_RETURN(o.owner, text(*m[1], path + ".owner", 32));
  if (m[2]) AURA_ASSIGN_OR_RETURN(o.group, text(*m[2], path + ".group", 32));
  if (m[3]) AURA_ASSIGN_OR_RETURN(o.mode, text(*m[3], path + ".mode", 4));
  if (!o.owner.empty() && !id_name(o.owner)) return Status::invalid(path + ".owner: not a user");
  if (!o.group.empty() && !id_name(o.group)) return Status::invalid(path + ".group: not a group");
  if (!o.mode.empty() && !is_octal_mode(o.mode))
    return Status::invalid(path + ".mode: 3 or 4 octal digits");
  if (o.owner.empty() && o.group.empty() && o.mode.empty())
    return Status::invalid(path + ": sets nothing (owner, group or mode)");
  return o;
}

Result<ServiceSpec> parse_service(Element v, const std::string& path) {
  static constexpr std::array<std::string_view, 5> kNames = {"name", "argv", "ready",
                                                             "capabilities", "programs"};
  std::vector<std::optional<Element>> m;
  AURA_ASSIGN_OR_RETURN(m, sj::members_of(v, path, kNames));
  ServiceSpec s;
  if (!m[0] || !m[1]) return Status::invalid(path + ": name and argv are required");
  AURA_ASSIGN_OR_RETURN(s.name, text(*m[0], path + ".name", 32));
  if (!is_service_name(s.name)) return Status::invalid(path + ".name: not [a-z][a-z0-9-]{0,31}");
  AURA_ASSIGN_OR_RETURN(s.argv, texts(*m[1], path + ".argv", 32, 256));
  if (s.argv.empty() || !is_clean_absolute(s.argv[0]))
    return Status::invalid(path + ".argv[0]: must be an absolute path");
  if (m[2]) {
    static constexpr std::array<std::string_view, 2> kReady = {"tcp", "unix"};
    std::vector<std::optional<Element>> r;
    AURA_ASSIGN_OR_RETURN(r, sj::members_of(*m[2], path + ".ready", kReady));
    if (bool(r[0]) == bool(r[1]))
      return Status::invalid(path + ".ready: exactly one of tcp and unix");
    if (r[0]) {
      int64_t port = 0;
      if (r[0]->get_int64().get(port) != simdjson::SUCCESS || port < 1 || port > 65535)
        return Status::invalid(path + ".ready.tcp: a port 1..65535");
      s.ready_tcp = uint16_t(port);
    } else {
      AURA_ASSIGN_OR_RETURN(s.ready_unix, text(*r[1], path + ".ready.unix", 108));
      if (!is_clean_absolute(s.ready_unix))
        return Status::invalid(path + ".ready.unix: must be an absolute path");
    }
  }
  if (m[3]) {
    std::vector<std::string> names;
    AURA_ASSIGN_OR_RETURN(names, texts(*m[3], path + ".capabilities", 16, 32));
    for (size_t i = 0; i < names.size(); ++i) {
      const auto& known = service_capability_names();
      auto it = std::find_if(known.begin(), known.end(),
                             [&](const ServiceCapability& c) { return c.name == names[i]; });
      if (it == known.end()) {
        std::string allowed;
        for (const auto& c : known) allowed += (allowed.empty() ? "" : ", ") + std::string(c.name);
        return Status::invalid(sj::index_path(path + ".capabilities", i) + ": \"" + names[i] +
                               "\" is not a capability a service may hold (" + allowed + ")");
      }
      s.capabilities |= 1ull << it->bit;
    }
  }
  if (m[4]) {
    AURA_ASSIGN_OR_RETURN(s.programs, texts(*m[4], path + ".programs", 8, 256));
    for (size_t i = 0; i < s.programs.size(); ++i) {
      if (!is_clean_absolute(s.programs[i]))
        return Status::invalid(sj::index_path(path + ".programs", i) +
                               ": must be an absolute path");
    }
  }
  return s;
}

Result<NodeSpec> parse_node(Element v, const std::string& path) {
  static constexpr std::array<std::string_view, 6> kNames = {"name",   "roles",    "layers",
                                                             "owners", "services", "mounts"};
  std::vector<std::optional<Element>> m;
  AURA_ASSIGN_OR_RETURN(m, sj::members_of(v, path, kNames));
  NodeSpec n;
  if (!m[0] || !m[1] || !m[2])
    return Status::invalid(path + ": name, roles and layers are required");
  AURA_ASSIGN_OR_RETURN(n.name, text(*m[0], path + ".name", 16));
  if (!is_node_name(n.name)) return Status::invalid(path + ".name: not [a-z][a-z0-9-]{0,15}");
  AURA_ASSIGN_OR_RETURN(n.roles, texts(*m[1], path + ".roles", 8, 64));
  for (size_t i = 0; i < n.roles.size(); ++i) {
    if (!lower_name(n.roles[i], 64))
      return Status::invalid(sj::index_path(path + ".roles", i) + ": not a role name");
  }
  AURA_ASSIGN_OR_RETURN(n.layers, texts(*m[2], path + ".layers", 16, 256));
  if (n.layers.empty()) return Status::invalid(path + ".layers: at least one");
  for (size_t i = 0; i < n.layers.size(); ++i) {
    if (!is_safe_package_path(n.layers[i]))
      return Status::invalid(sj::index_path(path + ".layers", i) + ": not a safe package path");
    // A node sees the layer at /aura/pkg/<layer>, a mount point: overlay options cannot hold ','.
    if (n.layers[i].find(',') != std::string::npos)
      return Status::invalid(sj::index_path(path + ".layers", i) +
                             ": a layer path cannot hold ',' (it is a mount point in the node)");
  }
  auto each = [&](std::optional<Element> arr, const std::string& p, size_t max, auto parse,
                  auto& out) -> Status {
    if (!arr) return Status::ok();
    simdjson::dom::array a;
    if (arr->get_array().get(a) != simdjson::SUCCESS)
      return Status::invalid(p + ": expected an array");
    size_t i = 0;
    for (Element e : a) {
      if (i == max) return Status::invalid(p + ": at most " + std::to_string(max) + " items");
      auto item = parse(e, sj::index_path(p, i++));
      if (!item.ok()) return item.status();
      out.push_back(std::move(item).value());
    }
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(each(m[3], path + ".owners", 256, parse_owner, n.owners));
  AURA_RETURN_IF_ERROR(each(m[4], path + ".services", 8, parse_service, n.services));
  if (m[5]) {
    AURA_ASSIGN_OR_RETURN(n.mounts, texts(*m[5], path + ".mounts", 2, 8));
    for (size_t i = 0; i < n.mounts.size(); ++i) {
      if (n.mounts[i] != "shm" && n.mounts[i] != "pts")
        return Status::invalid(sj::index_path(path + ".mounts", i) + ": \"" + n.mounts[i] +
                               "\" is not one of: shm, pts");
    }
  }
  return n;
}

}  // namespace

bool is_node_name(std::string_view name) { return lower_name(name, 16); }

const std::vector<ServiceCapability>& service_capability_names() {
  // What a server, an SSH daemon or a service manager needs inside its node, and no more: never
  // sys_admin, sys_ptrace, net_admin, net_raw, sys_module, mknod, setpcap, setfcap or
  // sys_resource (docs/SANDBOX.md says why each is left out).
  static const std::vector<ServiceCapability> kNames = {
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

Result<BuildSpec> parse_one(Element root, const std::string& base) {
  static constexpr std::array<std::string_view, 3> kNames = {"nodes", "state", "selectors"};
  std::vector<std::optional<Element>> m;
  AURA_ASSIGN_OR_RETURN(m, sj::members_of(root, base, kNames));
  if (!m[0]) return Status::invalid(base + ".nodes: required");
  BuildSpec b;
  simdjson::dom::array nodes;
  if (m[0]->get_array().get(nodes) != simdjson::SUCCESS)
    return Status::invalid(base + ".nodes: expected an array");
  size_t i = 0;
  for (Element e : nodes) {
    if (i == kMaxNodes)
      return Status::invalid(base + ".nodes: at most " + std::to_string(kMaxNodes) + " nodes");
    NodeSpec n;
    AURA_ASSIGN_OR_RETURN(n, parse_node(e, sj::index_path(base + ".nodes", i++)));
    if (b.find(n.name) != nullptr)
      return Status::invalid(base + ".nodes: node \"" + n.name + "\" appears twice");
    b.nodes.push_back(std::move(n));
  }
  if (b.nodes.empty()) return Status::invalid(base + ".nodes: at least one node");
  if (m[1]) {
    simdjson::dom::array st;
    if (m[1]->get_array().get(st) != simdjson::SUCCESS)
      return Status::invalid(base + ".state: expected an array");
    size_t j = 0;
    for (Element e : st) {
      const std::string p = sj::index_path(base + ".state", j++);
      if (j > 32) return Status::invalid(base + ".state: at most 32 items");
      static constexpr std::array<std::string_view, 3> kState = {"roles", "paths", "entries"};
      std::vector<std::optional<Element>> sm;
      AURA_ASSIGN_OR_RETURN(sm, sj::members_of(e, p, kState));
      if (!sm[0] || (!sm[1] && !sm[2]))
        return Status::invalid(p + ": roles, and paths or entries, are required");
      StateSpec s;
      AURA_ASSIGN_OR_RETURN(s.roles, texts(*sm[0], p + ".roles", 8, 64));
      if (sm[1]) AURA_ASSIGN_OR_RETURN(s.paths, texts(*sm[1], p + ".paths", 32, 256));
      if (sm[2]) AURA_ASSIGN_OR_RETURN(s.entries, texts(*sm[2], p + ".entries", 64, 256));
      for (const auto* list : {&s.paths, &s.entries}) {
        for (size_t k = 0; k < list->size(); ++k) {
          if (!is_clean_absolute((*list)[k]))
            return Status::invalid(p + ": \"" + (*list)[k] +
                                   "\" is not a normalised absolute path");
        }
      }
      b.state.push_back(std::move(s));
    }
  }
  if (m[2]) {
    simdjson::dom::object sel;
    if (m[2]->get_object().get(sel) != simdjson::SUCCESS)
      return Status::invalid(base + ".selectors: expected an object");
    for (auto field : sel) {
      const std::string p = base + ".selectors." + std::string(field.key);
      if (b.selectors.size() == 16) return Status::invalid(base + ".selectors: at most 16");
      static constexpr std::array<std::string_view, 6> kSel = {"kind", "role", "path",
                                                               "user", "var",  "group"};
      std::vector<std::optional<Element>> sm;
      AURA_ASSIGN_OR_RETURN(sm, sj::members_of(field.value, p, kSel));
      SelectorSpec s;
      s.name = std::string(field.key);
      if (!lower_name(s.name, 64)) return Status::invalid(p + ": not a selector name");
      if (!sm[0] || !sm[1] || !sm[2])
        return Status::invalid(p + ": kind, role and path are required");
      AURA_ASSIGN_OR_RETURN(s.kind, text(*sm[0], p + ".kind", 32));
      const bool untraversable = s.kind == "first_untraversable";
      if (!untraversable && s.kind != "var_override" && s.kind != "stale_override") {
        return Status::invalid(
            p + ".kind: \"" + s.kind +
            "\" is not one of: first_untraversable, var_override, stale_override");
      }
      AURA_ASSIGN_OR_RETURN(s.role, text(*sm[1], p + ".role", 64));
      AURA_ASSIGN_OR_RETURN(s.path, text(*sm[2], p + ".path", 256));
      if (!is_clean_absolute(s.path))
        return Status::invalid(p + ".path: not a normalised absolute path");
      if (untraversable) {
        if (!sm[3] || sm[4] || sm[5])
          return Status::invalid(p + ": first_untraversable takes user (and no var or group)");
        AURA_ASSIGN_OR_RETURN(s.user, text(*sm[3], p + ".user", 32));
        if (!id_name(s.user)) return Status::invalid(p + ".user: not a user name");
      } else {
        if (sm[3] || !sm[4] || !sm[5])
          return Status::invalid(p + ": " + s.kind + " takes var and group (and no user)");
        AURA_ASSIGN_OR_RETURN(s.var, text(*sm[4], p + ".var", 64));
        if (!runner::is_var_key(s.var)) return Status::invalid(p + ".var: not a variable name");
        AURA_ASSIGN_OR_RETURN(s.group, text(*sm[5], p + ".group", 64));
        if (!lower_name(s.group, 64)) return Status::invalid(p + ".group: not a group name");
      }
      b.selectors.push_back(std::move(s));
    }
  }
  return b;
}

}  // namespace

Result<std::vector<BuildSpec>> parse_build_variants(std::string_view json, std::string_view where) {
  const std::string base(where);
  simdjson::dom::parser parser;
  Element root;
  AURA_ASSIGN_OR_RETURN(root, sj::parse_strict(parser, json, 16, base));
  simdjson::dom::object obj;
  simdjson::dom::array variants;
  std::vector<BuildSpec> out;
  if (root.get_object().get(obj) == simdjson::SUCCESS &&
      obj["variants"].get_array().get(variants) == simdjson::SUCCESS) {
    if (obj.size() != 1) return Status::invalid(base + ": \"variants\" stands alone");
    size_t i = 0;
    for (Element v : variants) {
      if (i == 16) return Status::invalid(base + ".variants: at most 16");
      BuildSpec b;
      AURA_ASSIGN_OR_RETURN(b, parse_one(v, sj::index_path(base + ".variants", i++)));
      out.push_back(std::move(b));
    }
    if (out.empty()) return Status::invalid(base + ".variants: at least one");
    return out;
  }
  BuildSpec b;
  AURA_ASSIGN_OR_RETURN(b, parse_one(root, base));
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
