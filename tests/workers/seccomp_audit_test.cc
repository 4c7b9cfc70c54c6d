// The seccomp policy against the syscall table: every x86_64 call libseccomp knows is on exactly
// one of the policy's lists (allowed, denied, decided by its arguments, or left to ENOSYS on
// purpose), so a call a newer kernel adds is a decision someone made. The lists are what
// docs/SANDBOX.md documents.
#include <doctest/doctest.h>
#include <seccomp.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <string>

#include "workers/sandbox/seccomp_policy.h"

using namespace aura::sandbox;

TEST_CASE("seccomp audit: every x86_64 syscall is on exactly one list") {
  std::map<std::string, int> lists;
  auto count = [&](const std::vector<std::string>& names) {
    for (const std::string& n : names) ++lists[n];
  };
  count(seccomp_allowed_syscalls());
  count(seccomp_denied_syscalls());
  count(seccomp_conditional_syscalls());
  count(seccomp_unlisted_syscalls());
  for (const auto& [name, n] : lists)
    CHECK_MESSAGE(n == 1, name << " is on two lists: the policy contradicts itself");
  int known = 0;
  for (int nr = 0; nr < 1024; ++nr) {
    char* name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_X86_64, nr);
    if (name == nullptr) continue;
    ++known;
    INFO(name << " (" << nr << ")");
    CHECK(lists.contains(name));  // on no list: decide it and document it
    std::free(name);
  }
  CHECK(known > 300);  // the table was read at all
  // Host-wide and past-the-namespace calls are never plainly allowed.
  for (const char* name : {"sync", "syncfs", "socket", "clone", "mount", "unshare", "setns",
                           "ptrace", "bpf", "io_uring_setup", "clone3", "vmsplice"}) {
    INFO(name);
    const auto allowed = seccomp_allowed_syscalls();
    CHECK(std::find(allowed.begin(), allowed.end(), name) == allowed.end());
  }
}
