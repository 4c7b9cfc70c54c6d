// Building a nodes world: its spec, holder, network, nodes, layers, identities and services.
#include <signal.h>
#include <sodium.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <thread>

#include "engine/common/file_io.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/fingerprint.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/checks.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/stage.h"
#include "workers/nodes/world_parts.h"
#include "workers/runner/accounts.h"

namespace aura::workers::nodes {

namespace fs = std::filesystem;

Status NodesWorld::hash_program(const std::string& inside,
                                const std::map<std::string, std::string>& tools,
                                const std::string& where) {
  if (binaries_.contains(inside)) return Status::ok();
  // The program as the image holds it: a lab program from its host copy, anything else from
  // the read-only image (the same path on the host). Never the node's own view of it.
  std::string host;
  if (auto it = tools.find(inside); it != tools.end()) {
    host = it->second;
  } else {
    for (const std::string& lower : image())
      if (inside == lower || inside.starts_with(lower + "/")) host = inside;
  }
  if (host.empty())
    return Status::invalid(where + ": " + inside +
                           " is neither a lab program nor in the read-only image");
  auto digest = inspect::file_digest(host);
  if (!digest.ok()) return digest.status().with_context(where);
  binaries_[inside] = std::move(digest).value();
  return Status::ok();
}

Status NodesWorld::hash_binaries(const scenario::Manifest& manifest,
                                 const std::map<std::string, std::string>& tools) {
  for (const scenario::CheckSpec& check : manifest.checks) {
    const std::string where = "checks." + check.id;
    scenario::CheckParams params;
    AURA_ASSIGN_OR_RETURN(params, read_check_params(check, where));
    for (const char* key : {"exe", "listener_exe"}) {
      const std::string exe = params.get(key);
      if (exe.empty()) continue;
      AURA_RETURN_IF_ERROR(hash_program(exe, tools, where + ".params." + key));
    }
  }
  // The programs a node's services may run: anything else in a node's own group is a stray.
  for (const NodeSpec& ns : spec_.nodes) {
    for (const ServiceSpec& svc : ns.services) {
      const std::string where = "node " + ns.name + ": service " + svc.name;
      AURA_RETURN_IF_ERROR(hash_program(svc.argv[0], tools, where));
      for (const std::string& program : svc.programs)
        AURA_RETURN_IF_ERROR(hash_program(program, tools, where));
    }
  }
  return Status::ok();
}

Status NodesWorld::load_spec(const scenario::Manifest& manifest, std::string_view world_id,
                             uint64_t seed) {
  const scenario::WorldSpec* ws = nullptr;
  for (const auto& w : manifest.worlds)
    if (w.id == world_id) ws = &w;
  if (ws == nullptr) return Status::invalid("no world \"" + std::string(world_id) + "\"");
  AURA_ASSIGN_OR_RETURN(spec_, parse_build(ws->build_json, "build", seed));
  world_id_ = std::string(world_id);
  scenario_ = manifest.id;
  version_ = manifest.version;
  terms_ = manifest.targets;
  read_bounds_.clear();
  for (const scenario::CallSpec& c : manifest.probes) {
    if (c.name != "file.read" && c.name != "dir.list") continue;
    for (const scenario::ParamSchema& p : c.params) {
      if (p.name != "path" || p.type != scenario::ParamType::kPath) continue;
      ReadBounds& b = read_bounds_[c.name];
      for (const std::string& in : p.path_prefixes) b.within += in + "\n";
      for (const std::string& ex : p.path_excludes) b.without += ex + "\n";
    }
  }
  const auto ansible = [](const std::string& call) { return call.starts_with("ansible."); };
  runs_ansible_ = std::any_of(manifest.probes.begin(), manifest.probes.end(),
                              [&](const auto& c) { return ansible(c.name); }) ||
                  std::any_of(manifest.actions.begin(), manifest.actions.end(),
                              [&](const auto& c) { return ansible(c.name); }) ||
                  std::any_of(manifest.checks.begin(), manifest.checks.end(),
                              [&](const auto& c) { return ansible(c.call); });
  return Status::ok();
}

Status NodesWorld::build(const fs::path& package_dir, const scenario::Manifest& manifest,
                         std::string_view world_id, uint64_t seed, const fs::path& work_dir) {
  if (sodium_init() < 0) return Status::unavailable("libsodium failed to initialise");
  AURA_RETURN_IF_ERROR(load_spec(manifest, world_id, seed));
  seed_ = seed;
  if (fs::exists(work_dir)) return Status::failed_precondition(work_dir.string() + " exists");
  work_dir_ = work_dir;  // from here on, destroy() removes it
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(work_dir.parent_path(), 0700));
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(work_dir, 0700));

  AURA_ASSIGN_OR_RETURN(holder_, start_holder(host_.state_dir));
  ledger_ = std::make_unique<sandbox::LeakLedger>(host_.state_dir, holder_.owner);
  // The world network's tag is also the run id of the world's uses of stage entries.
  const std::string tag = random_hex(8);
  const StageUse stage_use{ledger_.get(), tag};

  // What every node mounts: the lab's programs, staged when the node's uids cannot reach them.
  // Not aura-runner: it is never run from a node's files, it joins the node from the host.
  std::vector<sandbox::PackageMount> tool_mounts;
  std::map<std::string, std::string> tools;  // inside -> host
  for (std::string_view tool : {"aura-svcman", "aura-app"}) {
    std::string path;
    AURA_ASSIGN_OR_RETURN(path, tool_path(tool));
    AURA_ASSIGN_OR_RETURN(path, reachable_by_nodes(path, stage_use));
    tool_mounts.push_back({path, "/aura/bin/" + std::string(tool)});
    tools["/aura/bin/" + std::string(tool)] = path;
  }
  AURA_RETURN_IF_ERROR(hash_binaries(manifest, tools));
  // Of the package, each node mounts only its own layers (never the manifest, SHA256SUMS or
  // another world's files), each a copy of the package's verified bytes.
  std::vector<std::string> layers;
  for (const NodeSpec& ns : spec_.nodes)
    layers.insert(layers.end(), ns.layers.begin(), ns.layers.end());
  std::map<std::string, std::string> staged;  // layer -> its staged copy
  AURA_ASSIGN_OR_RETURN(
      staged, stage_layers(fs::absolute(package_dir), layers, stage_use, &package_sums_sha256_));

  std::vector<std::string> names;
  for (const auto& n : spec_.nodes) names.push_back(n.name);
  netns::WorldNetwork net;
  AURA_ASSIGN_OR_RETURN(net, netns::WorldNetwork::create(tag, names, ledger_.get()));
  net_ = std::make_unique<netns::WorldNetwork>(std::move(net));

  for (const NodeSpec& ns : spec_.nodes) {
    nsworld::NodeOptions o;
    o.hostname = ns.name;
    o.netns = "/run/netns/" + net_->netns_name(ns.name);
    o.lower_paths = image();
    o.packages = tool_mounts;
    for (const std::string& layer : ns.layers)
      o.packages.push_back({staged.at(layer), std::string(kLayerMount) + layer});
    o.forbidden = host_.forbidden;
    o.state_dir = host_.state_dir;
    o.owner = holder_.owner;
    o.limits.memory_bytes = kNodeMemoryBytes;
    o.limits.pids_max = kNodePidsMax;
    LiveNode live;
    live.spec = &ns;
    live.address = net_->address(ns.name);
    auto node = nsworld::Node::start(o, *tree_);
    if (!node.ok()) return node.status().with_context("node " + ns.name);
    live.node = std::move(node).value();
    nodes_.push_back(std::move(live));
    nsworld::Node& node_ref = *nodes_.back().node;

    // The lab's setup steps run as the node's root; a service runs confined as it declares.
    auto step = [&](const std::vector<std::string>& argv, const std::string& what,
                    const ServiceSpec* service = nullptr) -> Status {
      nsworld::ExecOptions eo;
      eo.deadline = kBuildStepDeadline;
      eo.cap = 16 << 10;
      eo.confine = service ? nsworld::Confinement::kService : nsworld::Confinement::kNodeRoot;
      eo.linux_caps = service ? service->linux_caps : 0;
      auto r = node_ref.exec(argv, base_env(), eo);
      if (!r.ok()) return r.status().with_context("node " + ns.name + ": " + what);
      if (!r->exited || r->exit_code != 0) {
        return Status::io(
            "node " + ns.name + ": " + what + " failed (" +
            (r->timed_out ? std::string("deadline") : "exit " + std::to_string(r->exit_code)) +
            "): " + safe_text(r->err, 512));
      }
      return Status::ok();
    };
    // Every node knows the world's nodes by name; then the kernel filesystems it asks for.
    std::string hosts = "127.0.0.1 localhost\n::1 localhost\n";
    for (const NodeSpec& other : spec_.nodes)
      hosts += net_->address(other.name) + " " + other.name + "\n";
    std::string setup = "set -e\nprintf '%s' " + shell_quote(hosts) + " > /etc/hosts\n";
    // The lab's journal folder (runner/journal.h), made as the runner would: part of the world
    // as built, so an action's journal entries are its only change there (the runtime state
    // a package's change surface names), never the folders above them.
    setup +=
        "for d in /var /var/lib /var/lib/aura; do [ -d $d ] || mkdir -m 755 $d; done\n"
        "[ -d /var/lib/aura/journal ] || mkdir -m 700 /var/lib/aura/journal\n";
    for (const std::string& m : ns.mounts) {
      if (m == "shm") {
        setup +=
            "mkdir -p -m 1777 /dev/shm\n"
            "mount -t tmpfs -o size=8m,mode=1777,nosuid,nodev,noexec shm /dev/shm\n";
      } else if (m == "pts") {
        setup +=
            "mkdir -p /dev/pts\n"
            "mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts\n"
            "ln -sf pts/ptmx /dev/ptmx\n";
      }
    }
    AURA_RETURN_IF_ERROR(step({"/bin/sh", "-c", setup}, "hosts and mounts"));
    for (const std::string& layer : ns.layers) {
      AURA_RETURN_IF_ERROR(
          step({"/bin/cp", "-R", "--preserve=mode", std::string(kLayerMount) + layer + "/.", "/"},
               "copy layer " + layer));
    }
    // Copied, the layers are unmounted before anything of the scenario runs: the pristine copy
    // (files 0644 there, whatever mode `owners` declares for them) is not left readable.
    std::string unmount = "set -e\n";
    for (auto l = ns.layers.rbegin(); l != ns.layers.rend(); ++l)
      unmount += "umount " + shell_quote(std::string(kLayerMount) + *l) + "\n";
    unmount += "rm -r " + shell_quote(std::string(kLayerMount)) + "\n";
    AURA_RETURN_IF_ERROR(step({"/bin/sh", "-c", unmount}, "unmount the layers"));
    if (!ns.owners.empty()) {
      std::string script = "set -e\n";
      for (const OwnerSpec& o2 : ns.owners) {
        if (!o2.owner.empty() || !o2.group.empty()) {
          script += "chown -h " + shell_quote(o2.owner + (o2.group.empty() ? "" : ":" + o2.group)) +
                    " " + shell_quote(o2.path) + "\n";
        }
        if (!o2.mode.empty()) script += "chmod " + o2.mode + " " + shell_quote(o2.path) + "\n";
      }
      AURA_RETURN_IF_ERROR(step({"/bin/sh", "-c", script}, "owners and modes"));
    }
    // The identities as the package built them, before any service or call could change them.
    {
      auto view = inspect::NodeView::open(node_ref.init_pid());
      if (!view.ok()) return view.status();
      for (auto [file, into] : {std::pair{"/etc/passwd", &nodes_.back().passwd},
                                std::pair{"/etc/group", &nodes_.back().group}}) {
        auto text = view->read_file(file, kAccountsCap);
        if (text.ok()) {
          *into = std::move(text).value();
        } else if (text.status().code() != ErrorCode::kNotFound) {
          return text.status().with_context("node " + ns.name + ": " + file);
        }
      }
      // The paths the checks compare against the image, as built (checks.h).
      auto built = record_built(manifest, ns.roles, *view);
      if (!built.ok()) return built.status().with_context("node " + ns.name);
      nodes_.back().built = std::move(built).value();
      // Every mount is the lab's yet: those of the image are where its programs run from.
      auto mounts = view->host_backed_mounts();
      if (!mounts.ok()) return mounts.status().with_context("node " + ns.name);
      nodes_.back().image_mounts = std::move(mounts).value();
    }
    for (const ServiceSpec& svc : ns.services) {
      std::vector<std::string> argv = {"/bin/sh", "-c", "exec \"$@\" </dev/null >/dev/null 2>&1 &",
                                       "sh"};
      argv.insert(argv.end(), svc.argv.begin(), svc.argv.end());
      AURA_RETURN_IF_ERROR(step(argv, "start service " + svc.name, &svc));
      if (svc.ready_tcp == 0 && svc.ready_unix.empty()) continue;
      const auto until = std::chrono::steady_clock::now() + kReadyTimeout;
      bool ready = false;
      while (!ready && std::chrono::steady_clock::now() < until) {
        auto view = inspect::NodeView::open(node_ref.init_pid());
        if (!view.ok()) return view.status();
        auto ls = view->listeners({});
        if (ls.ok()) {
          for (const auto& l : *ls) {
            if (svc.ready_tcp != 0 && (l.proto == "tcp" || l.proto == "tcp6") &&
                l.address.ends_with(":" + std::to_string(svc.ready_tcp)))
              ready = true;
            if (!svc.ready_unix.empty() && l.proto == "unix" && l.address == svc.ready_unix)
              ready = true;
          }
        }
        if (!ready) std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      if (!ready) {
        return Status::io(
            "node " + ns.name + ": service " + svc.name + " was not listening on " +
            (svc.ready_tcp != 0 ? "port " + std::to_string(svc.ready_tcp) : svc.ready_unix) +
            " within " + std::to_string(kReadyTimeout.count()) + " s");
      }
    }
  }
  // The world as built, services started: what every change set is read against.
  AURA_RETURN_IF_ERROR(record_pristine());
  return write_state();
}

}  // namespace aura::workers::nodes
