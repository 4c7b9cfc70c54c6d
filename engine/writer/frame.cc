#include "engine/writer/frame.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"

namespace aura::writer {
namespace {

// kFrameVersion, the header, '\n', the inline bytes.
std::string whole_frame(std::string_view header_json, std::string_view inline_bytes = {}) {
  std::string f;
  f.reserve(kFrameVersionBytes + header_json.size() + 1 + inline_bytes.size());
  f.push_back(char(kFrameVersion));
  f.append(header_json);
  f.push_back('\n');
  f.append(inline_bytes);
  return f;
}

}  // namespace

std::string hello_frame(std::string_view token_hex) {
  return whole_frame(JsonWriter().str("t", "hello").str("token", token_hex).done());
}

std::string evidence_frame(std::string_view kind, std::string_view fields_json,
                           std::string_view inline_bytes) {
  return whole_frame(
      JsonWriter().str("t", "evidence").str("kind", kind).raw("fields", fields_json).done(),
      inline_bytes);
}

std::string evidence_memfd_frame(std::string_view kind, std::string_view fields_json) {
  return whole_frame(JsonWriter()
                         .str("t", "evidence")
                         .str("kind", kind)
                         .raw("fields", fields_json)
                         .boolean("memfd", true)
                         .done());
}

Status send_frame(int fd, std::string_view frame, int pass_fd) {
  iovec iov{const_cast<char*>(frame.data()), frame.size()};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  if (pass_fd >= 0) {
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
  }
  ssize_t n;
  do {
    n = ::sendmsg(fd, &msg, MSG_NOSIGNAL);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::io("send frame: " + file_io::errno_text(errno));
  if (size_t(n) != frame.size()) return Status::io("send frame: short send");
  return Status::ok();
}

Result<int> sealed_memfd(std::string_view bytes) {
  int fd = ::memfd_create("aura-evidence", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return Status::io("memfd_create: " + file_io::errno_text(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = errno;
      ::close(fd);
      return Status::io("write memfd: " + file_io::errno_text(err));
    }
    done += size_t(n);
  }
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::io("seal memfd: " + file_io::errno_text(err));
  }
  return fd;
}

}  // namespace aura::writer
