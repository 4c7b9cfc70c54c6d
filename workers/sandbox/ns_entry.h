// The one recipe that turns a freshly cloned process (new user, mount, PID, ... namespaces) into
// a confined one on its own root: shared by the runner sandbox's child (sandbox.cc) and a world
// node's init (nsworld/node.cc), which choose their steps through EntryPlan. Each step is a named
// mechanism that returns an EntryStatus; after clone nothing here allocates or throws.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "workers/sandbox/mounts.h"

namespace aura::sandbox {

// Every step of the recipe, in the order run_entry() takes them. The numbers are what a child
// writes to its parent, so they only ever grow.
enum class EntryStep : int32_t {
  kNone = 0,           // no failure
  kSync,               // wait for the supervisor's go (id maps written, moved into its cgroup)
  kCgroupNamespace,    // unshare(CLONE_NEWCGROUP): its cgroup becomes the namespace's root
  kPrivateRoot,        // MS_REC | MS_PRIVATE on /: nothing propagates back to the host
  kStageTmpfs,         // the stage tmpfs (root and overlay uppers), still as the host's uid 0
  kChdirStage,         // enter the stage: every mount plan path is relative to it
  kBecomeRoot,         // setresgid/setresuid(0) inside the user namespace
  kParentDeathSignal,  // PR_SET_PDEATHSIG SIGKILL (after the uid change, which clears it)
  kMountPlan,          // carry out the mount plan (EntryStatus::index names the plan step)
  kPivotRoot,          // pivot_root(".", ".") in the stage's root
  kDetachOldRoot,      // umount2(MNT_DETACH) of the old root, chdir("/")
  kHostname,           // sethostname
  kLoopback,           // lo up in a network namespace of its own
  kSetsid,             // a session of its own: no controlling terminal
  kStdio,              // stdin /dev/null, stdout and stderr, the passed descriptor as fd 3
  kCloseFds,           // close every other descriptor
  kCoreLimit,          // RLIMIT_CORE 0 (soft and hard): no core dump handler runs for it
  kLinuxCaps,          // cut Linux capabilities to the kept set, PR_SET_NO_NEW_PRIVS
  kSeccomp,            // install the seccomp filter (last: nothing above runs under it)
  kExec,               // execve (the caller's, after the recipe)
  kSendLayers,         // hand the stage and the root (O_PATH) to the host over a socket
};

// What a step names in a message ("build the root", "pivot_root").
const char* entry_step_name(EntryStep step);

// A step's outcome: ok, or the step that failed with its errno (and, for kMountPlan, the index of
// the plan step). Plain bytes: a child writes it whole to its parent's error pipe.
struct [[nodiscard]] EntryStatus {
  EntryStep step = EntryStep::kNone;
  int32_t index = -1;
  int32_t err = 0;

  bool ok() const { return step == EntryStep::kNone; }
  static EntryStatus failed(EntryStep step, int err, int index = -1) {
    return {step, int32_t(index), int32_t(err)};
  }
};
static_assert(sizeof(EntryStatus) == 12, "EntryStatus is the child's error frame");

// Parent side: "<step>: <errno text>", with the plan step for kMountPlan ("build the root: mount
// overlay at root/usr (...): Permission denied"). `plan` may be null.
std::string describe(const EntryStatus& s, const MountPlan* plan);

// What a caller's recipe does, prepared before clone (strings and the plan stay alive and
// unchanged until the child has exec'd or failed). A step whose option is off is skipped.
struct EntryPlan {
  int sync_fd = -1;                   // kSync: read one byte; -1 skips the wait
  bool new_cgroup_namespace = false;  // kCgroupNamespace
  const char* stage = nullptr;        // required: host folder the stage tmpfs goes on
  const char* stage_data = nullptr;   // its mount options (size, mode, uid, gid)
  bool parent_death_signal = false;   // kParentDeathSignal
  const MountPlan* mounts = nullptr;  // required: builds "root" inside the stage
  // kSendLayers, right after the root is built (before pivot_root hides the stage): a Unix
  // socket the stage folder (O_PATH) and a clone of the root's mount alone (open_tree: no mount
  // on it) are sent over (SCM_RIGHTS, in that order), then closed; -1 skips the step. The host
  // reads a node's writable layers through them, never through the node's own view
  // (nsworld::Node::layers).
  int layers_fd = -1;
  const char* hostname = nullptr;  // required
  size_t hostname_len = 0;
  bool loopback = false;  // kLoopback: the process has a network namespace of its own
  int stdout_fd = -1;     // kStdio: descriptors for 1 and 2; -1: /dev/null
  int stderr_fd = -1;
  int pass_fd = -1;  // becomes fd 3 (kStdio), or -1
  // kCloseFds keeps this one open as well (an error pipe above the stdio range, close-on-exec,
  // so it closes at execve); -1: every descriptor above stdio and fd 3 is closed.
  int keep_fd = -1;
  bool no_core_dumps = false;  // kCoreLimit
  bool confine = false;        // kLinuxCaps and kSeccomp
  uint64_t linux_caps = 0;     // the bits kept (bit n = CAP n)
  const sock_fprog* seccomp = nullptr;
};

// The recipe: runs the plan's steps in EntryStep order and returns the first failure. The
// process is left on the new root as the namespace's root, umask 022, ready to execve (or, a
// node's init, to reap). REQUIRES: in the child of a clone with the plan's namespaces, single-
// threaded; no allocation.
EntryStatus run_entry(const EntryPlan& plan);

// The steps, for callers that enter a namespace some other way (Node::exec joins a node's) and
// need only a few of them. Each allocates nothing.
EntryStatus wait_for_go(int sync_fd);
EntryStatus unshare_cgroup_namespace();
EntryStatus make_mounts_private();
EntryStatus mount_stage(const char* stage, const char* stage_data);  // and enter it
EntryStatus become_root();
EntryStatus set_parent_death_signal();
EntryStatus build_root(const MountPlan& plan);  // under umask 0, so the plan's modes are exact
EntryStatus send_layers(int socket_fd);         // kSendLayers (and closes socket_fd)
EntryStatus pivot_into_root();                  // and detach the old root
EntryStatus set_hostname(const char* name, size_t len);
EntryStatus loopback_up();
EntryStatus new_session();
// stdin from /dev/null, `stdout_fd` and `stderr_fd` (-1: /dev/null) as 1 and 2, `pass_fd` (-1:
// none) as 3, each without close-on-exec.
EntryStatus set_stdio(int stdout_fd, int stderr_fd, int pass_fd);
// Closes every descriptor from `first` up but `keep_fd` (-1: none; must be above `first`).
EntryStatus close_fds(unsigned first, int keep_fd);
EntryStatus no_core_dumps();
// Cuts Linux capabilities to `keep` and sets no_new_privs (linux_caps.h), then installs `seccomp`.
EntryStatus confine(uint64_t keep, const sock_fprog* seccomp);

// Writes `s` to `error_fd` and _exit(127)s: a child's way out of a failed step.
[[noreturn]] void fail_entry(int error_fd, const EntryStatus& s);

}  // namespace aura::sandbox
