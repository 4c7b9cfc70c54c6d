#include "workers/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <thread>

#include "engine/common/file_io.h"
#include "workers/sandbox/capabilities.h"
#include "workers/sandbox/cgroup.h"
#include "workers/sandbox/namespaces.h"
#include "workers/sandbox/network.h"
#include "workers/sandbox/registry.h"
#include "workers/sandbox/seccomp_policy.h"

namespace aura::sandbox {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;

constexpr uint64_t kKillWaitMs = 5000;

// What the child reports when a setup step fails: the step, the plan index for kMountPlan,
// and errno. Written once to the error pipe, which close-on-exec closes on success.
enum class ChildStep : int32_t {
  kSync = 1,
  kCgroupNamespace,
  kPrivateRoot,
  kStageTmpfs,
  kChdirStage,
  kBecomeRoot,
  kMountPlan,
  kPivotRoot,
  kDetachOldRoot,
  kHostname,
  kLoopback,
  kSetsid,
  kStdio,
  kCloseFds,
  kCoreLimit,
  kCapabilities,
  kSeccomp,
  kExec,
};

const char* step_name(ChildStep s) {
  switch (s) {
    case ChildStep::kSync:
      return "wait for the supervisor";
    case ChildStep::kCgroupNamespace:
      return "unshare the cgroup namespace";
    case ChildStep::kPrivateRoot:
      return "make mounts private";
    case ChildStep::kStageTmpfs:
      return "mount the stage tmpfs";
    case ChildStep::kChdirStage:
      return "enter the stage folder";
    case ChildStep::kBecomeRoot:
      return "become root of the user namespace";
    case ChildStep::kMountPlan:
      return "build the root";
    case ChildStep::kPivotRoot:
      return "pivot_root";
    case ChildStep::kDetachOldRoot:
      return "detach the old root";
    case ChildStep::kHostname:
      return "sethostname";
    case ChildStep::kLoopback:
      return "bring lo up";
    case ChildStep::kSetsid:
      return "setsid";
    case ChildStep::kStdio:
      return "set up stdio";
    case ChildStep::kCloseFds:
      return "close inherited fds";
    case ChildStep::kCoreLimit:
      return "set RLIMIT_CORE";
    case ChildStep::kCapabilities:
      return "drop capabilities";
    case ChildStep::kSeccomp:
      return "install the seccomp filter";
    case ChildStep::kExec:
      return "execve";
  }
  return "setup";
}

struct ChildError {
  int32_t step = 0;
  int32_t index = -1;
  int32_t err = 0;
};

// Everything the child touches, prepared before clone.
struct ChildArgs {
  const MountPlan* plan;
  const char* stage;
  const char* stage_data;
  const char* hostname;
  size_t hostname_len;
  uint64_t capabilities;
  sock_fprog* seccomp;
  int sync_fd;
  int error_fd;
  int stdout_fd;
  int stderr_fd;
  int pass_fd;  // becomes fd 3 inside, or -1
  char* const* argv;
  char* const* envp;
};

[[noreturn]] void child_fail(const ChildArgs& a, ChildStep step, int err, int index = -1) {
  const ChildError e{static_cast<int32_t>(step), index, err};
  [[maybe_unused]] ssize_t n = ::write(a.error_fd, &e, sizeof e);
  ::_exit(127);
}

// After clone: no allocation, no exceptions; each failure is one frame and _exit.
[[noreturn]] void child_main(const ChildArgs& a) {
  char byte;
  if (::read(a.sync_fd, &byte, 1) != 1) child_fail(a, ChildStep::kSync, errno);
  if (::unshare(CLONE_NEWCGROUP) != 0) child_fail(a, ChildStep::kCgroupNamespace, errno);
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    child_fail(a, ChildStep::kPrivateRoot, errno);
  // Still the host's uid 0 here (unmapped inside), so the stage folder is reachable even under
  // a 0700 state folder; the tmpfs's root belongs to the namespace's root.
  if (::mount("tmpfs", a.stage, "tmpfs", MS_NOSUID | MS_NODEV, a.stage_data) != 0)
    child_fail(a, ChildStep::kStageTmpfs, errno);
  if (::chdir(a.stage) != 0) child_fail(a, ChildStep::kChdirStage, errno);
  if (const int err = become_namespace_root(); err != 0) child_fail(a, ChildStep::kBecomeRoot, err);
  ::umask(0);
  int err = 0;
  if (const int failed = apply_mount_plan(*a.plan, &err); failed >= 0)
    child_fail(a, ChildStep::kMountPlan, err, failed);
  if (::chdir("root") != 0 || ::syscall(SYS_pivot_root, ".", ".") != 0)
    child_fail(a, ChildStep::kPivotRoot, errno);
  if (::umount2(".", MNT_DETACH) != 0 || ::chdir("/") != 0)
    child_fail(a, ChildStep::kDetachOldRoot, errno);
  if (::sethostname(a.hostname, a.hostname_len) != 0) child_fail(a, ChildStep::kHostname, errno);
  if (const int e = bring_loopback_up(); e != 0) child_fail(a, ChildStep::kLoopback, e);
  if (::setsid() < 0) child_fail(a, ChildStep::kSetsid, errno);
  const int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (null_fd < 0 || ::dup2(null_fd, 0) < 0 || ::dup2(a.stdout_fd, 1) < 0 ||
      ::dup2(a.stderr_fd, 2) < 0)
    child_fail(a, ChildStep::kStdio, errno);
  ::umask(022);
  unsigned first_closed = 3;
  if (a.pass_fd >= 0) {
    const int rc = a.pass_fd == 3 ? ::fcntl(3, F_SETFD, 0) : ::dup2(a.pass_fd, 3);
    if (rc < 0) child_fail(a, ChildStep::kStdio, errno);
    first_closed = 4;
  }
  // Only stdio, the passed fd and the (close-on-exec, fd >= 10) error pipe stay open.
  if (::syscall(SYS_close_range, first_closed, static_cast<unsigned>(a.error_fd - 1), 0u) != 0)
    child_fail(a, ChildStep::kCloseFds, errno);
  if (::syscall(SYS_close_range, static_cast<unsigned>(a.error_fd + 1), ~0u, 0u) != 0)
    child_fail(a, ChildStep::kCloseFds, errno);
  // No core dumps: a host whose core_pattern pipes to a handler would run it, as host root,
  // for a crashing process of the run. Hard limit too; raising it needs CAP_SYS_RESOURCE in the
  // initial user namespace.
  const struct rlimit no_core = {0, 0};
  if (::setrlimit(RLIMIT_CORE, &no_core) != 0) child_fail(a, ChildStep::kCoreLimit, errno);
  if (const int e = drop_capabilities(a.capabilities); e != 0)
    child_fail(a, ChildStep::kCapabilities, e);
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, a.seccomp, 0, 0) != 0)
    child_fail(a, ChildStep::kSeccomp, errno);
  ::execve(a.argv[0], a.argv, a.envp);
  child_fail(a, ChildStep::kExec, errno);
}

uint64_t monotonic_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

Result<std::string> new_run_id() {
  uint8_t bytes[8];
  if (::getrandom(bytes, sizeof bytes, 0) != sizeof bytes)
    return Status::io("getrandom: " + errno_text(errno));
  return to_hex(bytes);
}

struct Pipe {
  int read = -1;
  int write = -1;
};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// Owns everything a run makes on the host and takes it all down, in order, whatever path
// run() leaves by: kill the cgroup, reap the child, remove the cgroup and the stage folder,
// and mark each released in the registry only once it is gone.
class RunGuard {
 public:
  RunGuard(CgroupTree& tree, Registry& registry, std::string run_id)
      : tree_(tree), registry_(registry), run_id_(std::move(run_id)) {}
  ~RunGuard() { [[maybe_unused]] Status s = destroy(); }

  void set_stage(fs::path stage) { stage_ = std::move(stage); }
  void set_cgroup_made() { cgroup_made_ = true; }
  void set_child(pid_t pid) { child_ = pid; }
  void reaped() { child_ = -1; }

  // Kills the run's processes and reaps the child, storing its wait status if it was still
  // running. Each step runs even if an earlier one failed; the first failure is returned.
  Status kill_and_reap(int* wait_status, struct rusage* usage) {
    Status first_error;
    if (cgroup_made_ && child_ > 0) {
      Status s = tree_.kill_all(run_id_, 0);  // our child's zombie may linger until reaped
      if (!s.is_ok() && s.code() != ErrorCode::kBusy) first_error = s;
    }
    if (child_ > 0) {
      // PID 1 of the run: its death makes the kernel kill the rest of its PID namespace.
      ::kill(child_, SIGKILL);
      while (::wait4(child_, wait_status, 0, usage) < 0) {
        if (errno != EINTR) {
          if (first_error.is_ok()) first_error = Status::io("wait4: " + errno_text(errno));
          break;
        }
      }
      child_ = -1;
    }
    if (cgroup_made_) {
      Status s = tree_.kill_all(run_id_, kKillWaitMs);
      if (first_error.is_ok()) first_error = s;
    }
    // Reaped and every hierarchy seen empty: an empty group cannot refill (only its own
    // processes fork into it), so destroy() need not kill or wait again.
    emptied_ = first_error.is_ok();
    return first_error;
  }

  Status destroy() {
    if (destroyed_) return Status::ok();
    destroyed_ = true;
    int ws;
    struct rusage ru;
    Status status = emptied_ ? Status::ok() : kill_and_reap(&ws, &ru);
    if (cgroup_made_ && status.is_ok()) {
      status = tree_.remove(run_id_);
      if (status.is_ok()) {
        std::vector<Registry::Resource> gone;
        for (const fs::path& p : tree_.paths(run_id_)) gone.push_back({ResourceKind::kCgroup, p});
        status = registry_.release(run_id_, gone);
      }
    }
    if (!stage_.empty()) {
      // The stage tmpfs lives only in the run's mount namespace, gone with its processes.
      if (::rmdir(stage_.c_str()) == 0 || errno == ENOENT) {
        Status r = registry_.release(run_id_, ResourceKind::kDir, stage_);
        if (status.is_ok()) status = r;
      } else if (status.is_ok()) {
        status = Status::io("rmdir " + stage_.string() + ": " + errno_text(errno));
      }
    }
    return status;
  }

 private:
  CgroupTree& tree_;
  Registry& registry_;
  std::string run_id_;
  fs::path stage_;
  bool cgroup_made_ = false;
  pid_t child_ = -1;
  bool destroyed_ = false;
  bool emptied_ = false;
};

Status check_profile(const Profile& p, const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/')
    return Status::invalid("sandbox: argv[0] must be an absolute path inside the sandbox");
  if (p.cpu_quota_us == 0 || p.cpu_period_us < 1000 || p.cpu_period_us > 1'000'000)
    return Status::invalid("sandbox profile " + p.name + ": CPU quota/period out of range");
  if (p.memory_bytes < (4u << 20)) return Status::invalid("sandbox profile: memory under 4 MiB");
  if (p.pids_max == 0) return Status::invalid("sandbox profile: pids_max is 0");
  if (p.wall_deadline_ms == 0) return Status::invalid("sandbox profile: wall deadline is 0");
  if (p.tmpfs_bytes < (1u << 20)) return Status::invalid("sandbox profile: tmpfs under 1 MiB");
  if (p.uid_base == 0 || p.id_count == 0)
    return Status::invalid("sandbox profile: root inside must not map to root outside");
  if (p.hostname.empty() || p.hostname.size() > 64)
    return Status::invalid("sandbox profile: hostname must be 1..64 bytes");
  // The digest's text form is one field per line.
  for (const std::string* s : {&p.name, &p.hostname}) {
    for (char c : *s) {
      if (static_cast<unsigned char>(c) < 0x20)
        return Status::invalid("sandbox profile: control character in name or hostname");
    }
  }
  return Status::ok();
}

// Reads what is available on the (non-blocking) `fd` into `out` up to `cap`, reading and
// dropping the rest; returns false at EOF or error, true while the pipe may yield more.
bool drain(int fd, std::string& out, uint64_t cap, bool& truncated) {
  char buf[16384];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno == EAGAIN;
    }
    if (n == 0) return false;
    const size_t room = out.size() < cap ? cap - out.size() : 0;
    const size_t keep = std::min(room, static_cast<size_t>(n));
    out.append(buf, keep);
    if (keep < static_cast<size_t>(n)) truncated = true;
  }
}

}  // namespace

Result<RunResult> run(const Profile& profile, const std::vector<std::string>& argv,
                      const std::vector<PackageMount>& packages, const RunOptions& options) {
  AURA_RETURN_IF_ERROR(check_profile(profile, argv));
  if (options.state_dir.empty() || !options.state_dir.is_absolute())
    return Status::invalid("sandbox: state_dir must be an absolute path");
  std::unique_ptr<CgroupTree> tree;
  AURA_ASSIGN_OR_RETURN(tree, CgroupTree::detect());
  // The v1 migration's grace period, paid on a helper thread while the run is prepared (plan,
  // registry, cgroup, clone, id maps) instead of by add_pid() after it. Joined after add_pid()
  // and on every way out.
  std::jthread primer;
  if (tree->version() == CgroupVersion::kV1)
    primer = std::jthread([&tree] { tree->prime_migration(); });
  std::vector<fs::path> forbidden = options.forbidden_paths;
  forbidden.push_back(options.state_dir);
  MountPlan plan;
  AURA_ASSIGN_OR_RETURN(plan,
                        plan_mounts(profile.lower_paths, packages, profile.tmpfs_bytes, forbidden));
  // The policy is the same for every run: built once per process, copied per run.
  static const Result<SeccompProgram> built = build_seccomp_program();
  if (!built.ok()) return built.status();
  SeccompProgram seccomp = *built;
  std::string run_id;
  AURA_ASSIGN_OR_RETURN(run_id, new_run_id());

  RunResult result;
  result.run_id = run_id;
  result.profile_digest = profile_digest(profile);

  const fs::path runs_dir = options.state_dir / "runs";
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(runs_dir, 0700));
  Registry registry(options.state_dir);
  RunGuard guard(*tree, registry, run_id);

  const fs::path stage = runs_dir / run_id;
  // Every name the run will make, recorded (in one append) before any is made.
  std::vector<Registry::Resource> names = {{ResourceKind::kDir, stage}};
  for (const fs::path& p : tree->paths(run_id)) names.push_back({ResourceKind::kCgroup, p});
  AURA_RETURN_IF_ERROR(registry.record(run_id, names));
  if (::mkdir(stage.c_str(), 0700) != 0)
    return Status::io("mkdir " + stage.string() + ": " + errno_text(errno));
  guard.set_stage(stage);
  guard.set_cgroup_made();
  AURA_RETURN_IF_ERROR(tree->create(run_id, {profile.cpu_quota_us, profile.cpu_period_us,
                                             profile.memory_bytes, profile.pids_max}));

  // argv and envp as C arrays, and every other string the child needs, before clone.
  std::vector<std::string> env = options.env;
  if (env.empty())
    env = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME=/root",
           "LANG=C.UTF-8"};
  std::vector<char*> c_argv, c_envp;
  for (const std::string& s : argv) c_argv.push_back(const_cast<char*>(s.c_str()));
  c_argv.push_back(nullptr);
  for (const std::string& s : env) c_envp.push_back(const_cast<char*>(s.c_str()));
  c_envp.push_back(nullptr);
  const std::string stage_data =
      "size=" + std::to_string(profile.tmpfs_bytes) + ",mode=0755,uid=0,gid=0";
  const std::string stage_path = stage.string();
  sock_fprog fprog = seccomp.fprog();

  Pipe sync, error, out, err;
  for (Pipe* p : {&sync, &error, &out, &err}) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return Status::io("pipe2: " + errno_text(errno));
    p->read = fds[0];
    p->write = fds[1];
  }
  for (int fd : {out.read, err.read}) {
    if (::fcntl(fd, F_SETFL, O_NONBLOCK) != 0)
      return Status::io("fcntl O_NONBLOCK: " + errno_text(errno));
  }
  // The error pipe sits above the fds the child arranges (0-3) so none overwrites it.
  if (const int high = ::fcntl(error.write, F_DUPFD_CLOEXEC, 10); high >= 0) {
    close_fd(error.write);
    error.write = high;
  } else {
    return Status::io("fcntl F_DUPFD_CLOEXEC: " + errno_text(errno));
  }
  if (options.pass_fd >= 0 && options.pass_fd < 3)
    return Status::invalid("sandbox: pass_fd must not be stdio");
  struct Closer {
    std::vector<int*> fds;
    ~Closer() {
      for (int* fd : fds) close_fd(*fd);
    }
  } closer{{&sync.read, &sync.write, &error.read, &error.write, &out.read, &out.write, &err.read,
            &err.write}};

  const ChildArgs args{&plan,
                       stage_path.c_str(),
                       stage_data.c_str(),
                       profile.hostname.c_str(),
                       profile.hostname.size(),
                       profile.capabilities,
                       &fprog,
                       sync.read,
                       error.write,
                       out.write,
                       err.write,
                       options.pass_fd,
                       c_argv.data(),
                       c_envp.data()};

  const uint64_t start_ns = monotonic_ns();
  const uint64_t deadline_ns = start_ns + profile.wall_deadline_ms * 1'000'000ull;
  const long pid = ::syscall(SYS_clone, SIGCHLD | kCloneNamespaces, nullptr, nullptr, nullptr, 0);
  if (pid == 0) child_main(args);
  if (pid < 0)
    return Status::unavailable(
        "sandbox: clone with user, mount, PID, network, IPC and UTS namespaces: " +
        errno_text(errno));
  guard.set_child(static_cast<pid_t>(pid));
  close_fd(sync.read);
  close_fd(error.write);
  close_fd(out.write);
  close_fd(err.write);

  AURA_RETURN_IF_ERROR(write_id_maps(static_cast<pid_t>(pid), profile.uid_base, profile.id_count));
  AURA_RETURN_IF_ERROR(tree->add_pid(run_id, static_cast<pid_t>(pid)));
  if (primer.joinable()) primer.join();
  if (::write(sync.write, "g", 1) != 1)
    return Status::io("sandbox: release child: " + errno_text(errno));
  close_fd(sync.write);

  const int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0));
  if (pidfd < 0) return Status::unavailable("sandbox: pidfd_open: " + errno_text(errno));
  file_io::Fd pidfd_guard(pidfd);

  // Setup: the error pipe yields one frame on failure, EOF once execve succeeded.
  bool setup_done = false;
  bool out_open = true, err_open = true, child_running = true;
  int wait_status = 0;
  struct rusage usage {};
  for (;;) {
    if (!child_running && !out_open && !err_open && setup_done) break;
    const uint64_t now = monotonic_ns();
    if (now >= deadline_ns) {
      if (child_running) result.killed_by_deadline = true;
      break;
    }
    struct pollfd fds[4];
    int n = 0;
    const int error_slot = !setup_done ? n : -1;
    if (!setup_done) fds[n++] = {error.read, POLLIN, 0};
    const int out_slot = out_open ? n : -1;
    if (out_open) fds[n++] = {out.read, POLLIN, 0};
    const int err_slot = err_open ? n : -1;
    if (err_open) fds[n++] = {err.read, POLLIN, 0};
    const int pid_slot = child_running ? n : -1;
    if (child_running) fds[n++] = {pidfd, POLLIN, 0};
    const int timeout_ms = static_cast<int>((deadline_ns - now + 999'999) / 1'000'000);
    if (::poll(fds, n, timeout_ms) < 0) {
      if (errno == EINTR) continue;
      return Status::io("sandbox: poll: " + errno_text(errno));
    }
    if (error_slot >= 0 && fds[error_slot].revents != 0) {
      ChildError e;
      const ssize_t got = ::read(error.read, &e, sizeof e);
      if (got == static_cast<ssize_t>(sizeof e)) {
        std::string what = step_name(static_cast<ChildStep>(e.step));
        if (e.step == static_cast<int32_t>(ChildStep::kMountPlan) && e.index >= 0 &&
            static_cast<size_t>(e.index) < plan.steps.size())
          what += ": " + plan.steps[static_cast<size_t>(e.index)].describe();
        Status destroyed = guard.destroy();
        if (e.step == static_cast<int32_t>(ChildStep::kExec))
          return Status::not_found("sandbox: execve " + argv[0] + ": " + errno_text(e.err));
        Status failed =
            Status::unavailable("sandbox setup failed at " + what + ": " + errno_text(e.err));
        if (!destroyed.is_ok()) return failed.with_context(destroyed.message());
        return failed;
      }
      setup_done = true;
    }
    if (out_slot >= 0 && fds[out_slot].revents != 0)
      out_open =
          drain(out.read, result.stdout_bytes, profile.output_cap_bytes, result.stdout_truncated);
    if (err_slot >= 0 && fds[err_slot].revents != 0)
      err_open =
          drain(err.read, result.stderr_bytes, profile.output_cap_bytes, result.stderr_truncated);
    if (pid_slot >= 0 && fds[pid_slot].revents != 0) {
      if (::wait4(static_cast<pid_t>(pid), &wait_status, WNOHANG, &usage) == pid) {
        child_running = false;
        guard.reaped();
        // PID 1 of the run has gone, so the kernel kills the rest of its namespace; whatever
        // still writes to the pipes is about to die, and the cgroup kill below makes sure.
      }
    }
  }

  // Deadline or done: nothing of the run survives this.
  int killed_status = 0;
  AURA_RETURN_IF_ERROR(guard.kill_and_reap(&killed_status, &usage));
  if (child_running) wait_status = killed_status;
  result.wall_ns = monotonic_ns() - start_ns;
  // Every process of the run is dead, so the pipes hold only what is already in them; one
  // non-blocking pass takes it (a descriptor smuggled out through pass_fd cannot stall us).
  if (out_open)
    drain(out.read, result.stdout_bytes, profile.output_cap_bytes, result.stdout_truncated);
  if (err_open)
    drain(err.read, result.stderr_bytes, profile.output_cap_bytes, result.stderr_truncated);
  if (!setup_done) {
    ChildError e;
    if (::read(error.read, &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
      [[maybe_unused]] Status s = guard.destroy();
      return Status::unavailable(std::string("sandbox setup failed at ") +
                                 step_name(static_cast<ChildStep>(e.step)) + ": " +
                                 errno_text(e.err));
    }
  }

  CgroupUsage cg;
  AURA_ASSIGN_OR_RETURN(cg, tree->usage(run_id));
  result.cpu_ns = cg.cpu_ns;
  result.peak_memory_bytes = cg.peak_memory_bytes;
  result.peak_memory_known = cg.peak_memory_known;
  result.oom_kills = cg.oom_kills;
  result.pids_limit_hits = cg.pids_limit_hits;
  if (WIFEXITED(wait_status)) {
    result.exited = true;
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (WIFSIGNALED(wait_status)) {
    result.term_signal = WTERMSIG(wait_status);
  }
  AURA_RETURN_IF_ERROR(guard.destroy());
  return result;
}

}  // namespace aura::sandbox
