// The front's privilege drop, as a recipe of small steps run in order, each returning a status
// (docs/SERVE.md, "Privileges"): while root, the bounding set and ambient capabilities are
// dropped; then supplementary groups, gid and uid go to the front's user; every remaining
// capability is cleared; no_new_privs is set; a seccomp denylist is installed. Afterwards the
// front proves it cannot open the data and keys folders, or refuses to serve.
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace aura::serve {

struct UserIds {
  uid_t uid = 0;
  gid_t gid = 0;
};

// The front's user. kNotFound naming `aura setup` (which creates it) when there is none;
// root is refused.
Result<UserIds> lookup_front_user(const std::string& name);

// The system calls the front's filter refuses with EPERM (named for the docs and tests).
const std::vector<std::string>& front_denied_syscalls();

// The recipe. REQUIRES: called while the process has one thread (uid changes and the filter
// then hold for every thread started later), as root or as `user` itself (then the uid steps
// are skipped: capabilities are cleared, no_new_privs set and the filter installed).
Status drop_privileges(const UserIds& user);

// Fails closed: an error when this process can open any of `folders` (it must not, after the
// drop), naming the folder and then `remedy`. A folder that does not exist cannot be opened
// either.
Status check_cannot_open(const std::vector<std::filesystem::path>& folders,
                         std::string_view remedy);

// Before the drop, as root, while the process has one thread: the process moves to a mount
// namespace of its own in which each of `folders` that exists is covered by an empty,
// read-only tmpfs of mode 000, and its working folder becomes /. The front's user then reads
// nothing under them whatever their modes (scenario packages hold the answers and every
// variant's hidden layout; a source checkout leaves them world-readable). Processes started
// before (the daemon) keep the machine's view; the filter denies mount and umount after.
Status hide_folders(const std::vector<std::filesystem::path>& folders);

}  // namespace aura::serve
