#include "workers/nsworld/node.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sodium.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <span>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "workers/nsworld/join.h"
#include "workers/sandbox/namespaces.h"
#include "workers/sandbox/ns_entry.h"
#include "workers/sandbox/seccomp_policy.h"

namespace aura::nsworld {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;

constexpr uint64_t kKillTimeoutMs = 5000;
// Where a node's keeper holds the node's stage folder and root (O_PATH), for Node::layers.
constexpr int kKeeperStageFd = 4;
constexpr int kKeeperRootFd = 5;
constexpr char kJoinEnvOn[] = "AURA_NODE_JOIN=1";  // join.h: kJoinEnv

// What the node's init needs, prepared before fork: the shared namespace-entry recipe
// (sandbox/ns_entry.h) with the node's steps. The child only issues syscalls.
struct InitArgs {
  sandbox::EntryPlan entry;
  int error_fd;  // a failed step writes its EntryStatus here
};

// The node's PID 1: sets up its root and reaps orphans for as long as the node lives.
[[noreturn]] void init_main(const InitArgs& a) {
  if (const sandbox::EntryStatus s = sandbox::run_entry(a.entry); !s.ok())
    sandbox::fail_entry(a.error_fd, s);
  // Ready: every descriptor above stdio is closed, so the error pipe closing without a frame
  // says so.
  while (true) {
    int status;
    if (::waitpid(-1, &status, 0) < 0) ::sleep(1);  // no children now: wait for orphans
  }
}

std::string random_id() {
  uint8_t raw[8];
  randombytes_buf(raw, sizeof raw);
  return to_hex(std::span<const uint8_t>(raw, sizeof raw));
}

int wait_exit(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

Result<std::unique_ptr<Node>> Node::start(const NodeOptions& o, sandbox::CgroupTree& tree) {
  if (sodium_init() < 0) return Status::unavailable("libsodium failed to initialise");
  if (o.hostname.empty() || o.hostname.size() > 64) {
    return Status::invalid("node hostname must be 1..64 bytes");
  }
  std::unique_ptr<Node> n(new Node());
  n->id_ = random_id();
  n->tree_ = &tree;
  n->ledger_ = std::make_unique<sandbox::LeakLedger>(o.state_dir, o.owner);
  n->state_dir_ = o.state_dir;
  n->owner_ = o.owner;
  n->stage_ = o.state_dir / "nodes" / n->id_;
  n->live_ = true;  // from here on destroy() undoes what exists
  if (o.uid_base == 0) {
    AURA_ASSIGN_OR_RETURN(n->uid_base_, sandbox::claim_id_range(*n->ledger_, n->id_));
  } else {
    n->uid_base_ = o.uid_base;
  }

  std::vector<fs::path> forbidden = o.forbidden;
  forbidden.push_back(o.state_dir);
  sandbox::MountPlan plan;
  AURA_ASSIGN_OR_RETURN(plan,
                        sandbox::plan_mounts(o.lower_paths, o.packages, o.tmpfs_bytes, forbidden));
  // The image's overlays, whose uppers hold what the node changed of the image.
  for (const sandbox::MountStep& step : plan.steps) {
    if (step.kind != sandbox::MountStepKind::kOverlay ||
        std::find(o.lower_paths.begin(), o.lower_paths.end(), step.source) == o.lower_paths.end())
      continue;
    const auto at = step.data.find(",upperdir=");
    const auto end = step.data.find(',', at + 1);
    if (at == std::string::npos || end == std::string::npos)
      return Status::corruption("overlay step without an upper folder: " + step.data);
    n->overlays_.push_back(
        {step.target.substr(4), step.data.substr(at + 10, end - at - 10), step.source});
  }
  AURA_RETURN_IF_ERROR(n->ledger_->record(n->id_, sandbox::ResourceKind::kDir, n->stage_));
  std::error_code ec;
  fs::create_directories(n->stage_, ec);
  if (ec) return Status::io("create " + n->stage_.string() + ": " + ec.message());
  for (const fs::path& p : tree.paths(n->id_)) {
    AURA_RETURN_IF_ERROR(n->ledger_->record(n->id_, sandbox::ResourceKind::kCgroup, p));
  }
  AURA_RETURN_IF_ERROR(tree.create(n->id_, o.limits));

  // The process the node must not outlive: the world's holder (o.owner) or this process. The
  // keeper watches it through a pidfd, so the watch holds whichever thread made the node.
  const std::string owner = o.owner.empty() ? sandbox::LeakLedger::self_owner() : o.owner;
  pid_t watched = 0;
  {
    const auto dot = owner.find('.');
    std::from_chars(owner.data(), owner.data() + (dot == std::string::npos ? 0 : dot), watched);
  }
  const int watch_fd = watched > 0 ? int(::syscall(SYS_pidfd_open, watched, 0)) : -1;
  if (watch_fd < 0) {
    return Status::unavailable("node " + o.hostname + ": pidfd_open of its owner " + owner + ": " +
                               errno_text(errno));
  }
  file_io::Fd watch_guard(watch_fd);
  const int null_fd = ::open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) return Status::io("open /dev/null: " + errno_text(errno));
  file_io::Fd null_guard(null_fd);
  if (sandbox::owner_of(watched) != owner) {  // the pidfd names another process: pid reused
    return Status::failed_precondition("node " + o.hostname + ": its owner " + owner + " is gone");
  }

  // What the keeper writes to thaw the node's group after it kills the init: a supervisor killed
  // while the group was frozen (a check, a kill_all) leaves its processes unable to die.
  // So are its call groups and its quarantine group (`<id>-*` beside it), which checks freeze:
  // the keeper thaws each of them too, found with getdents64 on a descriptor (nothing that may
  // allocate in a fork of a threaded process).
  std::string thaw_file, thaw_text, thaw_dir, thaw_leaf;
  for (const fs::path& p : tree.paths(n->id_)) {
    if (tree.version() == sandbox::CgroupVersion::kV2) {
      thaw_leaf = "cgroup.freeze";
      thaw_text = "0";
    } else if (p.string().find("/freezer/") != std::string::npos) {
      thaw_leaf = "freezer.state";
      thaw_text = "THAWED";
    } else {
      continue;
    }
    thaw_file = (p / thaw_leaf).string();
    thaw_dir = p.parent_path().string();
  }
  const std::string thaw_prefix = n->id_ + "-";

  int netfd = -1;
  if (!o.netns.empty()) {
    netfd = ::open(o.netns.c_str(), O_RDONLY | O_CLOEXEC);
    if (netfd < 0) return Status::io("open " + o.netns.string() + ": " + errno_text(errno));
  }
  int sync[2], err[2], pidp[2], layers[2];
  if (::pipe2(sync, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0 ||
      ::pipe2(pidp, O_CLOEXEC) != 0 ||
      ::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, layers) != 0) {
    return Status::io("pipe: " + errno_text(errno));
  }
  file_io::Fd layers_guard0(layers[0]), layers_guard1(layers[1]);
  const std::string stage = n->stage_.string();
  // The stage tmpfs holds the root and every overlay's upper layer; mounted by the init inside
  // its user namespace, so uid 0 here is the node's root (uid_base outside).
  const std::string stage_data = "size=" + std::to_string(o.tmpfs_bytes) + ",mode=0755,uid=0,gid=0";
  // The node's steps: no cgroup namespace of its own, a parent-death signal (the node lives no
  // longer than its keeper, which lives no longer than the node's owner; before the signal is
  // set, a keeper that ends because the owner did kills the init itself), lo up only in a fresh
  // network namespace, /dev/null for stdio, every descriptor closed (the error pipe too: that is
  // how the init says it is ready). No capability cut or seccomp filter: the init is the node's
  // root, and what runs in the node is confined by exec().
  sandbox::EntryPlan entry;
  entry.stage = stage.c_str();
  entry.stage_data = stage_data.c_str();
  entry.parent_death_signal = true;
  entry.mounts = &plan;
  entry.hostname = o.hostname.c_str();
  entry.hostname_len = o.hostname.size();
  entry.loopback = o.netns.empty();
  InitArgs args{entry, -1};
  unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
  if (o.netns.empty()) flags |= CLONE_NEWNET;

  // The keeper joins the node's network namespace (as host root: the user namespace it is
  // about to make will not own it) and makes the init there. It then waits for the init and
  // kills it when the owner ends first (the init dies with its keeper: PR_SET_PDEATHSIG).
  const pid_t keeper = ::fork();
  if (keeper < 0) return Status::io("fork: " + errno_text(errno));
  if (keeper == 0) {
    // A session of its own: a signal to the creator's process group (a shell's Ctrl-C, a test
    // harness's time-out) must not end a world that outlives the creator.
    ::setsid();
    if (netfd >= 0 && ::setns(netfd, CLONE_NEWNET) != 0) ::_exit(120);
    // Only what the keeper and the init need, as 3..7; everything else of the creator's is
    // closed before the init is cloned. Above all the sync pipe's write end and the creator's
    // other pipes (a world holder's): an init that held them while waiting for its go byte
    // would wait forever once the creator died, and keep the holders from ever tearing down.
    // 8 and 9: the two ends of the layers socket, the init's and the keeper's.
    const int keep[] = {sync[0], err[1], pidp[1], watch_fd, null_fd, layers[1], layers[0]};
    constexpr int kKept = int(std::size(keep));
    int high[kKept];
    for (int i = 0; i < kKept; ++i)
      if ((high[i] = ::fcntl(keep[i], F_DUPFD_CLOEXEC, 100)) < 0) ::_exit(119);
    for (int i = 0; i < kKept; ++i)
      if (::dup2(high[i], 3 + i) != 3 + i) ::_exit(119);
    ::syscall(SYS_close_range, unsigned(3 + kKept), ~0u, 0u);
    InitArgs init_args = args;
    init_args.entry.sync_fd = 3;
    init_args.entry.layers_fd = 8;
    init_args.error_fd = 4;
    const long child = ::syscall(SYS_clone, SIGCHLD | flags, nullptr, nullptr, nullptr, 0);
    if (child == 0) init_main(init_args);
    if (child < 0) ::_exit(121);
    const pid_t pid = pid_t(child);
    [[maybe_unused]] ssize_t w = ::write(5, &pid, sizeof pid);
    ::close(8);
    // The node's writable layers, from the init once its root is built (Node::layers): the
    // keeper holds them as 4 (the stage: overlay uppers) and 5 (the root) for the node's life.
    // An init that failed first sends nothing (its end closes); its error frame says why.
    int got_fds[2] = {-1, -1};
    {
      char byte;
      iovec iov{&byte, 1};
      alignas(cmsghdr) char control[CMSG_SPACE(sizeof got_fds)] = {};
      msghdr msg{};
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control;
      msg.msg_controllen = sizeof control;
      ssize_t r;
      while ((r = ::recvmsg(9, &msg, 0)) < 0 && errno == EINTR) {
      }
      cmsghdr* c = r == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
      if (c != nullptr && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
          c->cmsg_len == CMSG_LEN(sizeof got_fds)) {
        std::memcpy(got_fds, CMSG_DATA(c), sizeof got_fds);
        for (int& f : got_fds) f = ::fcntl(f, F_DUPFD_CLOEXEC, 100);
      }
    }
    // The keeper holds nothing of the supervisor's: the init's error pipe must close when the
    // init is ready, and no other descriptor may live on here but the owner's pidfd (as 3) and
    // the layers -- not even the creator's stdout, which a reader waits on until every holder
    // closes it.
    if (::dup2(7, 0) != 0 || ::dup2(7, 1) != 1 || ::dup2(7, 2) != 2 || ::dup2(6, 3) != 3) {
      ::kill(pid, SIGKILL);
      ::_exit(122);
    }
    int first_closed = 4;
    if (got_fds[0] >= 0 && got_fds[1] >= 0 && ::dup2(got_fds[0], kKeeperStageFd) >= 0 &&
        ::dup2(got_fds[1], kKeeperRootFd) >= 0)
      first_closed = kKeeperRootFd + 1;
    ::syscall(SYS_close_range, unsigned(first_closed), ~0u, 0u);
    const int init_fd = int(::syscall(SYS_pidfd_open, pid, 0));
    pollfd fds[2] = {{3, POLLIN, 0}, {init_fd, POLLIN, 0}};
    while (init_fd >= 0) {
      if (::poll(fds, 2, -1) < 0) {
        if (errno == EINTR) continue;
        break;
      }
      if (fds[1].revents != 0) break;  // the init ended
      if (fds[0].revents != 0) {       // the owner ended first
        ::kill(pid, SIGKILL);
        auto thaw_at = [&](int dir, const char* leaf) {
          const int t = ::openat(dir, leaf, O_WRONLY | O_CLOEXEC);
          if (t >= 0) {
            [[maybe_unused]] ssize_t w2 = ::write(t, thaw_text.data(), thaw_text.size());
            ::close(t);
          }
        };
        if (!thaw_file.empty()) thaw_at(AT_FDCWD, thaw_file.c_str());
        const int dir =
            thaw_dir.empty() ? -1 : ::open(thaw_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        alignas(8) char ents[4096];
        long got = 0;
        while (dir >= 0 && (got = ::syscall(SYS_getdents64, dir, ents, sizeof ents)) > 0) {
          for (long off = 0; off < got;) {
            const auto* e = reinterpret_cast<const dirent64*>(ents + off);
            off += e->d_reclen;
            if (std::strncmp(e->d_name, thaw_prefix.c_str(), thaw_prefix.size()) != 0) continue;
            const int group = ::openat(dir, e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
            if (group < 0) continue;
            thaw_at(group, thaw_leaf.c_str());
            ::close(group);
          }
        }
        if (dir >= 0) ::close(dir);
        break;
      }
    }
    const int status = wait_exit(pid);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  n->keeper_ = keeper;
  ::close(sync[0]);
  ::close(err[1]);
  ::close(pidp[1]);
  if (netfd >= 0) ::close(netfd);
  pid_t init = -1;
  const ssize_t got = ::read(pidp[0], &init, sizeof init);
  ::close(pidp[0]);
  auto fail = [&](Status s) {
    ::close(sync[1]);
    ::close(err[0]);
    return s;
  };
  layers_guard1.close_now();  // the keeper's recvmsg ends when the init's end closes
  if (got != sizeof init) {
    return fail(Status::unavailable("node " + o.hostname + ": clone of its namespaces failed"));
  }
  n->init_ = init;
  if (Status s = sandbox::write_id_maps(init, n->uid_base_, o.id_count, true); !s.is_ok())
    return fail(s);
  if (Status s = tree.add_pid(n->id_, init); !s.is_ok()) return fail(s);
  const char go = 1;
  if (::write(sync[1], &go, 1) != 1) return fail(Status::io("start node init"));
  ::close(sync[1]);
  sandbox::EntryStatus failed;
  const ssize_t r = ::read(err[0], &failed, sizeof failed);
  ::close(err[0]);
  if (r == sizeof failed) {
    return Status::unavailable("node " + o.hostname + ": " + sandbox::describe(failed, &plan));
  }
  return n;
}

Node::~Node() { (void)destroy(); }

Status Node::destroy() {
  if (!live_) return Status::ok();
  Status first = Status::ok();
  auto note = [&](Status s) {
    if (!s.is_ok() && first.is_ok()) first = s;
  };
  // Call groups first: their processes are the learner's, the node's own group holds its init.
  if (auto groups = call_groups(); groups.ok()) {
    for (const std::string& g : *groups) note(remove_call_group(g));
  } else {
    note(groups.status());
  }
  note(tree_->kill_all(id_, kKillTimeoutMs));
  if (keeper_ > 0) {
    ::kill(keeper_, SIGKILL);
    wait_exit(keeper_);
    keeper_ = -1;
  }
  Status removed = tree_->remove(id_);
  note(removed);
  if (removed.is_ok()) {
    for (const fs::path& p : tree_->paths(id_))
      note(ledger_->release(id_, sandbox::ResourceKind::kCgroup, p));
  }
  ::umount2(stage_.c_str(), MNT_DETACH);
  std::error_code ec;
  fs::remove(stage_, ec);
  if (!fs::exists(stage_)) note(ledger_->release(id_, sandbox::ResourceKind::kDir, stage_));
  if (first.is_ok() && uid_base_ >= sandbox::kIdRangeBase)
    note(sandbox::release_id_range(*ledger_, id_, uid_base_));
  if (first.is_ok()) live_ = false;
  return first;
}

uint64_t call_linux_caps() {
  return (1ull << CAP_CHOWN) | (1ull << CAP_DAC_OVERRIDE) | (1ull << CAP_DAC_READ_SEARCH) |
         (1ull << CAP_FOWNER) | (1ull << CAP_FSETID) | (1ull << CAP_KILL);
}

Result<ExecResult> Node::exec(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env,
                              std::chrono::milliseconds deadline, size_t cap, Confinement confine) {
  ExecOptions o;
  o.deadline = deadline;
  o.cap = cap;
  o.confine = confine;
  return exec(argv, env, o);
}

Result<std::vector<std::string>> Node::call_groups() const {
  std::vector<sandbox::LedgerEntry> entries;
  AURA_ASSIGN_OR_RETURN(entries, ledger_->entries());
  std::vector<std::string> out;
  const std::string prefix = id_ + "-";
  for (const auto& e : entries) {
    if (e.released || e.run_id != id_ || e.kind != sandbox::ResourceKind::kCgroup) continue;
    const std::string name = e.path.filename().string();
    if (name.starts_with(prefix) && std::find(out.begin(), out.end(), name) == out.end())
      out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

Status Node::remove_call_group(const std::string& group) {
  AURA_RETURN_IF_ERROR(tree_->kill_all(group, kKillTimeoutMs));
  AURA_RETURN_IF_ERROR(tree_->remove(group));
  for (const fs::path& p : tree_->paths(group))
    AURA_RETURN_IF_ERROR(ledger_->release(id_, sandbox::ResourceKind::kCgroup, p));
  return Status::ok();
}

Status Node::quarantine(const std::vector<pid_t>& pids) {
  const std::string group = quarantine_group();
  std::vector<std::string> groups;
  AURA_ASSIGN_OR_RETURN(groups, call_groups());
  if (std::find(groups.begin(), groups.end(), group) == groups.end()) {
    std::vector<sandbox::LeakLedger::Resource> res;
    for (const fs::path& p : tree_->paths(group))
      res.push_back({sandbox::ResourceKind::kCgroup, p});
    AURA_RETURN_IF_ERROR(ledger_->record(id_, res));
    AURA_RETURN_IF_ERROR(tree_->create(group, sandbox::CgroupLimits{}));
  }
  for (pid_t pid : pids) {
    Status moved = tree_->add_pid(group, pid);
    if (!moved.is_ok() && ::kill(pid, 0) == 0) return moved;
  }
  return Status::ok();
}

NodeState Node::state() const {
  NodeState st;
  st.id = id_;
  st.init_pid = init_;
  const std::string owner = sandbox::owner_of(init_);
  st.init_start = owner.substr(owner.find('.') + 1);
  st.stage = stage_;
  st.state_dir = state_dir_;
  st.uid_base = uid_base_;
  st.owner = owner_;
  st.overlays = overlays_;
  return st;
}

Result<std::unique_ptr<Node>> Node::attach(const NodeState& st, sandbox::CgroupTree& tree) {
  if (st.id.size() != 16 || st.init_pid <= 1 || st.init_start.empty()) {
    return Status::invalid("node state is incomplete");
  }
  if (sandbox::owner_of(st.init_pid) != std::to_string(st.init_pid) + "." + st.init_start) {
    return Status::failed_precondition("node " + st.id + ": its init (pid " +
                                       std::to_string(st.init_pid) + ") is gone");
  }
  std::unique_ptr<Node> n(new Node());
  n->id_ = st.id;
  n->init_ = st.init_pid;
  n->stage_ = st.stage;
  n->state_dir_ = st.state_dir;
  n->owner_ = st.owner;
  n->uid_base_ = st.uid_base;
  n->overlays_ = st.overlays;
  n->tree_ = &tree;
  n->ledger_ = std::make_unique<sandbox::LeakLedger>(st.state_dir, st.owner);
  n->live_ = true;
  return n;
}

Layers::Layers(Layers&& o) noexcept : stage(o.stage), root(o.root) { o.stage = o.root = -1; }

Layers::~Layers() {
  if (stage >= 0) ::close(stage);
  if (root >= 0) ::close(root);
}

Result<Layers> Node::layers() const {
  if (!live_) return Status::failed_precondition("the node is destroyed");
  const std::string self = std::to_string(init_) + ".";
  const std::string owner = sandbox::owner_of(init_);
  if (!owner.starts_with(self)) {
    return Status::failed_precondition("node " + id_ + ": its init (pid " + std::to_string(init_) +
                                       ") is gone");
  }
  // The init's parent as the host's kernel reports it is its keeper (it dies with it), the
  // lab's own process outside every namespace of the node: nothing in the node can reach it.
  char buf[1024];
  const int sfd =
      ::open(("/proc/" + std::to_string(init_) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (sfd < 0)
    return Status::io("open /proc/" + std::to_string(init_) + "/stat: " + errno_text(errno));
  const ssize_t got = ::read(sfd, buf, sizeof buf);
  ::close(sfd);
  if (got <= 0) return Status::io("read /proc/" + std::to_string(init_) + "/stat");
  const std::string stat(buf, size_t(got));
  const auto close_paren = stat.rfind(')');
  pid_t keeper = 0;
  if (close_paren == std::string::npos || close_paren + 4 >= stat.size() ||
      std::from_chars(stat.data() + close_paren + 4, stat.data() + stat.size(), keeper).ec !=
          std::errc() ||
      keeper <= 1) {
    return Status::corruption("node " + id_ + ": /proc/" + std::to_string(init_) +
                              "/stat names no parent");
  }
  Layers l;
  const std::string fds = "/proc/" + std::to_string(keeper) + "/fd/";
  l.stage =
      ::open((fds + std::to_string(kKeeperStageFd)).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  l.root = ::open((fds + std::to_string(kKeeperRootFd)).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (l.stage < 0 || l.root < 0) {
    return Status::unavailable("node " + id_ + ": its keeper (pid " + std::to_string(keeper) +
                               ") holds no layers: " + errno_text(errno));
  }
  // Still the same init, so still its keeper: the descriptors are this node's.
  if (sandbox::owner_of(init_) != owner)
    return Status::failed_precondition("node " + id_ + ": its init ended while it was read");
  return l;
}

Result<ExecResult> Node::exec(const std::vector<std::string>& argv,
                              const std::vector<std::string>& env, const ExecOptions& opt) {
  if (!live_) return Status::failed_precondition("the node is destroyed");
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    return Status::invalid(opt.host_program ? "argv[0] must be an absolute path on the host"
                                            : "argv[0] must be an absolute path inside the node");
  }
  if (opt.pass_fd >= 0 && opt.pass_fd <= 2) return Status::invalid("pass_fd must not be stdio");
  if (opt.host_program && opt.confine == Confinement::kNodeRoot)
    return Status::invalid("a host program joins a node only under a filtered confinement");
  // The command's cgroup: the node's own, or a call group made for it.
  std::string group = id_;
  if (!opt.group.empty()) {
    const bool ok_name =
        opt.group.size() <= 16 && std::all_of(opt.group.begin(), opt.group.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
        });
    if (!ok_name) return Status::invalid("call group name must be [a-z0-9]{1,16}");
    group = id_ + "-" + opt.group;
    std::vector<sandbox::LeakLedger::Resource> res;
    for (const fs::path& p : tree_->paths(group))
      res.push_back({sandbox::ResourceKind::kCgroup, p});
    AURA_RETURN_IF_ERROR(ledger_->record(id_, res));
    AURA_RETURN_IF_ERROR(tree_->create(group, opt.limits));
  }
  // Handles on the node, opened before fork: the network namespace first (the host's user
  // namespace owns it), then the node's own user namespace, then the rest it owns.
  const std::string proc = "/proc/" + std::to_string(init_);
  const char* kinds[] = {"net", "user", "mnt", "uts", "ipc", "pid"};
  int fds[6];
  for (int i = 0; i < 6; ++i) {
    fds[i] = ::open((proc + "/ns/" + kinds[i]).c_str(), O_RDONLY | O_CLOEXEC);
    if (fds[i] < 0) {
      for (int j = 0; j < i; ++j) ::close(fds[j]);
      return Status::io("open " + proc + "/ns/" + kinds[i] + ": " + errno_text(errno));
    }
  }
  // The runner policy is built before fork: the child only installs it.
  static const Result<sandbox::SeccompProgram> built = sandbox::build_seccomp_program();
  const bool filtered = opt.confine != Confinement::kNodeRoot;
  if (filtered && !built.ok()) {
    for (int fd : fds) ::close(fd);
    return built.status();
  }
  sandbox::SeccompProgram seccomp = built.ok() ? *built : sandbox::SeccompProgram{};
  sock_fprog fprog = seccomp.fprog();
  const uint64_t keep_caps = opt.confine == Confinement::kCall      ? call_linux_caps()
                             : opt.confine == Confinement::kService ? opt.linux_caps
                                                                    : 0;
  const int rootfd = ::open((proc + "/root").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  std::vector<std::string> cgroup_procs;
  for (const fs::path& p : tree_->paths(group))
    cgroup_procs.push_back((p / "cgroup.procs").string());
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);
  int out[2], errp[2];
  if (rootfd < 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(errp, O_CLOEXEC) != 0) {
    for (int fd : fds) ::close(fd);
    return Status::io("open " + proc + "/root or pipes: " + errno_text(errno));
  }
  const int pass_fd = opt.pass_fd;
  // A host program's join spec (the filter and capabilities it applies to itself), its stdin and
  // the environment that says it is to join.
  int spec_fd = -1, host_null = -1;
  if (opt.host_program) {
    spec_fd = int(::syscall(SYS_memfd_create, "aura-join", MFD_CLOEXEC));
    host_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const int e = spec_fd < 0 || host_null < 0
                      ? errno
                      : write_join_spec(spec_fd, keep_caps, seccomp.instructions.data(),
                                        seccomp.instructions.size());
    if (spec_fd < 0 || host_null < 0 || e != 0) {
      for (int fd : {fds[0], fds[1], fds[2], fds[3], fds[4], fds[5], rootfd, out[0], out[1],
                     errp[0], errp[1], spec_fd, host_null})
        if (fd >= 0) ::close(fd);
      return Status::io("join spec for " + argv[0] + ": " + errno_text(e));
    }
    cenv.insert(cenv.end() - 1, const_cast<char*>(kJoinEnvOn));
  }

  const auto began = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) return Status::io("fork: " + errno_text(errno));
  if (child == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    // Into the command's cgroup first, while still the host's root.
    const std::string self = std::to_string(::getpid());
    for (const auto& p : cgroup_procs) {
      const int fd = ::open(p.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0 || ::write(fd, self.data(), self.size()) < 0) ::_exit(122);
      ::close(fd);
    }
    if (spec_fd >= 0) {
      // The host program joins the node itself (join.h): each descriptor at its number, nothing
      // else, then execve on the host.
      const int src[] = {host_null, out[1], errp[1], pass_fd, fds[0], fds[1],
                         fds[2],    fds[3], fds[4],  fds[5],  rootfd, spec_fd};
      int high[12];
      for (int i = 0; i < 12; ++i)
        high[i] = src[i] < 0 ? -1 : ::fcntl(src[i], F_DUPFD_CLOEXEC, 100);
      for (int i = 0; i < 12; ++i) {
        if (src[i] < 0) continue;
        if (high[i] < 0 || ::dup2(high[i], i) != i) ::_exit(123);
      }
      ::syscall(SYS_close_range, unsigned(kJoinLastFd + 1), ~0u, 0u);
      if (pass_fd < 0) ::close(3);
      ::execve(cargv[0], cargv.data(), cenv.data());
      ::_exit(127);
    }
    for (int fd : fds)
      if (::setns(fd, 0) != 0) ::_exit(123);
    if (::fchdir(rootfd) != 0 || ::chroot(".") != 0 || ::chdir("/") != 0) ::_exit(124);
    // A PID namespace applies to children: the command is the grandchild.
    const pid_t inner = ::fork();
    if (inner == 0) {
      // The namespace-entry recipe's steps (sandbox/ns_entry.h) that apply to a process joining
      // a node: its root, stdio and the passed descriptor, nothing else open, and last (so
      // nothing above runs under the filter) the confinement. The parent-death signal is set
      // after becoming the namespace's root: a change of uid clears it (prctl(2)).
      if (!sandbox::become_root().ok() || !sandbox::set_parent_death_signal().ok() ||
          !sandbox::set_stdio(out[1], errp[1], pass_fd).ok() ||
          !sandbox::close_fds(pass_fd >= 0 ? 4u : 3u, -1).ok())
        ::_exit(125);
      if (filtered && !sandbox::confine(keep_caps, &fprog).ok()) ::_exit(125);
      ::execve(cargv[0], cargv.data(), cenv.data());
      ::_exit(127);
    }
    if (inner < 0) ::_exit(126);
    ::syscall(SYS_close_range, 3u, ~0u, 0u);  // the output pipes close when the command's do
    const int status = wait_exit(inner);
    ::_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  for (int fd : fds) ::close(fd);
  ::close(rootfd);
  ::close(out[1]);
  ::close(errp[1]);
  if (spec_fd >= 0) ::close(spec_fd);
  if (host_null >= 0) ::close(host_null);

  ExecResult r;
  const auto end = began + opt.deadline;
  pollfd p[2] = {{out[0], POLLIN, 0}, {errp[0], POLLIN, 0}};
  int open_pipes = 2;
  while (open_pipes > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(child, SIGKILL);  // its command dies with it (PDEATHSIG)
      break;
    }
    if (::poll(p, 2, int(left.count())) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP))) continue;
      char buf[4096];
      const ssize_t n = ::read(p[i].fd, buf, sizeof buf);
      if (n > 0) {
        std::string& s = i == 0 ? r.out : r.err;
        const size_t room = opt.cap - std::min(opt.cap, s.size());
        if (size_t(n) > room) (i == 0 ? r.out_truncated : r.err_truncated) = true;
        s.append(buf, std::min(size_t(n), room));
      } else if (n == 0) {
        ::close(p[i].fd);
        p[i].fd = -1;
        --open_pipes;
      }
    }
  }
  for (auto& x : p)
    if (x.fd >= 0) ::close(x.fd);
  const int status = wait_exit(child);
  r.wall_ns = uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - began)
          .count());
  r.exited = WIFEXITED(status);
  r.exit_code = r.exited ? WEXITSTATUS(status) : -1;
  r.term_signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  if (group != id_) {
    // The command was killed with the deadline: so is everything it left.
    if (r.timed_out) (void)tree_->kill_all(group, kKillTimeoutMs);
    if (auto u = tree_->usage(group); u.ok()) {
      r.usage = *u;
      r.usage_known = true;
    }
    bool empty = false;
    if (auto left = tree_->pids(group); left.ok()) empty = left->empty();
    if (!opt.keep_group || empty) AURA_RETURN_IF_ERROR(remove_call_group(group));
  }
  return r;
}

}  // namespace aura::nsworld
