#include "workers/sandbox/network.h"

#include <errno.h>
#include <net/if.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

namespace aura::sandbox {

int bring_loopback_up() {
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno;
  struct ifreq req;
  ::memset(&req, 0, sizeof req);
  ::strncpy(req.ifr_name, "lo", IFNAMSIZ - 1);
  int err = 0;
  if (::ioctl(fd, SIOCGIFFLAGS, &req) != 0) {
    err = errno;
  } else {
    req.ifr_flags |= IFF_UP;
    if (::ioctl(fd, SIOCSIFFLAGS, &req) != 0) err = errno;
  }
  ::close(fd);
  return err;
}

}  // namespace aura::sandbox
