// What the front checks before anything reaches the daemon, as a pure function of a request's
// parts: the query (no credential in a URL), same-origin rules, the credential a route needs,
// the body's media type, size and JSON (strict reader, depth 32, duplicates refused) and its
// members per route. The result is a daemon request ready to send, or the API error to answer.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "app/rpc/message.h"
#include "app/serve/route.h"
#include "app/serve/serve_limits.h"

namespace aura::serve {

// The parts of an HTTP request the checks read (the server fills it from Beast's message).
struct ApiRequest {
  std::string method;
  std::string target;  // path and query, as received
  std::optional<std::string> content_type;
  std::optional<std::string> authorization;
  std::optional<std::string> cookie;
  std::optional<std::string> origin;
  std::optional<std::string> sec_fetch_site;
  std::optional<std::string> last_event_id;
  // A header that may appear once and appeared more often ("authorization"), else empty.
  std::string repeated_header;
  std::string body;
  // The client's address as the front saw it: the daemon's per-client limits count by it.
  std::string client;
};

// Who the front is: the origins that state-changing requests may come from.
struct Origins {
  std::vector<std::string> allowed;  // "http://127.0.0.1:8080", ...
  bool contains(std::string_view origin) const;
};

// A checked request, ready for the daemon.
struct Forward {
  std::string route;  // the template, for metrics and logs
  std::string op;
  std::string args_json;
  rpc::AuthKind auth = rpc::AuthKind::kNone;
  std::string secret;  // never logged, never echoed
  bool stream = false;
  std::string attempt;       // the attempt the request names (for the token cookie)
  bool sets_cookie = false;  // a success carries a new token: Set-Cookie it
  std::chrono::milliseconds timeout{120'000};  // how long the daemon may take to answer
};

struct Refusal {
  rpc::ApiError error;
  std::string allow;  // 405
  std::string route;
};

// The path of a target, without its query ("/api/v1/health?x" -> "/api/v1/health").
std::string_view target_path(std::string_view target);

// Refuses a query that carries a credential (token=, access_token=, ...): never in a URL.
// `api`: any query at all is refused (no API route takes one).
std::optional<rpc::ApiError> check_query(std::string_view target, bool api);

// Same-origin rules: a POST with an Origin header must come from one of `origins`; a
// Sec-Fetch-Site header, when present, must be same-origin or none. 403 otherwise.
std::optional<rpc::ApiError> check_same_origin(const ApiRequest& r, const Origins& origins);

// Routing, then every check; the daemon request on success. Pure: no I/O.
std::variant<Forward, Refusal> prepare_forward(const ApiRequest& r, const Origins& origins,
                                               const Limits& limits);

// How long the daemon may take to answer `op` (a world build or a log replay takes minutes).
std::chrono::milliseconds daemon_timeout(std::string_view op);

// A strict-reader error ("$.a.b: what") as a 400 naming the JSON path.
rpc::ApiError malformed_json(const Status& s);

// The token cookie's name for an attempt: aura_token_<attempt>.
std::string token_cookie_name(std::string_view attempt);

}  // namespace aura::serve
