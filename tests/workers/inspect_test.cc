// The supervisor's view into a real world node, from the host: files read inside the node's root
// (symlinks never leave it, FIFOs and devices are refused without blocking), ids as the node sees
// them, processes and listeners of the node, HTTP from inside the world's network only, freezing
// a node's (or a nested learner group's) processes, and the declared-state fingerprint.
#include <doctest/doctest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "engine/crypto/sha256.h"
#include "tests/support/temp_dir.h"
#include "tests/support/wait_until.h"
#include "tests/support/world_tag.h"
#include "workers/inspect/exe_identity.h"
#include "workers/inspect/fingerprint.h"
#include "workers/inspect/http_probe.h"
#include "workers/inspect/node_view.h"
#include "workers/netns/world_network.h"
#include "workers/nsworld/node.h"

using namespace aura;
using inspect::FileInfo;
using inspect::NodeView;
using nsworld::Node;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

namespace {

const std::vector<std::string> kEnv = {"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "HOME=/root",
                                       "LANG=C.UTF-8"};

// Hang guards (never speed bars), each far beyond what the step takes on a machine half as fast
// with both cores busy. An HTTP request that is answered or refused at once (milliseconds idle):
constexpr milliseconds kHttpHangGuard{20'000};
// A read that must not wait for a FIFO's writer (one would never come): microseconds idle.
constexpr milliseconds kNoWaitHangGuard{10'000};

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

std::string tag() { return aura::testing::world_tag('d'); }

// Runs a shell script in the node as its root (with the root's capabilities: chown, setuid).
// `arg` is the script's $0.
nsworld::ExecResult sh(Node& node, const std::string& script, const std::string& arg = "sh") {
  auto r = node.exec({"/bin/sh", "-c", script, arg}, kEnv, aura::testing::kHangGuard, 1 << 20,
                     nsworld::Confinement::kNodeRoot);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  INFO(script << "\nout: " << r->out << "\nerr: " << r->err);
  REQUIRE(r->exit_code == 0);
  return *r;
}

std::string host_file(const char* path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::unique_ptr<Node> start(sandbox::CgroupTree& tree, const aura::testing::TempDir& state,
                            const std::string& host, const std::string& netns = "") {
  auto node = Node::start(options(state, host, netns), tree);
  REQUIRE_MESSAGE(node.ok(), node.status().message());
  return std::move(*node);
}

std::unique_ptr<sandbox::CgroupTree> detect_tree() {
  auto tree = sandbox::CgroupTree::detect();
  REQUIRE_MESSAGE(tree.ok(), tree.status().message());
  return std::move(*tree);
}

// Polls `fn` every 50 ms until it returns true, or the hang guard (aura::testing::kHangGuard)
// passes.
template <class Fn>
bool eventually(Fn fn) {
  return aura::testing::wait_until(fn, milliseconds(50));
}

const char* kWorldFiles =
    "set -e; mkdir -p /srv/app/sub /etc; "
    "echo in-world > /srv/app/hello.txt; "
    "echo world-shadow > /etc/shadow; echo world-hostname > /etc/hostname; "
    "mkfifo /srv/app/fifo; "
    "ln -s /etc/shadow /srv/app/shadow-link; "
    "ln -s ../../../../etc/hostname /srv/app/sub/hostname-link; "
    "ln -s /etc/gshadow /srv/app/gshadow-link; "
    "ln -s /srv/app/fifo /srv/app/fifo-link; "
    "echo owned > /srv/app/owned; chown 1000:1000 /srv/app/owned; chmod 0640 /srv/app/owned; "
    "head -c 5000 /dev/zero > /srv/app/big";

}  // namespace

TEST_CASE("inspect: files are read inside the node's root; symlinks stay in; FIFOs are refused") {
  auto tree = detect_tree();
  aura::testing::TempDir state;
  auto node = start(*tree, state, "files");
  sh(*node, kWorldFiles);
  auto view = NodeView::open(node->init_pid());
  REQUIRE_MESSAGE(view.ok(), view.status().message());

  auto hello = view->read_file("/srv/app/hello.txt", 1024);
  REQUIRE_MESSAGE(hello.ok(), hello.status().message());
  CHECK(*hello == "in-world\n");

  // Absolute, relative and `..` paths all resolve inside the world's root.
  const std::string host_shadow = host_file("/etc/shadow");
  REQUIRE(!host_shadow.empty());
  for (const char* p : {"/srv/app/shadow-link", "/../../../etc/shadow", "/srv/../../etc/shadow"}) {
    auto got = view->read_file(p, 1 << 20);
    REQUIRE_MESSAGE(got.ok(), got.status().message());
    CHECK(*got == "world-shadow\n");
    CHECK(*got != host_shadow);
  }
  auto host_name = view->read_file("/srv/app/sub/hostname-link", 1024);
  REQUIRE(host_name.ok());
  CHECK(*host_name == "world-hostname\n");
  CHECK(*host_name != host_file("/etc/hostname"));
  // The world has no /etc/gshadow; the host's is never read in its place.
  REQUIRE(fs::exists("/etc/gshadow"));
  auto gshadow = view->read_file("/srv/app/gshadow-link", 1 << 20);
  CHECK(gshadow.status().code() == ErrorCode::kNotFound);
  // A magic link (/proc/<pid>/root) is refused, not followed to the host.
  auto magic = view->read_file("/proc/1/root/etc/shadow", 1 << 20);
  CHECK(!magic.ok());

  // The FIFO (and a link to it) is refused at once, without waiting for a writer.
  for (const char* p : {"/srv/app/fifo", "/srv/app/fifo-link"}) {
    const auto t0 = Clock::now();
    auto fifo = view->read_file(p, 1024);
    CHECK(Clock::now() - t0 < kNoWaitHangGuard);
    CHECK(fifo.status().code() == ErrorCode::kFailedPrecondition);
    CHECK(fifo.status().message().find("fifo") != std::string::npos);
  }
  auto dev = view->read_file("/dev/null", 1024);
  CHECK(dev.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(dev.status().message().find("char device") != std::string::npos);
  // The node's /proc shows the host's kernel to a host reader: refused.
  auto proc = view->read_file("/proc/1/status", 1 << 16);
  CHECK(proc.status().code() == ErrorCode::kFailedPrecondition);
  CHECK(proc.status().message().find("proc") != std::string::npos);

  // Bounded reads.
  bool truncated = false;
  auto big = view->read_file("/srv/app/big", 100, &truncated);
  REQUIRE(big.ok());
  CHECK(big->size() == 100);
  CHECK(truncated);
  CHECK(view->read_file("/srv/app/big", 100).status().code() == ErrorCode::kFailedPrecondition);
  auto whole = view->read_file("/srv/app/big", 5000, &truncated);
  REQUIRE(whole.ok());
  CHECK(whole->size() == 5000);
  CHECK(!truncated);

  // Owners as the node sees them; on the host the file belongs to a mapped uid.
  auto owned = view->stat("/srv/app/owned");
  REQUIRE(owned.ok());
  CHECK(owned->type == FileInfo::Type::kFile);
  CHECK(owned->uid == 1000);
  CHECK(owned->gid == 1000);
  CHECK(owned->mode == 0640);
  CHECK(owned->size == 6);
  struct stat host_st;
  const std::string host_path = "/proc/" + std::to_string(node->init_pid()) + "/root/srv/app/owned";
  REQUIRE(::lstat(host_path.c_str(), &host_st) == 0);
  CHECK(host_st.st_uid != 1000);
  CHECK(view->uid_inside(host_st.st_uid) == std::optional<uint32_t>(1000));
  CHECK(view->uid_inside(0) == std::nullopt);  // the host's root is not mapped
  auto root_owned = view->stat("/srv/app/hello.txt");
  REQUIRE(root_owned.ok());
  CHECK(root_owned->uid == 0);

  // POSIX ACLs, read from the host with their named ids as the node numbers them: a folder given
  // a named entry for user 1000 (and a default ACL), a file with none.
  sh(*node,
     "mkdir /tmp/acl && python3 -c \"import os,struct; e=lambda t,p,i=0xffffffff: "
     "struct.pack('<HHI',t,p,i); a=struct.pack('<I',2)+e(1,7)+e(2,5,1000)+e(4,4)+e(16,5)+e(32,0); "
     "os.setxattr('/tmp/acl','system.posix_acl_access',a); "
     "os.setxattr('/tmp/acl','system.posix_acl_default',a)\"");
  auto acl = view->acl("/tmp/acl");
  REQUIRE_MESSAGE(acl.ok(), acl.status().message());
  const std::vector<inspect::AclEntry> want = {{inspect::kAclUserObj, 7, 0},
                                               {inspect::kAclUser, 5, 1000},
                                               {inspect::kAclGroupObj, 4, 0},
                                               {inspect::kAclMask, 5, 0},
                                               {inspect::kAclOther, 0, 0}};
  CHECK(acl->access == want);
  CHECK(acl->dflt == want);
  CHECK(view->stat("/tmp/acl")->mode == 0750);  // the group bits show the mask
  auto no_acl = view->acl("/srv/app/owned");
  REQUIRE(no_acl.ok());
  CHECK_FALSE(no_acl->any());

  // stat does not follow the final symlink.
  auto link = view->stat("/srv/app/shadow-link");
  REQUIRE(link.ok());
  CHECK(link->type == FileInfo::Type::kSymlink);
  CHECK(view->stat("/srv/app/fifo")->type == FileInfo::Type::kFifo);
  CHECK(view->stat("/srv/app/missing").status().code() == ErrorCode::kNotFound);
  CHECK(view->stat("relative").status().code() == ErrorCode::kInvalidArgument);

  auto listing = view->list_dir("/srv/app", 64);
  REQUIRE_MESSAGE(listing.ok(), listing.status().message());
  std::vector<std::string> names;
  for (const auto& [name, info] : *listing) names.push_back(name);
  CHECK(names == std::vector<std::string>{"big", "fifo", "fifo-link", "gshadow-link", "hello.txt",
                                          "owned", "shadow-link", "sub"});
  CHECK(listing->at(1).second.type == FileInfo::Type::kFifo);
  CHECK(listing->at(7).second.type == FileInfo::Type::kDir);
  CHECK(view->list_dir("/srv/app", 3).status().code() == ErrorCode::kFailedPrecondition);

  const pid_t init = node->init_pid();
  REQUIRE(node->destroy().is_ok());
  CHECK(NodeView::open(init).status().code() == ErrorCode::kFailedPrecondition);
}

const char* kUnixServer = R"(
import http.server, socketserver
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = b'unix-ok'
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def address_string(self):
        return 'unix'
socketserver.UnixStreamServer('/tmp/app.sock', H).serve_forever()
)";

TEST_CASE("inspect: processes, listeners and HTTP from inside the world's network") {
  auto tree = detect_tree();
  aura::testing::TempDir state;
  auto net = netns::WorldNetwork::create(tag(), {"client", "web"});
  REQUIRE_MESSAGE(net.ok(), net.status().message());
  auto client = start(*tree, state, "client", "/run/netns/" + net->netns_name("client"));
  auto web = start(*tree, state, "web", "/run/netns/" + net->netns_name("web"));
  const std::string web_ip = net->address("web");

  sh(*web,
     "mkdir -p /srv/www && echo served-from-web > /srv/www/index.html && "
     "printf '%s' \"$0\" > /tmp/unix_server.py && echo not-a-socket > /tmp/plain && "
     "ln -s /tmp/app.sock /tmp/link.sock && cd /srv/www && "
     "(python3 -m http.server 8080 --bind 0.0.0.0 >/dev/null 2>&1 &) && "
     "(setpriv --reuid=1000 --regid=1000 --keep-groups /bin/sleep 300 >/dev/null 2>&1 &) && "
     "(setpriv --ruid=1000 /bin/sleep 301 >/dev/null 2>&1 &) && "
     "cp /bin/sleep /tmp/sleep-copy && (/tmp/sleep-copy 304 >/dev/null 2>&1 &) && "
     "(setpriv --reuid=1000 --regid=1000 --clear-groups --inh-caps +net_bind_service "
     "--ambient-caps +net_bind_service /bin/sleep 302 >/dev/null 2>&1 &) && "
     "(python3 -c 'import socket,time; s=socket.socket(); s.bind((\"0.0.0.0\",9000)); "
     "s.listen(8); time.sleep(300)' >/dev/null 2>&1 &) && "
     "(python3 /tmp/unix_server.py >/dev/null 2>&1 &)",
     kUnixServer);
  auto view = NodeView::open(web->init_pid());
  REQUIRE(view.ok());

  // Listeners of the web node's network namespace, with their owners among the node's pids.
  std::vector<inspect::Listener> listeners;
  std::vector<pid_t> pids;
  auto find = [&](const std::string& proto, const std::string& address) {
    return std::find_if(listeners.begin(), listeners.end(), [&](const inspect::Listener& l) {
      return l.proto == proto && l.address == address;
    });
  };
  const bool all_up = eventually([&] {
    auto p = tree->pids(web->id());
    REQUIRE(p.ok());
    pids = *p;
    auto l = view->listeners(pids);
    REQUIRE_MESSAGE(l.ok(), l.status().message());
    listeners = *l;
    return find("tcp", "0.0.0.0:8080") != listeners.end() &&
           find("tcp", "0.0.0.0:9000") != listeners.end() &&
           find("unix", "/tmp/app.sock") != listeners.end();
  });
  REQUIRE(all_up);
  CHECK(std::is_sorted(listeners.begin(), listeners.end(), [](const auto& a, const auto& b) {
    return std::tie(a.proto, a.address) < std::tie(b.proto, b.address);
  }));
  // Without the node's pids, the sockets are still listed, with no owner.
  auto unowned = view->listeners({});
  REQUIRE(unowned.ok());
  CHECK(unowned->size() == listeners.size());
  for (const auto& l : *unowned) CHECK(l.pids.empty());

  auto procs = view->processes(pids);
  REQUIRE_MESSAGE(procs.ok(), procs.status().message());
  const inspect::ProcessInfo* http = nullptr;
  const inspect::ProcessInfo* sleeper = nullptr;
  const inspect::ProcessInfo* root_behind = nullptr;  // real uid 1000, every other slot 0
  const inspect::ProcessInfo* ambient = nullptr;      // uid 1000 keeping net_bind_service
  const inspect::ProcessInfo* copy = nullptr;         // a copy of sleep in the writable root
  for (const auto& p : *procs) {
    if (p.comm == "python3" && p.cmdline == "python3 -m http.server 8080 --bind 0.0.0.0") http = &p;
    if (p.cmdline == "/bin/sleep 300") sleeper = &p;
    if (p.cmdline == "/bin/sleep 301") root_behind = &p;
    if (p.cmdline == "/bin/sleep 302") ambient = &p;
    if (p.cmdline == "/tmp/sleep-copy 304") copy = &p;
  }
  // Where each runs from: the image's sleep from a host-backed mount, a byte-identical copy in
  // the node's writable root from none of them.
  REQUIRE(copy != nullptr);
  auto image_mounts = view->host_backed_mounts();
  REQUIRE_MESSAGE(image_mounts.ok(), image_mounts.status().message());
  auto image_sleep = inspect::exe_file(sleeper->pid);
  auto copied_sleep = inspect::exe_file(copy->pid);
  REQUIRE(image_sleep.ok());
  REQUIRE(copied_sleep.ok());
  CHECK(image_sleep->digest == copied_sleep->digest);
  CHECK(image_mounts->contains(image_sleep->mnt_id));
  CHECK_FALSE(image_mounts->contains(copied_sleep->mnt_id));
  REQUIRE(http != nullptr);
  REQUIRE(sleeper != nullptr);
  REQUIRE(root_behind != nullptr);
  REQUIRE(ambient != nullptr);
  // Every id slot and capability set, as the host's /proc states them, translated inside.
  CHECK(sleeper->cred.uids == std::array<uint32_t, 4>{1000, 1000, 1000, 1000});
  CHECK(sleeper->cred.gids == std::array<uint32_t, 4>{1000, 1000, 1000, 1000});
  CHECK(sleeper->cred.held_caps() == 0);
  CHECK(root_behind->uid == 1000);  // the real uid alone says "not root" ...
  CHECK(root_behind->cred.uids == std::array<uint32_t, 4>{1000, 0, 0, 0});  // ... it is root
  CHECK(root_behind->cred.cap_eff != 0);
  CHECK(ambient->cred.uids == std::array<uint32_t, 4>{1000, 1000, 1000, 1000});
  CHECK(ambient->cred.cap_amb == (uint64_t(1) << 10));  // cap_net_bind_service
  CHECK(ambient->cred.cap_eff == (uint64_t(1) << 10));
  CHECK(inspect::cap_names(ambient->cred.held_caps()) == "cap_net_bind_service");
  CHECK(inspect::cap_number("net_bind_service") == 10);
  CHECK(inspect::cap_number("cap_sys_admin") == 21);
  CHECK_FALSE(inspect::cap_number("cap_no_such").has_value());
  CHECK(find("tcp", "0.0.0.0:8080")->pids == std::vector<pid_t>{http->pid});
  CHECK(find("unix", "/tmp/app.sock")->pids.size() == 1);
  CHECK(http->uid == 0);
  CHECK(sleeper->uid == 1000);
  CHECK(sleeper->gid == 1000);
  CHECK(sleeper->cmdline == "/bin/sleep 300");
  CHECK(sleeper->ppid_host == web->init_pid());  // orphaned: the node's init reaps it
  // The host sees the mapped ids.
  std::ifstream status("/proc/" + std::to_string(sleeper->pid) + "/status");
  std::string line;
  while (std::getline(status, line) && line.rfind("Uid:", 0) != 0) {
  }
  CHECK(line.find("\t1000\t") == std::string::npos);
  // A pid that is gone is skipped.
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  auto with_gone = view->processes({gone, http->pid});
  REQUIRE(with_gone.ok());
  REQUIRE(with_gone->size() == 1);
  CHECK(with_gone->front().pid == http->pid);

  // HTTP from the client node's network namespace to the web node.
  auto ok = inspect::http_get_tcp(client->init_pid(), web_ip, 8080, "/index.html", "web",
                                  kHttpHangGuard, 1 << 16);
  REQUIRE_MESSAGE(ok.ok(), ok.status().message());
  INFO(ok->error);
  CHECK(ok->connected);
  CHECK(ok->status == 200);
  CHECK(ok->body == "served-from-web\n");
  CHECK(ok->headers.find("Content-Length: 16") != std::string::npos);
  CHECK(!ok->truncated);
  CHECK(ok->error.empty());

  auto cut = inspect::http_get_tcp(client->init_pid(), web_ip, 8080, "/index.html", "web",
                                   kHttpHangGuard, 20);
  REQUIRE(cut.ok());
  CHECK(cut->truncated);
  CHECK(!cut->error.empty());  // the headers did not fit

  auto refused =
      inspect::http_get_tcp(client->init_pid(), web_ip, 8081, "/", "web", kHttpHangGuard, 1 << 16);
  REQUIRE(refused.ok());
  CHECK(!refused->connected);
  CHECK(refused->error.find("refused") != std::string::npos);

  // A server that accepts and never answers is cut at the timeout.
  const auto t0 = Clock::now();
  auto silent = inspect::http_get_tcp(client->init_pid(), web_ip, 9000, "/", "web",
                                      milliseconds(500), 1 << 16);
  const auto took = Clock::now() - t0;
  REQUIRE(silent.ok());
  CHECK(silent->connected);
  CHECK(silent->error.find("timed out") != std::string::npos);
  CHECK(took >= milliseconds(450));
  // Cut at its 500 ms, not left open: 10 s is a hang guard, not a bar (back in 0.5 s idle).
  CHECK(took < milliseconds(10'000));

  // The probe never runs in the host's namespace: a server on the host's loopback is not
  // reached from the node (its own loopback has nothing there).
  const int host_server = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(host_server >= 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(host_server, reinterpret_cast<sockaddr*>(&sin), sizeof sin) == 0);
  REQUIRE(::listen(host_server, 4) == 0);
  socklen_t len = sizeof sin;
  REQUIRE(::getsockname(host_server, reinterpret_cast<sockaddr*>(&sin), &len) == 0);
  auto host_only = inspect::http_get_tcp(client->init_pid(), "127.0.0.1", ntohs(sin.sin_port), "/",
                                         "x", kHttpHangGuard, 1024);
  ::close(host_server);
  REQUIRE(host_only.ok());
  CHECK(!host_only->connected);
  CHECK(host_only->error.find("refused") != std::string::npos);

  CHECK(inspect::http_get_tcp(client->init_pid(), "not-an-ip", 80, "/", "x", milliseconds(100), 10)
            .status()
            .code() == ErrorCode::kInvalidArgument);
  CHECK(inspect::http_get_tcp(client->init_pid(), web_ip, 80, "/a b", "x", milliseconds(100), 10)
            .status()
            .code() == ErrorCode::kInvalidArgument);

  // Unix sockets inside the node.
  auto unix_ok =
      inspect::http_get_unix(web->init_pid(), "/tmp/app.sock", "/", kHttpHangGuard, 1 << 16);
  REQUIRE_MESSAGE(unix_ok.ok(), unix_ok.status().message());
  INFO(unix_ok->error);
  CHECK(unix_ok->status == 200);
  CHECK(unix_ok->body == "unix-ok");
  // Who answered: the socket's listener as the kernel recorded it, in the host's numbering, also
  // when the request reaches the socket through another name (a hard link of its file).
  const pid_t unix_server = find("unix", "/tmp/app.sock")->pids.at(0);
  REQUIRE(unix_ok->peer.has_value());
  CHECK(unix_ok->peer->pid == unix_server);
  struct stat server_proc;  // the host's numbering: the node's root is a mapped uid
  REQUIRE(::stat(("/proc/" + std::to_string(unix_server)).c_str(), &server_proc) == 0);
  CHECK(unix_ok->peer->uid == server_proc.st_uid);
  CHECK(unix_ok->peer->uid != 0);
  sh(*web, "ln /tmp/app.sock /tmp/hard.sock");
  auto via_link =
      inspect::http_get_unix(web->init_pid(), "/tmp/hard.sock", "/", kHttpHangGuard, 1 << 16);
  REQUIRE(via_link.ok());
  CHECK(via_link->status == 200);
  REQUIRE(via_link->peer.has_value());
  CHECK(via_link->peer->pid == unix_server);
  CHECK_FALSE(ok->peer.has_value());  // TCP: no peer credentials
  for (const char* not_socket : {"/tmp/plain", "/tmp/link.sock", "/tmp/missing.sock"}) {
    auto r = inspect::http_get_unix(web->init_pid(), not_socket, "/", kHttpHangGuard, 1024);
    REQUIRE(r.ok());
    CHECK(!r->connected);
    CHECK(!r->error.empty());
  }
  auto plain = inspect::http_get_unix(web->init_pid(), "/tmp/plain", "/", kHttpHangGuard, 1024);
  CHECK(plain->error.find("is a file, not a socket") != std::string::npos);

  REQUIRE(web->destroy().is_ok());
  REQUIRE(client->destroy().is_ok());
  REQUIRE(net->destroy().is_ok());
}

namespace {

// A loop in `node` writing an ever larger number to `file`.
void start_counter(Node& node, const std::string& file) {
  sh(node, "(i=0; while true; do i=$((i+1)); echo $i > " + file + ".tmp; mv " + file + ".tmp " +
               file + "; sleep 0.02; done >/dev/null 2>&1 &)");
}

long counter(const NodeView& view, const std::string& file) {
  auto text = view.read_file(file, 64);
  if (!text.ok()) return -1;
  return std::atol(text->c_str());
}

}  // namespace

TEST_CASE("inspect: a frozen node makes no progress until it is thawed") {
  auto tree = detect_tree();
  aura::testing::TempDir state;
  auto node = start(*tree, state, "freeze");
  start_counter(*node, "/tmp/counter");
  auto view = NodeView::open(node->init_pid());
  REQUIRE(view.ok());
  REQUIRE(eventually([&] { return counter(*view, "/tmp/counter") > 0; }));

  // A witness node counts on meanwhile: while it takes twenty steps the frozen one takes none
  // (the window is the witness's progress, however fast or slow the machine is, not a sleep).
  auto witness = start(*tree, state, "witness");
  start_counter(*witness, "/tmp/counter");
  auto witness_view = NodeView::open(witness->init_pid());
  REQUIRE(witness_view.ok());
  REQUIRE(eventually([&] { return counter(*witness_view, "/tmp/counter") > 0; }));

  REQUIRE(tree->freeze(node->id()).is_ok());
  const long frozen = counter(*view, "/tmp/counter");
  const long witness_at = counter(*witness_view, "/tmp/counter");
  CHECK(eventually([&] { return counter(*witness_view, "/tmp/counter") >= witness_at + 20; }));
  CHECK(counter(*view, "/tmp/counter") == frozen);
  REQUIRE(tree->thaw(node->id()).is_ok());
  CHECK(eventually([&] { return counter(*view, "/tmp/counter") > frozen + 5; }));

  CHECK(!tree->freeze("no-such-group-" + tag()).is_ok());
  REQUIRE(node->destroy().is_ok());
  REQUIRE(witness->destroy().is_ok());
}

TEST_CASE("inspect: a nested learner group is made, frozen alone and removed inside its node's") {
  auto tree = detect_tree();
  aura::testing::TempDir state;
  auto node = start(*tree, state, "nested");
  const std::string learner = node->id() + "/learner";
  CHECK(tree->create(node->id() + "x/learner", {}).code() == ErrorCode::kNotFound);
  for (const auto& p : tree->paths(node->id() + "x")) CHECK(!fs::exists(p));
  CHECK(tree->create(node->id() + "/../escape", {}).code() == ErrorCode::kInvalidArgument);

  REQUIRE(tree->create(learner, {}).is_ok());
  // The node's destroy() does not reach into a nested group: empty and remove it first, also
  // when a REQUIRE below ends the test early.
  struct RemoveLearner {
    sandbox::CgroupTree& tree;
    const std::string& id;
    ~RemoveLearner() {
      (void)tree.thaw(id);
      (void)tree.kill_all(id, 5000);
      (void)tree.remove(id);
    }
  } remove_learner{*tree, learner};
  for (const auto& p : tree->paths(learner)) {
    CHECK(fs::is_directory(p));
    CHECK(p.parent_path().filename() == node->id());
  }
  CHECK(tree->create(learner, {}).code() == ErrorCode::kBusy);

  // Two counters; the learner's moves into the nested group.
  start_counter(*node, "/tmp/node-counter");
  auto view = NodeView::open(node->init_pid());
  REQUIRE(view.ok());
  REQUIRE(eventually([&] { return counter(*view, "/tmp/node-counter") > 0; }));
  auto before = tree->pids(node->id());
  REQUIRE(before.ok());
  start_counter(*node, "/tmp/learner-counter");
  REQUIRE(eventually([&] { return counter(*view, "/tmp/learner-counter") > 0; }));
  auto after = tree->pids(node->id());
  REQUIRE(after.ok());
  // The new loop's shell: orphaned to the node's init, and not there before (the shells it
  // forks for `mv` and `sleep` come and go under it).
  auto procs = view->processes(*after);
  REQUIRE(procs.ok());
  int moved = 0;
  for (const auto& p : *procs) {
    if (p.comm != "sh" || p.ppid_host != node->init_pid() ||
        std::find(before->begin(), before->end(), p.pid) != before->end())
      continue;
    REQUIRE(tree->add_pid(learner, p.pid).is_ok());
    ++moved;
  }
  REQUIRE(moved == 1);
  auto in_learner = tree->pids(learner);
  REQUIRE(in_learner.ok());
  REQUIRE(!in_learner->empty());
  // Children the loop forked before the move stay in the node's group; let them finish.
  const long moved_at = counter(*view, "/tmp/learner-counter");
  REQUIRE(eventually([&] { return counter(*view, "/tmp/learner-counter") > moved_at + 3; }));

  REQUIRE(tree->freeze(learner).is_ok());
  const long learner_frozen = counter(*view, "/tmp/learner-counter");
  const long node_at = counter(*view, "/tmp/node-counter");
  // The node itself runs on: while its counter takes twenty steps (about 500 ms idle), the
  // learner's takes none. The window is the node's progress, however fast the machine is.
  CHECK(eventually([&] { return counter(*view, "/tmp/node-counter") >= node_at + 20; }));
  CHECK(counter(*view, "/tmp/learner-counter") == learner_frozen);
  REQUIRE(tree->thaw(learner).is_ok());
  CHECK(eventually([&] { return counter(*view, "/tmp/learner-counter") > learner_frozen; }));

  // Freezing the node freezes its nested group too.
  const Status frozen = tree->freeze(node->id());
  REQUIRE_MESSAGE(frozen.is_ok(), frozen.message());
  const long nested_frozen = counter(*view, "/tmp/learner-counter");
  {
    // A witness node outside the frozen one counts twenty steps meanwhile (as above).
    auto witness = start(*tree, state, "nested-witness");
    start_counter(*witness, "/tmp/counter");
    auto witness_view = NodeView::open(witness->init_pid());
    REQUIRE(witness_view.ok());
    REQUIRE(eventually([&] { return counter(*witness_view, "/tmp/counter") > 0; }));
    const long witness_at = counter(*witness_view, "/tmp/counter");
    CHECK(eventually([&] { return counter(*witness_view, "/tmp/counter") >= witness_at + 20; }));
    REQUIRE(witness->destroy().is_ok());
  }
  CHECK(counter(*view, "/tmp/learner-counter") == nested_frozen);
  REQUIRE(tree->thaw(node->id()).is_ok());

  CHECK(tree->remove(learner).code() == ErrorCode::kBusy);  // processes left
  const Status killed = tree->kill_all(learner, 5000);
  REQUIRE_MESSAGE(killed.is_ok(), killed.message());
  REQUIRE(tree->remove(learner).is_ok());
  for (const auto& p : tree->paths(learner)) CHECK(!fs::exists(p));
  for (const auto& p : tree->paths(node->id())) CHECK(fs::is_directory(p));  // left alone
  REQUIRE(node->destroy().is_ok());
  for (const auto& p : tree->paths(node->id())) CHECK(!fs::exists(p));
}

TEST_CASE("inspect: fingerprint encoding is fixed, order-free, and refuses a repeated key") {
  inspect::Fingerprint empty;
  CHECK(*empty.hex() == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  // Test vector (docs/WORLDS.md): u32 BE key length, key, u64 BE value length, value, by key.
  inspect::Fingerprint ab, ba;
  REQUIRE(ab.add("a", "1").is_ok());
  REQUIRE(ab.add("b", "2").is_ok());
  REQUIRE(ba.add("b", "2").is_ok());
  REQUIRE(ba.add("a", "1").is_ok());
  CHECK(*ab.hex() == "99a9a4bf76e6b8b1e574b3b31a32d92e569b03b0af26af1b14e1a518b3e1aff9");
  CHECK(*ba.hex() == *ab.hex());
  // Lengths are framed: moving a byte from key to value changes the digest.
  inspect::Fingerprint shifted;
  REQUIRE(shifted.add("a1", "").is_ok());
  REQUIRE(shifted.add("b", "2").is_ok());
  CHECK(*shifted.hex() != *ab.hex());

  inspect::Fingerprint dup;
  REQUIRE(dup.add("k", "1").is_ok());
  CHECK(dup.add("k", "1").code() == ErrorCode::kInvalidArgument);
  CHECK(dup.hex().status().code() == ErrorCode::kInvalidArgument);
  CHECK(dup.hex().status().message().find("'k'") != std::string::npos);
}

TEST_CASE(
    "inspect: node fingerprints match for identical worlds and change with mode, owner, "
    "content") {
  auto tree = detect_tree();
  aura::testing::TempDir state;
  auto one = start(*tree, state, "one");
  auto two = start(*tree, state, "two");
  for (Node* n : {one.get(), two.get()}) sh(*n, kWorldFiles);
  auto view_one = NodeView::open(one->init_pid());
  auto view_two = NodeView::open(two->init_pid());
  REQUIRE(view_one.ok());
  REQUIRE(view_two.ok());
  size_t entries = 0;
  auto digest = [&entries](const NodeView& view) {
    inspect::Fingerprint fp;
    Status s = inspect::add_tree(fp, view, "app", "/srv/app", 100);
    REQUIRE_MESSAGE(s.is_ok(), s.message());
    entries = fp.size();
    auto hex = fp.hex();
    REQUIRE(hex.ok());
    return *hex;
  };
  const std::string base = digest(*view_one);
  CHECK(base.size() == 64);
  CHECK(entries == 10);  // the folder itself, 8 names in it, 1 in sub/
  CHECK(digest(*view_two) == base);

  // The entries themselves: owners inside, a link's target, a FIFO by type only.
  for (const auto& [path, value] : std::vector<std::pair<std::string, std::string>>{
           {"/srv/app/owned", "file 0640 1000 1000 " + to_hex(sha256("owned\n"))},
           {"/srv/app/shadow-link", "symlink 0777 0 0 /etc/shadow"},
           {"/srv/app/fifo", "fifo 0644 0 0"}}) {
    inspect::Fingerprint fp, expect;
    REQUIRE(inspect::add_tree(fp, *view_one, "app", path, 10).is_ok());
    REQUIRE(expect.add("app:.", value).is_ok());
    CHECK_MESSAGE(*fp.hex() == *expect.hex(), path);
  }

  struct Change {
    const char* change;
    const char* undo;
  };
  for (const Change& c :
       {Change{"chmod 0600 /srv/app/owned", "chmod 0640 /srv/app/owned"},
        Change{"chown 1001 /srv/app/owned", "chown 1000 /srv/app/owned"},
        Change{"chgrp 0 /srv/app/sub", "chgrp 0 /srv/app/sub"},  // no change: same digest
        Change{"echo other > /srv/app/hello.txt", "echo in-world > /srv/app/hello.txt"},
        Change{"ln -sfn /etc/passwd /srv/app/shadow-link",
               "ln -sfn /etc/shadow /srv/app/shadow-link"},
        Change{"touch /srv/app/new", "rm /srv/app/new"}}) {
    INFO(std::string(c.change));
    sh(*two, c.change);
    if (std::string(c.change) == c.undo)
      CHECK(digest(*view_two) == base);
    else
      CHECK(digest(*view_two) != base);
    sh(*two, c.undo);
    CHECK(digest(*view_two) == base);
  }

  inspect::Fingerprint small;
  CHECK(inspect::add_tree(small, *view_one, "app", "/srv/app", 5).code() ==
        ErrorCode::kFailedPrecondition);
  // Walking the same tree twice under one prefix repeats every key.
  inspect::Fingerprint twice;
  REQUIRE(inspect::add_tree(twice, *view_one, "app", "/srv/app", 100).is_ok());
  CHECK(!inspect::add_tree(twice, *view_one, "app", "/srv/app", 100).is_ok());
  CHECK(!twice.hex().ok());

  REQUIRE(one->destroy().is_ok());
  REQUIRE(two->destroy().is_ok());
}
