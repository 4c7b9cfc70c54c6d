#include "workers/sandbox/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
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
#include "workers/sandbox/cgroup.h"
#include "workers/sandbox/leak_ledger.h"
#include "workers/sandbox/namespaces.h"
#include "workers/sandbox/ns_entry.h"
#include "workers/sandbox/seccomp_policy.h"

namespace aura::sandbox {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;

constexpr uint64_t kKillWaitMs = 5000;

// Everything the child touches, prepared before clone: the shared namespace-entry recipe
// (ns_entry.h) with the run's steps, then execve.
struct ChildArgs {
  EntryPlan entry;
  int error_fd;  // a failed step writes its EntryStatus here; close-on-exec closes it on success
  char* const* argv;
  char* const* envp;
};

// After clone: no allocation, no exceptions; each failure is one frame and _exit.
[[noreturn]] void child_main(const ChildArgs& a) {
  if (const EntryStatus s = run_entry(a.entry); !s.ok()) fail_entry(a.error_fd, s);
  ::execve(a.argv[0], a.argv, a.envp);
  fail_entry(a.error_fd, EntryStatus::failed(EntryStep::kExec, errno));
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
// and mark each released in the ledger only once it is gone.
class RunGuard {
 public:
  RunGuard(CgroupTree& tree, LeakLedger& ledger, std::string run_id)
      : tree_(tree), ledger_(ledger), run_id_(std::move(run_id)) {}
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
        std::vector<LeakLedger::Resource> gone;
        for (const fs::path& p : tree_.paths(run_id_)) gone.push_back({ResourceKind::kCgroup, p});
        status = ledger_.release(run_id_, gone);
      }
    }
    if (!stage_.empty()) {
      // The stage tmpfs lives only in the run's mount namespace, gone with its processes.
      if (::rmdir(stage_.c_str()) == 0 || errno == ENOENT) {
        Status r = ledger_.release(run_id_, ResourceKind::kDir, stage_);
        if (status.is_ok()) status = r;
      } else if (status.is_ok()) {
        status = Status::io("rmdir " + stage_.string() + ": " + errno_text(errno));
      }
    }
    return status;
  }

 private:
  CgroupTree& tree_;
  LeakLedger& ledger_;
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
  // ledger, cgroup, clone, id maps) instead of by add_pid() after it. Joined after add_pid()
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
  LeakLedger ledger(options.state_dir);
  RunGuard guard(*tree, ledger, run_id);

  const fs::path stage = runs_dir / run_id;
  // Every name the run will make, recorded (in one append) before any is made.
  std::vector<LeakLedger::Resource> names = {{ResourceKind::kDir, stage}};
  for (const fs::path& p : tree->paths(run_id)) names.push_back({ResourceKind::kCgroup, p});
  AURA_RETURN_IF_ERROR(ledger.record(run_id, names));
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

  // The run's steps: its own cgroup namespace and loopback, the command's stdio and passed
  // descriptor, the error pipe kept until execve, no core dumps, the profile's capabilities and
  // the seccomp filter last.
  EntryPlan entry;
  entry.sync_fd = sync.read;
  entry.new_cgroup_namespace = true;
  entry.stage = stage_path.c_str();
  entry.stage_data = stage_data.c_str();
  entry.mounts = &plan;
  entry.hostname = profile.hostname.c_str();
  entry.hostname_len = profile.hostname.size();
  entry.loopback = true;
  entry.stdout_fd = out.write;
  entry.stderr_fd = err.write;
  entry.pass_fd = options.pass_fd;
  entry.keep_fd = error.write;
  entry.no_core_dumps = true;
  entry.confine = true;
  entry.linux_caps = profile.linux_caps;
  entry.seccomp = &fprog;
  const ChildArgs args{entry, error.write, c_argv.data(), c_envp.data()};

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
      EntryStatus e;
      const ssize_t got = ::read(error.read, &e, sizeof e);
      if (got == static_cast<ssize_t>(sizeof e)) {
        Status destroyed = guard.destroy();
        if (e.step == EntryStep::kExec)
          return Status::not_found("sandbox: execve " + argv[0] + ": " + errno_text(e.err));
        Status failed = Status::unavailable("sandbox setup failed at " + describe(e, &plan));
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
    EntryStatus e;
    if (::read(error.read, &e, sizeof e) == static_cast<ssize_t>(sizeof e)) {
      [[maybe_unused]] Status s = guard.destroy();
      return Status::unavailable("sandbox setup failed at " + describe(e, &plan));
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
