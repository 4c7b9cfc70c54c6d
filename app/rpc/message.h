// The daemon protocol's requests and replies (docs/formats/daemon-protocol.md): encoded by the
// client, read strictly by the server (and the reverse), each bounded by its frame's cap.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::rpc {

inline constexpr size_t kMaxOperatorTokenBytes = 256;
inline constexpr size_t kTokenHexBytes = 64;
inline constexpr uint64_t kMaxRetryAfterS = 86400;  // the longest Retry-After any answer names

// The API's error (docs/api/openapi.yaml, Error): an HTTP status, a code, words, and where known
// the JSON path, the attempt's phase, the valid names and the next step.
struct ApiError {
  int status = 500;
  std::string code = "internal";
  std::string message;
  std::string path;
  std::string phase;
  std::vector<std::string> expected;
  std::string next;
  // Seconds after which the same request may succeed (429, 503): the front's Retry-After.
  uint32_t retry_after_s = 0;

  // {"status":..,"code":..,"message":..,...} (the inner object of the API's Error).
  std::string json() const;
  // {"error": json()}: the HTTP body.
  std::string body() const { return "{\"error\":" + json() + "}"; }
};

ApiError api_error(int status, std::string_view code, std::string message);
// How an engine Status reads as an API error: invalid -> 400 malformed, not found -> 404,
// failed precondition -> 409 refused, busy -> 429, unavailable -> 503, the rest -> 500.
ApiError api_error_from(const Status& s);

enum class AuthKind { kNone, kToken, kOperator };

struct Request {
  std::string op;          // [a-z][a-z.]{0,47}
  std::string request_id;  // 16 lowercase hex
  AuthKind auth = AuthKind::kNone;
  std::string secret;     // the attempt token (64 hex) or the operator token
  std::string args_json;  // a JSON object's text, "{}" when none
  // Set by the daemon from the connection's SO_PEERCRED, never read from the wire: the peer is
  // root on this machine (the CLI), not the front's user.
  bool peer_is_root = false;

  std::string encode() const;
};

// The operations the daemon answers from memory or a short read of the log, never waiting on
// a lock that a long operation (a world's build, a projection rebuild, a verify) holds: a
// client may pipeline them on one connection (the daemon answers in order) without one waiting
// long behind another. health, attempt.state, judge.list, judge.get, lab.key.
bool is_quick_op(std::string_view op);

// Reads a request body strictly: v first and 1, known members only, bounds. Errors name the
// JSON path; the request_id read so far (empty if none) comes back for the error reply.
Result<Request> parse_request(std::string_view body, std::string* request_id_seen = nullptr);

struct Reply {
  std::string request_id;
  int status = 200;
  std::string body_json;          // the answer (status < 400); "{}" when none
  std::optional<ApiError> error;  // status >= 400

  std::string encode() const;
};

Result<Reply> parse_reply(std::string_view body);

// 16 lowercase hex digits from the OS's random source.
std::string new_request_id();

bool is_hex(std::string_view s, size_t n);

}  // namespace aura::rpc
