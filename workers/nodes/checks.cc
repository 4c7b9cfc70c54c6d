#include "workers/nodes/checks.h"

#include <simdjson.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <optional>

#include "engine/common/text.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/http_probe.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/build_spec.h"
#include "workers/runner/accounts.h"

namespace aura::workers::nodes {
namespace {

using world::CheckOutput;

struct Param {
  std::string_view name;
  enum Type { kText, kInt, kBool } type;
  bool required;
};

struct CheckShape {
  std::string_view call;
  std::vector<Param> params;
};

const std::vector<CheckShape>& shapes() {
  static const std::vector<Param> http = {
      {"from", Param::kText, true},         {"to", Param::kText, true},
      {"port", Param::kInt, true},          {"path", Param::kText, true},
      {"expect_status", Param::kInt, true}, {"expect_text", Param::kText, false},
      {"listener_exe", Param::kText, false}};
  static const std::vector<CheckShape> s = {
      {"http.expect", http},
      // The driver first runs the project's playbook on the `from` node (ansible.run, as the
      // fleet's scheduled converge would), then this is http.expect.
      {"ansible.converged", http},
      {"unix.expect",
       {{"role", Param::kText, true},
        {"socket", Param::kText, true},
        {"path", Param::kText, true},
        {"expect_status", Param::kInt, true},
        {"expect_text", Param::kText, false}}},
      {"file.expect",
       {{"role", Param::kText, true},
        {"path", Param::kText, true},
        {"max_mode", Param::kText, false},
        {"owner", Param::kText, false},
        {"group", Param::kText, false}}},
      {"modes.at_most",
       {{"role", Param::kText, true},
        {"paths", Param::kText, true},
        {"max_mode", Param::kText, true}}},
      {"proc.expect",
       {{"role", Param::kText, true},
        {"exe", Param::kText, true},
        {"user", Param::kText, false},
        {"not_user", Param::kText, false},
        {"min_count", Param::kInt, false}}},
  };
  return s;
}

const CheckShape* find_shape(std::string_view call) {
  for (const auto& s : shapes())
    if (s.call == call) return &s;
  return nullptr;
}

struct Params {
  std::map<std::string, std::string, std::less<>> text;
  std::map<std::string, int64_t, std::less<>> num;
  std::string get(std::string_view k) const {
    auto it = text.find(k);
    return it == text.end() ? std::string() : it->second;
  }
  std::optional<int64_t> get_int(std::string_view k) const {
    auto it = num.find(k);
    if (it == num.end()) return std::nullopt;
    return it->second;
  }
};

Result<Params> parse_params(const scenario::CheckSpec& check, std::string_view where) {
  const CheckShape* shape = find_shape(check.call);
  const std::string base(where);
  if (shape == nullptr) {
    std::string names;
    for (auto n : check_call_names()) names += (names.empty() ? "" : ", ") + std::string(n);
    return Status::invalid(base + ".call: \"" + safe_text(check.call, 64) +
                           "\" is not a check of the nodes driver (" + names + ")");
  }
  simdjson::dom::parser parser;
  simdjson::dom::object obj;
  if (parser.parse(check.params_json).get_object().get(obj) != simdjson::SUCCESS)
    return Status::invalid(base + ".params: expected an object");
  Params p;
  for (auto field : obj) {
    const std::string key(field.key);
    auto it = std::find_if(shape->params.begin(), shape->params.end(),
                           [&](const Param& x) { return x.name == key; });
    if (it == shape->params.end())
      return Status::invalid(base + ".params." + key + ": unknown for " + check.call);
    if (it->type == Param::kInt) {
      int64_t v;
      if (field.value.get_int64().get(v) != simdjson::SUCCESS || v < 0 || v > 65535)
        return Status::invalid(base + ".params." + key + ": an integer 0..65535");
      p.num[key] = v;
    } else {
      std::string_view v;
      if (field.value.get_string().get(v) != simdjson::SUCCESS || v.empty() || v.size() > 1024)
        return Status::invalid(base + ".params." + key + ": a string of 1..1024 bytes");
      p.text[key] = std::string(v);
    }
  }
  for (const Param& x : shape->params) {
    if (x.required && !p.text.count(x.name) && !p.num.count(x.name))
      return Status::invalid(base + ".params." + std::string(x.name) + ": required");
  }
  for (size_t at = 0, end; at < p.get("paths").size(); at = end + 1) {
    const std::string list = p.get("paths");
    end = list.find(' ', at);
    if (end == std::string::npos) end = list.size();
    if (!is_clean_absolute(list.substr(at, end - at)))
      return Status::invalid(
          base + ".params.paths: \"" + list.substr(at, end - at) +
          "\" is not a normalised absolute path (paths are separated by one space)");
  }
  for (std::string_view k : {"path", "socket", "exe", "listener_exe"}) {
    const std::string v = p.get(k);
    if (!v.empty() && !is_clean_absolute(v))
      return Status::invalid(base + ".params." + std::string(k) +
                             ": not a normalised absolute path");
  }
  if (const std::string m = p.get("max_mode"); !m.empty() && !is_octal_mode(m))
    return Status::invalid(base + ".params.max_mode: 3 or 4 octal digits");
  return p;
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

// Whether host process `pid` runs the image's program `exe` (its digest in ctx.binaries).
// kNotFound from exe_digest: the process is gone, so it is not that program.
Result<bool> runs(const CheckContext& ctx, pid_t pid, const std::string& exe) {
  if (ctx.binaries == nullptr) return Status::failed_precondition("no image programs to compare");
  auto want = ctx.binaries->find(exe);
  if (want == ctx.binaries->end())
    return Status::failed_precondition(exe + " was not hashed from the image at build");
  auto got = inspect::exe_digest(pid);
  if (!got.ok()) {
    if (got.status().code() == ErrorCode::kNotFound) return false;
    return got.status();
  }
  return *got == want->second;
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

Status http_expect(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto from = with_role(ctx, p.get("from"));
  auto to = with_role(ctx, p.get("to"));
  if (from.empty() || to.empty()) {
    v.fail("no node with role " + (from.empty() ? p.get("from") : p.get("to")));
    return Status::ok();
  }
  const uint16_t port = uint16_t(*p.get_int("port"));
  for (const CheckNode* t : to) {
    inspect::HttpResult r;
    AURA_ASSIGN_OR_RETURN(
        r, inspect::http_get_tcp(from[0]->init_pid, t->address, port, p.get("path"), t->name,
                                 std::chrono::seconds(3), 64 << 10));
    const std::string where = t->name + ":" + std::to_string(port) + p.get("path");
    if (!r.connected || !r.error.empty()) {
      v.not_yet(where + ": " + (r.error.empty() ? "no connection" : r.error));
      continue;
    }
    if (r.status != *p.get_int("expect_status")) {
      v.not_yet(where + ": status " + std::to_string(r.status));
      continue;
    }
    if (const std::string want = p.get("expect_text");
        !want.empty() && r.body.find(want) == std::string::npos) {
      v.not_yet(where + ": the body lacks the expected text");
      continue;
    }
    if (const std::string exe = p.get("listener_exe"); !exe.empty()) {
      auto view_or = inspect::NodeView::open(t->init_pid);
      if (!view_or.ok()) return view_or.status();
      std::vector<inspect::Listener> ls;
      AURA_ASSIGN_OR_RETURN(ls, view_or->listeners(t->pids));
      bool found = false, foreign = false;
      for (const auto& l : ls) {
        if (!(l.proto == "tcp" || l.proto == "tcp6") ||
            !l.address.ends_with(":" + std::to_string(port)))
          continue;
        for (pid_t pid : l.pids) {
          bool is;
          AURA_ASSIGN_OR_RETURN(is, runs(ctx, pid, exe));
          (is ? found : foreign) = true;
        }
      }
      if (!found || foreign) {
        v.not_yet(where + ": port " + std::to_string(port) + " is not served by the image's " +
                  exe + " alone");
        continue;
      }
    }
    v.note(where + ": " + std::to_string(r.status));
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

// Every path of the list that exists has no mode bit beyond max_mode; missing paths are fine
// (a world variant may not have them).
Status modes_at_most(const Params& p, const CheckContext& ctx, Verdict& v) {
  auto nodes = with_role(ctx, p.get("role"));
  if (nodes.empty()) v.fail("no node with role " + p.get("role"));
  const uint32_t allowed = uint32_t(std::stoul(p.get("max_mode"), nullptr, 8));
  const std::string list = p.get("paths");
  for (const CheckNode* n : nodes) {
    auto view_or = inspect::NodeView::open(n->init_pid);
    if (!view_or.ok()) return view_or.status();
    int seen = 0;
    bool wide = false;
    for (size_t at = 0, end; at < list.size(); at = end + 1) {
      end = list.find(' ', at);
      if (end == std::string::npos) end = list.size();
      const std::string path = list.substr(at, end - at);
      auto st = view_or->stat(path);
      if (!st.ok()) {
        if (st.status().code() == ErrorCode::kIo) return st.status();
        continue;
      }
      ++seen;
      if ((st->mode & ~allowed) != 0) {
        char mode[16];
        std::snprintf(mode, sizeof mode, "%04o", st->mode);
        v.fail(n->name + ":" + path + ": mode " + mode + " is wider than " + p.get("max_mode"));
        wide = true;
      }
    }
    if (!wide) v.note(n->name + ": " + std::to_string(seen) + " paths within " + p.get("max_mode"));
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
    // A name that does not resolve fails: "not root" must never hold because "root" is unknown.
    std::optional<uint32_t> want, refuse;
    if (const std::string user = p.get("user"); !user.empty()) {
      want = id_in(*n, true, user);
      if (!want) {
        v.fail(n->name + ": no user " + user + " in the node's accounts as built");
        continue;
      }
    }
    if (const std::string user = p.get("not_user"); !user.empty()) {
      refuse = id_in(*n, true, user);
      if (!refuse) {
        v.fail(n->name + ": no user " + user + " in the node's accounts as built");
        continue;
      }
    }
    int64_t count = 0;
    std::string wrong;
    for (const auto& pr : procs) {
      bool is;
      AURA_ASSIGN_OR_RETURN(is, runs(ctx, pr.pid, exe));
      if (!is) continue;
      ++count;
      if ((want && pr.uid != *want) || (refuse && pr.uid == *refuse))
        wrong = "process runs as uid " + std::to_string(pr.uid);
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

}  // namespace

std::vector<std::string_view> check_call_names() {
  std::vector<std::string_view> out;
  for (const auto& s : shapes()) out.push_back(s.call);
  return out;
}

Status validate_check(const scenario::CheckSpec& check, std::string_view where) {
  return parse_params(check, where).status();
}

Result<CheckOutput> run_check(const scenario::CheckSpec& check, const CheckContext& ctx,
                              bool* may_settle) {
  Params p;
  AURA_ASSIGN_OR_RETURN(p, parse_params(check, "checks." + check.id));
  Verdict v;
  if (check.call == "http.expect" || check.call == "ansible.converged")
    AURA_RETURN_IF_ERROR(http_expect(p, ctx, v));
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
