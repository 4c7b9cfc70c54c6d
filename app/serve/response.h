// What the front answers, before it becomes bytes: status, headers and body, with the security
// headers every response carries, the API's error shape, the token cookie and the
// server-sent event encoding. Pure functions; the server writes the result.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "app/rpc/message.h"

namespace aura::serve {

inline constexpr std::string_view kContentSecurityPolicy =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

struct Response {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // besides the security headers
  std::string content_type = "application/json";
  std::string body;

  void set(std::string name, std::string value);
  const std::string* find(std::string_view name) const;
};

// The headers every response carries (CSP, nosniff, no referrer, DENY framing), and
// Cache-Control: no-store for the API and metrics (`api`).
std::vector<std::pair<std::string, std::string>> security_headers(bool api);

// An API error as the HTTP response ({"error": {...}}, application/json); `allow` for 405.
Response error_response(const rpc::ApiError& e, std::string_view allow = "");

// The daemon's reply as the HTTP response: its status and body, or its error.
Response reply_response(const rpc::Reply& reply);

// The token cookie for `attempt`: HttpOnly, SameSite=Strict, scoped to the attempt's API
// path; Secure when served over TLS. Empty when `attempt` or `token` is not well formed.
std::string token_cookie(std::string_view attempt, std::string_view token, bool tls);

// The token an attempt.create or attempt.token reply carries ({"attempt"?,
// "token"}), nullopt when it carries none.
std::optional<std::pair<std::string, std::string>> reply_token(const rpc::Reply& reply,
                                                               std::string_view attempt);

// One daemon stream event ({"seq", "type", "data"}) as a server-sent event:
// "id: <seq>\nevent: <type>\ndata: <json>\n\n". An error names what was wrong with the frame.
Result<std::string> sse_event(std::string_view frame_body);
inline constexpr std::string_view kSseKeepAlive = ": keep-alive\n\n";

// The page `/` answers when the browser lab is not built.
Response ui_missing_page();

}  // namespace aura::serve
