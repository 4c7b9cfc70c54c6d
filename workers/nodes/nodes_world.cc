#include "workers/nodes/nodes_world.h"

#include <fcntl.h>
#include <signal.h>
#include <simdjson.h>
#include <sodium.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <set>
#include <span>
#include <thread>

#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "engine/scenario/call_dom.h"
#include "engine/writer/evidence_writer.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/fingerprint.h"
#include "workers/inspect/http_probe.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/checks.h"
#include "workers/nodes/nodes_driver.h"
#include "workers/nodes/stage.h"
#include "workers/runner/accounts.h"
#include "workers/runner/vars_file.h"
#include "workers/sandbox/profile.h"
#include "workers/supervisor/supervisor.h"

namespace aura::workers::nodes {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;
using world::CallOutput;
using world::CheckOutput;

constexpr std::string_view kStateFile = "world.json";
constexpr std::string_view kStateMagic = "aura-nodes-world 1";
// Runaway guards, never speed bars: a grade must not depend on how fast or busy the machine is.
// Each is many times what its step takes on an idle 2-core machine (a service is ready in well
// under a second, a converge of three nodes takes seconds), so a machine several times slower
// and loaded still finishes well inside it.
constexpr auto kReadyTimeout = std::chrono::seconds(60);
constexpr auto kBuildStepDeadline = std::chrono::seconds(120);
constexpr auto kProbeDeadline = std::chrono::seconds(200);  // past the runner's 180 s tool limit
constexpr auto kActionDeadline = std::chrono::seconds(300);
constexpr size_t kScriptOutputCap = 64 << 10;
// Where a node sees each of its own layers (read-only) while the build copies them onto its root.
constexpr std::string_view kLayerMount = "/aura/pkg/";
constexpr size_t kAccountsCap = 64 << 10;  // a node's /etc/passwd or /etc/group
// Each node's own cgroup (its services and the lab's setup); calls get groups of their own.
constexpr uint64_t kNodeMemoryBytes = 512ull << 20;
constexpr uint64_t kNodePidsMax = 512;

// The read-only image every node is made from: programs and libraries, never the host's /etc
// beyond what the dynamic loader and name lookups need (a node's users and groups come from
// its package layers).
const std::vector<std::string>& image() {
  static const std::vector<std::string> paths = [] {
    std::vector<std::string> out;
    for (const char* p :
         {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/etc/ld.so.cache", "/etc/nsswitch.conf",
          "/etc/alternatives", "/etc/ssl", "/etc/mime.types"}) {
      if (fs::exists(p)) out.push_back(p);
    }
    return out;
  }();
  return paths;
}

const std::vector<std::string>& base_env() {
  static const std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
                                               "LANG=C.UTF-8"};
  return env;
}

std::string random_hex(size_t bytes) {
  std::vector<uint8_t> raw(bytes);
  randombytes_buf(raw.data(), raw.size());
  return to_hex(std::span<const uint8_t>(raw.data(), raw.size()));
}

std::string shell_quote(std::string_view s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// ---- the holder ----

void end_holder(Holder& h) {
  if (h.pid > 0 && sandbox::owner_of(h.pid) == h.owner) ::kill(h.pid, SIGKILL);
  if (h.pipe >= 0) ::close(h.pipe);
  if (h.child && h.pid > 0) {
    int st;
    while (::waitpid(h.pid, &st, 0) < 0 && errno == EINTR) {
    }
  }
  h = Holder{};
}

// Starts aura-holder (holder_main.cc) with the read end of a fresh pipe as its fd 3. The child
// only makes syscalls before exec: this process may have other threads.
Result<Holder> start_holder(const fs::path& state_dir) {
  std::string program;
  AURA_ASSIGN_OR_RETURN(program, tool_path("aura-holder"));
  const std::string state = state_dir.string();
  const char* argv[] = {"aura-holder", state.c_str(), nullptr};
  int p[2], e[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return Status::io("pipe: " + errno_text(errno));
  if (::pipe2(e, O_CLOEXEC) != 0) {
    ::close(p[0]);
    ::close(p[1]);
    return Status::io("pipe: " + errno_text(errno));
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Its own session: a signal to the creator's process group (a test harness's, a shell's)
    // does not reach it, so it can tear the world down after the creator is gone.
    ::setsid();
    // Keeps only stdio, the pipe (as 3) and the exec error pipe (as 4, closed by exec).
    const int pipe_fd = ::fcntl(p[0], F_DUPFD, 10);
    const int err_fd = ::fcntl(e[1], F_DUPFD_CLOEXEC, 10);
    const int null_fd = ::open("/dev/null", O_RDWR);
    if (pipe_fd < 0 || err_fd < 0 || null_fd < 0 || ::dup2(null_fd, 0) < 0 ||
        ::dup2(null_fd, 1) < 0 || ::dup2(null_fd, 2) < 0 || ::dup2(pipe_fd, 3) != 3 ||
        ::dup3(err_fd, 4, O_CLOEXEC) != 4)
      ::_exit(126);
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
    ::execv(program.c_str(), const_cast<char* const*>(argv));
    const int err = errno;
    [[maybe_unused]] ssize_t w = ::write(4, &err, sizeof err);
    ::_exit(127);
  }
  ::close(p[0]);
  ::close(e[1]);
  if (pid < 0) {
    ::close(p[1]);
    ::close(e[0]);
    return Status::io("fork: " + errno_text(errno));
  }
  Holder h;
  h.pid = pid;
  h.pipe = p[1];
  h.child = true;
  int err = 0;
  ssize_t n;
  while ((n = ::read(e[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  ::close(e[0]);
  if (n != 0) {
    end_holder(h);
    return Status::unavailable("start " + program + ": " +
                               (n == sizeof err ? errno_text(err) : std::string("failed")));
  }
  h.owner = sandbox::owner_of(pid);
  if (h.owner.empty()) {
    end_holder(h);
    return Status::io("the world's holder process died at start");
  }
  return h;
}

// ---- state file ----

std::string state_json(const std::string& scenario, const std::string& version,
                       const std::string& world, uint64_t seed, const Holder& h,
                       const std::string& tag, const std::vector<LiveNode>& nodes,
                       const std::map<std::string, std::string>& binaries) {
  JsonArray ns;
  for (const auto& n : nodes) {
    const nsworld::NodeState st = n.node->state();
    ns.raw(JsonWriter()
               .str("name", n.spec->name)
               .str("id", st.id)
               .num("init_pid", int64_t(st.init_pid))
               .str("init_start", st.init_start)
               .str("stage", st.stage.string())
               .num("uid_base", uint64_t(st.uid_base))
               .str("passwd", n.passwd)
               .str("group", n.group)
               .str("built", n.built)
               .done());
  }
  JsonWriter bins;
  for (const auto& [path, digest] : binaries) bins.str(path, digest);
  return JsonWriter()
      .str("magic", kStateMagic)
      .str("scenario", scenario)
      .str("version", version)
      .str("world", world)
      .num("seed", seed)
      .num("holder_pid", int64_t(h.pid))
      .str("holder_owner", h.owner)
      .str("net", tag)
      .raw("nodes", ns.done())
      .raw("binaries", bins.done())
      .done();
}

}  // namespace

NodesWorld::NodesWorld(const world::WorldHost& host, sandbox::CgroupTree& tree)
    : host_(host), tree_(&tree) {}

NodesWorld::~NodesWorld() {
  for (auto& n : nodes_)
    if (n.node) n.node->detach();
  if (net_) net_->detach();
  if (holder_.pipe >= 0) ::close(holder_.pipe);  // a holder not told to persist ends now
  holder_.pipe = -1;
}

Status NodesWorld::persist() {
  if (holder_.pipe < 0) return Status::ok();  // reopened: it already persists
  if (::write(holder_.pipe, "P", 1) != 1) return Status::io("tell the holder to persist");
  return Status::ok();
}

Status NodesWorld::write_state() const {
  return file_io::replace_file_durably(work_dir_, work_dir_ / std::string(kStateFile),
                                       state_json(scenario_, version_, world_id_, seed_, holder_,
                                                  net_ ? net_->tag() : "", nodes_, binaries_),
                                       0600);
}

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
  simdjson::dom::parser parser;
  for (const scenario::CheckSpec& check : manifest.checks) {
    simdjson::dom::object params;
    if (parser.parse(check.params_json).get_object().get(params) != simdjson::SUCCESS) continue;
    for (const char* key : {"exe", "listener_exe"}) {
      std::string_view exe;
      if (params[key].get_string().get(exe) != simdjson::SUCCESS) continue;
      AURA_RETURN_IF_ERROR(
          hash_program(std::string(exe), tools, "checks." + check.id + ".params." + key));
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
  registry_ = std::make_unique<sandbox::Registry>(host_.state_dir, holder_.owner);
  // The world network's tag is also the run id of the world's uses of stage entries.
  const std::string tag = random_hex(8);
  const StageUse stage_use{registry_.get(), tag};

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
  AURA_ASSIGN_OR_RETURN(net, netns::WorldNetwork::create(tag, names, registry_.get()));
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
      eo.capabilities = service ? service->capabilities : 0;
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
  return write_state();
}

Status NodesWorld::reopen(const scenario::Manifest& manifest, std::string_view world_id,
                          const fs::path& work_dir) {
  work_dir_ = work_dir;
  std::string text;
  AURA_ASSIGN_OR_RETURN(
      text, file_io::read_regular_file(work_dir / std::string(kStateFile), "world.json", 1 << 20));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS)
    return Status::corruption(work_dir.string() + "/world.json does not parse");
  auto str = [&](const char* key) -> std::string {
    std::string_view v;
    return root[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
  };
  if (str("magic") != kStateMagic || str("scenario") != manifest.id ||
      str("version") != manifest.version || str("world") != world_id) {
    return Status::failed_precondition(work_dir.string() + " holds another world");
  }
  uint64_t seed = 0;
  int64_t hp = 0;
  if (root["seed"].get_uint64().get(seed) != simdjson::SUCCESS ||
      root["holder_pid"].get_int64().get(hp) != simdjson::SUCCESS)
    return Status::corruption(work_dir.string() + "/world.json: seed or holder missing");
  AURA_RETURN_IF_ERROR(load_spec(manifest, world_id, seed));
  seed_ = seed;
  holder_.pid = pid_t(hp);
  holder_.owner = str("holder_owner");
  if (!sandbox::Registry::owner_alive(holder_.owner)) {
    return Status::failed_precondition("world " + world_id_ + " in " + work_dir.string() +
                                       " is gone (its holder process exited)");
  }
  registry_ = std::make_unique<sandbox::Registry>(host_.state_dir, holder_.owner);
  std::vector<std::string> names;
  for (const auto& n : spec_.nodes) names.push_back(n.name);
  netns::WorldNetwork net;
  AURA_ASSIGN_OR_RETURN(net, netns::WorldNetwork::adopt(str("net"), names, registry_.get()));
  net_ = std::make_unique<netns::WorldNetwork>(std::move(net));
  simdjson::dom::array arr;
  if (root["nodes"].get_array().get(arr) != simdjson::SUCCESS)
    return Status::corruption("world.json: nodes");
  for (simdjson::dom::element e : arr) {
    std::string_view name, id, start, stage;
    int64_t pid = 0;
    uint64_t base = 0;
    std::string_view passwd, group, built;
    if (e["name"].get_string().get(name) || e["id"].get_string().get(id) ||
        e["init_start"].get_string().get(start) || e["stage"].get_string().get(stage) ||
        e["init_pid"].get_int64().get(pid) || e["uid_base"].get_uint64().get(base) ||
        e["passwd"].get_string().get(passwd) || e["group"].get_string().get(group) ||
        e["built"].get_string().get(built)) {
      return Status::corruption("world.json: a node entry is incomplete");
    }
    const NodeSpec* ns = spec_.find(name);
    if (ns == nullptr) return Status::corruption("world.json: unknown node " + std::string(name));
    nsworld::NodeState st;
    st.id = std::string(id);
    st.init_pid = pid_t(pid);
    st.init_start = std::string(start);
    st.stage = std::string(stage);
    st.state_dir = host_.state_dir;
    st.uid_base = uint32_t(base);
    st.owner = holder_.owner;
    LiveNode live;
    live.spec = ns;
    live.address = net_->address(ns->name);
    live.passwd = std::string(passwd);
    live.group = std::string(group);
    live.built = std::string(built);
    AURA_ASSIGN_OR_RETURN(live.node, nsworld::Node::attach(st, *tree_));
    nodes_.push_back(std::move(live));
  }
  if (nodes_.size() != spec_.nodes.size()) return Status::corruption("world.json: nodes missing");
  simdjson::dom::object bins;
  if (root["binaries"].get_object().get(bins) != simdjson::SUCCESS)
    return Status::corruption("world.json: binaries");
  for (auto field : bins) {
    std::string_view digest;
    if (field.value.get_string().get(digest) != simdjson::SUCCESS)
      return Status::corruption("world.json: binaries." + std::string(field.key));
    binaries_[std::string(field.key)] = std::string(digest);
  }
  return Status::ok();
}

Status NodesWorld::destroy() {
  Status first = Status::ok();
  auto note = [&](Status s) {
    if (!s.is_ok() && first.is_ok()) first = s;
  };
  for (auto& n : nodes_)
    if (n.node) note(n.node->destroy());
  if (net_) note(net_->destroy());
  // With the nodes gone, this world's uses of stage entries end (an entry no world uses goes).
  Status unstaged = Status::ok();
  if (first.is_ok() && registry_) unstaged = release_stage_uses(*registry_, holder_.owner);
  if (first.is_ok()) {
    end_holder(holder_);
    std::error_code ec;
    if (!work_dir_.empty()) fs::remove_all(work_dir_, ec);
    if (ec) note(Status::io("remove " + work_dir_.string() + ": " + ec.message()));
  }
  note(unstaged);
  return first;
}

// ---- targets ----

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
  switch (target->kind) {
    case scenario::Target::Kind::kLiteral:
      if (LiveNode* n = find_node(target->name)) return std::vector<LiveNode*>{n};
      return Status::not_found("no node named \"" + target->name + "\" in this world");
    case scenario::Target::Kind::kRole: {
      auto out = with_role(target->name);
      if (out.empty()) return Status::not_found("no node has the role \"" + target->name + "\"");
      AURA_RETURN_IF_ERROR(within_max_matches("role", target->name, out.size()));
      return out;
    }
    case scenario::Target::Kind::kSelector: {
      const SelectorSpec* sel = spec_.find_selector(target->name);
      if (sel == nullptr || sel->kind == "first_untraversable") break;
      std::vector<LiveNode*> out;
      for (LiveNode* project : with_role(sel->role)) {
        std::vector<Override> found;
        AURA_ASSIGN_OR_RETURN(found, overrides(*sel, *project));
        for (const Override& o : found)
          if (LiveNode* n = find_node(o.host);
              n != nullptr && std::find(out.begin(), out.end(), n) == out.end())
            out.push_back(n);
      }
      if (out.empty())
        return Status::not_found("selector \"" + target->name + "\" matches no node in this world");
      AURA_RETURN_IF_ERROR(within_max_matches("selector", target->name, out.size()));
      return out;
    }
  }
  return Status::unavailable("selector \"" + target->name +
                             "\" is not one the nodes driver implements for nodes");
}

// A term resolving to `n` nodes, refused when that is more than the manifest's max_matches.
Status NodesWorld::within_max_matches(std::string_view what, const std::string& term,
                                      size_t n) const {
  for (const auto& t : terms_) {
    if (t.name == term && n > t.max_matches) {
      return Status::failed_precondition(std::string(what) + " \"" + term + "\" matches " +
                                         std::to_string(n) + " nodes, more than its " +
                                         std::to_string(t.max_matches));
    }
  }
  return Status::ok();
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

// ---- runs ----

namespace {

std::string op_json(const scenario::Call& call, uint64_t cap,
                    const std::map<std::string, std::string>& paths) {
  JsonWriter args;
  for (const auto& [name, value] : call.params) {
    if (name == "node") continue;
    if (const auto* s = std::get_if<std::string>(&value)) args.str(name, *s);
    if (const auto* i = std::get_if<int64_t>(&value)) args.num(name, *i);
    if (const auto* b = std::get_if<bool>(&value)) args.boolean(name, *b);
    if (std::holds_alternative<scenario::Target>(value)) args.str(name, paths.at(name));
  }
  return JsonWriter().str("op", call.name).raw("args", args.done()).num("max_output", cap).done();
}

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
  for (const auto& [name, value] : call.params) {
    const auto* tv = std::get_if<scenario::Target>(&value);
    if (name != "node" && tv && tv->kind == scenario::Target::Kind::kSelector) {
      if (Status s = within_max_matches("selector", tv->name, runs.size()); !s.is_ok())
        return unresolved(s);
    }
  }
  CallOutput out;
  for (auto& [n, paths] : runs) {
    const std::string op = op_json(call, cap, paths);
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
    } else if (code >= 2) {
      // 2: the driver built an op the runner refused; 3: no writer. Both are the host's fault.
      return Status::io("node " + n->spec->name + ": aura-runner exit " + std::to_string(code) +
                        ": " + safe_text(facts.stderr_bytes, 512));
    } else if (rec.evidence.rejected) {
      error = "the runner's evidence was refused: " + rec.evidence.reason;
      code = -1;
    } else if (code == 1) {
      error = safe_text(text.substr(0, text.find('\n')), 512);
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
  return out;
}

Result<std::optional<std::map<std::string, std::string>>> NodesWorld::resolve_paths(
    const scenario::Call& call, LiveNode& n) {
  std::map<std::string, std::string> paths;
  for (const auto& [name, value] : call.params) {
    const auto* t = std::get_if<scenario::Target>(&value);
    if (name == "node" || t == nullptr) continue;
    if (t->kind == scenario::Target::Kind::kLiteral) {
      if (!is_clean_absolute(t->name))
        return Status::invalid(name + ": \"" + t->name + "\" is not a normalised absolute path");
      paths[name] = t->name;
      continue;
    }
    const SelectorSpec* sel = spec_.find_selector(t->name);
    if (t->kind != scenario::Target::Kind::kSelector || sel == nullptr)
      return Status::unavailable("target \"" + t->name + "\" of " + name +
                                 " is not a selector of this world");
    if (std::find(n.spec->roles.begin(), n.spec->roles.end(), sel->role) == n.spec->roles.end())
      return std::optional<std::map<std::string, std::string>>();
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
    paths[name] = *found;
  }
  return std::optional<std::map<std::string, std::string>>(std::move(paths));
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

// ---- checks and fingerprint: the supervisor's own code, learner processes frozen ----

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
      auto digest = inspect::exe_digest(pid);
      if (!digest.ok() && digest.status().code() == ErrorCode::kNotFound) continue;  // gone
      const bool stray = !digest.ok() || !allowed.contains(*digest);
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
  simdjson::dom::parser parser;
  std::string_view from;
  if (parser.parse(spec.params_json)["from"].get_string().get(from) != simdjson::SUCCESS)
    return Status::invalid("checks." + spec.id + ".params.from: required");
  scenario::Call run;
  run.name = "ansible.run";
  run.params.emplace_back("node",
                          scenario::Target{scenario::Target::Kind::kRole, std::string(from)});
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
    std::string refused;
    AURA_ASSIGN_OR_RETURN(refused, drift_before_converge(spec, context()));
    if (!refused.empty()) return CheckOutput{false, safe_text("cannot drift " + refused, 1024)};
    std::optional<CheckOutput> failed;
    AURA_ASSIGN_OR_RETURN(failed, converge_first(spec));
    if (failed) return *failed;
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

// The policy every nodes world applies, as canonical text (world_record.cc adds each world's
// own mount plan): the digest receipts bind changes with any of it.
std::string nodes_policy_text() {
  const nsworld::NodeOptions node;
  const sandbox::CgroupLimits call;
  char caps[32];
  std::snprintf(caps, sizeof caps, "0x%llx", (unsigned long long)nsworld::call_capabilities());
  std::string t = "aura-nodes-policy 1\n" + sandbox::seccomp_program_text();
  t += std::string("call.capabilities=") + caps + "\ncall.no_new_privs=1\n";
  t += "node.memory_bytes=" + std::to_string(kNodeMemoryBytes) +
       "\nnode.pids_max=" + std::to_string(kNodePidsMax) +
       "\nnode.tmpfs_bytes=" + std::to_string(node.tmpfs_bytes) +
       "\nnode.id_count=" + std::to_string(node.id_count) + "\n";
  t += "call.cpu_quota_us=" + std::to_string(call.cpu_quota_us) +
       "\ncall.cpu_period_us=" + std::to_string(call.cpu_period_us) +
       "\ncall.memory_bytes=" + std::to_string(call.memory_bytes) +
       "\ncall.pids_max=" + std::to_string(call.pids_max) + "\n";
  t +=
      "deadline.probe_ms=" + std::to_string(std::chrono::milliseconds(kProbeDeadline).count()) +
      "\ndeadline.action_ms=" + std::to_string(std::chrono::milliseconds(kActionDeadline).count()) +
      "\nscript.output_cap_bytes=" + std::to_string(kScriptOutputCap) + "\n";
  for (const std::string& p : image()) t += "image=" + p + "\n";
  t += "layers_at=" + std::string(kLayerMount) + "\n";
  return t;
}

}  // namespace aura::workers::nodes
