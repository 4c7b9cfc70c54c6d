// What a hostile learner plants in a node's /etc/ld.so.preload (tests only): every process whose
// loader honours it appends one line to /tmp/aura-preload.log in its root -- the program it is
// (/proc/self/exe), the writer token if its environment holds one, and whether it holds a
// SOCK_SEQPACKET socket (the writer). Plain libc calls only, so it loads into any program.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace {

__attribute__((constructor)) void mark() {
  char exe[512];
  ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  exe[n < 0 ? 0 : n] = '\0';
  bool writer = false;
  for (int fd = 0; fd < 1024; ++fd) {
    int type = 0;
    socklen_t len = sizeof type;
    if (::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 && type == SOCK_SEQPACKET)
      writer = true;
  }
  const char* token = std::getenv("AURA_WRITER_TOKEN");
  char line[1024];
  const int len =
      std::snprintf(line, sizeof line, "exe=%s token=%s writer=%s\n", exe,
                    token != nullptr && *token != '\0' ? token : "-", writer ? "yes" : "no");
  const int fd = ::open("/tmp/aura-preload.log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 || len <= 0) return;
  [[maybe_unused]] ssize_t w = ::write(fd, line, size_t(len));
  ::close(fd);
}

}  // namespace
