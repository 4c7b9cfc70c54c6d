#include "workers/nodes/checks.h"

#include <fcntl.h>
#include <fnmatch.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <iterator>
#include <map>
#include <optional>
#include <set>

#include "engine/common/file_io.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "engine/scenario/check_params.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/http_probe.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/as_built.h"
#include "workers/nodes/build_spec.h"
#include "workers/runner/accounts.h"
#include "workers/runner/vars_file.h"

namespace aura::workers::nodes {
namespace {

using world::CheckOutput;

// The parameters are read by the rule every driver shares (engine/scenario/check_params.h).
using Param = scenario::CheckParamSpec;
using Params = scenario::CheckParams;
constexpr auto kText = Param::Type::kText;
constexpr auto kInt = Param::Type::kInteger;

struct CheckShape {
  std::string_view call;
  std::vector<Param> params;
};

const std::vector<CheckShape>& shapes() {
  static const std::vector<Param> http = {
      {"from", kText, true},         {"to", kText, true},           {"port", kInt, true},
      {"path", kText, true},         {"expect_status", kInt, true}, {"expect_text", kText, false},
      {"listener_exe", kText, false}};
  auto with = [](std::vector<Param> base, std::initializer_list<Param> more) {
    base.insert(base.end(), more);
    return base;
  };
  static const std::vector<CheckShape> s = {
      {"http.expect", http},
      // The driver first runs the project's playbook on the `from` node (ansible.run, as the
      // fleet's scheduled converge would), then this is http.expect. With `drift`, that file is
      // first drifted on every `to` node, and the converge must have put each back.
      {"ansible.converged", with(http, {{"drift", kText, false}})},
      // Every `to` node serves, through the configuration the project renders from its current
      // vars, the release those vars name (as_built.h: the image it compares against). With
      // `releases` (folders, space-separated), that release is one the image built under one of
      // them: its folder and its index the very ones built, never content made during the attempt.
      {"ansible.rendered", with(http, {{"project_role", kText, true},
                                       {"project", kText, true},
                                       {"template", kText, true},
                                       {"dest", kText, true},
                                       {"config", kText, true},
                                       {"group", kText, true},
                                       {"root_var", kText, true},
                                       {"index", kText, true},
                                       {"releases", kText, false}})},
      // The project still governs: as built but for its vars files' values, which set only the
      // project's own variables, and its inventory lists every `hosts_role` node in `group`.
      {"ansible.governs",
       {{"role", kText, true},
        {"project", kText, true},
        {"inventory", kText, true},
        {"group", kText, true},
        {"hosts_role", kText, true},
        {"vars_keys", kText, true}}},
      {"unix.expect",
       {{"role", kText, true},
        {"socket", kText, true},
        {"path", kText, true},
        {"expect_status", kInt, true},
        {"expect_text", kText, false}}},
      {"file.expect",
       {{"role", kText, true},
        {"path", kText, true},
        {"max_mode", kText, false},
        {"owner", kText, false},
        {"group", kText, false}}},
      // No path's mode (an ACL read in) wider than max_mode where the image did not build it so;
      // with may_add, also as built plus those repairs (the mode rule layout.as_built applies).
      {"modes.at_most",
       {{"role", kText, true},
        {"paths", kText, true},
        {"max_mode", kText, true},
        {"user", kText, false},
        {"may_add", kText, false}}},
      {"proc.expect",
       {{"role", kText, true},
        {"exe", kText, true},
        {"user", kText, false},
        {"not_user", kText, false},
        {"group", kText, false},
        {"groups", kText, false},
        // With user or not_user: the capabilities the process may hold (space-separated names,
        // default none): any other in its inheritable, permitted, effective or ambient set fails.
        {"caps", kText, false},
        {"min_count", kInt, false}}},
      // Each path is the entry built (same inode, type, owner, group); its mode is as built, or
      // as built plus the repairs `may_add` names (kRepairs), within `max_mode`.
      {"layout.as_built",
       {{"role", kText, true},
        {"paths", kText, true},
        {"user", kText, true},
        {"may_add", kText, true},
        {"max_mode", kText, false}}},
      // The node's users and groups (ids, members) are as built: nothing added, removed, moved.
      {"accounts.as_built", {{"role", kText, true}}},
      // The service's config is as built, and a request through its socket is recorded in the
      // state file under the state folder that config declares.
      // Who answers: with `exe`, every process holding the socket runs the image's `exe` as
      // `user` and `group` (all id slots, no capability); the record must name the check's own
      // request, in the declared file (one link, no ACL), its folder carrying no ACL.
      {"state.declared",
       {{"role", kText, true},
        {"config", kText, true},
        {"key", kText, true},
        {"file", kText, true},
        {"socket", kText, true},
        {"path", kText, true},
        {"exe", kText, false},
        {"user", kText, false},
        {"group", kText, false},
        {"groups", kText, false},
        {"caps", kText, false}}},
  };
  return s;
}

const CheckShape* find_shape(std::string_view call) {
  for (const auto& s : shapes())
    if (s.call == call) return &s;
  return nullptr;
}

// A space-separated list.
// The repairs a layout may allow a folder's mode (layout.as_built's may_add): group search where
// the declared user reaches the folder as a member of its group (not its owner: the owner's bits
// are the user's own) and it was off; set-group-id (new entries keep the folder's group; it
// grants nothing).
constexpr std::string_view kRepairs[] = {"group-search", "set-group-id"};

std::vector<std::string> words(const std::string& list) {
  std::vector<std::string> out;
  for (size_t at = 0, end; at < list.size(); at = end + 1) {
    end = list.find(' ', at);
    if (end == std::string::npos) end = list.size();
    if (end > at) out.push_back(list.substr(at, end - at));
  }
  return out;
}

// The capability set named by a space-separated list; nullopt when a name is unknown.
std::optional<uint64_t> declared_caps(const std::string& names) {
  uint64_t caps = 0;
  for (const std::string& name : words(names)) {
    auto n = inspect::cap_number(name);
    if (!n) return std::nullopt;
    caps |= uint64_t(1) << *n;
  }
  return caps;
}

Result<Params> parse_params(const scenario::CheckSpec& check, std::string_view where) {
  const CheckShape* shape = find_shape(check.call);
  const std::string base(where);
  if (shape == nullptr) {
    std::string names;
    for (auto n : check_call_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    return Status::invalid(base + ".call: \"" + safe_text(check.call, 64) +
                           "\" is not a check of the nodes driver (" + names + ")");
  }
  Params p;
  AURA_ASSIGN_OR_RETURN(
      p, scenario::parse_check_params(check.params_json, shape->params, base + ".params"));
  for (const std::string& folder : words(p.get("releases")))
    if (!is_clean_absolute(folder))
      return Status::invalid(base + ".params.releases: \"" + folder +
                             "\" is not a normalised absolute path (folders are separated by one "
                             "space)");
  for (size_t at = 0, end; at < p.get("paths").size(); at = end + 1) {
    const std::string list = p.get("paths");
    end = list.find(' ', at);
    if (end == std::string::npos) end = list.size();
    if (!is_clean_absolute(list.substr(at, end - at)))
      return Status::invalid(
          base + ".params.paths: \"" + list.substr(at, end - at) +
          "\" is not a normalised absolute path (paths are separated by one space)");
  }
  for (std::string_view k :
       {"path", "socket", "exe", "listener_exe", "project", "config", "dest", "drift"}) {
    const std::string v = p.get(k);
    if (!v.empty() && !is_clean_absolute(v))
      return Status::invalid(base + ".params." + std::string(k) +
                             ": not a normalised absolute path");
  }
  for (std::string_view k : {"template", "inventory"}) {
    const std::string v = p.get(k);
    if (!v.empty() && (v[0] == '/' || !is_clean_absolute("/" + v)))
      return Status::invalid(base + ".params." + std::string(k) +
                             ": a normalised path relative to the project");
  }
  for (std::string_view k : {"index", "file"}) {
    const std::string v = p.get(k);
    if (!v.empty() && (v.find('/') != std::string::npos || !is_clean_absolute("/" + v)))
      return Status::invalid(base + ".params." + std::string(k) + ": a file name");
  }
  if (const std::string g = p.get("groups");
      !g.empty() && (g != "as-built" || p.get("user").empty()))
    return Status::invalid(base + ".params.groups: only \"as-built\", with a user");
  for (const std::string& repair : words(p.get("may_add"))) {
    if (repair != "none" &&
        std::find(std::begin(kRepairs), std::end(kRepairs), repair) == std::end(kRepairs))
      return Status::invalid(base + ".params.may_add: \"" + repair +
                             "\" is no repair (none, group-search, set-group-id)");
  }
  if (p.has("may_add") && p.get("user").empty())
    return Status::invalid(base + ".params.may_add: only with user (whose access it repairs)");
  if (const std::string m = p.get("max_mode"); !m.empty() && !is_octal_mode(m))
    return Status::invalid(base + ".params.max_mode: 3 or 4 octal digits");
  if (const std::string caps = p.get("caps"); !caps.empty()) {
    if (p.get("user").empty() && p.get("not_user").empty())
      return Status::invalid(base + ".params.caps: only with user or not_user");
    if (!declared_caps(caps))
      return Status::invalid(base + ".params.caps: capability names (cap_net_bind_service ...)");
  }
  return p;
}

// What is wrong with a process's credentials against the declaration: every uid slot (real,
// effective, saved, filesystem) is `want` and none is `refuse`, every gid slot is `want_gid`,
// and it holds no capability beyond `allowed_caps` in any set it can use without exec. Empty
// when none; otherwise the first problem, naming the slot or the capabilities.
std::string credential_problem(const inspect::Credentials& c, std::optional<uint32_t> want,
                               std::optional<uint32_t> refuse, std::optional<uint32_t> want_gid,
                               std::optional<uint64_t> allowed_caps) {
  auto ids = [](const std::array<uint32_t, 4>& v) {
    return std::to_string(v[0]) + "/" + std::to_string(v[1]) + "/" + std::to_string(v[2]) + "/" +
           std::to_string(v[3]) + " (real/effective/saved/filesystem)";
  };
  for (size_t i = 0; i < 4; ++i) {
    if ((want && c.uids[i] != *want) || (refuse && c.uids[i] == *refuse))
      return "process runs with " + std::string(inspect::id_slot_name(i)) + " uid " +
             std::to_string(c.uids[i]) + ": uids " + ids(c.uids);
  }
  for (size_t i = 0; i < 4; ++i) {
    if (want_gid && c.gids[i] != *want_gid)
      return "process runs with " + std::string(inspect::id_slot_name(i)) + " gid " +
             std::to_string(c.gids[i]) + ": gids " + ids(c.gids);
  }
  if (allowed_caps) {
    const uint64_t extra = c.held_caps() & ~*allowed_caps;
    if (extra != 0) {
      std::string sets;
      const std::pair<const char*, uint64_t> named[] = {{"inheritable", c.cap_inh},
                                                        {"permitted", c.cap_prm},
                                                        {"effective", c.cap_eff},
                                                        {"ambient", c.cap_amb}};
      for (const auto& [name, bits] : named)
        if (bits & extra) sets += (sets.empty() ? "" : ", ") + std::string(name);
      return "process holds " + inspect::cap_names(extra) + " (" + sets +
             ") that its declaration does not name";
    }
  }
  return "";
}

std::vector<const CheckNode*> with_role(const CheckContext& ctx, std::string_view role) {
  std::vector<const CheckNode*> out;
  for (const auto& n : ctx.nodes)
    if (role == "*" || std::find(n.roles.begin(), n.roles.end(), role) != n.roles.end())
      out.push_back(&n);
  return out;
}

// name (or number) -> id from the node's accounts as the package built them.
std::optional<uint32_t> id_in(const CheckNode& node, bool users, std::string_view name) {
  if (auto n = runner::parse_id(name)) return n;
  const runner::Accounts a =
      users ? runner::Accounts::parse(node.passwd, "") : runner::Accounts::parse("", node.group);
  if (users) {
    const auto* u = a.find_user(name);
    return u ? std::optional<uint32_t>(u->uid) : std::nullopt;
  }
  const auto* g = a.find_group(name);
  return g ? std::optional<uint32_t>(g->gid) : std::nullopt;
}

// A service's identity as a check declares it (user, not_user, group, groups, caps), its names
// resolved in the node's accounts as built. A declared identity (a user, or "not that user")
// declares its capabilities too: none but those `caps` names.
struct DeclaredIdentity {
  std::optional<uint32_t> uid, not_uid, gid;
  std::optional<std::vector<uint32_t>> groups;  // sorted
  std::optional<uint64_t> caps;
  bool any() const { return uid || not_uid || gid || groups; }
};

// The identity `p` declares on node `n`; why not when a name does not resolve ("not root" must
// never hold because "root" is unknown).
Result<DeclaredIdentity> declared_identity(const Params& p, const CheckNode& n) {
  DeclaredIdentity d;
  auto need = [&](std::string_view param, bool users) -> Result<std::optional<uint32_t>> {
    const std::string name = p.get(param);
    if (name.empty()) return std::optional<uint32_t>();
    auto id = id_in(n, users, name);
    if (!id)
      return Status::not_found("no " + std::string(users ? "user " : "group ") + name +
                               " in the node's accounts as built");
    return id;
  };
  AURA_ASSIGN_OR_RETURN(d.uid, need("user", true));
  AURA_ASSIGN_OR_RETURN(d.not_uid, need("not_user", true));
  AURA_ASSIGN_OR_RETURN(d.gid, need("group", false));
  // groups=as-built: the supplementary groups a service manager gives the user as built (its
  // group, and every group listing it then), none gained since.
  if (p.get("groups") == "as-built") {
    const runner::Accounts a = runner::Accounts::parse(n.passwd, n.group);
    const runner::PasswdEntry* u = a.find_user(p.get("user"));
    if (u == nullptr)
      return Status::not_found("no user " + p.get("user") + " in the node's accounts as built");
    std::set<uint32_t> gids = {d.gid.value_or(u->gid)};
    for (const auto& g : a.groups())
      if (std::find(g.members.begin(), g.members.end(), u->name) != g.members.end())
        gids.insert(g.gid);
    d.groups = std::vector<uint32_t>(gids.begin(), gids.end());
  }
  if (d.uid || d.not_uid) d.caps = declared_caps(p.get("caps")).value_or(0);
  return d;
}

// Why process `pr` is not what `d` declares: its ids and capabilities (credential_problem), its
// supplementary groups, and the confinement every process the node starts has: no_new_privs (so
// its bounding set grants nothing on exec), a seccomp filter, and the cgroups of the node's init
// (`init_cgroup`). Empty when none.
std::string identity_problem(const inspect::ProcessInfo& pr, const DeclaredIdentity& d,
                             const std::string& init_cgroup) {
  if (std::string c = credential_problem(pr.cred, d.uid, d.not_uid, d.gid, d.caps); !c.empty())
    return c;
  const std::set<uint32_t> has(pr.groups.begin(), pr.groups.end());
  if (d.groups && std::vector<uint32_t>(has.begin(), has.end()) != *d.groups) {
    auto list = [](const auto& ids) {
      std::string out;
      for (uint32_t id : ids) out += (out.empty() ? "" : ",") + std::to_string(id);
      return out;
    };
    return "process has the groups " + list(has) + ", as built " + list(*d.groups);
  }
  if (!pr.cred.no_new_privs && d.caps && (pr.cred.cap_bnd & ~*d.caps) != 0)
    return "process may gain " + inspect::cap_names(pr.cred.cap_bnd & ~*d.caps) +
           " on exec (no no_new_privs, and a bounding set wider than its declaration)";
  if (!pr.cred.no_new_privs) return "process runs without no_new_privs, which the node sets";
  if (pr.cred.seccomp != 2)
    return "process runs without the seccomp filter the node installs (Seccomp " +
           std::to_string(pr.cred.seccomp) + ")";
  if (pr.cgroup != init_cgroup) return "process runs in other cgroups than the node's";
  return "";
}

// The cgroups of node `n`'s init, as the host reads them.
Result<std::string> init_cgroup(const inspect::NodeView& view, const CheckNode& n) {
  std::vector<inspect::ProcessInfo> init;
  AURA_ASSIGN_OR_RETURN(init, view.processes({n.init_pid}));
  if (init.empty()) return Status::failed_precondition("node " + n.name + ": its init is gone");
  return init[0].cgroup;
}

// Whether host process `pid` of node `n` runs the image's program `exe`: the file it runs lies
// on one of the node's image mounts (so the node could not have written it) and has the
// digest ctx.binaries holds for `exe`. A copy in the node's writable layer is not the program,
// whatever its bytes. kNotFound from exe_file: the process is gone, so it is not that program.
Result<bool> runs(const CheckContext& ctx, const CheckNode& n, pid_t pid, const std::string& exe) {
  if (ctx.binaries == nullptr) return Status::failed_precondition("no image programs to compare");
  auto want = ctx.binaries->find(exe);
  if (want == ctx.binaries->end())
    return Status::failed_precondition(exe + " was not hashed from the image at build");
  if (n.image_mounts.empty())
    return Status::failed_precondition("node " + n.name + ": no image mounts were recorded");
  auto got = inspect::exe_file(pid);
  if (!got.ok()) {
    if (got.status().code() == ErrorCode::kNotFound) return false;
    return got.status();
  }
  return n.image_mounts.contains(got->mnt_id) && got->digest == want->second;
}

struct Verdict {
  bool ok = true;
  bool definite = false;  // a failure that waiting cannot change (a wrong user, a wide mode)
  std::string observed;
  void fail(const std::string& why) {
    definite = true;
    not_yet(why);
  }
  // A failure a service coming up may still clear (no answer yet, not running yet).
  void not_yet(const std::string& why) {
    if (ok) observed.clear();
    ok = false;
    if (!observed.empty()) observed += "; ";
    observed += why;
  }
  void note(const std::string& what) {
    if (!ok) return;
    if (!observed.empty()) observed += "; ";
    observed += what;
  }
};

// The processes holding a TCP listening socket on `port` (each once, sorted).
std::vector<pid_t> port_pids(const std::vector<inspect::Listener>& ls, uint16_t port) {
  const std::string suffix = ":" + std::to_string(port);
  std::vector<pid_t> pids;
  for (const auto& l : ls) {
    if ((l.proto == "tcp" || l.proto == "tcp6") && l.address.ends_with(suffix))
      pids.insert(pids.end(), l.pids.begin(), l.pids.end());
  }
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  return pids;
}

// GETs `path` of node `t` from `from`'s network namespace (the supervisor's own client): the
// body when the status is expect_status and, with listener_exe, the port is served by the image's
// program alone; otherwise why is recorded on `v` as a failure a service coming up may still
// clear, and nullopt.
Result<std::optional<std::string>> answer(const Params& p, const CheckContext& ctx,
                                          const CheckNode& from, const CheckNode& t, Verdict& v) {
  const uint16_t port = uint16_t(*p.get_int("port"));
  inspect::HttpResult r;
  AURA_ASSIGN_OR_RETURN(r, inspect::http_get_tcp(from.init_pid, t.address, port, p.get("path"),
                                                 t.name, std::chrono::seconds(3), 64 << 10));
  const std::string where = t.name + ":" + std::to_string(port) + p.get("path");
  if (!r.connected || !r.error.empty()) {
    v.not_yet(where + ": " + (r.error.empty() ? "no connection" : r.error));
    return std::optional<std::string>();
  }
  if (r.status != *p.get_int("expect_status")) {
    v.not_yet(where + ": status " + std::to_string(r.status));
    return std::optional<std::string>();
  }
  if (const std::string exe = p.get("listener_exe"); !exe.empty()) {
    auto view_or = inspect::NodeView::open(t.init_pid);
    if (!view_or.ok()) return view_or.status();
    std::vector<inspect::Listener> ls;
    AURA_ASSIGN_OR_RETURN(ls, view_or->listeners(t.pids));
    bool found = false, foreign = false;
    for (pid_t pid : port_pids(ls, port)) {
      bool is;
      AURA_ASSIGN_OR_RETURN(is, runs(ctx, t, pid, exe));
      (is ? found : foreign) = true;
    }
    if (!found || foreign) {
      v.not_yet(where + ": port " + std::to_string(port) + " is not served by the image's " + exe +
                " alone");
      return std::optional<std::string>();
    }
  }
  return std::optional<std::string>(std::move(r.body));
}

// The `from` node and the `to` nodes of an HTTP check; a missing role fails it.
bool http_ends(const Params& p, const CheckContext& ctx, Verdict& v, const CheckNode*& from,
               std::vector<const CheckNode*>& to) {
  auto froms = with_role(ctx, p.get("from"));
  to = with_role(ctx, p.get("to"));
  if (froms.empty() || to.empty()) {
    v.fail("no node with role " + (froms.empty() ? p.get("from") : p.get("to")));
    return false;
  }
  from = froms[0];
  return true;
}

Status http_expect(const Params& p, const CheckContext& ctx, Verdict& v) {
  const CheckNode* from;
  std::vector<const CheckNode*> to;
  if (!http_ends(p, ctx, v, from, to)) return Status::ok();
  for (const CheckNode* t : to) {
    std::optional<std::string> body;
    AURA_ASSIGN_OR_RETURN(body, answer(p, ctx, *from, *t, v));
    if (!body) continue;
    const std::string where = t->name + ":" + std::to_string(*p.get_int("port")) + p.get("path");
    if (const std::string want = p.get("expect_text");
        !want.empty() && body->find(want) == std::string::npos) {
      v.not_yet(where + ": the body lacks the expected text");
      continue;
    }
    v.note(where + ": " + std::to_string(*p.get_int("expect_status")));
  }
  return Status::ok();
}

Status unix_expect(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  for (const CheckNode* n : nodes) {
    inspect::HttpResult r;
    AURA_ASSIGN_OR_RETURN(r, inspect::http_get_unix(n->init_pid, p.get("socket"), p.get("path"),
                                                    std::chrono::seconds(3), 64 << 10));
    const std::string where = n->name + ":" + p.get("socket");
    if (!r.connected || !r.error.empty()) {
      v.not_yet(where + ": " + (r.error.empty() ? "no connection" : r.error));
    } else if (r.status != *p.get_int("expect_status")) {
      v.not_yet(where + ": status " + std::to_string(r.status));
    } else if (const std::string want = p.get("expect_text");
               !want.empty() && r.body.find(want) == std::string::npos) {
      v.not_yet(where + ": the body lacks the expected text");
    } else {
      v.note(where + ": " + std::to_string(r.status));
    }
  }
  return Status::ok();
}

Status file_expect(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  for (const CheckNode* n : nodes) {
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    const inspect::NodeView& view = *view_or;
    const std::string where = n->name + ":" + p.get("path");
    auto st = view.stat(p.get("path"));
    if (!st.ok()) {
      if (st.status().code() == ErrorCode::kIo) return st.status();
      v.fail(where + ": " + st.status().message());
      continue;
    }
    char mode[16];
    std::snprintf(mode, sizeof mode, "%04o", st->mode);
    if (const std::string max = p.get("max_mode"); !max.empty()) {
      const uint32_t allowed = uint32_t(std::stoul(max, nullptr, 8));
      if ((st->mode & ~allowed) != 0) {
        v.fail(where + ": mode " + mode + " is wider than " + max);
        continue;
      }
    }
    if (const std::string owner = p.get("owner"); !owner.empty()) {
      auto uid = id_in(*n, true, owner);
      if (!uid || *uid != st->uid) {
        v.fail(where + ": owner uid " + std::to_string(st->uid) + " is not " + owner);
        continue;
      }
    }
    if (const std::string group = p.get("group"); !group.empty()) {
      auto gid = id_in(*n, false, group);
      if (!gid || *gid != st->gid) {
        v.fail(where + ": group gid " + std::to_string(st->gid) + " is not " + group);
        continue;
      }
    }
    v.note(where + ": mode " + mode);
  }
  return Status::ok();
}

Status proc_expect(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  const int64_t min_count = p.get_int("min_count").value_or(1);
  const std::string exe = p.get("exe");
  for (const CheckNode* n : nodes) {
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    std::vector<inspect::ProcessInfo> procs;
    AURA_ASSIGN_OR_RETURN(procs, view_or->processes(n->pids));
    DeclaredIdentity declared;
    if (auto d = declared_identity(p, *n); d.ok()) {
      declared = *d;
    } else {
      v.fail(n->name + ": " + d.status().message());
      continue;
    }
    std::string cgroup;
    if (declared.any()) AURA_ASSIGN_OR_RETURN(cgroup, init_cgroup(*view_or, *n));
    int64_t count = 0;
    std::string wrong;
    for (const auto& pr : procs) {
      bool is;
      AURA_ASSIGN_OR_RETURN(is, runs(ctx, *n, pr.pid, exe));
      if (!is) continue;
      ++count;
      if (!declared.any()) continue;
      if (std::string c = identity_problem(pr, declared, cgroup); !c.empty()) wrong = c;
    }
    const std::string where = n->name + ": " + exe;
    if (count < min_count) {
      v.not_yet(where + ": " + std::to_string(count) + " running, want at least " +
                std::to_string(min_count));
    } else if (!wrong.empty()) {
      v.fail(where + ": a " + wrong);
    } else {
      v.note(where + ": " + std::to_string(count) + " running");
    }
  }
  return Status::ok();
}

// ---- against the image: what the package built (as_built.h) ----

constexpr std::string_view kDriftMarker = "# aura: drifted before the scheduled converge\n";

Result<BuiltEntries> built_of(const CheckNode& n) {
  auto b = decode_built(n.built);
  if (!b.ok()) return b.status().with_context("node " + n.name);
  return b;
}

bool under(const std::string& path, const std::string& root) {
  return path == root || (path.starts_with(root) && (root == "/" || path[root.size()] == '/'));
}

bool matches(const std::vector<std::string>& patterns, const std::string& path) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pat) {
    return ::fnmatch(pat.c_str(), path.c_str(), FNM_PATHNAME | FNM_PERIOD) == 0;
  });
}

// How the tree at `root` now differs from the image: changed, missing or new entries (inodes not
// compared: a rendered or edited file is replaced whole). The content of a file matching
// `editable` may differ. The first few, in path order.
Result<std::vector<std::string>> tree_diffs(const inspect::NodeView& view,
                                            const BuiltEntries& built, const std::string& root,
                                            const std::vector<std::string>& editable) {
  if (!built.contains(root))
    return Status::failed_precondition(root + " was not recorded at build");
  BuiltEntries now;
  AURA_RETURN_IF_ERROR(walk_now(view, root, now));
  std::vector<std::string> out;
  for (const auto& [path, b] : built) {
    if (!under(path, root) || b.type == kAbsent) continue;
    auto it = now.find(path);
    if (it == now.end() || it->second.type == kAbsent) {
      out.push_back(path + ": gone (built as " + describe(b) + ")");
      continue;
    }
    const BuiltEntry& n = it->second;
    if (n.type != b.type || n.mode != b.mode || n.uid != b.uid || n.gid != b.gid ||
        n.acl != b.acl) {
      out.push_back(path + ": " + describe(n) + ", built as " + describe(b));
    } else if (n.sha256 != b.sha256 && !matches(editable, path)) {
      out.push_back(path + ": its content is not the image's");
    }
  }
  for (const auto& [path, n] : now) {
    if (n.type == kAbsent) continue;
    auto it = built.find(path);
    if (it == built.end() || it->second.type == kAbsent)
      out.push_back(path + ": not in the image (" + describe(n) + ")");
  }
  return out;
}

std::string first_of(const std::vector<std::string>& diffs) {
  std::string out;
  for (size_t i = 0; i < diffs.size() && i < 3; ++i) out += (i ? "; " : "") + diffs[i];
  if (diffs.size() > 3) out += "; and " + std::to_string(diffs.size() - 3) + " more";
  return out;
}

// The vars files of an Ansible project: host_vars/ and group_vars/ *.yml, *.yaml.
std::vector<std::string> vars_patterns(const std::string& project) {
  std::vector<std::string> out;
  for (const char* dir : {"/host_vars/", "/group_vars/"})
    for (const char* ext : {"*.yml", "*.yaml"}) out.push_back(project + dir + ext);
  return out;
}

// The hosts of [group] in an INI inventory (the first word of each line of that section).
std::vector<std::string> inventory_hosts(std::string_view text, const std::string& group) {
  std::vector<std::string> hosts;
  bool in = false;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line[0] == '[') {
      in = line == "[" + group + "]";
      continue;
    }
    if (in) hosts.emplace_back(line.substr(0, line.find_first_of(" \t")));
  }
  return hosts;
}

Status ansible_governs(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto projects = with_role(ctx, p.get("role"));
  if (projects.empty()) {
    v.fail("no node with role " + p.get("role"));
    return Status::ok();
  }
  const CheckNode& n = *projects[0];
  const std::string project = p.get("project");
  BuiltEntries built;
  AURA_ASSIGN_OR_RETURN(built, built_of(n));
  auto view_or = inspect::NodeView::open(n.init_pid);
  if (!view_or.ok()) return view_or.status();
  const inspect::NodeView& view = *view_or;
  std::vector<std::string> diffs;
  AURA_ASSIGN_OR_RETURN(diffs, tree_diffs(view, built, project, vars_patterns(project)));
  if (!diffs.empty()) {
    v.fail(n.name +
           ": the Ansible project is not as built (only its vars may change): " + first_of(diffs));
    return Status::ok();
  }
  // Its vars set only the project's own variables: no connection or behaviour variable points
  // a converge elsewhere.
  const std::vector<std::string> allowed = words(p.get("vars_keys"));
  BuiltEntries now;
  AURA_RETURN_IF_ERROR(walk_now(view, project, now));
  for (const auto& [path, e] : now) {
    if (e.type != "file" || !matches(vars_patterns(project), path)) continue;
    std::string text;
    AURA_ASSIGN_OR_RETURN(text, view.read_file(path, 64 << 10));
    for (const std::string& key : runner::vars_keys(text)) {
      if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
      v.fail(n.name + ":" + path + ": " +
             (key[0] == '?' ? "a line that is not `key: value` (" + key.substr(1) + ")"
                            : "sets " + key) +
             "; the source of truth's variables are " + p.get("vars_keys"));
      return Status::ok();
    }
  }
  // Every node of the role is a host of the group the playbook configures.
  std::string inventory;
  AURA_ASSIGN_OR_RETURN(inventory, view.read_file(project + "/" + p.get("inventory"), 64 << 10));
  const std::vector<std::string> hosts = inventory_hosts(inventory, p.get("group"));
  for (const CheckNode* h : with_role(ctx, p.get("hosts_role"))) {
    if (std::find(hosts.begin(), hosts.end(), h->name) == hosts.end()) {
      v.fail(h->name + " is not in the inventory's [" + p.get("group") +
             "]: Ansible does not "
             "govern it");
      return Status::ok();
    }
  }
  v.note(n.name + ": " + project + " as built, its vars within " + p.get("vars_keys") + ", every " +
         p.get("hosts_role") + " node in [" + p.get("group") + "]");
  return Status::ok();
}

// A variable of `host` as the project defines it: host_vars, then the group's, then all's
// group_vars (Ansible's precedence among them); inventory_hostname is the host.
Result<std::optional<std::string>> project_var(const inspect::NodeView& view,
                                               const std::string& project, const std::string& group,
                                               const std::string& host, const std::string& var) {
  if (var == "inventory_hostname") return std::optional<std::string>(host);
  for (const std::string& file :
       {project + "/host_vars/" + host + ".yml", project + "/group_vars/" + group + ".yml",
        project + "/group_vars/all.yml"}) {
    auto text = view.read_file(file, 64 << 10);
    if (!text.ok()) {
      if (text.status().code() == ErrorCode::kNotFound) continue;
      return text.status();
    }
    if (auto value = runner::vars_get(*text, var)) return std::optional<std::string>(*value);
  }
  return std::optional<std::string>();
}

// The template rendered for `host`: each {{ name }} replaced by the variable's value. Anything
// else of Jinja ({% %}, {# #}, filters, expressions) is refused: the lab renders only what it
// can render exactly as Ansible does.
Result<std::string> render(const inspect::NodeView& view, const std::string& project,
                           const std::string& group, const std::string& host,
                           std::string_view tmpl) {
  if (tmpl.find("{%") != std::string_view::npos || tmpl.find("{#") != std::string_view::npos)
    return Status::failed_precondition(
        "the template uses Jinja statements the lab does not render");
  std::string out;
  size_t at = 0;
  while (true) {
    const size_t open = tmpl.find("{{", at);
    out += tmpl.substr(at, open == std::string_view::npos ? tmpl.npos : open - at);
    if (open == std::string_view::npos) break;
    const size_t close = tmpl.find("}}", open);
    if (close == std::string_view::npos)
      return Status::failed_precondition("the template has an unclosed {{");
    std::string_view name = tmpl.substr(open + 2, close - open - 2);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    if (!runner::is_var_key(name))
      return Status::failed_precondition("the template's {{ " + std::string(name) +
                                         " }} is more than a variable");
    std::optional<std::string> value;
    AURA_ASSIGN_OR_RETURN(value, project_var(view, project, group, host, std::string(name)));
    if (!value)
      return Status::failed_precondition("the project defines no " + std::string(name) + " for " +
                                         host);
    out += *value;
    at = close + 2;
  }
  return out;
}

// Why the release at `root` (its page `index`) is not one the image built under `releases`:
// outside it, or its folder or page not the very entry recorded at build (made, moved or
// rewritten during the attempt). Empty when it is one.
Result<std::string> not_a_built_release(const inspect::NodeView& view, const BuiltEntries& built,
                                        const std::string& releases, const std::string& root,
                                        const std::string& index) {
  const auto folders = words(releases);
  if (!is_clean_absolute(root) ||
      std::none_of(folders.begin(), folders.end(),
                   [&](const std::string& f) { return root.starts_with(f + "/"); }))
    return "not under " + releases;
  for (const std::string& path : {root, index}) {
    auto b = built.find(path);
    if (b == built.end() || b->second.type == kAbsent) return path + " was made after the build";
    BuiltEntry now;
    AURA_ASSIGN_OR_RETURN(now, entry_now(view, path));
    if (now.type != b->second.type || now.ino != b->second.ino)
      return path + " is another " + now.type + " than the one built";
    if (now.sha256 != b->second.sha256) return path + ": its content is not the image's";
  }
  return std::string();
}

Status ansible_rendered(const Params& p, const CheckContext& ctx, Verdict& v) {
  const CheckNode* from;
  std::vector<const CheckNode*> to;
  if (!http_ends(p, ctx, v, from, to)) return Status::ok();
  auto projects = with_role(ctx, p.get("project_role"));
  if (projects.empty()) {
    v.fail("no node with role " + p.get("project_role"));
    return Status::ok();
  }
  const CheckNode& pn = *projects[0];
  const std::string project = p.get("project"), group = p.get("group");
  auto pview_or = inspect::NodeView::open(pn.init_pid);
  if (!pview_or.ok()) return pview_or.status();
  const inspect::NodeView& pview = *pview_or;
  // The template is the image's: what the source of truth renders is the pristine project's.
  const std::string tmpl_path = project + "/" + p.get("template");
  BuiltEntries pbuilt;
  AURA_ASSIGN_OR_RETURN(pbuilt, built_of(pn));
  BuiltEntry tmpl_now;
  AURA_ASSIGN_OR_RETURN(tmpl_now, entry_now(pview, tmpl_path));
  auto tb = pbuilt.find(tmpl_path);
  if (tb == pbuilt.end() || tb->second.type != "file" || tmpl_now != tb->second) {
    v.fail(pn.name + ":" + tmpl_path + ": not the image's template (" + describe(tmpl_now) + ")");
    return Status::ok();
  }
  std::string tmpl;
  AURA_ASSIGN_OR_RETURN(tmpl, pview.read_file(tmpl_path, kMaxBuiltFileBytes));
  const std::string dest = p.get("dest");
  for (const CheckNode* t : to) {
    auto rendered = render(pview, project, group, t->name, tmpl);
    if (!rendered.ok()) {
      if (rendered.status().code() == ErrorCode::kIo) return rendered.status();
      v.fail(t->name + ": " + rendered.status().message());
      continue;
    }
    auto view_or = inspect::NodeView::open(t->init_pid);
    if (!view_or.ok()) return view_or.status();
    const inspect::NodeView& view = *view_or;
    // What nginx reads is the image's configuration plus the one file the project renders.
    BuiltEntries built;
    AURA_ASSIGN_OR_RETURN(built, built_of(*t));
    std::vector<std::string> diffs;
    AURA_ASSIGN_OR_RETURN(diffs, tree_diffs(view, built, p.get("config"), {dest}));
    if (!diffs.empty()) {
      v.fail(t->name +
             ": its configuration is not the image's plus what the source of truth "
             "renders: " +
             first_of(diffs));
      continue;
    }
    auto served = view.read_file(dest, kMaxBuiltFileBytes);
    if (!served.ok() || *served != *rendered) {
      v.fail(t->name + ":" + dest + ": not what the source of truth renders for it" +
             (served.ok() ? "" : " (" + served.status().message() + ")"));
      continue;
    }
    // It serves the release the source of truth names: the body is that release's index.
    std::optional<std::string> root;
    AURA_ASSIGN_OR_RETURN(root, project_var(pview, project, group, t->name, p.get("root_var")));
    const std::string index = root ? *root + "/" + p.get("index") : "";
    auto want = root ? view.read_file(index, 64 << 10) : Result<std::string>(Status::not_found(""));
    if (!want.ok()) {
      if (want.status().code() == ErrorCode::kIo) return want.status();
      v.fail(t->name + ": the release the source of truth names (" + p.get("root_var") + " " +
             root.value_or("undefined") + ") has no " + p.get("index"));
      continue;
    }
    if (!p.get("releases").empty()) {
      std::string made;
      AURA_ASSIGN_OR_RETURN(made,
                            not_a_built_release(view, built, p.get("releases"), *root, index));
      if (!made.empty()) {
        v.fail(t->name + ": the release the source of truth names (" + p.get("root_var") + " " +
               *root + ") is not one the image built: " + made);
        continue;
      }
    }
    std::optional<std::string> body;
    AURA_ASSIGN_OR_RETURN(body, answer(p, ctx, *from, *t, v));
    if (!body) continue;
    if (*body != *want) {
      v.not_yet(t->name + ": the body served is not " + index);
      continue;
    }
    v.note(t->name + ": serves " + index + " through the rendered " + dest);
  }
  return Status::ok();
}

// ansible.converged's `drift`: after the converge, no `to` node keeps the marker.
Status drift_gone(const Params& p, const CheckContext& ctx, Verdict& v) {
  for (const CheckNode* t : with_role(ctx, p.get("to"))) {
    auto view_or = inspect::NodeView::open(t->init_pid);
    if (!view_or.ok()) return view_or.status();
    auto text = view_or->read_file(p.get("drift"), kMaxBuiltFileBytes);
    if (!text.ok() || text->find(kDriftMarker) != std::string::npos) {
      v.fail(t->name + ":" + p.get("drift") + ": the converge left the drift in place: the " +
             "source of truth does not govern it" +
             (text.ok() ? "" : " (" + text.status().message() + ")"));
    }
  }
  return Status::ok();
}

// The groups the user is in by the accounts as built: its primary gid and each group listing it.
struct BuiltIdentity {
  uint32_t uid = 0;
  std::vector<uint32_t> gids;
};
// What an ACL makes of access to an entry, as the kernel grants it: the mode its owner, owning
// group and others effectively get (set-id bits kept), and the first grant to a named user or
// group beyond what that user or group gets from that mode. A named entry for the owning group
// counts in the group class (an ACL on the group entry restores group access as a chmod would);
// a default ACL is always beyond the mode (what is made under the folder is granted by it).
struct AclReading {
  uint32_t mode = 0;
  std::string beyond;  // empty when the ACL grants nothing the mode does not show
};

std::string rwx(uint32_t p) {
  return std::string(p & 4 ? "r" : "-") + (p & 2 ? "w" : "-") + (p & 1 ? "x" : "-");
}

AclReading read_acl(const inspect::Acl& acl, const BuiltEntry& e, const runner::Accounts& a) {
  AclReading r{e.mode, ""};
  if (!acl.dflt.empty()) {
    r.beyond = "a default ACL (what is made under it is granted by it, not by the mode)";
    return r;
  }
  if (acl.access.empty()) return r;
  uint32_t user_obj = 0, group_obj = 0, other = 0, mask = 7;
  for (const auto& x : acl.access) {
    if (x.tag == inspect::kAclUserObj) user_obj = x.perm & 7;
    if (x.tag == inspect::kAclGroupObj) group_obj = x.perm & 7;
    if (x.tag == inspect::kAclOther) other = x.perm & 7;
    if (x.tag == inspect::kAclMask) mask = x.perm & 7;
  }
  uint32_t group_class = group_obj;
  for (const auto& x : acl.access)
    if (x.tag == inspect::kAclGroup && x.id == e.gid) group_class |= x.perm;
  group_class &= mask;
  r.mode = (e.mode & 07000) | (user_obj << 6) | (group_class << 3) | other;
  auto user_name = [&](uint32_t uid) {
    for (const auto& u : a.users())
      if (u.uid == uid) return u.name;
    return "uid " + std::to_string(uid);
  };
  auto in_group = [&](uint32_t uid) {
    for (const auto& u : a.users())
      if (u.uid == uid && u.gid == e.gid) return true;
    for (const auto& g : a.groups())
      if (g.gid == e.gid)
        for (const auto& m : g.members)
          if (user_name(uid) == m) return true;
    return false;
  };
  for (const auto& x : acl.access) {
    const uint32_t grant = x.perm & mask;
    if (x.tag == inspect::kAclUser && x.id != e.uid) {
      const uint32_t base = in_group(x.id) ? group_class : other;
      if (grant & ~base)
        r.beyond = "an ACL grants user " + user_name(x.id) + " " + rwx(grant) +
                   " where the mode gives it " + rwx(base);
    } else if (x.tag == inspect::kAclGroup && x.id != e.gid && (grant & ~other)) {
      std::string name = "gid " + std::to_string(x.id);
      for (const auto& g : a.groups())
        if (g.gid == x.id) name = g.name;
      r.beyond = "an ACL grants group " + name + " " + rwx(grant) + " where the mode gives it " +
                 rwx(other);
    }
    if (!r.beyond.empty()) break;
  }
  return r;
}

std::optional<BuiltIdentity> identity_as_built(const CheckNode& n, const std::string& user) {
  const runner::Accounts a = runner::Accounts::parse(n.passwd, n.group);
  const runner::PasswdEntry* u = a.find_user(user);
  if (u == nullptr) return std::nullopt;
  BuiltIdentity id{u->uid, {u->gid}};
  for (const auto& g : a.groups())
    if (std::find(g.members.begin(), g.members.end(), u->name) != g.members.end() &&
        std::find(id.gids.begin(), id.gids.end(), g.gid) == id.gids.end())
      id.gids.push_back(g.gid);
  std::sort(id.gids.begin(), id.gids.end());
  return id;
}

// The mode rule a policy states (layout.as_built and modes.at_most read it alike, so they cannot
// disagree): no bit beyond max_mode the image did not build; with may_add, nothing removed and
// nothing added but those repairs (kRepairs).
struct ModeRule {
  uint32_t max_mode = 07777;
  bool as_built = false;  // may_add stated
  std::set<std::string> repairs;
  std::string stated;  // how the policy says it, for messages
};

ModeRule mode_rule(const Params& p) {
  ModeRule r;
  if (!p.get("max_mode").empty()) r.max_mode = uint32_t(std::stoul(p.get("max_mode"), nullptr, 8));
  r.as_built = p.has("may_add");
  for (const std::string& w : words(p.get("may_add")))
    if (w != "none") r.repairs.insert(w);
  r.stated =
      r.as_built ? "as built, plus " + (r.repairs.empty() ? "no repair" : p.get("may_add")) : "";
  if (!p.get("max_mode").empty())
    r.stated += (r.stated.empty() ? "" : ", ") + std::string("within ") + p.get("max_mode");
  return r;
}

// Why `mode` (as the kernel grants it) breaks `rule` on an entry built as `b`, for the user `id`
// (group search is a repair only where that user reaches the folder through its group, not as
// its owner). Empty when it keeps it.
std::string mode_problem(uint32_t mode, const BuiltEntry& b, const ModeRule& rule,
                         const BuiltIdentity& id) {
  if (mode == b.mode) return "";
  const uint32_t added = mode & ~b.mode, removed = b.mode & ~mode;
  std::string why;
  if ((added & ~rule.max_mode) != 0) {
    why = "wider";
  } else if (rule.as_built) {
    const bool group_class =
        id.uid != b.uid && std::find(id.gids.begin(), id.gids.end(), b.gid) != id.gids.end();
    const uint32_t allowed =
        b.type != "dir" ? 0
                        : (group_class && rule.repairs.contains("group-search") ? 010 : 0) |
                              (rule.repairs.contains("set-group-id") ? 02000 : 0);
    if (removed != 0 || (added & ~allowed) != 0) why = "changed";
  }
  return why.empty() ? "" : "the policy: " + rule.stated;
}

Status layout_as_built(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  for (const CheckNode* n : nodes) {
    const auto id = identity_as_built(*n, p.get("user"));
    if (!id) {
      v.fail(n->name + ": no user " + p.get("user") + " in the node's accounts as built");
      continue;
    }
    BuiltEntries built;
    AURA_ASSIGN_OR_RETURN(built, built_of(*n));
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    const runner::Accounts accounts = runner::Accounts::parse(n->passwd, n->group);
    const ModeRule rule = mode_rule(p);
    std::vector<std::string> diffs;
    int repaired = 0;
    for (const std::string& path : words(p.get("paths"))) {
      auto it = built.find(path);
      if (it == built.end())
        return Status::failed_precondition(path + " was not recorded at build");
      const BuiltEntry& b = it->second;
      BuiltEntry now;
      AURA_ASSIGN_OR_RETURN(now, entry_now(*view_or, path));
      if (b.type == kAbsent && now.type == kAbsent) continue;
      if (now.type != b.type) {
        diffs.push_back(path + ": " + describe(now) + ", built as " + describe(b));
        continue;
      }
      if (now.ino != b.ino) {
        diffs.push_back(path + ": another " + now.type +
                        " than the one built (made anew, or the built one moved away)");
        continue;
      }
      if (now.uid != b.uid || now.gid != b.gid) {
        diffs.push_back(path + ": owner " + std::to_string(now.uid) + ":" +
                        std::to_string(now.gid) + ", built " + std::to_string(b.uid) + ":" +
                        std::to_string(b.gid));
        continue;
      }
      // The mode as the kernel grants it, an ACL read in; an ACL granting a named user or group
      // more than that mode is a difference of its own.
      // (An ACL the image built is not recorded entry by entry: there the mode bits compare.)
      AclReading eff{now.mode, ""};
      if (now.acl && !b.acl) {
        inspect::Acl acl;
        AURA_ASSIGN_OR_RETURN(acl, view_or->acl(path));
        eff = read_acl(acl, now, accounts);
      }
      if (b.acl && !now.acl) {
        diffs.push_back(path + ": built with an ACL, now without one");
      } else if (!eff.beyond.empty()) {
        diffs.push_back(path + ": " + eff.beyond);
      } else if (std::string why = mode_problem(eff.mode, b, rule, *id); !why.empty()) {
        BuiltEntry shown = now;
        shown.mode = eff.mode;
        diffs.push_back(path + ": mode " + describe(shown) + ", built " + describe(b) + " (" + why +
                        ")");
      } else if ((eff.mode & ~b.mode) & 010) {
        ++repaired;
      }
    }
    if (diffs.empty()) {
      v.note(n->name + ": the layout as built" +
             (repaired ? ", search restored on " + std::to_string(repaired) : ""));
    } else {
      v.fail(n->name + ": not the layout as built: " + first_of(diffs));
    }
  }
  return Status::ok();
}

// Every path of the list that exists has no mode bit beyond max_mode that the image did not
// build it with, its mode read as the kernel grants it (an ACL read in, as layout.as_built
// reads it); missing paths are fine (a world variant may not have them).
Status modes_at_most(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  const ModeRule rule = mode_rule(p);
  for (const CheckNode* n : nodes) {
    // Without a user, group search is no one's repair.
    BuiltIdentity id{UINT32_MAX, {}};
    if (!p.get("user").empty()) {
      auto found = identity_as_built(*n, p.get("user"));
      if (!found) {
        v.fail(n->name + ": no user " + p.get("user") + " in the node's accounts as built");
        continue;
      }
      id = *found;
    }
    BuiltEntries built;
    AURA_ASSIGN_OR_RETURN(built, built_of(*n));
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    const runner::Accounts accounts = runner::Accounts::parse(n->passwd, n->group);
    int seen = 0;
    bool wide = false;
    for (const std::string& path : words(p.get("paths"))) {
      auto it = built.find(path);
      if (it == built.end())
        return Status::failed_precondition(path + " was not recorded at build");
      BuiltEntry now;
      AURA_ASSIGN_OR_RETURN(now, entry_now(*view_or, path));
      if (now.type == kAbsent) continue;
      ++seen;
      AclReading eff{now.mode, ""};
      if (now.acl) {
        inspect::Acl acl;
        AURA_ASSIGN_OR_RETURN(acl, view_or->acl(path));
        eff = read_acl(acl, now, accounts);
      }
      // An entry that is not the one built is compared with nothing: every bit must be allowed.
      BuiltEntry b = it->second;
      if (b.type != now.type) b = BuiltEntry{now.type, 0, b.uid, b.gid};
      std::string why = eff.beyond;
      if (why.empty()) why = mode_problem(eff.mode, b, rule, id);
      if (!why.empty()) {
        char mode[16];
        std::snprintf(mode, sizeof mode, "%04o", eff.mode);
        v.fail(n->name + ":" + path + ": mode " + mode + " (" + why + ")");
        wide = true;
      }
    }
    if (!wide) v.note(n->name + ": " + std::to_string(seen) + " paths within " + p.get("max_mode"));
  }
  return Status::ok();
}

Status accounts_as_built(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  auto users_of = [](const runner::Accounts& a) {
    std::vector<std::string> out;
    for (const auto& u : a.users())
      out.push_back("user " + u.name + " uid " + std::to_string(u.uid) + " gid " +
                    std::to_string(u.gid));
    for (const auto& g : a.groups()) {
      std::vector<std::string> members = g.members;
      std::sort(members.begin(), members.end());
      std::string line = "group " + g.name + " gid " + std::to_string(g.gid) + " members";
      for (const auto& m : members) line += " " + m;
      out.push_back(line);
    }
    std::sort(out.begin(), out.end());
    return out;
  };
  for (const CheckNode* n : nodes) {
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    std::string passwd, group;
    for (auto [file, into] : {std::pair{"/etc/passwd", &passwd}, std::pair{"/etc/group", &group}}) {
      auto text = view_or->read_file(file, 64 << 10);
      if (!text.ok() && text.status().code() == ErrorCode::kIo) return text.status();
      if (text.ok()) *into = std::move(text).value();
    }
    const auto built = users_of(runner::Accounts::parse(n->passwd, n->group));
    const auto now = users_of(runner::Accounts::parse(passwd, group));
    std::vector<std::string> diffs;
    std::set_difference(now.begin(), now.end(), built.begin(), built.end(),
                        std::back_inserter(diffs));
    for (auto& d : diffs) d = "now " + d;
    std::vector<std::string> gone;
    std::set_difference(built.begin(), built.end(), now.begin(), now.end(),
                        std::back_inserter(gone));
    for (auto& d : gone) diffs.push_back("built " + d);
    if (diffs.empty()) {
      v.note(n->name + ": users and groups as built");
    } else {
      v.fail(n->name + ": users or groups not as built: " + first_of(diffs));
    }
  }
  return Status::ok();
}

// The value of `key=` in a key=value config.
std::optional<std::string> config_value(std::string_view text, std::string_view key) {
  std::optional<std::string> out;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == '=')
      out = std::string(line.substr(key.size() + 1));
  }
  return out;
}

// 16 random hex digits (a check's request token), from the kernel's random source.
Result<std::string> random_token() {
  uint8_t b[8];
  if (::getrandom(b, sizeof b, 0) != ssize_t(sizeof b))
    return Status::io(std::string("getrandom: ") + std::strerror(errno));
  return to_hex(b);
}

// Why the state file at `state` (in folder `dir`) is reached some other way than its declared
// path: more than one link, or an ACL on it or on its folder granting a named user or group more
// than the mode shows (read_acl, as layout.as_built reads it). Empty when it is not.
Result<std::string> state_reached_elsewhere(const inspect::NodeView& view, const CheckNode& n,
                                            const std::string& dir, const std::string& state) {
  inspect::FileInfo st;
  AURA_ASSIGN_OR_RETURN(st, view.stat(state));
  if (st.nlink != 1)
    return state + " has " + std::to_string(st.nlink) +
           " links: it is also written as another file";
  const runner::Accounts accounts = runner::Accounts::parse(n.passwd, n.group);
  for (const std::string& path : {state, dir}) {
    BuiltEntry e;
    AURA_ASSIGN_OR_RETURN(e, entry_now(view, path));
    if (!e.acl) continue;
    inspect::Acl acl;
    AURA_ASSIGN_OR_RETURN(acl, view.acl(path));
    if (std::string beyond = read_acl(acl, e, accounts).beyond; !beyond.empty())
      return path + ": " + beyond;
  }
  return std::string();
}

// Why the processes `pids` are not the service as declared: one is not a process of the node, or
// not the image's `exe`, or runs with other credentials than `user` and `group` in every id slot,
// or holds a capability. Empty when each is the service. `as` names their part ("held by").
Result<std::string> not_the_service(const Params& p, const CheckContext& ctx, const CheckNode& n,
                                    const inspect::NodeView& view, const std::vector<pid_t>& pids,
                                    const std::string& as) {
  auto declared = declared_identity(p, n);
  if (!declared.ok()) return std::string(declared.status().message());
  for (pid_t pid : pids)
    if (std::find(n.pids.begin(), n.pids.end(), pid) == n.pids.end())
      return as + " process " + std::to_string(pid) + ", which is not one of the node's";
  std::vector<inspect::ProcessInfo> procs;
  AURA_ASSIGN_OR_RETURN(procs, view.processes(pids));
  if (procs.size() != pids.size()) return as + " a process that is gone";
  std::string cgroup;
  AURA_ASSIGN_OR_RETURN(cgroup, init_cgroup(view, n));
  // With no user declared, no capability at all.
  if (!declared->caps) declared->caps = 0;
  for (const auto& pr : procs) {
    bool is = false;
    AURA_ASSIGN_OR_RETURN(is, runs(ctx, n, pr.pid, p.get("exe")));
    if (!is) return as + " a process that is not the image's " + p.get("exe");
    if (std::string c = identity_problem(pr, *declared, cgroup); !c.empty()) return as + " a " + c;
  }
  return std::string();
}

// Why the processes holding a listening socket bound at the declared path are not the service
// (none holds one, or one is not the service). The name a socket was bound at is not proof of
// who answers there (the file may since have been replaced): the answer's own listener is
// checked after the request (state_declared).
Result<std::string> socket_holder_problem(const Params& p, const CheckContext& ctx,
                                          const CheckNode& n, const inspect::NodeView& view) {
  std::vector<inspect::Listener> ls;
  AURA_ASSIGN_OR_RETURN(ls, view.listeners(n.pids));
  std::vector<pid_t> holders;
  for (const auto& l : ls)
    if (l.proto == "unix" && l.address == p.get("socket"))
      holders.insert(holders.end(), l.pids.begin(), l.pids.end());
  if (holders.empty()) return std::string("no process of the node holds it");
  return not_the_service(p, ctx, n, view, holders, "held by");
}

Status state_declared(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  for (const CheckNode* n : nodes) {
    BuiltEntries built;
    AURA_ASSIGN_OR_RETURN(built, built_of(*n));
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    const inspect::NodeView& view = *view_or;
    const std::string config = p.get("config");
    BuiltEntry now;
    AURA_ASSIGN_OR_RETURN(now, entry_now(view, config));
    auto b = built.find(config);
    if (b == built.end() || now.type != "file" || now.sha256 != b->second.sha256) {
      v.fail(n->name + ":" + config + ": not as built: the state path it declares may have moved");
      continue;
    }
    std::string text;
    AURA_ASSIGN_OR_RETURN(text, view.read_file(config, 64 << 10));
    const auto dir = config_value(text, p.get("key"));
    if (!dir || !is_clean_absolute(*dir)) {
      v.fail(n->name + ":" + config + ": declares no " + p.get("key"));
      continue;
    }
    const std::string state = *dir + "/" + p.get("file");
    auto size = [&]() -> Result<std::optional<uint64_t>> {
      auto st = view.stat(state);
      if (st.ok() && st->type == inspect::FileInfo::Type::kFile)
        return std::optional<uint64_t>(st->size);
      if (!st.ok() && st.status().code() == ErrorCode::kIo) return st.status();
      return std::optional<uint64_t>();
    };
    std::optional<uint64_t> before;
    AURA_ASSIGN_OR_RETURN(before, size());
    if (!before) {
      v.not_yet(n->name + ": no state file at the declared " + state);
      continue;
    }
    // State reached only the declared way: the file is linked from nowhere else, and neither it
    // nor its folder carries ACL entries the mode bits do not show.
    std::string reached;
    AURA_ASSIGN_OR_RETURN(reached, state_reached_elsewhere(view, *n, *dir, state));
    if (!reached.empty()) {
      v.fail(n->name + ": " + reached);
      continue;
    }
    // Who answers: the processes holding the socket, told by the host.
    if (!p.get("exe").empty()) {
      std::string holder;
      AURA_ASSIGN_OR_RETURN(holder, socket_holder_problem(p, ctx, *n, view));
      if (!holder.empty()) {
        v.not_yet(n->name + ":" + p.get("socket") + ": " + holder);
        continue;
      }
    }
    // The check's own request, told apart from any other by a token only it knows.
    std::string nonce;
    AURA_ASSIGN_OR_RETURN(nonce, random_token());
    const std::string token =
        p.get("path") + (p.get("path").ends_with("/") ? "" : "/") + "aura-check-" + nonce;
    inspect::HttpResult r;
    AURA_ASSIGN_OR_RETURN(r, inspect::http_get_unix(n->init_pid, p.get("socket"), token,
                                                    std::chrono::seconds(3), 64 << 10));
    if (!r.connected || !r.error.empty() || r.status != 200) {
      v.not_yet(n->name + ":" + p.get("socket") + ": " +
                (!r.error.empty() ? r.error : "status " + std::to_string(r.status)));
      continue;
    }
    // Who answered: the listener of the very socket the request reached, as the kernel recorded
    // it when that socket began to listen, whatever file name led there.
    if (!p.get("exe").empty()) {
      if (!r.peer || r.peer->pid <= 0) {
        v.fail(n->name + ":" + p.get("socket") + ": the host cannot tell which process answered");
        continue;
      }
      std::string answerer;
      AURA_ASSIGN_OR_RETURN(answerer,
                            not_the_service(p, ctx, *n, view, {r.peer->pid}, "answered by"));
      if (!answerer.empty()) {
        v.fail(n->name + ":" + p.get("socket") + ": " + answerer);
        continue;
      }
    }
    // The app records a request before it answers it (app_main.cc): no wait, so no speed bar.
    std::optional<uint64_t> after;
    AURA_ASSIGN_OR_RETURN(after, size());
    if (!after || *after <= *before) {
      v.fail(n->name + ": a request the service answered left nothing in the declared " + state +
             ": its state is kept elsewhere");
      continue;
    }
    std::string text_now;
    AURA_ASSIGN_OR_RETURN(text_now, view.read_file(state, size_t(*after) + 1));
    if (text_now.size() < *before ||
        text_now.substr(size_t(*before)).find(token) == std::string::npos) {
      v.fail(n->name + ": the declared " + state +
             " grew, but not with the record of the request the check sent: something else "
             "wrote it");
      continue;
    }
    v.note(n->name + ": the request was recorded at the declared " + state);
  }
  return Status::ok();
}

}  // namespace

std::vector<std::string_view> check_call_names() {
  std::vector<std::string_view> out;
  for (const auto& s : shapes()) out.push_back(s.call);
  return out;
}

Status validate_check(const scenario::CheckSpec& check, std::string_view where) {
  return parse_params(check, where).status();
}

Result<scenario::CheckParams> read_check_params(const scenario::CheckSpec& check,
                                                std::string_view where) {
  return parse_params(check, where);
}

Result<std::string> record_built(const scenario::Manifest& manifest,
                                 const std::vector<std::string>& roles,
                                 const inspect::NodeView& view) {
  auto has = [&](const std::string& role) {
    return role == "*" || std::find(roles.begin(), roles.end(), role) != roles.end();
  };
  BuiltEntries out;
  for (const scenario::CheckSpec& check : manifest.checks) {
    Params p;
    AURA_ASSIGN_OR_RETURN(p, parse_params(check, "checks." + check.id));
    std::vector<std::string> trees, entries;
    if (check.call == "ansible.governs" && has(p.get("role"))) trees = {p.get("project")};
    if (check.call == "ansible.rendered") {
      if (has(p.get("project_role"))) trees.push_back(p.get("project"));
      if (has(p.get("to"))) trees.push_back(p.get("config"));
      if (has(p.get("to")))
        for (const std::string& folder : words(p.get("releases"))) trees.push_back(folder);
    }
    if ((check.call == "layout.as_built" || check.call == "modes.at_most") && has(p.get("role")))
      entries = words(p.get("paths"));
    if (check.call == "state.declared" && has(p.get("role"))) entries = {p.get("config")};
    for (const std::string& path : trees)
      AURA_RETURN_IF_ERROR(walk_now(view, path, out).with_context("checks." + check.id));
    for (const std::string& path : entries) {
      if (out.contains(path)) continue;
      BuiltEntry e;
      AURA_ASSIGN_OR_RETURN(e, entry_now(view, path));
      out[path] = std::move(e);
    }
  }
  return encode_built(out);
}

Result<std::string> drift_before_converge(const scenario::CheckSpec& check,
                                          const CheckContext& ctx) {
  Params p;
  AURA_ASSIGN_OR_RETURN(p, parse_params(check, "checks." + check.id));
  const std::string path = p.get("drift");
  std::string refused;
  if (check.call != "ansible.converged" || path.empty()) return refused;
  for (const CheckNode* t : with_role(ctx, p.get("to"))) {
    auto view_or = inspect::NodeView::open(t->init_pid);
    if (!view_or.ok()) return view_or.status();
    // Opened O_PATH inside the node's root, the final name not followed, then reopened for
    // appending only if it is a regular file: nothing of the node redirects the write.
    auto fd_or = view_or->open_path(path, false);
    std::string why;
    if (fd_or.ok()) {
      file_io::Fd path_fd(*fd_or);
      struct stat st;
      if (::fstat(path_fd.get(), &st) != 0)
        return Status::io("fstat " + path + ": " + file_io::errno_text(errno));
      if (S_ISREG(st.st_mode)) {
        const std::string proc = "/proc/self/fd/" + std::to_string(path_fd.get());
        file_io::Fd fd(
            ::open(proc.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
        if (fd.get() < 0)
          return Status::io("open " + path + " to drift it: " + file_io::errno_text(errno));
        if (::write(fd.get(), kDriftMarker.data(), kDriftMarker.size()) !=
            ssize_t(kDriftMarker.size()))
          return Status::io("drift " + path + ": " + file_io::errno_text(errno));
        continue;
      }
      why = "not a regular file";
    } else {
      if (fd_or.status().code() == ErrorCode::kIo) return fd_or.status();
      why = fd_or.status().message();
    }
    refused += (refused.empty() ? "" : "; ") + t->name + ":" + path + ": " + why;
  }
  return refused;
}

Result<std::map<std::string, std::vector<pid_t>>> port_holders(const scenario::CheckSpec& check,
                                                               const CheckContext& ctx) {
  Params p;
  AURA_ASSIGN_OR_RETURN(p, parse_params(check, "checks." + check.id));
  std::map<std::string, std::vector<pid_t>> out;
  const auto port = p.get_int("port");
  if (!port) return out;
  for (const CheckNode* t : with_role(ctx, p.get("to"))) {
    auto view_or = inspect::NodeView::open(t->init_pid);
    if (!view_or.ok()) return view_or.status();
    std::vector<inspect::Listener> ls;
    AURA_ASSIGN_OR_RETURN(ls, view_or->listeners(t->pids));
    out[t->name] = port_pids(ls, uint16_t(*port));
  }
  return out;
}

Result<CheckOutput> run_check(const scenario::CheckSpec& check, const CheckContext& ctx,
                              bool* may_settle) {
  Params p;
  AURA_ASSIGN_OR_RETURN(p, parse_params(check, "checks." + check.id));
  Verdict v;
  if (check.call == "ansible.converged" && !p.get("drift").empty())
    AURA_RETURN_IF_ERROR(drift_gone(p, ctx, v));
  if (check.call == "http.expect" || check.call == "ansible.converged")
    AURA_RETURN_IF_ERROR(http_expect(p, ctx, v));
  if (check.call == "ansible.rendered") AURA_RETURN_IF_ERROR(ansible_rendered(p, ctx, v));
  if (check.call == "ansible.governs") AURA_RETURN_IF_ERROR(ansible_governs(p, ctx, v));
  if (check.call == "layout.as_built") AURA_RETURN_IF_ERROR(layout_as_built(p, ctx, v));
  if (check.call == "accounts.as_built") AURA_RETURN_IF_ERROR(accounts_as_built(p, ctx, v));
  if (check.call == "state.declared") AURA_RETURN_IF_ERROR(state_declared(p, ctx, v));
  if (check.call == "unix.expect") AURA_RETURN_IF_ERROR(unix_expect(p, ctx, v));
  if (check.call == "file.expect") AURA_RETURN_IF_ERROR(file_expect(p, ctx, v));
  if (check.call == "proc.expect") AURA_RETURN_IF_ERROR(proc_expect(p, ctx, v));
  if (check.call == "modes.at_most") AURA_RETURN_IF_ERROR(modes_at_most(p, ctx, v));
  if (may_settle != nullptr) *may_settle = !v.ok && !v.definite;
  CheckOutput out;
  out.ok = v.ok;
  out.observed = safe_text(v.observed, 1024);
  return out;
}

}  // namespace aura::workers::nodes
