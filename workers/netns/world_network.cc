#include "workers/netns/world_network.h"

#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <utility>

#include "engine/common/file_io.h"

extern char** environ;

namespace aura::netns {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kNetnsDir = "/run/netns";
constexpr std::string_view kBridge = "br0";
constexpr size_t kMaxStderr = 4096;

bool valid_tag(std::string_view t) {
  return t.size() >= 8 && t.size() <= 16 && std::all_of(t.begin(), t.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

bool valid_node(std::string_view n) {
  if (n.empty() || n.size() > 16 || !(n[0] >= 'a' && n[0] <= 'z')) return false;
  return std::all_of(n.begin(), n.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
  });
}

const char* ip_binary() {
  for (const char* p : {"/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"}) {
    if (::access(p, X_OK) == 0) return p;
  }
  return nullptr;
}

int wait_status(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

Status run_ip(const std::vector<std::string>& args) {
  const char* ip = ip_binary();
  if (ip == nullptr) return Status::unavailable("no ip binary (install iproute2)");
  int err[2];
  if (::pipe2(err, O_CLOEXEC) != 0) return Status::io("pipe: " + file_io::errno_text(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  std::vector<char*> argv{const_cast<char*>(ip)};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, ip, &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(err[1]);
  if (rc != 0) {
    ::close(err[0]);
    return Status::io("spawn ip: " + file_io::errno_text(rc));
  }
  std::string stderr_text;
  char buf[512];
  ssize_t n;
  while ((n = ::read(err[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR)) {
    if (n > 0 && stderr_text.size() < kMaxStderr) stderr_text.append(buf, size_t(n));
  }
  ::close(err[0]);
  const int status = wait_status(pid);
  if (status == 0) return Status::ok();
  std::string cmd = "ip";
  for (const auto& a : args) cmd += " " + a;
  while (!stderr_text.empty() && stderr_text.back() == '\n') stderr_text.pop_back();
  return Status::io(cmd + " exited " + std::to_string(status) + ": " + stderr_text);
}

std::vector<std::string> netns_names_with_prefix(std::string_view prefix) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(std::string(kNetnsDir), ec)) {
    const std::string name = e.path().filename().string();
    if (name.compare(0, prefix.size(), prefix) == 0) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string WorldNetwork::switch_name() const { return "aura-" + tag_ + "-sw"; }

std::string WorldNetwork::netns_name(std::string_view node) const {
  return "aura-" + tag_ + "-n-" + std::string(node);
}

std::string WorldNetwork::address(std::string_view node) const {
  const auto it = std::find(nodes_.begin(), nodes_.end(), node);
  return "10.77.0." + std::to_string(size_t(it - nodes_.begin()) + 1);
}

std::vector<std::string> WorldNetwork::registered_names() const {
  std::vector<std::string> out{switch_name()};
  for (const auto& n : nodes_) out.push_back(netns_name(n));
  return out;
}

Status WorldNetwork::add_netns(const std::string& name) {
  if (ledger_ != nullptr) {
    AURA_RETURN_IF_ERROR(ledger_->record(tag_, sandbox::ResourceKind::kNetns,
                                         fs::path(std::string(kNetnsDir)) / name));
  }
  return run_ip({"netns", "add", name});
}

Result<WorldNetwork> WorldNetwork::create(std::string_view tag,
                                          const std::vector<std::string>& nodes,
                                          sandbox::LeakLedger* ledger) {
  if (!valid_tag(tag)) return Status::invalid("world network tag must be 8..16 lowercase hex");
  if (nodes.empty() || nodes.size() > kMaxNodes) {
    return Status::invalid("a world network has 1.." + std::to_string(kMaxNodes) + " nodes");
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (!valid_node(nodes[i])) {
      return Status::invalid("node name \"" + nodes[i] + "\" is not [a-z][a-z0-9-]{0,15}");
    }
    if (std::find(nodes.begin(), nodes.begin() + long(i), nodes[i]) != nodes.begin() + long(i)) {
      return Status::invalid("node name \"" + nodes[i] + "\" appears twice");
    }
  }
  WorldNetwork w;
  w.tag_ = std::string(tag);
  w.nodes_ = nodes;
  w.live_ = true;  // from here on, the destructor cleans up whatever exists
  w.ledger_ = ledger;
  const std::string sw = w.switch_name();
  AURA_RETURN_IF_ERROR(w.add_netns(sw));
  AURA_RETURN_IF_ERROR(run_ip({"-n", sw, "link", "add", std::string(kBridge), "type", "bridge"}));
  AURA_RETURN_IF_ERROR(run_ip({"-n", sw, "link", "set", std::string(kBridge), "up"}));
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::string ns = w.netns_name(nodes[i]);
    const std::string port = "p" + std::to_string(i);
    AURA_RETURN_IF_ERROR(w.add_netns(ns));
    // Both ends are made in the switch; the peer moves straight into the node.
    AURA_RETURN_IF_ERROR(run_ip(
        {"-n", sw, "link", "add", port, "type", "veth", "peer", "name", "eth0", "netns", ns}));
    AURA_RETURN_IF_ERROR(run_ip({"-n", sw, "link", "set", port, "master", std::string(kBridge)}));
    AURA_RETURN_IF_ERROR(run_ip({"-n", sw, "link", "set", port, "up"}));
    AURA_RETURN_IF_ERROR(run_ip({"-n", ns, "link", "set", "lo", "up"}));
    AURA_RETURN_IF_ERROR(
        run_ip({"-n", ns, "addr", "add", w.address(nodes[i]) + "/24", "dev", "eth0"}));
    AURA_RETURN_IF_ERROR(run_ip({"-n", ns, "link", "set", "eth0", "up"}));
    // The node's processes live in a user namespace of their own, which does not own this
    // network namespace: they cannot change its links, addresses or routes, and would need
    // CAP_NET_BIND_SERVICE here for ports below 1024. Every port is theirs to bind instead.
    Result<int> rc = w.run_in(nodes[i], [] {
      const int fd = ::open("/proc/sys/net/ipv4/ip_unprivileged_port_start", O_WRONLY | O_CLOEXEC);
      return fd >= 0 && ::write(fd, "0", 1) == 1 ? 0 : 1;
    });
    if (!rc.ok()) return rc.status();
    if (*rc != 0) return Status::io("setting ip_unprivileged_port_start in " + ns);
  }
  return w;
}

Result<WorldNetwork> WorldNetwork::adopt(std::string_view tag,
                                         const std::vector<std::string>& nodes,
                                         sandbox::LeakLedger* ledger) {
  if (!valid_tag(tag)) return Status::invalid("world network tag must be 8..16 lowercase hex");
  WorldNetwork w;
  w.tag_ = std::string(tag);
  w.nodes_ = nodes;
  w.ledger_ = ledger;
  for (const auto& name : w.registered_names()) {
    if (!fs::exists(fs::path(std::string(kNetnsDir)) / name))
      return Status::failed_precondition("world network " + w.tag_ + ": " + name + " is gone");
  }
  w.live_ = true;
  return w;
}

WorldNetwork::WorldNetwork(WorldNetwork&& other) noexcept { *this = std::move(other); }

WorldNetwork& WorldNetwork::operator=(WorldNetwork&& other) noexcept {
  if (this != &other) {
    (void)destroy();
    tag_ = std::move(other.tag_);
    nodes_ = std::move(other.nodes_);
    live_ = std::exchange(other.live_, false);
    ledger_ = std::exchange(other.ledger_, nullptr);
  }
  return *this;
}

WorldNetwork::~WorldNetwork() { (void)destroy(); }

Status WorldNetwork::destroy() {
  if (!live_) return Status::ok();
  Status first = Status::ok();
  for (const auto& name : registered_names()) {
    const fs::path path = fs::path(std::string(kNetnsDir)) / name;
    Status s = fs::exists(path) ? run_ip({"netns", "delete", name}) : Status::ok();
    if (s.is_ok() && ledger_ != nullptr) {
      s = ledger_->release(tag_, sandbox::ResourceKind::kNetns, path);
    }
    if (!s.is_ok() && first.is_ok()) first = s;
  }
  if (first.is_ok()) live_ = false;
  return first;
}

Result<int> WorldNetwork::run_in(std::string_view node, const std::function<int()>& fn) const {
  if (std::find(nodes_.begin(), nodes_.end(), node) == nodes_.end()) {
    return Status::invalid("no node " + std::string(node) + " in this world");
  }
  const std::string path = std::string(kNetnsDir) + "/" + netns_name(node);
  const int nsfd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (nsfd < 0) return Status::io("open " + path + ": " + file_io::errno_text(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(nsfd);
    return Status::io("fork: " + file_io::errno_text(errno));
  }
  if (pid == 0) {
    if (::setns(nsfd, CLONE_NEWNET) != 0) ::_exit(125);
    ::_exit(fn());
  }
  ::close(nsfd);
  return wait_status(pid);
}

}  // namespace aura::netns
