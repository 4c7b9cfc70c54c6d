#include "workers/sandbox/linux_caps.h"

#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace aura::sandbox {

int drop_linux_caps(uint64_t keep) {
  // The running kernel may know more capabilities than these headers; probe until EINVAL.
  for (int cap = 0; cap < 64; ++cap) {
    if (keep & (1ull << cap)) continue;
    if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) {
      if (errno == EINVAL) break;
      return errno;
    }
  }
  if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0 && errno != EINVAL)
    return errno;
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
  struct __user_cap_data_struct data[2] = {};
  for (int i = 0; i < 2; ++i) {
    const uint32_t bits = static_cast<uint32_t>(keep >> (32 * i));
    data[i].effective = bits;
    data[i].permitted = bits;
    data[i].inheritable = 0;
  }
  if (::syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

}  // namespace aura::sandbox
