#include "workers/nodes/nodes_driver.h"

#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

#include "engine/common/file_io.h"
#include "engine/common/install_layout.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "workers/nodes/checks.h"
#include "workers/nodes/nodes_world.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/supervisor/supervisor.h"

namespace aura::workers::nodes {
namespace {

namespace fs = std::filesystem;
using scenario::ParamType;

// What profile_digest() hashes: the isolation every call of a nodes world runs under.
constexpr std::string_view kProfile =
    "aura nodes driver profile 1\n"
    "world: one network namespace per node on a bridge in the world's own switch namespace; "
    "10.77.0.0/24, no default route, no address or veth in the host's namespace\n"
    "node: user (own uid range), mount, pid, ipc, uts namespaces; overlay root of an explicit "
    "read-only image (/usr /bin /sbin /lib /lib64 and loader files) plus the package, tmpfs upper; "
    "cgroup memory 512 MiB, pids 512, one CPU\n"
    "calls: aura-runner in a call cgroup (256 MiB, 64 pids, one CPU); capabilities chown, "
    "dac_override, dac_read_search, fowner, fsetid, kill (node user namespace only); "
    "no_new_privs; the runner seccomp allowlist; deadline 40 s (probes) 60 s (actions, scripts)\n"
    "evidence: only through the run's writer socket; host facts from the call cgroup\n"
    "checks: supervisor code, openat2 RESOLVE_IN_ROOT on the node root, HTTP from a child in "
    "the node's network namespace only, learner call groups frozen\n";

}  // namespace

const std::vector<OpShape>& op_shapes() {
  static const std::vector<OpShape> s = {
      {"file.read", false, {{"path", ParamType::kPath}}},
      {"file.stat", false, {{"path", ParamType::kPath}}},
      {"dir.list", false, {{"path", ParamType::kPath}}},
      {"path.namei", false, {{"path", ParamType::kPath}}},
      {"user.id", false, {{"user", ParamType::kString}}},
      {"user.list", false, {}},
      {"group.list", false, {}},
      {"net.listening", false, {}},
      {"proc.list", false, {}},
      {"http.get",
       false,
       {{"url", ParamType::kString}, {"unix", ParamType::kPath}, {"path", ParamType::kPath}}},
      {"nginx.test", false, {}},
      {"ansible.check", false, {}},
      {"service.status", false, {{"name", ParamType::kString}}},
      {"service.log", false, {{"name", ParamType::kString}, {"lines", ParamType::kInteger}}},
      {"file.write",
       true,
       {{"path", ParamType::kPath}, {"content", ParamType::kString}, {"mode", ParamType::kMode}}},
      {"file.replace",
       true,
       {{"path", ParamType::kPath}, {"old", ParamType::kString}, {"new", ParamType::kString}}},
      {"file.chmod", true, {{"path", ParamType::kPath}, {"mode", ParamType::kMode}}},
      {"file.chown",
       true,
       {{"path", ParamType::kPath}, {"user", ParamType::kString}, {"group", ParamType::kString}}},
      {"group.add_member", true, {{"group", ParamType::kString}, {"user", ParamType::kString}}},
      {"group.remove_member", true, {{"group", ParamType::kString}, {"user", ParamType::kString}}},
      {"service.restart", true, {{"name", ParamType::kString}}},
      {"service.reload", true, {{"name", ParamType::kString}}},
      {"nginx.reload", true, {}},
      {"journal.undo", true, {}},
      {"vars.set",
       true,
       {{"path", ParamType::kPath}, {"key", ParamType::kString}, {"value", ParamType::kString}}},
      {"vars.unset", true, {{"path", ParamType::kPath}, {"key", ParamType::kString}}},
      {"ansible.run", true, {}},
  };
  return s;
}

Result<std::string> tool_path(std::string_view name) {
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("AURA_TOOLS_DIR"); env != nullptr && *env != '\0')
    dirs.push_back(env);
  const InstallLayout& layout = install_layout();
  if (layout.installed) {
    dirs.push_back(layout.libexec);  // meson install: PREFIX/libexec/aura
  } else if (!layout.program_dir.empty()) {
    // The build tree's aura (build/) and tests (build/tests/<area>/), or programs side by side.
    const fs::path& here = layout.program_dir;
    for (const char* rel : {".", "workers", "workers/runner", "workers/services", "../../workers",
                            "../../workers/runner", "../../workers/services"})
      dirs.push_back(here / rel);
  }
  for (const fs::path& d : dirs) {
    const fs::path p = d / std::string(name);
    if (::access(p.c_str(), X_OK) == 0) return fs::weakly_canonical(p).string();
  }
  return Status::unavailable(
      std::string(name) +
      " was not found in $AURA_TOOLS_DIR, PREFIX/libexec/aura (installed) or the build tree");
}

NodesDriver::NodesDriver() = default;
NodesDriver::~NodesDriver() = default;

void NodesDriver::configure(const world::WorldHost& host) {
  host_ = host;
  configured_ = true;
}

Result<sandbox::CgroupTree*> NodesDriver::tree() {
  std::lock_guard lock(tree_mu_);
  if (!tree_) {
    std::unique_ptr<sandbox::CgroupTree> t;
    AURA_ASSIGN_OR_RETURN(t, sandbox::CgroupTree::detect());
    tree_ = std::move(t);
  }
  return tree_.get();
}

Status NodesDriver::check_manifest(const scenario::Manifest& m) const {
  for (size_t i = 0; i < m.worlds.size(); ++i) {
    std::vector<BuildSpec> variants;
    AURA_ASSIGN_OR_RETURN(
        variants,
        parse_build_variants(m.worlds[i].build_json, "worlds[" + std::to_string(i) + "].build"));
    for (const BuildSpec& b : variants) {
      const std::string where = "worlds[" + std::to_string(i) + "].build.selectors";
      // Roles name nodes; selectors must be defined, with a kind that yields the term's kind, in
      // every world (each world resolves them its own way).
      for (const auto& term : m.targets) {
        if (!term.selector) {
          if (term.kind != "node")
            return Status::invalid("targets." + term.name +
                                   ": a role of the nodes driver is of kind node");
          continue;
        }
        const SelectorSpec* sel = b.find_selector(term.name);
        if (sel == nullptr)
          return Status::invalid(where + ": selector \"" + term.name + "\" is not defined");
        const bool paths_only = sel->kind == "first_untraversable";
        if (term.kind != "path" && (paths_only || term.kind != "node")) {
          return Status::invalid(
              "targets." + term.name + ": a " + sel->kind +
              (paths_only ? " selector resolves to paths (kind path)"
                          : " selector resolves to paths or nodes (kind path or node)"));
        }
      }
      for (const auto& sel : b.selectors) {
        const auto* term = m.find_target(sel.name);
        if (term == nullptr || !term->selector)
          return Status::invalid(where + "." + sel.name + ": not a selector term of the manifest");
      }
    }
  }
  auto check_calls = [&](const std::vector<scenario::CallSpec>& specs, bool actions,
                         std::string_view where) -> Status {
    for (const auto& spec : specs) {
      const std::string at = std::string(where) + "." + spec.name;
      auto it = std::find_if(op_shapes().begin(), op_shapes().end(),
                             [&](const OpShape& o) { return o.name == spec.name; });
      if (it == op_shapes().end()) return Status::invalid(at + ": not a call of the nodes driver");
      if (it->action != actions)
        return Status::invalid(at + ": is " + (it->action ? "an action" : "a probe") +
                               " of the nodes driver");
      for (const auto& p : spec.params) {
        if (p.name == "node") {
          if (p.type != ParamType::kTarget || p.target_kind != "node")
            return Status::invalid(at + ".params.node: must be a target of kind node");
          continue;
        }
        auto arg = std::find_if(it->args.begin(), it->args.end(),
                                [&](const auto& a) { return a.first == p.name; });
        if (arg == it->args.end())
          return Status::invalid(at + ".params." + p.name + ": not an argument of " + spec.name);
        // A path argument may be given as a target of kind path (a selector or a literal).
        const bool path_target = arg->second == ParamType::kPath && p.type == ParamType::kTarget &&
                                 p.target_kind == "path";
        if (arg->second != p.type && !path_target)
          return Status::invalid(at + ".params." + p.name + ": must be of type " +
                                 std::string(scenario::param_type_name(arg->second)));
      }
    }
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(check_calls(m.probes, false, "probes"));
  AURA_RETURN_IF_ERROR(check_calls(m.actions, true, "actions"));
  for (size_t i = 0; i < m.checks.size(); ++i)
    AURA_RETURN_IF_ERROR(validate_check(m.checks[i], "checks[" + std::to_string(i) + "]"));
  return Status::ok();
}

Result<std::unique_ptr<NodesWorld>> NodesDriver::new_world() {
  if (!configured_ || host_.state_dir.empty())
    return Status::failed_precondition("the nodes driver was not configured with a state folder");
  sandbox::CgroupTree* t;
  AURA_ASSIGN_OR_RETURN(t, tree());
  return std::make_unique<NodesWorld>(host_, *t);
}

Result<std::unique_ptr<world::World>> NodesDriver::create(const fs::path& package_dir,
                                                          const scenario::Manifest& manifest,
                                                          std::string_view world_id, uint64_t seed,
                                                          const fs::path& work_dir) {
  std::unique_ptr<NodesWorld> w;
  AURA_ASSIGN_OR_RETURN(w, new_world());
  if (Status s = w->build(package_dir, manifest, world_id, seed, work_dir); !s.is_ok()) {
    (void)w->destroy();
    return s.with_context("building world " + std::string(world_id));
  }
  return std::unique_ptr<world::World>(std::move(w));
}

Result<std::unique_ptr<world::World>> NodesDriver::open(const scenario::Manifest& manifest,
                                                        std::string_view world_id,
                                                        const fs::path& work_dir) {
  std::unique_ptr<NodesWorld> w;
  AURA_ASSIGN_OR_RETURN(w, new_world());
  AURA_RETURN_IF_ERROR(w->reopen(manifest, world_id, work_dir));
  return std::unique_ptr<world::World>(std::move(w));
}

Status NodesDriver::destroy(std::unique_ptr<world::World> world) {
  if (!world) return Status::ok();
  auto* w = dynamic_cast<NodesWorld*>(world.get());
  if (w == nullptr) return Status::invalid("not a world of the nodes driver");
  return w->destroy();
}

Status NodesDriver::discard(const fs::path& work_dir) {
  std::error_code ec;
  if (!fs::exists(work_dir, ec)) return Status::ok();
  // The holder keeps the world's names from the reaper; a damaged state file names none.
  auto text = file_io::read_regular_file(work_dir / "world.json", "world.json", 64 << 10);
  if (text.ok()) {
    simdjson::dom::parser parser;
    simdjson::dom::element root;
    int64_t pid = 0;
    std::string_view owner;
    if (parser.parse(*text).get(root) == simdjson::SUCCESS &&
        root["holder_pid"].get_int64().get(pid) == simdjson::SUCCESS &&
        root["holder_owner"].get_string().get(owner) == simdjson::SUCCESS && pid > 1 &&
        !owner.empty() && sandbox::owner_of(pid_t(pid)) == owner) {
      ::kill(pid_t(pid), SIGKILL);
      for (int i = 0; i < 200 && sandbox::LeakLedger::owner_alive(std::string(owner)); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (!host_.state_dir.empty() && host_.log != nullptr) {
    auto reaped = supervisor::reap_and_record(host_.state_dir, *host_.log);
    if (!reaped.ok()) return reaped.status().with_context("reaping world " + work_dir.string());
  }
  fs::remove_all(work_dir, ec);
  if (ec) return Status::io("remove " + work_dir.string() + ": " + ec.message());
  return Status::ok();
}

std::string nodes_profile_digest() {
  static const std::string digest = to_hex(sha256(std::string(kProfile) + nodes_policy_text()));
  return digest;
}

std::string NodesDriver::profile_digest() const { return nodes_profile_digest(); }

std::string NodesDriver::capabilities_json() const {
  auto runner = tool_path("aura-runner");
  return JsonWriter()
      .str("driver", kDriverName)
      .str("isolation", "namespaces")
      .boolean("processes", true)
      .boolean("scripts", true)
      .boolean("namespaces", true)
      .boolean("runner", runner.ok())
      .done();
}

}  // namespace aura::workers::nodes
