// net.listening and http.get (probes): the node's listening sockets from /proc/net, and one
// HTTP/1.0 GET over TCP (an IPv4 literal) or a Unix socket, bounded in time and bytes.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <set>

#include "workers/runner/node_fs.h"
#include "workers/runner/op.h"

namespace aura::runner {
namespace {

constexpr std::chrono::seconds kHttpDeadline{3};
constexpr std::string_view kTcpListen = "0A";
constexpr uint32_t kUnixAcceptCon = 0x10000;  // __SO_ACCEPTCON in /proc/net/unix Flags

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t at = 0;
  while (true) {
    at = line.find_first_not_of(' ', at);
    if (at == std::string_view::npos) return out;
    const size_t end = std::min(line.find(' ', at), line.size());
    out.push_back(line.substr(at, end - at));
    at = end;
  }
}

std::vector<std::string_view> lines_after_header(std::string_view text) {
  std::vector<std::string_view> out;
  bool header = true;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    if (!header && end > at) out.push_back(text.substr(at, end - at));
    header = false;
    at = end + 1;
  }
  return out;
}

bool hex32(std::string_view s, uint32_t* v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, 16);
  return ec == std::errc() && p == s.data() + s.size();
}

// "0100007F:1F90" (v4) or 32 hex digits ":" port (v6), as the kernel prints them: each 32-bit
// word in host byte order.
std::optional<std::string> tcp_address(std::string_view local, bool v6) {
  const size_t colon = local.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const std::string_view addr = local.substr(0, colon);
  uint32_t port = 0;
  if (!hex32(local.substr(colon + 1), &port) || port > 65535) return std::nullopt;
  char text[INET6_ADDRSTRLEN] = {};
  if (!v6) {
    in_addr a{};
    if (addr.size() != 8 || !hex32(addr, &a.s_addr)) return std::nullopt;
    ::inet_ntop(AF_INET, &a, text, sizeof text);
    return std::string(text) + ":" + std::to_string(port);
  }
  in6_addr a{};
  if (addr.size() != 32) return std::nullopt;
  for (int i = 0; i < 4; ++i) {
    uint32_t word = 0;
    if (!hex32(addr.substr(size_t(i) * 8, 8), &word)) return std::nullopt;
    std::memcpy(&a.s6_addr[i * 4], &word, 4);
  }
  ::inet_ntop(AF_INET6, &a, text, sizeof text);
  return "[" + std::string(text) + "]:" + std::to_string(port);
}

// A /proc/net table; one that does not exist (no IPv6 in this kernel) is empty.
Result<std::string> proc_net(const std::string& name) {
  auto r = read_system_file("/proc/net/" + name);
  if (!r.ok() && r.status().code() == ErrorCode::kNotFound) return std::string();
  return r;
}

Status net_listening(const Args&, const Context&, Output& out) {
  std::set<std::string> found;
  for (const bool v6 : {false, true}) {
    std::string text;
    AURA_ASSIGN_OR_RETURN(text, proc_net(v6 ? "tcp6" : "tcp"));
    for (std::string_view line : lines_after_header(text)) {
      const auto w = words(line);
      if (w.size() < 4 || w[3] != kTcpListen) continue;
      if (auto a = tcp_address(w[1], v6)) found.insert("tcp " + *a);
    }
  }
  std::string text;
  AURA_ASSIGN_OR_RETURN(text, proc_net("unix"));
  for (std::string_view line : lines_after_header(text)) {
    // Num RefCount Protocol Flags Type St Inode [Path]; the path is the rest of the line.
    const auto w = words(line);
    uint32_t flags = 0;
    if (w.size() < 8 || !hex32(w[3], &flags) || (flags & kUnixAcceptCon) == 0) continue;
    const std::string_view path = line.substr(size_t(w[7].data() - line.data()));
    found.insert("unix " + escape_name(path));
  }
  for (const std::string& s : found) out.line(s);
  return Status::ok();
}

struct HttpTarget {
  sockaddr_storage addr{};
  socklen_t addr_len = 0;
  std::string host;  // the Host: header
  std::string path;  // the request target
  std::string name;  // for messages
};

// A request target: '/' then visible ASCII only (no spaces, no line breaks).
Status check_request_path(std::string_view arg, std::string_view path) {
  if (path.empty() || path.front() != '/') return bad_arg(arg, "the request path must start /");
  for (unsigned char c : path) {
    if (c <= 0x20 || c >= 0x7f) return bad_arg(arg, "the request path must be visible ASCII");
  }
  return Status::ok();
}

Result<HttpTarget> parse_target(const Args& args) {
  HttpTarget t;
  const auto url = args.opt_str("url");
  const auto unix_path = args.opt_str("unix");
  const auto path = args.opt_str("path");
  if (url.has_value() == unix_path.has_value()) return bad_arg("url", "give url or unix, not both");
  if (unix_path) {
    if (!path) return bad_arg("path", "required with unix");
    AURA_RETURN_IF_ERROR(check_path("unix", *unix_path));
    AURA_RETURN_IF_ERROR(check_request_path("path", *path));
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    if (unix_path->size() >= sizeof un.sun_path) return bad_arg("unix", "longer than sun_path");
    std::memcpy(un.sun_path, unix_path->data(), unix_path->size());
    std::memcpy(&t.addr, &un, sizeof un);
    t.addr_len = sizeof un;
    t.host = "localhost";
    t.path = std::string(*path);
    t.name = "unix:" + escape_name(*unix_path) + " " + t.path;
    return t;
  }
  if (path) return bad_arg("path", "only with unix (the url holds the path)");
  constexpr std::string_view kScheme = "http://";
  std::string_view rest = *url;
  if (rest.substr(0, kScheme.size()) != kScheme) return bad_arg("url", "must start http://");
  rest.remove_prefix(kScheme.size());
  const size_t slash = std::min(rest.find('/'), rest.size());
  const std::string_view authority = rest.substr(0, slash);
  t.path = slash == rest.size() ? "/" : std::string(rest.substr(slash));
  AURA_RETURN_IF_ERROR(check_request_path("url", t.path));
  const size_t colon = authority.find(':');
  const std::string host(authority.substr(0, colon));
  uint32_t port = 80;
  if (colon != std::string_view::npos) {
    const std::string_view p = authority.substr(colon + 1);
    auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
    if (p.empty() || ec != std::errc() || end != p.data() + p.size() || port == 0 || port > 65535)
      return bad_arg("url", "the port must be 1 to 65535");
  }
  sockaddr_in in{};
  in.sin_family = AF_INET;
  in.sin_port = htons(uint16_t(port));
  if (::inet_pton(AF_INET, host.c_str(), &in.sin_addr) != 1) {
    return bad_arg("url", "the host must be an IPv4 literal");
  }
  std::memcpy(&t.addr, &in, sizeof in);
  t.addr_len = sizeof in;
  t.host = host + ":" + std::to_string(port);
  t.name = escape_name(*url);
  return t;
}

// Waits for `events` on fd until `end`; false at the deadline.
Result<bool> wait_for(int fd, short events, std::chrono::steady_clock::time_point end,
                      std::string_view what) {
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, int(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno_error(std::string(what), "poll", errno);
    if (n > 0) return true;
  }
}

Status http_get(const Args& args, const Context&, Output& out) {
  HttpTarget t;
  AURA_ASSIGN_OR_RETURN(t, parse_target(args));
  const std::string what = "http.get " + t.name;
  const std::string timed_out = "timed out after " + std::to_string(kHttpDeadline.count()) + " s";
  const auto end = std::chrono::steady_clock::now() + kHttpDeadline;
  const int fd = ::socket(t.addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return errno_error(what, "socket", errno);
  file_io::Fd guard(fd);
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&t.addr), t.addr_len) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) return errno_error(what, "connect", errno);
    bool ready = false;
    AURA_ASSIGN_OR_RETURN(ready, wait_for(fd, POLLOUT, end, what));
    if (!ready) return world_error(what, "connect " + timed_out);
    int err = 0;
    socklen_t len = sizeof err;
    if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    if (err != 0) return errno_error(what, "connect", err);
  }
  const std::string request =
      "GET " + t.path + " HTTP/1.0\r\nHost: " + t.host + "\r\nConnection: close\r\n\r\n";
  size_t sent = 0;
  while (sent < request.size()) {
    const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += size_t(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EINTR) return errno_error(what, "send", errno);
    bool ready = false;
    AURA_ASSIGN_OR_RETURN(ready, wait_for(fd, POLLOUT, end, what));
    if (!ready) return world_error(what, "send " + timed_out);
  }
  // The response, read until the server closes or one byte past the cap.
  std::string response;
  char buf[65536];
  while (response.size() <= out.cap()) {
    const ssize_t n = ::recv(fd, buf, std::min(sizeof buf, out.cap() + 1 - response.size()), 0);
    if (n > 0) {
      response.append(buf, size_t(n));
      continue;
    }
    if (n == 0) break;
    if (errno != EAGAIN && errno != EINTR) return errno_error(what, "recv", errno);
    bool ready = false;
    AURA_ASSIGN_OR_RETURN(ready, wait_for(fd, POLLIN, end, what));
    if (!ready) {
      return world_error(what, timed_out + " (" + std::to_string(response.size()) +
                                   " bytes of the response received)");
    }
  }
  out.append(response);  // over the cap: cut and flagged
  return Status::ok();
}

}  // namespace

std::vector<OpSpec> net_ops() {
  using C = OpClass;
  return {
      {"net.listening", C::kProbe, {}, net_listening},
      {"http.get", C::kProbe, {{"url", false}, {"unix", false}, {"path", false}}, http_get},
  };
}

}  // namespace aura::runner
