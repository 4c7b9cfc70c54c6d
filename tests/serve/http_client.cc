#include "tests/serve/http_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace aura::testing {

std::string HttpResponse::header(const std::string& name) const {
  for (const auto& [n, v] : headers) {
    if (n == name) return v;
  }
  return "";
}

size_t HttpResponse::count(const std::string& name) const {
  return size_t(std::count_if(headers.begin(), headers.end(),
                              [&](const auto& h) { return h.first == name; }));
}

int connect_loopback(uint16_t port) { return connect_loopback_from(port, ""); }

int connect_loopback_from(uint16_t port, const std::string& source) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (!source.empty()) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    if (::inet_pton(AF_INET, source.c_str(), &from.sin_addr) != 1 ||
        ::bind(fd, reinterpret_cast<sockaddr*>(&from), sizeof from) != 0) {
      ::close(fd);
      return -1;
    }
  }
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
    if (n <= 0) return false;
    done += size_t(n);
  }
  return true;
}

HttpResponse parse_response(const std::string& raw) {
  HttpResponse r;
  r.raw = raw;
  size_t end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || end == std::string::npos) return r;
  r.status = std::atoi(raw.substr(9, 3).c_str());
  size_t pos = raw.find("\r\n") + 2;
  while (pos < end) {
    size_t eol = raw.find("\r\n", pos);
    std::string line = raw.substr(pos, eol - pos);
    size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      for (char& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
      size_t v = line.find_first_not_of(' ', colon + 1);
      r.headers.emplace_back(name, v == std::string::npos ? "" : line.substr(v));
    }
    pos = eol + 2;
  }
  r.body = raw.substr(end + 4);
  std::string len = r.header("content-length");
  if (!len.empty()) r.body = r.body.substr(0, std::stoul(len));
  return r;
}

HttpResponse read_response(int fd, std::chrono::seconds guard) {
  std::string raw;
  auto deadline = std::chrono::steady_clock::now() + guard;
  char buf[16384];
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) break;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(left.count())) <= 0) break;
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    raw.append(buf, size_t(n));
  }
  return parse_response(raw);
}

HttpResponse http_raw(uint16_t port, const std::string& bytes) {
  int fd = connect_loopback(port);
  if (fd < 0) return {};
  send_all(fd, bytes);
  HttpResponse r = read_response(fd);
  ::close(fd);
  return r;
}

HttpResponse http(uint16_t port, const std::string& method, const std::string& target,
                  const std::vector<std::pair<std::string, std::string>>& headers,
                  const std::optional<std::string>& body) {
  return http_from(port, "", method, target, headers, body);
}

HttpResponse http_from(uint16_t port, const std::string& source, const std::string& method,
                       const std::string& target,
                       const std::vector<std::pair<std::string, std::string>>& headers,
                       const std::optional<std::string>& body) {
  std::string req = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                    "\r\nConnection: close\r\n";
  for (const auto& [n, v] : headers) req += n + ": " + v + "\r\n";
  if (body) req += "Content-Length: " + std::to_string(body->size()) + "\r\n";
  req += "\r\n";
  if (body) req += *body;
  int fd = connect_loopback_from(port, source);
  if (fd < 0) return {};
  send_all(fd, req);
  HttpResponse r = read_response(fd);
  ::close(fd);
  return r;
}

}  // namespace aura::testing
