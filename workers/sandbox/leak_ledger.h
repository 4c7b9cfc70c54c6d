// The leak ledger: every host-visible name a sandbox run or world creates (cgroup folders,
// stage folders, network namespaces, uid ranges) is written here before it is made and marked
// released after it is gone, so a later supervisor can reap what a dead one left. One
// append-only text file per state folder, locked with flock, kept in the machine's run folder
// (run_dir(), not inside the data folder): what a killed process left is reapable even after
// its data folder is gone.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace aura::sandbox {

// kNetns: a named network namespace (its /run/netns bind mount) of a world network.
enum class ResourceKind { kCgroup, kDir, kNetns };

// What is known of the process an owner token names. kDead only when it is certain: no process
// has its pid, the one that has it started at another time (the pid was reused), or it is a
// zombie. kUnknown when /proc could not be read for another reason or the token is not
// "<pid>.<start time>". Every lab on the machine is taken to share one PID namespace.
enum class OwnerState { kAlive, kDead, kUnknown };

struct LedgerEntry {
  std::string owner;  // "<pid>.<start time in ticks>" of the process that created it
  std::string run_id;
  ResourceKind kind = ResourceKind::kDir;
  std::filesystem::path path;
  bool released = false;
};

// The machine-wide folder of ledgers and uid-range slots: $AURA_RUN_DIR, else /run/aura
// (a tmpfs: the kernel objects it names do not survive a reboot either).
std::filesystem::path run_dir();

// Thread-safe and multi-process safe (each call takes the file's flock).
class LeakLedger {
 public:
  // The ledger of state folder `state_dir` (made absolute): run_dir()/ledger/<key>, the key
  // a digest of the folder's path; the file's first line names the folder. Entries are recorded
  // as owned by `owner` ("<pid>.<start time>", see self_owner()), this process when empty.
  explicit LeakLedger(std::filesystem::path state_dir, std::string owner = {});

  struct Resource {
    ResourceKind kind;
    std::filesystem::path path;
  };

  // Records that this process is about to create `path` for `run_id`. Makes the state folder
  // first if it is missing (never its parents): no name is recorded for a folder that does not
  // exist, so a missing folder always means a removed one (reap_orphans()). Refuses an owner
  // token without a start time.
  Status record(const std::string& run_id, ResourceKind kind, const std::filesystem::path& path);
  // Records several at once (one append, one lock).
  Status record(const std::string& run_id, const std::vector<Resource>& resources);
  // Records that `path` of `run_id` is gone.
  Status release(const std::string& run_id, ResourceKind kind, const std::filesystem::path& path);
  Status release(const std::string& run_id, const std::vector<Resource>& resources);

  // Every entry ever recorded since the last compaction, with `released` folded in.
  Result<std::vector<LedgerEntry>> entries() const;

  const std::filesystem::path& file() const { return file_; }
  const std::filesystem::path& state_dir() const { return state_dir_; }

  // This process's owner token.
  static std::string self_owner();
  // Whether the process named by `owner` still runs (same pid and start time).
  static bool owner_alive(const std::string& owner);
  // Alive, provably dead, or not known (see OwnerState). A reap takes only kDead owners' names.
  static OwnerState owner_state(const std::string& owner);

 private:
  Status append(const std::string& line);
  std::filesystem::path state_dir_;
  std::filesystem::path file_;
  std::string owner_;
};

// Owner token of process `pid` ("<pid>.<start time>"), empty if it is gone.
std::string owner_of(pid_t pid);

// Claims a uid/gid range of its own for `run_id`: a slot folder run_dir()/ids/<k> made with mkdir
// (atomic across processes, and across labs on one machine), then recorded in `ledger` (so a
// reaped run frees it; a crash between the two leaks a slot, never steals one). Returns the range's
// first id, kIdRangeBase + k * kIdRangeSize. kBusy when every slot is taken.
inline constexpr uint32_t kIdRangeBase = 1'000'000;
inline constexpr uint32_t kIdRangeSize = 65'536;
inline constexpr uint32_t kIdRangeSlots = 1024;
Result<uint32_t> claim_id_range(LeakLedger& ledger, const std::string& run_id);
// Frees a range claim_id_range() returned.
Status release_id_range(LeakLedger& ledger, const std::string& run_id, uint32_t base);

struct ReapReport {
  int runs_reaped = 0;
  int paths_removed = 0;
  std::vector<std::string> failures;  // what could not be removed, and why
};

// Removes everything a dead earlier process left under `state_dir`: kills each leftover run's
// processes through its cgroup, removes its cgroup folders and stage folder, marks them released
// and compacts the ledger. Only names of a provably dead owner (OwnerState::kDead) are taken;
// entries of live owners, and of owners whose state /proc could not tell, are left alone. Fails
// only if the ledger cannot be read or rewritten; per-path failures are listed in the report.
Result<ReapReport> reap(const std::filesystem::path& state_dir);

// Removes every name recorded under `owner`, alive or not: a world's holder tearing down the
// world it holds when the process that made it is gone.
Result<ReapReport> reap_owner(const std::filesystem::path& state_dir, const std::string& owner);

// reap() for every ledger in run_dir(), of any lab on the machine: names whose owner is dead
// are removed even when their data folder is still there (a test or judge SIGKILLed together with
// its worlds' holders leaves its temporary folder and names that no one would reopen). Where the
// state folder is gone -- removed after the entries read were recorded, since record() makes it
// first -- live world holders of it are ended first (nothing can reopen their worlds; any other
// live owner is left alone), and the ledger is removed once nothing is left in it.
Result<ReapReport> reap_orphans();

}  // namespace aura::sandbox
