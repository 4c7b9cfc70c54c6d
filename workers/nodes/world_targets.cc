// What a target names in a nodes world: nodes by role, literal or selector, and path selectors
// on a node.
#include <signal.h>

#include <algorithm>
#include <map>

#include "engine/scenario/target_rules.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/world_parts.h"
#include "workers/runner/accounts.h"
#include "workers/runner/vars_file.h"

namespace aura::workers::nodes {
namespace {

// no_page: whether the web server config sel.path on the node names, in its first
// "root <folder>;" line, a folder without the regular file sel.index (a config that cannot be
// read, or has no root line, serves no page either).
Result<bool> serves_no_page(const inspect::NodeView& view, const SelectorSpec& sel) {
  auto conf = view.read_file(sel.path, 64 << 10);
  if (!conf.ok()) {
    if (conf.status().code() == ErrorCode::kIo) return conf.status();
    return true;
  }
  std::string_view text = *conf;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    if (!line.starts_with("root") || line.size() < 5 || (line[4] != ' ' && line[4] != '\t'))
      continue;
    line.remove_prefix(5);
    const size_t end = line.find(';');
    if (end == std::string_view::npos) return true;
    line = line.substr(0, end);
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
    if (line.empty() || line.front() != '/') return true;
    std::string page(line);
    if (page.back() != '/') page += '/';
    auto st = view.stat(page + sel.index);
    if (!st.ok()) {
      if (st.status().code() == ErrorCode::kIo) return st.status();
      return true;
    }
    return st->type != inspect::FileInfo::Type::kFile;
  }
  return true;
}

}  // namespace

std::vector<LiveNode*> NodesWorld::with_role(std::string_view role) {
  std::vector<LiveNode*> out;
  for (auto& n : nodes_) {
    if (role == "*" ||
        std::find(n.spec->roles.begin(), n.spec->roles.end(), role) != n.spec->roles.end())
      out.push_back(&n);
  }
  return out;
}

Result<std::vector<LiveNode*>> NodesWorld::resolve(const scenario::Target* target) {
  if (target == nullptr) {
    std::vector<LiveNode*> all;
    for (auto& n : nodes_) all.push_back(&n);
    return all;
  }
  if (target->kind == scenario::Target::Kind::kLiteral) {
    if (LiveNode* n = find_node(target->name)) return std::vector<LiveNode*>{n};
    return Status::not_found("no node named \"" + target->name + "\" in this world");
  }
  const scenario::TargetTerm* term = nullptr;
  AURA_ASSIGN_OR_RETURN(term, scenario::find_term(terms_, *target));
  std::vector<std::string> names;
  if (target->kind == scenario::Target::Kind::kRole) {
    for (LiveNode* n : with_role(target->name)) names.push_back(n->spec->name);
  } else if (auto pinned = resolved_.find("\n" + target->name);
             rolling_back_ && pinned != resolved_.end()) {
    // The nodes the fix's actions named (begin_rollback), one per line.
    for (size_t at = 0; at <= pinned->second.size();) {
      const size_t end = std::min(pinned->second.find('\n', at), pinned->second.size());
      names.push_back(pinned->second.substr(at, end - at));
      at = end + 1;
    }
  } else {
    const SelectorSpec* sel = spec_.find_selector(target->name);
    if (sel == nullptr || sel->kind == "first_untraversable")
      return Status::unavailable("selector \"" + target->name +
                                 "\" is not one the nodes driver implements for nodes");
    if (sel->kind == "no_page") {
      for (LiveNode* n : with_role(sel->role)) {
        auto view = inspect::NodeView::open(n->node->init_pid());
        if (!view.ok()) return view.status();
        bool none = false;
        AURA_ASSIGN_OR_RETURN(none, serves_no_page(*view, *sel));
        if (none) names.push_back(n->spec->name);
      }
    }
    for (LiveNode* project :
         sel->kind == "no_page" ? std::vector<LiveNode*>() : with_role(sel->role)) {
      std::vector<Override> found;
      AURA_ASSIGN_OR_RETURN(found, overrides(*sel, *project));
      for (const Override& o : found)
        if (find_node(o.host) != nullptr) names.push_back(o.host);
    }
  }
  // The rule every driver shares: at least one node, at most the term's max_matches.
  AURA_RETURN_IF_ERROR(scenario::admit_matches(*target, *term, names));
  if (target->kind == scenario::Target::Kind::kSelector && !rolling_back_) {
    std::string joined;
    for (const std::string& name : names) joined += (joined.empty() ? "" : "\n") + name;
    resolved_.emplace("\n" + target->name, joined);
  }
  std::vector<LiveNode*> out;
  for (const std::string& name : names) out.push_back(find_node(name));
  return out;
}

LiveNode* NodesWorld::find_node(std::string_view name) {
  for (auto& n : nodes_)
    if (n.spec->name == name) return &n;
  return nullptr;
}

// The host_vars files of the project on `project` that override sel.var (stale_override: with a
// value naming a path missing on its host), sorted by file name.
Result<std::vector<NodesWorld::Override>> NodesWorld::overrides(const SelectorSpec& sel,
                                                                LiveNode& project) {
  std::vector<Override> out;
  auto view_or = inspect::NodeView::open(project.node->init_pid());
  if (!view_or.ok()) return view_or.status();
  const inspect::NodeView& view = *view_or;
  constexpr size_t kCap = 64 << 10;
  auto group_text = view.read_file(sel.path + "/group_vars/" + sel.group + ".yml", kCap);
  if (!group_text.ok() && group_text.status().code() == ErrorCode::kIo) return group_text.status();
  const std::optional<std::string> fallback =
      group_text.ok() ? runner::vars_get(*group_text, sel.var) : std::nullopt;
  auto entries = view.list_dir(sel.path + "/host_vars", 256);
  if (!entries.ok()) {
    if (entries.status().code() == ErrorCode::kIo) return entries.status();
    return out;  // no host_vars folder: nothing overrides anything
  }
  for (const auto& [name, info] : *entries) {
    if (info.type != inspect::FileInfo::Type::kFile || !name.ends_with(".yml")) continue;
    const std::string host = name.substr(0, name.size() - 4);
    const std::string file = sel.path + "/host_vars/" + name;
    auto text = view.read_file(file, kCap);
    if (!text.ok()) continue;  // unreadable or too large: Ansible would fail on it, not us
    const auto value = runner::vars_get(*text, sel.var);
    if (!value || value == fallback) continue;
    if (sel.kind == "stale_override") {
      LiveNode* target = find_node(host);
      if (target == nullptr || value->empty() || (*value)[0] != '/') continue;
      auto tv = inspect::NodeView::open(target->node->init_pid());
      if (!tv.ok()) return tv.status();
      auto st = tv->stat(*value);
      if (st.ok()) continue;
      if (st.status().code() == ErrorCode::kIo) return st.status();
    }
    out.push_back({host, file});
  }
  return out;
}

namespace {

// The groups `user` is in by the node's own files: its primary gid and every group listing it.
struct Identity {
  uint32_t uid = 0;
  std::vector<uint32_t> gids;
};

Result<Identity> identity_in(const inspect::NodeView& view, std::string_view user) {
  std::string passwd, group;
  AURA_ASSIGN_OR_RETURN(passwd, view.read_file("/etc/passwd", 1 << 20));
  AURA_ASSIGN_OR_RETURN(group, view.read_file("/etc/group", 1 << 20));
  const runner::Accounts accounts = runner::Accounts::parse(passwd, group);
  const runner::PasswdEntry* u = accounts.find_user(user);
  if (u == nullptr)
    return Status::not_found("no user \"" + std::string(user) + "\" in /etc/passwd");
  Identity id{u->uid, {u->gid}};
  for (const auto& g : accounts.groups())
    if (std::find(g.members.begin(), g.members.end(), u->name) != g.members.end())
      id.gids.push_back(g.gid);
  return id;
}

// first_untraversable: the first folder on sel.path that the user cannot search, if any.
Result<std::optional<std::string>> first_untraversable(const inspect::NodeView& view,
                                                       const SelectorSpec& sel) {
  Identity id;
  AURA_ASSIGN_OR_RETURN(id, identity_in(view, sel.user));
  std::string at = "/";
  size_t pos = 1;
  while (true) {
    auto st = view.stat(at);
    if (!st.ok()) {
      if (st.status().code() == ErrorCode::kIo) return st.status();
      return std::optional<std::string>();  // the path ends before its end: nothing to name
    }
    if (st->type != inspect::FileInfo::Type::kDir) return std::optional<std::string>();
    uint32_t bit = 01;  // others
    if (id.uid == st->uid) {
      bit = 0100;
    } else if (std::find(id.gids.begin(), id.gids.end(), st->gid) != id.gids.end()) {
      bit = 010;
    }
    if (id.uid != 0 && (st->mode & bit) == 0) return std::optional<std::string>(at);
    if (pos >= sel.path.size()) return std::optional<std::string>();
    const size_t next = sel.path.find('/', pos);
    at = sel.path.substr(0, next);
    pos = next == std::string::npos ? sel.path.size() : next + 1;
  }
}

}  // namespace

Result<std::optional<std::map<std::string, std::string>>> NodesWorld::resolve_paths(
    const scenario::Call& call, LiveNode& n) {
  std::map<std::string, std::string> paths;
  for (const auto& [name, value] : call.params) {
    const auto* t = std::get_if<scenario::Target>(&value);
    if (name == "node" || t == nullptr) continue;
    if (t->kind == scenario::Target::Kind::kLiteral) {
      AURA_RETURN_IF_ERROR(scenario::admit_path(name, t->name));
      paths[name] = t->name;
      continue;
    }
    const SelectorSpec* sel = spec_.find_selector(t->name);
    if (t->kind != scenario::Target::Kind::kSelector || sel == nullptr)
      return Status::unavailable("target \"" + t->name + "\" of " + name +
                                 " is not a selector of this world");
    if (std::find(n.spec->roles.begin(), n.spec->roles.end(), sel->role) == n.spec->roles.end())
      return std::optional<std::map<std::string, std::string>>();
    if (sel->kind == "no_page")
      return Status::unavailable("selector \"" + t->name + "\" names nodes, not a path");
    const std::string key = n.spec->name + "\n" + t->name;
    if (auto pinned = resolved_.find(key); rolling_back_ && pinned != resolved_.end()) {
      paths[name] = pinned->second;
      continue;
    }
    std::optional<std::string> found;
    if (sel->kind == "first_untraversable") {
      auto view = inspect::NodeView::open(n.node->init_pid());
      if (!view.ok()) return view.status();
      AURA_ASSIGN_OR_RETURN(found, first_untraversable(*view, *sel));
    } else {
      std::vector<Override> all;
      AURA_ASSIGN_OR_RETURN(all, overrides(*sel, n));
      if (!all.empty()) found = all.front().file;
    }
    if (!found) return std::optional<std::map<std::string, std::string>>();
    AURA_RETURN_IF_ERROR(scenario::admit_path(name, *found));
    if (!rolling_back_) resolved_.emplace(key, *found);
    paths[name] = *found;
  }
  return std::optional<std::map<std::string, std::string>>(std::move(paths));
}

}  // namespace aura::workers::nodes
