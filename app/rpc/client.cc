#include "app/rpc/client.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace aura::rpc {

Result<Client> Client::connect(const std::filesystem::path& socket_path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::string p = socket_path.string();
  if (p.size() >= sizeof addr.sun_path) {
    return Status::invalid("daemon socket path too long: " + p);
  }
  std::memcpy(addr.sun_path, p.c_str(), p.size() + 1);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::io(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    int e = errno;
    ::close(fd);
    return Status::unavailable("no daemon at " + p + ": " + std::strerror(e));
  }
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != 0) {
    ::close(fd);
    return Status::failed_precondition("the process at " + p +
                                       " is not root: not talking to it as the lab's daemon");
  }
  return Client(fd);
}

Client& Client::operator=(Client&& o) noexcept {
  if (this != &o) {
    close();
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

Client::~Client() { close(); }

void Client::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

Result<Reply> Client::call(const Request& request, std::chrono::milliseconds timeout) {
  if (fd_ < 0) return Status::unavailable("daemon connection is closed");
  std::string body = request.encode();
  if (Status s = write_frame(fd_, Kind::kRequest, body, std::chrono::seconds(30)); !s.is_ok()) {
    close();
    return s;
  }
  auto f = read_frame(fd_, timeout, std::chrono::seconds(30));
  if (!f.ok() || !f->has_value()) {
    close();
    return f.ok() ? Status::unavailable("the daemon closed the connection") : f.status();
  }
  if ((*f)->kind != Kind::kReply) {
    close();
    return Status::corruption("daemon protocol: expected a reply, got a " +
                              std::string(kind_name((*f)->kind)));
  }
  auto r = parse_reply((*f)->body);
  if (!r.ok()) {
    close();
    return r.status();
  }
  if (r->request_id != request.request_id) {
    close();
    return Status::corruption("daemon protocol: the reply answers request " + r->request_id +
                              ", not " + request.request_id);
  }
  return r;
}

Result<std::optional<Frame>> Client::next_frame(std::chrono::milliseconds timeout) {
  if (fd_ < 0) return Status::unavailable("daemon connection is closed");
  auto f = read_frame(fd_, timeout, std::chrono::seconds(30));
  if (!f.ok()) {
    close();
    return f.status();
  }
  if (!f->has_value()) {
    close();
    return f;
  }
  if ((*f)->kind != Kind::kEvent && (*f)->kind != Kind::kKeepAlive) {
    close();
    return Status::corruption("daemon protocol: expected a stream event, got a " +
                              std::string(kind_name((*f)->kind)));
  }
  return f;
}

}  // namespace aura::rpc
