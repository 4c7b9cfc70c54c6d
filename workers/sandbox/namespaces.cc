#include "workers/sandbox/namespaces.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <string>

#include "engine/common/file_io.h"

namespace aura::sandbox {
namespace {

Status write_proc(pid_t pid, const char* file, const std::string& text) {
  const std::string path = "/proc/" + std::to_string(pid) + "/" + file;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return Status::unavailable("user namespace: open " + path + ": " + file_io::errno_text(errno));
  file_io::Fd guard(fd);
  if (::write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    return Status::unavailable("user namespace: write " + path + ": " + file_io::errno_text(errno));
  return Status::ok();
}

}  // namespace

Status write_id_maps(pid_t pid, uint32_t base, uint32_t count, bool allow_setgroups) {
  const std::string map = "0 " + std::to_string(base) + " " + std::to_string(count) + "\n";
  AURA_RETURN_IF_ERROR(write_proc(pid, "setgroups", allow_setgroups ? "allow" : "deny"));
  AURA_RETURN_IF_ERROR(write_proc(pid, "uid_map", map));
  AURA_RETURN_IF_ERROR(write_proc(pid, "gid_map", map));
  return Status::ok();
}

int become_namespace_root() {
  // Raw syscalls: glibc's setresuid() signals every thread it believes exists (to change all
  // of their ids), and after a raw clone() of a multi-threaded supervisor the child has only one
  // of them, so the wrapper would wait forever.
  if (::syscall(SYS_setresgid, 0, 0, 0) != 0) return errno;
  if (::syscall(SYS_setresuid, 0, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace aura::sandbox
