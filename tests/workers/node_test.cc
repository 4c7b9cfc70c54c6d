// Namespace world nodes on the real kernel: two nodes on a world network, each a long-lived init
// in its own user, mount, PID, IPC and UTS namespaces and its node's network namespace. Commands
// run inside see the node's hostname, root mapped to an unprivileged uid, the node's address;
// a service started in one node answers the other over the world network; files stay per node;
// destroy leaves no process, cgroup or folder.
#include "workers/nsworld/node.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "engine/crypto/sha256.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"
#include "tests/support/world_tag.h"
#include "workers/inspect/layer_read.h"
#include "workers/netns/world_network.h"

using namespace aura;
using aura::testing::kHangGuard;
using aura::testing::wait_until;
using nsworld::Node;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin", "HOME=/root", "LANG=C.UTF-8"};

nsworld::NodeOptions options(const aura::testing::TempDir& state, const std::string& host,
                             const std::string& netns) {
  nsworld::NodeOptions o;
  o.hostname = host;
  o.netns = netns;
  o.state_dir = state.path();
  o.lower_paths = {"/usr",
                   "/bin",
                   "/sbin",
                   "/lib",
                   "/lib64",
                   "/etc/passwd",
                   "/etc/group",
                   "/etc/nsswitch.conf",
                   "/etc/ld.so.cache"};
  return o;
}

std::string tag() { return aura::testing::world_tag('c'); }

}  // namespace

TEST_CASE("node: commands run inside the node's namespaces, services answer across the world") {
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE_MESSAGE(tree.ok(), tree.status().message());
  aura::testing::TempDir state;
  auto net = netns::WorldNetwork::create(tag(), {"web1", "web2"});
  REQUIRE_MESSAGE(net.ok(), net.status().message());
  auto web1 = Node::start(options(state, "web1", "/run/netns/" + net->netns_name("web1")), **tree);
  REQUIRE_MESSAGE(web1.ok(), web1.status().message());
  auto web2 = Node::start(options(state, "web2", "/run/netns/" + net->netns_name("web2")), **tree);
  REQUIRE_MESSAGE(web2.ok(), web2.status().message());

  auto r = (*web1)->exec({"/bin/sh", "-c",
                          "hostname; id -u; cat /proc/self/uid_map; ip -br addr show eth0; "
                          "echo pid $$"},
                         kEnv, kHangGuard);
  REQUIRE(r.ok());
  INFO(r->out << r->err);
  CHECK(r->exit_code == 0);
  CHECK(r->out.rfind("web1\n0\n", 0) == 0);
  // Each node has a uid range of its own, claimed for it.
  CHECK((*web1)->uid_base() != (*web2)->uid_base());
  CHECK((*web1)->uid_base() >= sandbox::kIdRangeBase);
  CHECK(r->out.find(" " + std::to_string((*web1)->uid_base()) + " ") != std::string::npos);
  CHECK(r->out.find("10.77.0.1/24") != std::string::npos);
  CHECK(r->out.find("pid 1\n") == std::string::npos);  // PID 1 is the node's init

  // A service in web2, reached from web1 over the world network.
  r = (*web2)->exec({"/bin/sh", "-c",
                     "echo served-by-web2 > /tmp/index.html; cd /tmp; "
                     "python3 -m http.server 8000 --bind 10.77.0.2 >/dev/null 2>&1 &"},
                    kEnv, kHangGuard);
  REQUIRE(r.ok());
  CHECK(r->exit_code == 0);
  // The server listens a moment after the command that started it returns: asked until it answers.
  std::string body;
  wait_until(
      [&] {
        auto got = (*web1)->exec({"/usr/bin/python3", "-c",
                                  "import urllib.request;"
                                  "print(urllib.request.urlopen('http://10.77.0.2:8000/index.html',"
                                  " timeout=10).read().decode())"},
                                 kEnv, kHangGuard);
        REQUIRE(got.ok());
        body = got->out;
        return body.find("served-by-web2") != std::string::npos;
      },
      std::chrono::milliseconds(100));
  CHECK(body.find("served-by-web2") != std::string::npos);

  // Files are per node: web1 does not see web2's /tmp.
  r = (*web1)->exec({"/bin/sh", "-c", "test -e /tmp/index.html && echo shared || echo own"}, kEnv,
                    kHangGuard);
  REQUIRE(r.ok());
  CHECK(r->out == "own\n");

  // A command past its deadline is killed.
  r = (*web1)->exec({"/bin/sleep", "300"}, kEnv, std::chrono::milliseconds(300));
  REQUIRE(r.ok());
  CHECK(r->timed_out);
  // ... and the command itself, not only the process that waited for it: it has become the
  // namespace's root, which clears a parent-death signal set before (prctl(2)).
  auto sleeping = [&] {
    auto ps = (*web1)->exec(
        {"/bin/sh", "-c", "for c in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $c; echo; done"}, kEnv,
        kHangGuard);
    REQUIRE(ps.ok());
    return ps->out.find("sleep 300") != std::string::npos;
  };
  wait_until([&] { return !sleeping(); }, std::chrono::milliseconds(100));
  CHECK(!sleeping());

  const pid_t init2 = (*web2)->init_pid();
  REQUIRE((*web2)->destroy().is_ok());
  REQUIRE((*web1)->destroy().is_ok());
  CHECK(::kill(init2, 0) != 0);
  CHECK(fs::is_empty(state.path() / "nodes"));
  auto entries = sandbox::LeakLedger(state.path()).entries();
  REQUIRE(entries.ok());
  for (const auto& e : *entries) CHECK(e.released);
}

TEST_CASE("node: Debian's nginx runs in a node on port 80 and serves another node") {
  REQUIRE_MESSAGE(fs::exists("/usr/sbin/nginx"),
                  "nginx is not installed (scripts/install-deps.sh)");
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE(tree.ok());
  aura::testing::TempDir state;
  auto net = netns::WorldNetwork::create(tag(), {"lb", "web1"});
  REQUIRE(net.ok());
  auto lb = Node::start(options(state, "lb", "/run/netns/" + net->netns_name("lb")), **tree);
  auto web1 = Node::start(options(state, "web1", "/run/netns/" + net->netns_name("web1")), **tree);
  REQUIRE(lb.ok());
  REQUIRE(web1.ok());
  const std::string conf =
      "worker_processes 1; pid /tmp/nginx.pid; error_log /tmp/error.log; "
      "events { worker_connections 16; } "
      "http { access_log off; client_body_temp_path /tmp/body; proxy_temp_path /tmp/proxy; "
      "fastcgi_temp_path /tmp/fcgi; uwsgi_temp_path /tmp/uwsgi; scgi_temp_path /tmp/scgi; "
      "server { listen 80; root /tmp/www; } }";
  auto r =
      (*web1)->exec({"/bin/sh", "-c",
                     "mkdir -p /tmp/www && echo nginx-in-web1 > /tmp/www/index.html && "
                     "printf '%s' \"$0\" > /tmp/nginx.conf && /usr/sbin/nginx -c /tmp/nginx.conf",
                     conf},
                    kEnv, kHangGuard, 1 << 20,
                    nsworld::Confinement::kNodeRoot);  // nginx switches its workers' user
  REQUIRE(r.ok());
  INFO(r->out << r->err);
  REQUIRE(r->exit_code == 0);
  std::string body;
  wait_until(
      [&] {
        auto got = (*lb)->exec({"/usr/bin/python3", "-c",
                                "import urllib.request;"
                                "print(urllib.request.urlopen('http://10.77.0.2/', timeout=10)"
                                ".read().decode())"},
                               kEnv, kHangGuard);
        REQUIRE(got.ok());
        body = got->out;
        return body.find("nginx-in-web1") != std::string::npos;
      },
      std::chrono::milliseconds(100));
  CHECK(body.find("nginx-in-web1") != std::string::npos);
  // The master runs as the node's root (its range's base outside), never as the host's root.
  r = (*web1)->exec({"/bin/sh", "-c", "cat /proc/$(cat /tmp/nginx.pid)/status | grep ^Uid"}, kEnv,
                    kHangGuard);
  REQUIRE(r.ok());
  CHECK(r->out.find("Uid:\t0\t0\t0\t0") != std::string::npos);
  const std::string host_status = "/proc/" + std::to_string((*web1)->init_pid()) + "/status";
  std::string line;
  std::ifstream in(host_status);
  while (std::getline(in, line) && line.rfind("Uid:", 0) != 0) {
  }
  CHECK(line.find("\t" + std::to_string((*web1)->uid_base()) + "\t") != std::string::npos);
}

TEST_CASE("node: a runner's command has no capabilities and the sandbox's seccomp policy") {
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE(tree.ok());
  aura::testing::TempDir state;
  auto node = Node::start(options(state, "n1", ""), **tree);
  REQUIRE_MESSAGE(node.ok(), node.status().message());
  const std::vector<std::string> probe = {
      "/bin/sh", "-c",
      "grep -E '^(CapEff|NoNewPrivs|Seccomp):' /proc/self/status; "
      "mkdir -p /tmp/m && (mount -t tmpfs none /tmp/m 2>&1 || true)"};
  auto runner = (*node)->exec(probe, kEnv, kHangGuard);
  REQUIRE(runner.ok());
  INFO(runner->out << runner->err);
  CHECK(runner->out.find("CapEff:\t0000000000000000") != std::string::npos);
  CHECK(runner->out.find("NoNewPrivs:\t1") != std::string::npos);
  CHECK(runner->out.find("Seccomp:\t2") != std::string::npos);
  CHECK(runner->out.find("ermission denied") != std::string::npos);  // mount refused

  auto root = (*node)->exec(probe, kEnv, kHangGuard, 1 << 20, nsworld::Confinement::kNodeRoot);
  REQUIRE(root.ok());
  CHECK(root->out.find("CapEff:\t0000000000000000") == std::string::npos);
  CHECK(root->out.find("Seccomp:\t0") != std::string::npos);
}

namespace {

pid_t parent_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("PPid:", 0) == 0) return pid_t(std::stol(line.substr(5)));
  return -1;
}

bool gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  return close == std::string::npos || text[close + 2] == 'Z' || text[close + 2] == 'X';
}

}  // namespace

TEST_CASE("node: it does not outlive its owner, nor its keeper") {
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE_MESSAGE(tree.ok(), tree.status().message());
  aura::testing::TempDir state;
  // The owner: a process standing in for a world's holder.
  const pid_t owner = ::fork();
  REQUIRE(owner >= 0);
  if (owner == 0) {
    ::pause();
    ::_exit(0);
  }
  auto o = options(state, "solo", "");
  o.owner = sandbox::owner_of(owner);
  auto a = Node::start(o, **tree);
  REQUIRE_MESSAGE(a.ok(), a.status().message());
  auto b = Node::start(options(state, "solo2", ""), **tree);  // owned by this process
  REQUIRE_MESSAGE(b.ok(), b.status().message());
  const pid_t init_a = (*a)->init_pid(), init_b = (*b)->init_pid();
  auto r = (*a)->exec({"/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo started"}, kEnv,
                      kHangGuard, 1 << 10, nsworld::Confinement::kNodeRoot);
  REQUIRE(r.ok());
  CHECK(r->out == "started\n");

  auto pids = (*tree)->pids((*a)->id());
  REQUIRE(pids.ok());
  CHECK(pids->size() >= 2);  // the init and the sleep
  // A call group's daemon too, in a group of its own beside the node's.
  nsworld::ExecOptions call;
  call.deadline = kHangGuard;
  call.confine = nsworld::Confinement::kCall;
  call.group = "left";
  call.keep_group = true;
  r = (*a)->exec({"/bin/sh", "-c", "sleep 1000 >/dev/null 2>&1 & echo started"}, kEnv, call);
  REQUIRE(r.ok());
  const std::string left = (*a)->id() + "-left";
  auto left_pids = (*tree)->pids(left);
  REQUIRE(left_pids.ok());
  CHECK(left_pids->size() == 1);

  // The owner ends while the node's group and its call group are frozen (as a supervisor killed
  // mid-check leaves them): its keeper ends the init and thaws both groups, and every process
  // of the node dies.
  REQUIRE((*tree)->freeze((*a)->id()).is_ok());
  REQUIRE((*tree)->freeze(left).is_ok());
  ::kill(owner, SIGKILL);
  ::waitpid(owner, nullptr, 0);
  CHECK(wait_until([&] { return gone(init_a); }));
  CHECK(wait_until([&] { return (*tree)->pids((*a)->id())->empty(); }));
  CHECK(wait_until([&] { return (*tree)->pids(left)->empty(); }));
  CHECK_FALSE(gone(init_b));  // another owner's node lives on

  // The keeper is killed: the init dies with it (its parent-death signal). The orphaned init
  // comes to this process to be reaped (a subreaper): a zombie stays in its cgroup until then.
  REQUIRE(::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0);
  const pid_t keeper_b = parent_of(init_b);
  REQUIRE(keeper_b > 1);
  ::kill(keeper_b, SIGKILL);
  ::waitpid(keeper_b, nullptr, 0);
  CHECK(wait_until([&] { return gone(init_b); }));
  CHECK(::waitpid(init_b, nullptr, 0) == init_b);
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  CHECK((*a)->destroy().is_ok());
  CHECK((*b)->destroy().is_ok());
}

TEST_CASE("node: the host reads its writable layers through the keeper, never the node's view") {
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE_MESSAGE(tree.ok(), tree.status().message());
  aura::testing::TempDir state;
  auto node = Node::start(options(state, "n1", ""), **tree);
  REQUIRE_MESSAGE(node.ok(), node.status().message());
  CHECK_FALSE((*node)->overlays().empty());  // /usr at least
  auto read = [](const Node& n) {
    auto l = n.layers();
    REQUIRE_MESSAGE(l.ok(), l.status().message());
    inspect::LayerRead r;
    r.uid_base = n.uid_base();
    inspect::LayerState s;
    Status st = inspect::read_layer(l->root, "/", false, r, s);
    REQUIRE_MESSAGE(st.is_ok(), st.message());
    for (const auto& o : n.overlays()) {
      const int upper = ::openat(l->stage, o.upper.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
      REQUIRE(upper >= 0);
      st = inspect::read_layer(upper, o.inside, true, r, s);
      ::close(upper);
      REQUIRE_MESSAGE(st.is_ok(), st.message());
    }
    return s;
  };
  const inspect::LayerState before = read(**node);
  CHECK(before.count("/srv/a") == 0);
  // The root as built, without the mounts on it: /proc and /usr are folders of the root tmpfs
  // here, what is mounted on them is not this layer.
  CHECK(before.at("/proc").starts_with("dir "));
  CHECK(before.count("/proc/self") == 0);
  CHECK(before.count("/usr/bin") == 0);

  auto r = (*node)->exec({"/bin/sh", "-c",
                          "mkdir /srv && printf hi > /srv/a && chmod 4750 /srv/a && "
                          "ln -s /etc/shadow /srv/link && mkfifo /srv/f && ln /srv/a /srv/b"},
                         kEnv, std::chrono::milliseconds(10'000), 1 << 16,
                         nsworld::Confinement::kNodeRoot);
  REQUIRE(r.ok());
  INFO(r->err);
  REQUIRE(r->exit_code == 0);
  const inspect::LayerState after = read(**node);
  const std::string hi = to_hex(sha256(std::string_view("hi")));
  CHECK(after.at("/srv") == "dir 0755 0 0 - - -");
  CHECK(after.at("/srv/a") == "file 4750 0 0 2 - " + hi);  // set-id bits and the hard link
  CHECK(after.at("/srv/b") == after.at("/srv/a"));
  CHECK(after.at("/srv/link") ==
        "symlink 0777 0 0 1 - " + to_hex(sha256(std::string_view("/etc/shadow"))));
  CHECK(after.at("/srv/f") == "fifo 0644 0 0 1 - -");

  // A tmpfs the node mounts over /srv hides its files from anything reading the node's view;
  // the host still reads the layer underneath, and nothing of the new filesystem.
  r = (*node)->exec({"/bin/sh", "-c", "mount -t tmpfs none /srv && printf x > /srv/hidden"}, kEnv,
                    std::chrono::milliseconds(10'000), 1 << 16, nsworld::Confinement::kNodeRoot);
  REQUIRE(r.ok());
  REQUIRE(r->exit_code == 0);
  const inspect::LayerState mounted = read(**node);
  CHECK(mounted.count("/srv/hidden") == 0);
  CHECK(mounted == after);
  r = (*node)->exec({"/bin/sh", "-c", "umount /srv"}, kEnv, std::chrono::milliseconds(10'000),
                    1 << 16, nsworld::Confinement::kNodeRoot);
  REQUIRE(r.ok());

  // Another process's Node, attached from the state, reads the same layers.
  auto again = Node::attach((*node)->state(), **tree);
  REQUIRE_MESSAGE(again.ok(), again.status().message());
  CHECK(read(**again) == after);
  (*again)->detach();

  REQUIRE((*node)->destroy().is_ok());
  CHECK((*node)->layers().status().code() == ErrorCode::kFailedPrecondition);
}
