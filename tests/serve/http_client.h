// A deliberately plain HTTP/1.1 client for the front's tests: exact bytes out (so a test can send
// what no library would), everything the server wrote back in, parsed just enough to check.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace aura::testing {

// The hang guard of one exchange (never a speed bar).
inline constexpr std::chrono::seconds kHttpHangGuard{60};

struct HttpResponse {
  int status = 0;  // 0: no status line (the server closed without an answer)
  std::vector<std::pair<std::string, std::string>> headers;  // names in lower case
  std::string body;
  std::string raw;

  // The first value of header `name` (lower case), or "".
  std::string header(const std::string& name) const;
  size_t count(const std::string& name) const;
};

// A TCP connection to 127.0.0.1:port; -1 on failure.
int connect_loopback(uint16_t port);
// ...from the loopback address `source` (127.x.y.z): another client, as the front counts them.
int connect_loopback_from(uint16_t port, const std::string& source);
bool send_all(int fd, const std::string& bytes);
// Reads until the peer closes (or the guard passes) and parses what came.
HttpResponse read_response(int fd, std::chrono::seconds guard = kHttpHangGuard);
HttpResponse parse_response(const std::string& raw);

// One request on its own connection ("Connection: close" is added, and Content-Length when a
// body is given).
HttpResponse http(uint16_t port, const std::string& method, const std::string& target,
                  const std::vector<std::pair<std::string, std::string>>& headers = {},
                  const std::optional<std::string>& body = std::nullopt);
// ...from the loopback address `source`.
HttpResponse http_from(uint16_t port, const std::string& source, const std::string& method,
                       const std::string& target,
                       const std::vector<std::pair<std::string, std::string>>& headers = {},
                       const std::optional<std::string>& body = std::nullopt);
// The exact bytes, then the answer.
HttpResponse http_raw(uint16_t port, const std::string& bytes);

}  // namespace aura::testing
