// The runner's seccomp policy: an allowlist built with libseccomp in the supervisor and
// exported as a classic BPF program, so the child only has to install it (no allocation after
// clone). docs/SANDBOX.md lists every denied call and why.
#pragma once

#include <linux/filter.h>

#include <string>
#include <vector>

#include "engine/common/status.h"

namespace aura::sandbox {

// Bumped whenever the policy changes; part of the profile digest.
inline constexpr int kSeccompPolicyVersion = 2;

// Syscalls refused with EPERM (named for the docs and tests).
const std::vector<std::string>& seccomp_denied_syscalls();
// Syscalls allowed whatever their arguments.
std::vector<std::string> seccomp_allowed_syscalls();
// Syscalls decided by their arguments (socket, clone; personality is on the denied list, its
// query allowed) or made neutral (sync,
// syncfs: succeed, do nothing).
const std::vector<std::string>& seccomp_conditional_syscalls();
// Syscalls left on no list on purpose: they get the default ENOSYS (docs/SANDBOX.md says why for
// each). Together the four lists name every x86_64 call libseccomp knows (tested), so a call a
// newer kernel adds is a decision, not an accident.
const std::vector<std::string>& seccomp_unlisted_syscalls();

struct SeccompProgram {
  std::vector<sock_filter> instructions;
  sock_fprog fprog() {
    return {static_cast<unsigned short>(instructions.size()), instructions.data()};
  }
};

// Builds the program for this machine's native architecture: allowlisted calls pass, the denied
// ones fail with EPERM, clone with any CLONE_NEW* flag fails with EPERM, clone3 fails with ENOSYS
// (its flags are out of reach of a filter; libc then falls back to clone), anything else fails
// with ENOSYS, and a call from any other architecture (x32, i386) kills the process.
// kUnavailable if libseccomp cannot build or export it.
Result<SeccompProgram> build_seccomp_program();

}  // namespace aura::sandbox
