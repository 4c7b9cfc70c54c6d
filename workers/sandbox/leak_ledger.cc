#include "workers/sandbox/leak_ledger.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <charconv>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>

#include "engine/common/file_io.h"
#include "engine/crypto/sha256.h"
#include "workers/sandbox/cgroup.h"

namespace aura::sandbox {
namespace {

namespace fs = std::filesystem;
using file_io::errno_text;

constexpr std::string_view kHeader = "# state_dir ";
constexpr uint64_t kReapKillTimeoutMs = 5000;

const char* kind_name(ResourceKind k) {
  switch (k) {
    case ResourceKind::kCgroup:
      return "cgroup";
    case ResourceKind::kNetns:
      return "netns";
    case ResourceKind::kDir:
      break;
  }
  return "dir";
}

// Holds the ledger file's exclusive flock for its lifetime. A file a reap unlinked while this
// process waited for the lock (an emptied ledger of a gone folder) is opened again: what is
// appended then lands in the file every later reader opens, never in an unlinked one. Without
// `create`, a missing file is missing() (nothing recorded), and no file is made.
class Locked {
 public:
  Locked(const fs::path& file, bool create) {
    for (;;) {
      fd_ = ::open(file.c_str(), O_RDWR | O_APPEND | O_CLOEXEC | (create ? O_CREAT : 0), 0600);
      if (fd_ < 0) {
        missing_ = errno == ENOENT && !create;
        return;
      }
      int rc;
      while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
      }
      struct stat st {};
      if (rc == 0 && ::fstat(fd_, &st) == 0 && st.st_nlink > 0) return;
      const int err = errno;
      ::close(fd_);
      fd_ = -1;
      if (rc != 0) {
        errno = err;
        return;
      }
    }
  }
  ~Locked() {
    if (fd_ >= 0) ::close(fd_);
  }
  Locked(const Locked&) = delete;
  Locked& operator=(const Locked&) = delete;
  int fd() const { return fd_; }
  bool missing() const { return missing_; }

 private:
  int fd_ = -1;
  bool missing_ = false;
};

// What /proc says of process `pid`: kAlive with its start time (clock ticks after boot), kDead
// when no process has the pid or the one that has it is a zombie or dying (it holds nothing any
// more, whoever is late to reap it), kUnknown when /proc could not be read for another reason
// (no descriptor or memory left) or did not parse.
struct ProcStart {
  OwnerState state = OwnerState::kUnknown;
  std::string ticks;
};

ProcStart proc_start(pid_t pid) {
  if (pid <= 0) return {};
  const std::string path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {errno == ENOENT || errno == ESRCH ? OwnerState::kDead : OwnerState::kUnknown};
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) < 0 && errno == EINTR) {
  }
  const int err = errno;
  ::close(fd);
  if (n < 0) return {err == ESRCH ? OwnerState::kDead : OwnerState::kUnknown};
  const std::string text(buf, size_t(n));
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 > text.size()) return {};
  std::istringstream rest(text.substr(close + 2));
  std::string field;
  // Fields after "(comm)": state is field 3; starttime is field 22.
  for (int i = 3; i <= 22 && rest >> field; ++i) {
    if (i == 3 && (field == "Z" || field == "X")) return {OwnerState::kDead};
    if (i == 22) return {OwnerState::kAlive, field};
  }
  return {};
}

std::string start_time_of(pid_t pid) {
  ProcStart p = proc_start(pid);
  return p.state == OwnerState::kAlive ? p.ticks : std::string();
}

// The pid of an owner token "<pid>.<start time>" (both decimal), 0 when it is not one.
pid_t owner_pid(const std::string& owner) {
  const size_t dot = owner.find('.');
  if (dot == std::string::npos || dot + 1 == owner.size()) return 0;
  pid_t pid = 0;
  const auto parsed = std::from_chars(owner.data(), owner.data() + dot, pid);
  if (parsed.ec != std::errc() || parsed.ptr != owner.data() + dot || pid <= 0) return 0;
  for (size_t i = dot + 1; i < owner.size(); ++i)
    if (owner[i] < '0' || owner[i] > '9') return 0;
  return pid;
}

Result<std::vector<LedgerEntry>> parse(const std::string& text) {
  std::vector<LedgerEntry> out;
  std::map<std::string, size_t> live;  // key → index in out
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    std::string op, owner, run_id, kind, path;
    f >> op;
    if (op == "+") {
      f >> owner >> run_id >> kind;
    } else if (op == "-") {
      f >> run_id >> kind;
    } else {
      continue;
    }
    std::getline(f >> std::ws, path);
    if (run_id.empty() || path.empty()) return Status::corruption("ledger line: " + line);
    const std::string key = run_id + " " + kind + " " + path;
    if (op == "+") {
      LedgerEntry e;
      e.owner = owner;
      e.run_id = run_id;
      e.kind = kind == "cgroup"  ? ResourceKind::kCgroup
               : kind == "netns" ? ResourceKind::kNetns
                                 : ResourceKind::kDir;
      e.path = path;
      live[key] = out.size();
      out.push_back(std::move(e));
    } else if (auto it = live.find(key); it != live.end()) {
      out[it->second].released = true;
      live.erase(it);
    }
  }
  return out;
}

Result<std::string> read_all(int fd) {
  std::string text;
  char buf[8192];
  off_t off = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0) return Status::io("read ledger: " + errno_text(errno));
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    off += n;
  }
  return text;
}

fs::path ledger_file_of(const fs::path& state_dir) {
  const Digest d = sha256(state_dir.string());
  return run_dir() / "ledger" / to_hex(std::span<const uint8_t>(d.data(), 16));
}

}  // namespace

fs::path run_dir() {
  const char* env = std::getenv("AURA_RUN_DIR");
  return env != nullptr && *env == '/' ? fs::path(env) : fs::path("/run/aura");
}

LeakLedger::LeakLedger(fs::path state_dir, std::string owner)
    : state_dir_(fs::absolute(state_dir)),
      file_(ledger_file_of(state_dir_)),
      owner_(std::move(owner)) {}

std::string LeakLedger::self_owner() {
  return std::to_string(::getpid()) + "." + start_time_of(::getpid());
}

OwnerState LeakLedger::owner_state(const std::string& owner) {
  const pid_t pid = owner_pid(owner);
  if (pid == 0) return OwnerState::kUnknown;
  const ProcStart p = proc_start(pid);
  if (p.state != OwnerState::kAlive) return p.state;
  return p.ticks == owner.substr(owner.find('.') + 1) ? OwnerState::kAlive : OwnerState::kDead;
}

bool LeakLedger::owner_alive(const std::string& owner) {
  return owner_state(owner) == OwnerState::kAlive;
}

Status LeakLedger::append(const std::string& line) {
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(run_dir(), 0700));
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(file_.parent_path(), 0700));
  Locked lock(file_, true);
  if (lock.fd() < 0) return Status::io("open " + file_.string() + ": " + errno_text(errno));
  struct stat st {};
  const std::string text = ::fstat(lock.fd(), &st) == 0 && st.st_size == 0
                               ? std::string(kHeader) + state_dir_.string() + "\n" + line
                               : line;
  const ssize_t n = ::write(lock.fd(), text.data(), text.size());
  if (n != static_cast<ssize_t>(text.size()))
    return Status::io("append to " + file_.string() + ": " + errno_text(errno));
  return Status::ok();
}

Status LeakLedger::record(const std::string& run_id, ResourceKind kind, const fs::path& path) {
  return record(run_id, {{kind, path}});
}

Status LeakLedger::record(const std::string& run_id, const std::vector<Resource>& resources) {
  const std::string owner = owner_.empty() ? self_owner() : owner_;
  // A name no reap could ever prove dead is never made.
  if (owner_pid(owner) == 0)
    return Status::io("record in " + file_.string() + ": no owner token (\"" + owner +
                      "\"): this process's start time could not be read from /proc");
  // The state folder exists before any name is recorded under it (made here, never its parents:
  // a lab whose data folder is gone records nothing). So a ledger whose folder is missing
  // names only what a removed folder's lab left, never a lab that has not made its folder yet:
  // reap_orphans() ends live holders on that ground alone.
  if (::mkdir(state_dir_.c_str(), 0755) != 0 && errno != EEXIST)
    return Status::io("mkdir " + state_dir_.string() + ": " + errno_text(errno));
  std::string lines;
  for (const Resource& r : resources)
    lines += "+ " + owner + " " + run_id + " " + kind_name(r.kind) + " " + r.path.string() + "\n";
  return append(lines);
}

Status LeakLedger::release(const std::string& run_id, ResourceKind kind, const fs::path& path) {
  return release(run_id, {{kind, path}});
}

Status LeakLedger::release(const std::string& run_id, const std::vector<Resource>& resources) {
  std::string lines;
  for (const Resource& r : resources)
    lines += "- " + run_id + " " + kind_name(r.kind) + " " + r.path.string() + "\n";
  return append(lines);
}

Result<std::vector<LedgerEntry>> LeakLedger::entries() const {
  Locked lock(file_, false);
  if (lock.missing()) return std::vector<LedgerEntry>{};
  if (lock.fd() < 0) return Status::io("open " + file_.string() + ": " + errno_text(errno));
  auto text = read_all(lock.fd());
  if (!text.ok()) return text.status();
  return parse(*text);
}

namespace {

// Reaps the entries `doomed` picks in ledger `file`, then compacts it (released entries go;
// with `drop_empty`, an emptied file goes). With `leave_if_none`, a file with nothing to reap is
// left exactly as it is: another lab's ledger is compacted only by that lab, or when a dead
// owner's names had to go.
Result<ReapReport> reap_file(const fs::path& file,
                             const std::function<bool(const LedgerEntry&)>& doomed, bool drop_empty,
                             bool leave_if_none = false) {
  ReapReport report;
  Locked lock(file, false);
  if (lock.missing()) return report;
  if (lock.fd() < 0) return Status::io("open " + file.string() + ": " + errno_text(errno));
  auto text = read_all(lock.fd());
  if (!text.ok()) return text.status();
  auto parsed = parse(*text);
  if (!parsed.ok()) return parsed.status();
  const std::string header =
      text->starts_with(kHeader) ? text->substr(0, text->find('\n') + 1) : "";

  // The runs to reap, cgroups first (their processes die before folders go).
  std::map<std::string, std::vector<LedgerEntry*>> runs;
  for (LedgerEntry& e : *parsed) {
    if (!e.released && doomed(e)) runs[e.run_id].push_back(&e);
  }
  if (runs.empty() && leave_if_none) return report;
  auto tree = CgroupTree::detect();
  for (auto& [run_id, entries] : runs) {
    ++report.runs_reaped;
    // The whole run at once (freezer first on v1), then each folder by path.
    if (tree.ok()) {
      Status killed = (*tree)->kill_all(run_id, kReapKillTimeoutMs);
      if (!killed.is_ok()) report.failures.push_back(run_id + ": " + killed.message());
    }
    for (int pass = 0; pass < 2; ++pass) {
      const ResourceKind want = pass == 0 ? ResourceKind::kCgroup : ResourceKind::kDir;
      for (LedgerEntry* e : entries) {
        // Network namespaces go with the folders, after the processes.
        if (e->kind != want && !(want == ResourceKind::kDir && e->kind == ResourceKind::kNetns))
          continue;
        Status s;
        if (want == ResourceKind::kCgroup) {
          s = kill_and_remove_group_path(e->path, kReapKillTimeoutMs);
        } else if (e->kind == ResourceKind::kNetns) {
          // As `ip netns delete`: detach the name's bind mount, then remove the name.
          ::umount2(e->path.c_str(), MNT_DETACH);
          if (::unlink(e->path.c_str()) != 0 && errno != ENOENT)
            s = Status::io("unlink " + e->path.string() + ": " + errno_text(errno));
        } else {
          ::umount2(e->path.c_str(), MNT_DETACH);  // only if something left it mounted here
          if (::rmdir(e->path.c_str()) != 0 && errno != ENOENT)
            s = Status::io("rmdir " + e->path.string() + ": " + errno_text(errno));
        }
        if (s.is_ok()) {
          e->released = true;
          ++report.paths_removed;
        } else {
          report.failures.push_back(run_id + ": " + s.message());
        }
      }
    }
  }

  // Compact: keep only entries still live (their owners run, or reaping them failed).
  std::string kept;
  for (const LedgerEntry& e : *parsed) {
    if (e.released) continue;
    kept +=
        "+ " + e.owner + " " + e.run_id + " " + kind_name(e.kind) + " " + e.path.string() + "\n";
  }
  if (kept.empty() && drop_empty) {
    if (::unlink(file.c_str()) != 0 && errno != ENOENT)
      return Status::io("remove " + file.string() + ": " + errno_text(errno));
    return report;
  }
  kept.insert(0, header);
  if (::ftruncate(lock.fd(), 0) != 0)
    return Status::io("truncate " + file.string() + ": " + errno_text(errno));
  if (!kept.empty() &&
      ::write(lock.fd(), kept.data(), kept.size()) != static_cast<ssize_t>(kept.size()))
    return Status::io("rewrite " + file.string() + ": " + errno_text(errno));
  if (::fsync(lock.fd()) != 0)
    return Status::io("fsync " + file.string() + ": " + errno_text(errno));
  return report;
}

// A reap takes only what is provably dead (docs/WORLDS.md, "What a reap may take"): an owner
// whose liveness /proc could not tell is left for a later reap.
bool dead_owner(const LedgerEntry& e) {
  return LeakLedger::owner_state(e.owner) == OwnerState::kDead;
}

// SIGKILLs the process `owner` names ("pid.starttime") if it is still that process and it is a
// world holder of `state_dir` (its command line is "aura-holder <state_dir>"), and waits up to a
// second for it to be gone (a zombie counts as gone). Any other live owner (a command still
// running, this very process) is left alone: its names are reaped once it is dead. The signal
// goes through a pidfd taken before the checks, so a reused pid is never signalled.
void end_holder(const std::string& owner, const fs::path& state_dir) {
  const pid_t pid = owner_pid(owner);
  if (pid <= 1 || pid == ::getpid()) return;
  const int pidfd = int(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return;
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline");
  const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string holder_of = std::string("aura-holder") + '\0' + state_dir.string() + '\0';
  if (cmdline == holder_of && LeakLedger::owner_alive(owner) &&
      ::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) == 0) {
    for (int i = 0; i < 100 && LeakLedger::owner_alive(owner); ++i) ::usleep(10'000);
  }
  ::close(pidfd);
}

void add(ReapReport& into, const ReapReport& r) {
  into.runs_reaped += r.runs_reaped;
  into.paths_removed += r.paths_removed;
  into.failures.insert(into.failures.end(), r.failures.begin(), r.failures.end());
}

}  // namespace

Result<ReapReport> reap(const fs::path& state_dir) {
  const LeakLedger ledger(state_dir);
  return reap_file(ledger.file(), dead_owner, !fs::exists(ledger.state_dir()));
}

Result<ReapReport> reap_owner(const fs::path& state_dir, const std::string& owner) {
  const LeakLedger ledger(state_dir);
  return reap_file(
      ledger.file(), [&](const LedgerEntry& e) { return e.owner == owner; },
      !fs::exists(ledger.state_dir()));
}

Result<ReapReport> reap_orphans() {
  ReapReport report;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(run_dir() / "ledger", ec)) {
    // The folder a ledger belongs to is named on its first line.
    std::ifstream in(entry.path());
    std::string first;
    std::getline(in, first);
    if (!first.starts_with(kHeader)) continue;
    const fs::path state_dir = first.substr(kHeader.size());
    // The entries first, the folder second. Every entry was recorded after its folder was made
    // (LeakLedger::record makes it), so a folder missing now was removed after the entries read:
    // their worlds can never be reopened, and a live holder of one (a persisted world's, which
    // ends itself within seconds of noticing) is ended now. Read the other way round, a lab
    // that made its folder and recorded its first world between the two looked orphaned.
    auto entries = LeakLedger(state_dir).entries();
    std::error_code gone_ec;
    const bool folder_gone = !fs::exists(state_dir, gone_ec) && !gone_ec;
    if (entries.ok() && folder_gone) {
      for (const LedgerEntry& e : *entries)
        if (!e.released) end_holder(e.owner, state_dir);
    }
    // A dead owner's names are debris whether or not its data folder is still there (a run
    // killed with everything it started, its temporary folder left behind): the lab's own reap
    // would remove the same names, but that lab may never be opened again.
    auto r = reap_file(entry.path(), dead_owner, folder_gone, !folder_gone);
    if (!r.ok()) return r.status().with_context(entry.path().string());
    add(report, *r);
  }
  return report;
}

std::string owner_of(pid_t pid) {
  const std::string started = start_time_of(pid);
  return started.empty() ? std::string() : std::to_string(pid) + "." + started;
}

Result<uint32_t> claim_id_range(LeakLedger& ledger, const std::string& run_id) {
  const fs::path dir = run_dir() / "ids";
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(run_dir(), 0700));
  AURA_RETURN_IF_ERROR(file_io::ensure_dir(dir, 0700));
  // Start at a slot derived from the pid so concurrent claimers rarely collide.
  const uint32_t start = uint32_t(::getpid()) % kIdRangeSlots;
  for (uint32_t i = 0; i < kIdRangeSlots; ++i) {
    const uint32_t k = (start + i) % kIdRangeSlots;
    const fs::path slot = dir / std::to_string(k);
    if (::mkdir(slot.c_str(), 0700) != 0) {
      if (errno == EEXIST) continue;
      return Status::io("mkdir " + slot.string() + ": " + errno_text(errno));
    }
    if (Status s = ledger.record(run_id, ResourceKind::kDir, slot); !s.is_ok()) {
      ::rmdir(slot.c_str());
      return s;
    }
    return kIdRangeBase + k * kIdRangeSize;
  }
  return Status::busy("every one of the " + std::to_string(kIdRangeSlots) + " uid ranges under " +
                      dir.string() + " is taken");
}

Status release_id_range(LeakLedger& ledger, const std::string& run_id, uint32_t base) {
  if (base < kIdRangeBase || (base - kIdRangeBase) % kIdRangeSize != 0 ||
      (base - kIdRangeBase) / kIdRangeSize >= kIdRangeSlots) {
    return Status::invalid("not a claimed id range: " + std::to_string(base));
  }
  const fs::path slot = run_dir() / "ids" / std::to_string((base - kIdRangeBase) / kIdRangeSize);
  if (::rmdir(slot.c_str()) != 0 && errno != ENOENT)
    return Status::io("rmdir " + slot.string() + ": " + errno_text(errno));
  return ledger.release(run_id, ResourceKind::kDir, slot);
}

}  // namespace aura::sandbox
