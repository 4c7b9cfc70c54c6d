// Checks and fingerprints of a nodes world: the supervisor's own code, learner processes frozen.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <thread>

#include "engine/common/text.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/fingerprint.h"
#include "workers/inspect/http_probe.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/checks.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/world_parts.h"

namespace aura::workers::nodes {

using world::CallOutput;
using world::CheckOutput;

Status NodesWorld::quarantine_strays(LiveNode& n) {
  std::set<std::string> allowed;
  for (const ServiceSpec& svc : n.spec->services) {
    if (auto it = binaries_.find(svc.argv[0]); it != binaries_.end()) allowed.insert(it->second);
    for (const std::string& program : svc.programs)
      if (auto it = binaries_.find(program); it != binaries_.end()) allowed.insert(it->second);
  }
  auto strays_of = [&](const std::vector<pid_t>& pids, bool want_stray) {
    std::vector<pid_t> out;
    for (pid_t pid : pids) {
      if (pid == n.node->init_pid()) continue;  // the lab's own init
      auto exe = inspect::exe_file(pid);
      if (!exe.ok() && exe.status().code() == ErrorCode::kNotFound) continue;  // gone
      // A service's program from the image, never a copy in the node's writable layer.
      const bool stray =
          !exe.ok() || !n.image_mounts.contains(exe->mnt_id) || !allowed.contains(exe->digest);
      if (stray == want_stray) out.push_back(pid);
    }
    return out;
  };
  const std::string group = n.node->id();
  // A quarantined process that now executes a service's program (a wrapper that went on to
  // exec it) is the service again.
  if (auto held = tree_->pids(n.node->quarantine_group()); held.ok()) {
    for (pid_t pid : strays_of(*held, false)) {
      Status back = tree_->add_pid(group, pid);
      if (!back.is_ok() && ::kill(pid, 0) == 0) return back;
    }
  }
  // Strays get a second to end or to exec a service's program (a unit's wrapper); whatever is
  // still a stray then is quarantined. Each look is taken with the group frozen, so nothing
  // forks past it.
  constexpr int kGraceLooks = 10;
  for (int look = 0;; ++look) {
    AURA_RETURN_IF_ERROR(tree_->freeze(group));
    Result<std::vector<pid_t>> pids = tree_->pids(group);
    std::vector<pid_t> strays;
    if (pids.ok()) strays = strays_of(*pids, true);
    Status moved = Status::ok();
    const bool last = look == kGraceLooks;
    if (pids.ok() && !strays.empty() && last) moved = n.node->quarantine(strays);
    Status thawed = tree_->thaw(group);
    if (!pids.ok()) return pids.status();
    AURA_RETURN_IF_ERROR(moved);
    AURA_RETURN_IF_ERROR(thawed);
    if (strays.empty() || last) return Status::ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

Status NodesWorld::freeze_learner(bool freeze) {
  Status first = Status::ok();
  // What a learner's change made a service start (a unit, an SSH rc file, a session wrapper)
  // is frozen with the learner's own calls.
  if (freeze) {
    for (auto& n : nodes_) AURA_RETURN_IF_ERROR(quarantine_strays(n));
  }
  for (auto& n : nodes_) {
    auto groups = n.node->call_groups();
    if (!groups.ok()) return groups.status();
    for (const std::string& g : *groups) {
      Status s = freeze ? tree_->freeze(g) : tree_->thaw(g);
      if (!s.is_ok() && first.is_ok()) first = s;
    }
  }
  return first;
}

// ansible.converged: the fleet's next scheduled converge, run as the lab's own ansible.run on
// the `from` node (recorded like any action), before the http.expect it then is. Only the
// checks read what the run did to the world; the playbook's output is evidence, not a verdict,
// except that a converge that fails is one.
Result<std::optional<CheckOutput>> NodesWorld::converge_first(const scenario::CheckSpec& spec) {
  scenario::CheckParams params;
  AURA_ASSIGN_OR_RETURN(params, read_check_params(spec, "checks." + spec.id));
  const std::string from = params.get("from");  // required by ansible.converged
  scenario::Call run;
  run.name = "ansible.run";
  run.params.emplace_back("node", scenario::Target{scenario::Target::Kind::kRole, from});
  CallOutput out;
  AURA_ASSIGN_OR_RETURN(out, run_calls(run, true, 64 << 10));
  if (out.exit_code == 0) return std::optional<CheckOutput>();
  CheckOutput failed;
  std::string last = out.output;
  while (!last.empty() && last.back() == '\n') last.pop_back();
  last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
  failed.observed =
      safe_text("the scheduled converge failed (" + out.error + "; " + last + ")", 1024);
  return std::optional<CheckOutput>(failed);
}

// The converge's reload takes effect after it returns (`nginx -s reload` only signals the
// master, which then starts new workers and retires the old): an answer read at once may come
// from the configuration the converge replaced, and pass a check the converged configuration
// fails. So the check waits until every node that served the port before the converge is
// served by other processes than then, the same set on two reads kSettlePoll apart (the old
// workers gone). A node still served by the same processes is waited for while one of them has
// a signal pending (a reload asked for and not yet taken) and for kSettleFloor in all: after
// that the converge did not reload it, and what it serves is read as it is. kSettleGuard bounds
// the whole wait.

namespace {

// A signal sent to `pid` and not yet handled (its thread's or its process's pending set, from
// /proc/PID/status); false when the process is gone.
bool signal_pending(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  for (int i = 0; i < 64 && std::getline(status, line); ++i) {
    if (!line.starts_with("SigPnd:") && !line.starts_with("ShdPnd:")) continue;
    const std::string mask = line.substr(line.find(':') + 1);
    if (mask.find_first_not_of("0 \t") != std::string::npos) return true;
  }
  return false;
}

Status await_reload(const scenario::CheckSpec& spec,
                    const std::map<std::string, std::vector<pid_t>>& before,
                    const std::function<CheckContext()>& context) {
  const auto start = std::chrono::steady_clock::now();
  std::map<std::string, std::vector<pid_t>> last;
  for (;;) {
    std::map<std::string, std::vector<pid_t>> now;
    AURA_ASSIGN_OR_RETURN(now, port_holders(spec, context()));
    const auto waited = std::chrono::steady_clock::now() - start;
    bool settled = true;
    for (const auto& [node, pids] : before) {
      if (pids.empty()) continue;
      auto it = now.find(node);
      const std::vector<pid_t> current = it == now.end() ? std::vector<pid_t>() : it->second;
      auto seen = last.find(node);
      const bool still = seen != last.end() && seen->second == current;
      if (current != pids) {
        if (!still) settled = false;  // replaced, and not yet at rest
      } else if (waited < kSettleFloor ||
                 std::any_of(current.begin(), current.end(), signal_pending)) {
        settled = false;  // not reloaded yet: it may still be
      }
    }
    if (settled || waited >= kSettleGuard) return Status::ok();
    last = std::move(now);
    std::this_thread::sleep_for(kSettlePoll);
  }
}

}  // namespace

Result<CheckOutput> NodesWorld::check(const scenario::CheckSpec& spec) {
  auto context = [&] {
    CheckContext ctx;
    ctx.binaries = &binaries_;
    for (auto& n : nodes_) {
      CheckNode cn;
      cn.name = n.spec->name;
      cn.roles = n.spec->roles;
      cn.address = n.address;
      cn.init_pid = n.node->init_pid();
      cn.passwd = n.passwd;
      cn.group = n.group;
      cn.built = n.built;
      cn.image_mounts = n.image_mounts;
      if (auto pids = tree_->pids(n.node->id()); pids.ok()) cn.pids = *pids;
      if (auto groups = n.node->call_groups(); groups.ok()) {
        for (const auto& g : *groups)
          if (auto more = tree_->pids(g); more.ok())
            cn.pids.insert(cn.pids.end(), more->begin(), more->end());
      }
      ctx.nodes.push_back(std::move(cn));
    }
    return ctx;
  };
  if (spec.call == "ansible.converged") {
    // A drift the converge must undo on every node it governs (the check's `drift`).
    std::map<std::string, std::vector<pid_t>> serving;
    AURA_ASSIGN_OR_RETURN(serving, port_holders(spec, context()));
    std::string refused;
    AURA_ASSIGN_OR_RETURN(refused, drift_before_converge(spec, context()));
    if (!refused.empty()) return CheckOutput{false, safe_text("cannot drift " + refused, 1024)};
    std::optional<CheckOutput> failed;
    AURA_ASSIGN_OR_RETURN(failed, converge_first(spec));
    if (failed) return *failed;
    AURA_RETURN_IF_ERROR(await_reload(spec, serving, context));
  }
  AURA_RETURN_IF_ERROR(freeze_learner(true));
  // A restarted service gets time to come up (a manager's restart returns before the service
  // listens, a reload before its new workers answer): a check that failed only for want of an
  // answer or a process is retried every kSettlePoll, each time with the node's processes as they
  // are then. Past kSettleFloor it is retried only while the world is in motion, up to
  // kSettleGuard: a wrong answer from a world at rest is final at once on any machine, and a
  // service still coming up is waited for however slow the machine.
  Result<CheckOutput> result = Status::io("not evaluated");
  bool may_settle = true;
  const auto start = std::chrono::steady_clock::now();
  std::string last_motion;  // read only when a retry is needed: a passing check costs nothing
  for (bool first = true; may_settle; first = false) {
    if (!first) {
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited >= kSettleGuard) break;
      const std::string now = motion();
      if (waited >= kSettleFloor && now == last_motion && !now.starts_with("starting")) break;
      last_motion = now;
      std::this_thread::sleep_for(kSettlePoll);
    }
    result = run_check(spec, context(), &may_settle);
    if (!result.ok() || result->ok) break;
  }
  Status thawed = freeze_learner(false);
  if (!result.ok()) return result.status();
  AURA_RETURN_IF_ERROR(thawed);
  return result;
}

std::string NodesWorld::motion() {
  std::string text;
  bool starting = false;
  for (auto& n : nodes_) {
    auto view = inspect::NodeView::open(n.node->init_pid());
    if (!view.ok()) return "unreadable";
    auto live = live_state(*n.node, *view);
    if (!live.ok()) return "unreadable";
    text += n.spec->name + "\n" + *live;
    if (auto pids = tree_->pids(n.node->id()); pids.ok()) {
      for (pid_t pid : *pids) text += std::to_string(pid) + " ";
    }
    text += "\n";
    // A service manager's services still starting (its status files in the node).
    auto statuses = view->list_dir(kSvcmanStateDir, 64);
    if (!statuses.ok()) continue;
    for (const auto& [name, info] : *statuses) {
      if (!name.ends_with(".status")) continue;
      auto status = view->read_file(std::string(kSvcmanStateDir) + "/" + name, 4096);
      if (status.ok() && (status->find(R"("state":"starting")") != std::string::npos ||
                          status->find(R"("state":"restarting")") != std::string::npos))
        starting = true;
    }
  }
  return (starting ? "starting\n" : "at rest\n") + text;
}

Result<std::string> NodesWorld::live_state(nsworld::Node& node, const inspect::NodeView& view) {
  std::vector<pid_t> pids;
  AURA_ASSIGN_OR_RETURN(pids, tree_->pids(node.id()));
  if (auto groups = node.call_groups(); groups.ok()) {
    for (const auto& g : *groups)
      if (auto more = tree_->pids(g); more.ok())
        pids.insert(pids.end(), more->begin(), more->end());
  }
  std::vector<inspect::ProcessInfo> procs;
  AURA_ASSIGN_OR_RETURN(procs, view.processes(pids));
  std::map<std::string, int> services;  // comm uid gid -> count (pids vary, services do not)
  std::map<pid_t, std::string> comm_of;
  for (const auto& pr : procs) {
    comm_of[pr.pid] = pr.comm;
    ++services[pr.comm + " " + std::to_string(pr.uid) + " " + std::to_string(pr.gid)];
  }
  std::string text = "processes\n";
  for (const auto& [k, count] : services) text += k + " x" + std::to_string(count) + "\n";
  std::vector<inspect::Listener> ls;
  AURA_ASSIGN_OR_RETURN(ls, view.listeners(pids));
  text += "listeners\n";
  for (const auto& l : ls) {
    std::set<std::string> comms;
    for (pid_t pid : l.pids) comms.insert(comm_of.count(pid) ? comm_of[pid] : "?");
    text += l.proto + " " + l.address;
    for (const auto& c : comms) text += " " + c;
    text += "\n";
  }
  return text;
}

Result<std::string> NodesWorld::fingerprint() {
  AURA_RETURN_IF_ERROR(freeze_learner(true));
  auto digest = [&]() -> Result<std::string> {
    inspect::Fingerprint fp;
    for (auto& n : nodes_) {
      auto view_or = inspect::NodeView::open(n.node->init_pid());
      if (!view_or.ok()) return view_or.status();
      const inspect::NodeView& view = *view_or;
      const std::string p = n.spec->name;
      AURA_RETURN_IF_ERROR(inspect::add_tree(fp, view, p + ":users", "/etc/passwd", 1));
      AURA_RETURN_IF_ERROR(inspect::add_tree(fp, view, p + ":groups", "/etc/group", 1));
      std::set<std::string> paths, entries;
      for (const StateSpec& st : spec_.state) {
        const bool applies = std::any_of(st.roles.begin(), st.roles.end(), [&](const auto& r) {
          return r == "*" ||
                 std::find(n.spec->roles.begin(), n.spec->roles.end(), r) != n.spec->roles.end();
        });
        if (!applies) continue;
        paths.insert(st.paths.begin(), st.paths.end());
        entries.insert(st.entries.begin(), st.entries.end());
      }
      for (const std::string& path : paths)
        AURA_RETURN_IF_ERROR(inspect::add_tree(fp, view, p + ":files:" + path, path, 100'000));
      for (const std::string& path : entries) {
        auto st = view.stat(path);
        std::string value = "absent";
        if (st.ok()) {
          char mode[16];
          std::snprintf(mode, sizeof mode, "%04o", st->mode);
          value = std::string(inspect::type_name(st->type)) + " " + mode + " " +
                  std::to_string(st->uid) + " " + std::to_string(st->gid);
        } else if (st.status().code() == ErrorCode::kIo) {
          return st.status();
        }
        AURA_RETURN_IF_ERROR(fp.add(p + ":entry:" + path, value));
      }
      // Processes and listeners, once they settle: a service restarting or a reload's old
      // workers leaving are not state (two equal samples kSettlePoll apart, until kSettleGuard).
      std::string live, last;
      const auto settle_by = std::chrono::steady_clock::now() + kSettleGuard;
      for (bool first = true;; first = false) {
        AURA_ASSIGN_OR_RETURN(live, live_state(*n.node, view));
        if ((!first && live == last) || std::chrono::steady_clock::now() >= settle_by) break;
        last = live;
        std::this_thread::sleep_for(kSettlePoll);
      }
      AURA_RETURN_IF_ERROR(fp.add(p + ":live", live));
    }
    return fp.hex();
  }();
  Status thawed = freeze_learner(false);
  if (!digest.ok()) return digest.status();
  AURA_RETURN_IF_ERROR(thawed);
  return digest;
}

}  // namespace aura::workers::nodes
