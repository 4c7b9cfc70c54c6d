// Runs in a nodes world: catalog calls through aura-runner and authorised scripts, supervised.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "engine/common/json_writer.h"
#include "engine/common/text.h"
#include "engine/scenario/target_rules.h"
#include "engine/writer/evidence_writer.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/fingerprint.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/world_parts.h"
#include "workers/supervisor/supervisor.h"

namespace aura::workers::nodes {

using world::CallOutput;

namespace {

// `within` and `without`: a reading probe's bounds (one prefix a line), empty for other calls.
std::string op_json(const scenario::Call& call, uint64_t cap,
                    const std::map<std::string, std::string>& paths, std::string_view within,
                    std::string_view without) {
  JsonWriter args;
  for (const auto& [name, value] : call.params) {
    if (name == "node") continue;
    if (const auto* s = std::get_if<std::string>(&value)) args.str(name, *s);
    if (const auto* i = std::get_if<int64_t>(&value)) args.num(name, *i);
    if (const auto* b = std::get_if<bool>(&value)) args.boolean(name, *b);
    if (std::holds_alternative<scenario::Target>(value)) args.str(name, paths.at(name));
  }
  if (!within.empty()) args.str("within", within);
  if (!without.empty()) args.str("without", without);
  return JsonWriter().str("op", call.name).raw("args", args.done()).num("max_output", cap).done();
}

// The line of a failed run's output that says why: the last "error: " line (path.namei and the
// ops that keep earlier output put it last, after the lines that worked), else the first line.
std::string failure_line(std::string_view text) {
  std::string_view found;
  size_t at = 0;
  while (at < text.size()) {
    const size_t nl = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, nl - at);
    if (found.empty() && at == 0) found = line;
    if (line.starts_with("error: ")) found = line;
    at = nl + 1;
  }
  return safe_text(found, 512);
}

supervisor::HostFacts facts_of(const nsworld::ExecResult& r, const std::string& profile) {
  supervisor::HostFacts f;
  f.profile_digest = profile;
  f.exited = r.exited && !r.timed_out;
  f.exit_code = r.exit_code;
  f.term_signal = r.exited ? 0 : (r.term_signal != 0 ? r.term_signal : SIGKILL);
  if (r.timed_out) {
    f.exited = false;
    f.term_signal = SIGKILL;
  }
  f.killed_by_deadline = r.timed_out;
  f.cpu_ns = r.usage.cpu_ns;
  f.peak_memory_bytes = r.usage.peak_memory_bytes;
  f.peak_memory_known = r.usage_known && r.usage.peak_memory_known;
  f.oom_kills = r.usage.oom_kills;
  f.pids_limit_hits = r.usage.pids_limit_hits;
  f.wall_ns = r.wall_ns;
  f.stdout_bytes = r.out;
  f.stderr_bytes = r.err;
  f.stdout_truncated = r.out_truncated;
  f.stderr_truncated = r.err_truncated;
  return f;
}

}  // namespace

Status NodesWorld::can_run() const {
  if (host_.log == nullptr || host_.blobs == nullptr || host_.tokens == nullptr)
    return Status::failed_precondition("the nodes driver has no log to record runs in");
  if (attempt_.empty())
    return Status::failed_precondition("world " + world_id_ + " has no attempt");
  return Status::ok();
}

// A target that resolves to nothing here is the call's result (exit 1, the reason); a selector
// the driver lacks is an error.
Result<CallOutput> NodesWorld::unresolved(const Status& why) {
  if (why.code() == ErrorCode::kUnavailable) return why;
  CallOutput o;
  o.exit_code = 1;
  o.error = why.message();
  return o;
}

Result<supervisor::RunRecord> NodesWorld::supervised(nsworld::Node& node, const std::string& kind,
                                                     const std::vector<std::string>& argv,
                                                     nsworld::ExecOptions options, bool with_writer,
                                                     uint64_t max_output_bytes) {
  writer::RunBinding binding;
  binding.attempt = attempt_;
  binding.world = world_id_;
  binding.kinds = {kind};
  if (with_writer) {
    // The runner's contract, held by the writer whatever the runner does: the hello and one
    // evidence frame, its blob within the catalog entry's bound.
    binding.max_frames = 2;
    binding.max_blob_bytes = std::min<uint64_t>(max_output_bytes, writer::kMaxMemfdBytes);
  }
  const std::string profile = nodes_profile_digest();
  supervisor::Launcher launch = [&](int fd,
                                    const std::string& token) -> Result<supervisor::HostFacts> {
    std::vector<std::string> env = base_env();
    nsworld::ExecOptions o = options;
    o.confine = nsworld::Confinement::kCall;
    // The lab's runner reports through the writer; a learner's script does not get it (its
    // output is what the host captured, and a daemon it leaves cannot hold the connection).
    if (with_writer) {
      env.push_back("AURA_WRITER_FD=3");
      env.push_back("AURA_WRITER_TOKEN=" + token);
      env.push_back("AURA_EVIDENCE_KIND=" + kind);
      env.push_back("AURA_SVCMAN_BIN=/aura/bin/aura-svcman");
      o.pass_fd = fd;
      o.host_program = true;  // the host's runner joins the node: nothing of the node loads it
    }
    nsworld::ExecResult r;
    AURA_ASSIGN_OR_RETURN(r, node.exec(argv, env, o));
    return facts_of(r, profile);
  };
  return supervisor::supervise_run(binding, launch, *host_.log, *host_.blobs, *host_.tokens,
                                   options.deadline + std::chrono::seconds(5));
}

Result<CallOutput> NodesWorld::run_calls(const scenario::Call& call, bool action, uint64_t cap) {
  AURA_RETURN_IF_ERROR(can_run());
  const scenario::ParamValue* node_param = call.find("node");
  const scenario::Target* target = node_param ? std::get_if<scenario::Target>(node_param) : nullptr;
  auto targets = resolve(target);
  if (!targets.ok()) return unresolved(targets.status());
  std::string runner;  // the host's copy: it joins the node itself (nsworld/join.h)
  AURA_ASSIGN_OR_RETURN(runner, tool_path("aura-runner"));
  const std::string kind = action ? "action.output" : "probe.output";
  // Path targets, resolved on each node: a selector names its own path there, or nothing.
  std::vector<std::pair<LiveNode*, std::map<std::string, std::string>>> runs;
  for (LiveNode* n : *targets) {
    auto paths = resolve_paths(call, *n);
    if (!paths.ok()) return unresolved(paths.status());
    if (*paths) runs.emplace_back(n, std::move(**paths));
  }
  if (runs.empty())
    return unresolved(Status::not_found("the call's target matched nothing in this world"));
  // A path selector resolved on each node it ran on: the shared rule counts them.
  for (const auto& [name, value] : call.params) {
    const auto* tv = std::get_if<scenario::Target>(&value);
    if (name == "node" || tv == nullptr || tv->kind != scenario::Target::Kind::kSelector) continue;
    auto term = scenario::find_term(terms_, *tv);
    if (!term.ok()) return unresolved(term.status());
    std::vector<std::string> found;
    for (const auto& [n, paths] : runs) found.push_back(n->spec->name + ":" + paths.at(name));
    if (Status s = scenario::admit_matches(*tv, **term, found); !s.is_ok()) return unresolved(s);
  }
  CallOutput out;
  const auto bounds = action ? read_bounds_.end() : read_bounds_.find(call.name);
  const ReadBounds no_bounds;
  const ReadBounds& bound = bounds == read_bounds_.end() ? no_bounds : bounds->second;
  size_t refused = 0;
  for (auto& [n, paths] : runs) {
    const std::string op = op_json(call, cap, paths, bound.within, bound.without);
    std::string shown = n->spec->name;
    for (const auto& [param, path] : paths) shown += ":" + path;
    out.resolved.push_back(shown);
    nsworld::ExecOptions o;
    o.deadline = action ? kActionDeadline : kProbeDeadline;
    o.cap = 16 << 10;  // the runner's own stderr; its output goes through the writer
    o.group = "c" + random_hex(6);
    supervisor::RunRecord rec;
    AURA_ASSIGN_OR_RETURN(rec, supervised(*n->node, kind, {runner, op}, o, true, cap));
    std::string text;
    bool truncated = false;
    for (const auto& f : rec.evidence.frames_accepted) {
      if (f.kind != kind || !f.has_blob) continue;
      AURA_ASSIGN_OR_RETURN(text, host_.blobs->get(f.blob));
      truncated = f.fields_json.find("\"truncated\":true") != std::string::npos;
    }
    const auto& facts = rec.facts;
    int code = facts.exited ? facts.exit_code : -1;
    std::string error;
    if (facts.killed_by_deadline) {
      error = "the runner was killed at its deadline";
    } else if (!facts.exited) {
      error = "the runner died of signal " + std::to_string(facts.term_signal);
    } else if (code == 5 && !action && !rec.evidence.rejected) {
      // The runner refused its target before it read anything: its exit status says so, as the
      // supervisor measured it (docs/RUNNER.md); its one line says why.
      ++refused;
      error = safe_text(text.substr(0, text.find('\n')), 512);
    } else if (code >= 2) {
      // 2: the driver built an op the runner refused; 3: no writer. Both are the host's fault.
      return Status::io("node " + n->spec->name + ": aura-runner exit " + std::to_string(code) +
                        ": " + safe_text(facts.stderr_bytes, 512));
    } else if (rec.evidence.rejected) {
      error = "the runner's evidence was refused: " + rec.evidence.reason;
      code = -1;
    } else if (code == 1) {
      error = failure_line(text);
    }
    if (runs.size() > 1) out.output += "== " + n->spec->name + " ==\n";
    out.output += text;
    out.truncated = out.truncated || truncated;
    if (code != 0 && out.exit_code == 0) {
      out.exit_code = code;
      out.error = runs.size() > 1 ? n->spec->name + ": " + error : error;
    }
  }
  if (out.output.size() > cap) {
    out.output.resize(cap);
    out.truncated = true;
  }
  // Nothing was done only when every node's runner refused.
  out.refused = refused == runs.size();
  return out;
}

Result<CallOutput> NodesWorld::probe(const scenario::Call& call, uint64_t max_output_bytes) {
  return run_calls(call, false, max_output_bytes);
}

Result<CallOutput> NodesWorld::act(const scenario::Call& call) {
  return run_calls(call, true, 64 << 10);
}

Result<CallOutput> NodesWorld::run_script(const scenario::Target& target, std::string_view script) {
  AURA_RETURN_IF_ERROR(can_run());
  auto targets = resolve(&target);
  if (!targets.ok()) return unresolved(targets.status());
  CallOutput out;
  for (LiveNode* n : *targets) {
    out.resolved.push_back(n->spec->name);
    nsworld::ExecOptions o;
    o.deadline = kActionDeadline;
    o.cap = kScriptOutputCap;
    o.group = "s" + random_hex(6);
    o.keep_group = true;  // what it leaves running is the learner's, frozen for checks
    supervisor::RunRecord rec;
    AURA_ASSIGN_OR_RETURN(
        rec, supervised(*n->node, "runner.note", {"/bin/sh", "-c", std::string(script)}, o, false));
    const auto& f = rec.facts;
    if (targets->size() > 1) out.output += "== " + n->spec->name + " ==\n";
    out.output += f.stdout_bytes;
    out.output += f.stderr_bytes;
    out.truncated = out.truncated || f.stdout_truncated || f.stderr_truncated;
    const int code = f.exited ? f.exit_code : -1;
    if (code != 0 && out.exit_code == 0) {
      out.exit_code = code;
      out.error = f.killed_by_deadline ? "the script was killed at its deadline"
                  : f.exited           ? "the script exited " + std::to_string(code)
                             : "the script died of signal " + std::to_string(f.term_signal);
    }
  }
  return out;
}

}  // namespace aura::workers::nodes
