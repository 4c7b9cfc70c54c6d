// The API's routes (docs/api/openapi.yaml, paths) as one table, and routing as a pure function of
// a method and a path: which daemon operation, which credential, which body rule, and the path
// parameters checked against their patterns. No socket, no daemon: tested on strings.
#pragma once

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "app/rpc/message.h"
#include "app/serve/serve_limits.h"

namespace aura::serve {

inline constexpr std::string_view kApiPrefix = "/api/v1";

// What a route needs from the caller.
enum class Credential {
  kNone,      // public
  kToken,     // the attempt's token (Bearer or the aura_token_<attempt> cookie)
  kOperator,  // the operator token (Bearer)
};

// How a route's body is read before it is forwarded (request_check.h).
enum class BodyRule {
  kNone,           // no body (an empty one is accepted, never a non-empty one)
  kEmptyObject,    // no body or {} (phase commands without arguments, operator actions)
  kCreateAttempt,  // {scenario, learner?}
  kJudgeEnqueue,   // {scenario}
  kCommand,        // by the command: predict, probe, authorize, ack, reflect, abandon, reset
  kIr,             // an InterventionIR (submit and validate): 256 KiB
  kReceipt,        // a receipt file (a DSSE envelope): 1 MiB
};

struct RouteSpec {
  std::string_view method;   // "GET" or "POST"
  std::string_view pattern;  // under /api/v1: "/attempts/{attempt}/evidence/{evidence}"
  std::string_view op;       // the daemon operation
  Credential credential = Credential::kNone;
  BodyRule body = BodyRule::kNone;
  bool stream = false;  // a server-sent event stream
};

// Every API route, in the order of docs/api/openapi.yaml.
const std::vector<RouteSpec>& api_routes();

// The phase commands of POST /attempts/{attempt}/{command}.
const std::vector<std::string_view>& attempt_commands();

// A route found and its path parameters checked.
struct RouteMatch {
  const RouteSpec* spec = nullptr;
  std::string route;  // the template with its prefix ("/api/v1/attempts/{attempt}"): metrics, logs
  // Path parameters (empty when the route has none of that name).
  std::string attempt, run, sha256, evidence, scenario, command;
  size_t max_body_bytes = 0;
};

// No route: 404 (unknown path), 405 (with the methods the path allows) or 400 (a path parameter
// that fails its pattern; the route is then known).
struct RouteRefusal {
  rpc::ApiError error;
  std::string allow;  // 405: "GET, POST"
  std::string route;  // the template when the path matched one, else "unmatched"
};

// `path` is the request target without its query, starting with /api/v1.
std::variant<RouteMatch, RouteRefusal> match_route(std::string_view method, std::string_view path,
                                                   const Limits& limits);

// The patterns of path parameters (docs/api/openapi.yaml, parameters).
bool is_attempt_id(std::string_view s);   // 16 lowercase hex
bool is_run_id(std::string_view s);       // 16 lowercase hex
bool is_sha256_hex(std::string_view s);   // 64 lowercase hex
bool is_evidence_id(std::string_view s);  // ev-N, N of 1 to 6 digits
bool is_scenario_name(
    std::string_view s);  // a package id or a lab name (O1): [A-Za-z0-9][A-Za-z0-9._-]{0,63}

}  // namespace aura::serve
