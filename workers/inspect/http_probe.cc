#include "workers/inspect/http_probe.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "engine/common/file_io.h"
#include "workers/inspect/node_view.h"

namespace aura::inspect {
namespace {

using file_io::errno_text;
using file_io::Fd;

enum class Step : int32_t { kSetns = 1, kSocket, kConnect, kSend, kRecv, kPipe };

const char* step_name(int32_t step) {
  switch (Step(step)) {
    case Step::kSetns:
      return "join the network namespace";
    case Step::kSocket:
      return "socket";
    case Step::kConnect:
      return "connect";
    case Step::kSend:
      return "send";
    case Step::kRecv:
      return "recv";
    case Step::kPipe:
      return "pass the response";
  }
  return "?";
}

// Everything the child needs, prepared before fork: after it the child only issues syscalls.
struct Plan {
  int net_fd;
  int keep_fd;  // a descriptor the connect address names (/proc/self/fd/N), or -1
  int family;
  const sockaddr* addr;
  socklen_t addr_len;
  const char* request;
  size_t request_len;
  size_t cap;
  int status_fd;  // 'C' once connected; {'P', pid, uid, gid} on unix; {'E', step, errno} on a
                  // failure
  int data_fd;    // the response bytes, at most cap + 1
};

bool write_all(int fd, const char* p, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= size_t(w);
  }
  return true;
}

[[noreturn]] void child_fail(const Plan& plan, Step step, int err) {
  char frame[9] = {'E'};
  const int32_t s = int32_t(step), e = err;
  std::memcpy(frame + 1, &s, 4);
  std::memcpy(frame + 5, &e, 4);
  write_all(plan.status_fd, frame, sizeof frame);
  ::_exit(1);
}

// Closes every descriptor but the plan's, so the child holds nothing else of the supervisor's.
void close_others(const Plan& plan) {
  int keep[4] = {plan.net_fd, plan.keep_fd, plan.status_fd, plan.data_fd};
  for (int i = 1; i < 4; ++i)  // insertion sort: no allocation here
    for (int j = i; j > 0 && keep[j - 1] > keep[j]; --j) std::swap(keep[j - 1], keep[j]);
  unsigned from = 0;
  for (int fd : keep) {
    if (fd < 0) continue;
    if (unsigned(fd) > from) ::syscall(SYS_close_range, from, unsigned(fd) - 1, 0u);
    from = unsigned(fd) + 1;
  }
  ::syscall(SYS_close_range, from, ~0u, 0u);
}

[[noreturn]] void child_main(const Plan& plan) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  close_others(plan);
  // Only the network namespace: the child keeps the host's mounts, so /proc/self/fd is its own.
  if (::setns(plan.net_fd, CLONE_NEWNET) != 0) child_fail(plan, Step::kSetns, errno);
  const int s = ::socket(plan.family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (s < 0) child_fail(plan, Step::kSocket, errno);
  while (::connect(s, plan.addr, plan.addr_len) != 0) {
    if (errno != EINTR) child_fail(plan, Step::kConnect, errno);
  }
  write_all(plan.status_fd, "C", 1);
  if (plan.family == AF_UNIX) {
    ucred c{};
    socklen_t len = sizeof c;
    if (::getsockopt(s, SOL_SOCKET, SO_PEERCRED, &c, &len) == 0 && len == sizeof c) {
      char frame[13] = {'P'};
      const int32_t pid = c.pid;
      const uint32_t uid = c.uid, gid = c.gid;
      std::memcpy(frame + 1, &pid, 4);
      std::memcpy(frame + 5, &uid, 4);
      std::memcpy(frame + 9, &gid, 4);
      write_all(plan.status_fd, frame, sizeof frame);
    }
  }
  for (size_t sent = 0; sent < plan.request_len;) {
    const ssize_t n = ::send(s, plan.request + sent, plan.request_len - sent, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      child_fail(plan, Step::kSend, errno);
    }
    sent += size_t(n);
  }
  char buf[16384];
  for (size_t total = 0; total <= plan.cap;) {
    const size_t want = std::min(sizeof buf, plan.cap + 1 - total);
    const ssize_t n = ::recv(s, buf, want, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      child_fail(plan, Step::kRecv, errno);
    }
    if (n == 0) break;
    if (!write_all(plan.data_fd, buf, size_t(n))) child_fail(plan, Step::kPipe, errno);
    total += size_t(n);
  }
  ::_exit(0);
}

// Splits a raw response into status, headers and body; sets `r.error` when malformed.
void parse_response(std::string raw, HttpResult& r) {
  size_t header_end = raw.find("\r\n\r\n");
  size_t body_start = header_end == std::string::npos ? std::string::npos : header_end + 4;
  if (header_end == std::string::npos) {
    r.error = raw.empty() ? "malformed response: empty"
                          : "malformed response: no end of headers" +
                                std::string(r.truncated ? " within the cap" : "");
    return;
  }
  const size_t line_end = raw.find("\r\n");
  const std::string_view line(raw.data(), line_end);
  // "HTTP/1.x NNN[ reason]"
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || line[8] != ' ' ||
      (line.size() > 12 && line[12] != ' ')) {
    r.error = "malformed response: bad status line";
    return;
  }
  int code = 0;
  for (size_t i = 9; i < 12; ++i) {
    if (line[i] < '0' || line[i] > '9') {
      r.error = "malformed response: bad status code";
      return;
    }
    code = code * 10 + (line[i] - '0');
  }
  r.status = code;
  r.headers = line_end + 2 <= header_end ? raw.substr(line_end + 2, header_end + 2 - (line_end + 2))
                                         : std::string();
  r.body = raw.substr(body_start);
}

bool safe_token(std::string_view s, bool path) {
  if (s.empty() || s.size() > 4096) return false;
  if (path && s.front() != '/') return false;
  for (unsigned char c : s)
    if (c <= 0x20 || c == 0x7f) return false;
  return true;
}

std::string request_for(std::string_view path, std::string_view host) {
  return "GET " + std::string(path) + " HTTP/1.0\r\nHost: " + std::string(host) +
         "\r\nUser-Agent: aura-inspect\r\nConnection: close\r\n\r\n";
}

Result<int> open_netns(pid_t pid) {
  const std::string ns = "/proc/" + std::to_string(pid) + "/ns/net";
  const int fd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd >= 0) return fd;
  if (errno == ENOENT || errno == ESRCH)
    return Status::failed_precondition("process " + std::to_string(pid) + " is gone");
  return Status::io("open " + ns + ": " + errno_text(errno));
}

// Runs the plan in a child and collects its answer, killing it at `timeout`.
Result<HttpResult> run(Plan plan, std::chrono::milliseconds timeout, std::string_view target) {
  int status_pipe[2], data_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) return Status::io("pipe: " + errno_text(errno));
  Fd status_r(status_pipe[0]), status_w(status_pipe[1]);
  if (::pipe2(data_pipe, O_CLOEXEC) != 0) return Status::io("pipe: " + errno_text(errno));
  Fd data_r(data_pipe[0]), data_w(data_pipe[1]);
  plan.status_fd = status_pipe[1];
  plan.data_fd = data_pipe[1];
  const auto start = std::chrono::steady_clock::now();
  const pid_t child = ::fork();
  if (child < 0) return Status::io("fork: " + errno_text(errno));
  if (child == 0) child_main(plan);
  status_w.close_now();
  data_w.close_now();

  HttpResult r;
  std::string raw;
  bool timed_out = false;
  for (;;) {
    const auto left = timeout - std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::steady_clock::now() - start);
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd p{data_r.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, int(std::min<int64_t>(left.count(), 1 << 30)));
    if (ready < 0 && errno != EINTR) return Status::io("poll: " + errno_text(errno));
    if (ready <= 0) continue;
    char buf[16384];
    const ssize_t n = ::read(data_r.get(), buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::io("read the probe's pipe: " + errno_text(errno));
    }
    if (n == 0) break;
    if (raw.size() <= plan.cap) raw.append(buf, std::min(size_t(n), plan.cap + 1 - raw.size()));
  }
  if (timed_out) ::kill(child, SIGKILL);
  int wstatus = 0;
  while (::waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  // The child is gone: its status pipe holds 'C', then 'P' on unix, and/or one failure frame.
  char frames[32];
  size_t got = 0;
  for (;;) {
    const ssize_t n = ::read(status_r.get(), frames + got, sizeof frames - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += size_t(n);
    if (got == sizeof frames) break;
  }
  size_t at = 0;
  if (got > 0 && frames[0] == 'C') {
    r.connected = true;
    at = 1;
  }
  if (got >= at + 13 && frames[at] == 'P') {
    int32_t pid;
    PeerCred peer;
    std::memcpy(&pid, frames + at + 1, 4);
    std::memcpy(&peer.uid, frames + at + 5, 4);
    std::memcpy(&peer.gid, frames + at + 9, 4);
    peer.pid = pid_t(pid);
    r.peer = peer;
    at += 13;
  }
  std::string failure;
  if (got >= at + 9 && frames[at] == 'E') {
    int32_t step, err;
    std::memcpy(&step, frames + at + 1, 4);
    std::memcpy(&err, frames + at + 5, 4);
    failure = std::string(step_name(step)) + " " + std::string(target) + ": " + errno_text(err);
  }
  r.truncated = raw.size() > plan.cap;
  if (r.truncated) raw.resize(plan.cap);
  if (timed_out) {
    r.error = "timed out after " + std::to_string(timeout.count()) + " ms" +
              (r.connected ? " (connected)" : " (connecting)");
  } else if (!failure.empty()) {
    r.error = failure;
  } else if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    r.error = "the probe's child died (status " + std::to_string(wstatus) + ")";
  }
  if (!r.connected) return r;
  HttpResult parsed = r;
  parse_response(std::move(raw), parsed);
  if (!r.error.empty()) parsed.error = r.error;  // the transport's failure comes first
  return parsed;
}

}  // namespace

Result<HttpResult> http_get_tcp(pid_t netns_pid, std::string_view ipv4, uint16_t port,
                                std::string_view path, std::string_view host,
                                std::chrono::milliseconds timeout, size_t cap) {
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(port);
  if (::inet_pton(AF_INET, std::string(ipv4).c_str(), &sin.sin_addr) != 1)
    return Status::invalid("'" + std::string(ipv4) + "' is not an IPv4 address");
  if (!safe_token(path, true)) return Status::invalid("bad HTTP path");
  if (!safe_token(host, false)) return Status::invalid("bad Host header");
  if (timeout.count() <= 0) return Status::invalid("timeout must be positive");
  int net_fd;
  AURA_ASSIGN_OR_RETURN(net_fd, open_netns(netns_pid));
  Fd net_guard(net_fd);
  const std::string request = request_for(path, host);
  Plan plan{net_fd,
            -1,
            AF_INET,
            reinterpret_cast<const sockaddr*>(&sin),
            sizeof sin,
            request.data(),
            request.size(),
            cap,
            -1,
            -1};
  return run(plan, timeout, std::string(ipv4) + ":" + std::to_string(port));
}

Result<HttpResult> http_get_unix(pid_t init_pid, std::string_view socket_path,
                                 std::string_view path, std::chrono::milliseconds timeout,
                                 size_t cap) {
  if (!safe_token(path, true)) return Status::invalid("bad HTTP path");
  if (timeout.count() <= 0) return Status::invalid("timeout must be positive");
  auto view = NodeView::open(init_pid);
  if (!view.ok()) return view.status();
  HttpResult refused;
  auto opened = view->open_path(socket_path, false);
  if (!opened.ok()) {
    if (opened.status().code() == ErrorCode::kUnavailable ||
        opened.status().code() == ErrorCode::kIo)
      return opened.status();
    refused.error = opened.status().message();
    return refused;
  }
  Fd sock_guard(*opened);
  struct stat st;
  if (::fstat(*opened, &st) != 0)
    return Status::io("fstat " + std::string(socket_path) + ": " + errno_text(errno));
  if (!S_ISSOCK(st.st_mode)) {
    refused.error = std::string(socket_path) + ": is a " +
                    std::string(type_name(view->file_info(st).type)) + ", not a socket";
    return refused;
  }
  sockaddr_un sun{};
  sun.sun_family = AF_UNIX;
  const std::string via = "/proc/self/fd/" + std::to_string(*opened);
  std::memcpy(sun.sun_path, via.c_str(), via.size() + 1);
  int net_fd;
  AURA_ASSIGN_OR_RETURN(net_fd, open_netns(init_pid));
  Fd net_guard(net_fd);
  const std::string request = request_for(path, "localhost");
  Plan plan{net_fd,
            *opened,
            AF_UNIX,
            reinterpret_cast<const sockaddr*>(&sun),
            sizeof sun,
            request.data(),
            request.size(),
            cap,
            -1,
            -1};
  return run(plan, timeout, "unix:" + std::string(socket_path));
}

}  // namespace aura::inspect
