#include "app/serve/route.h"

#include <algorithm>

namespace aura::serve {
namespace {

std::vector<std::string_view> split_path(std::string_view p) {
  std::vector<std::string_view> out;
  if (p.empty() || p[0] != '/') return out;
  p.remove_prefix(1);
  for (;;) {
    size_t slash = p.find('/');
    out.push_back(p.substr(0, slash));
    if (slash == std::string_view::npos) break;
    p.remove_prefix(slash + 1);
  }
  return out;
}

bool is_param(std::string_view seg) { return seg.size() > 2 && seg.front() == '{'; }

bool is_lower_hex(std::string_view s, size_t n) { return rpc::is_hex(s, n); }

// A parameter whose values are a closed set decides whether a path matches at all (an unknown
// command is an unknown route); the others match any segment and are checked afterwards.
bool param_matches(std::string_view name, std::string_view value) {
  if (value.empty()) return false;
  if (name == "{command}") {
    const auto& c = attempt_commands();
    return std::find(c.begin(), c.end(), value) != c.end();
  }
  return true;
}

// A path parameter against its pattern; the error names the parameter.
std::optional<rpc::ApiError> check_param(std::string_view name, std::string_view value) {
  auto bad = [&](std::string_view what) {
    return rpc::api_error(400, "malformed",
                          "path parameter " + std::string(name.substr(1, name.size() - 2)) +
                              ": must be " + std::string(what));
  };
  if (name == "{attempt}" && !is_attempt_id(value)) return bad("16 lowercase hex digits");
  if (name == "{run}" && !is_run_id(value)) return bad("16 lowercase hex digits");
  if (name == "{sha256}" && !is_sha256_hex(value)) return bad("64 lowercase hex digits");
  if (name == "{evidence}" && !is_evidence_id(value)) return bad("ev-N (N of 1 to 6 digits)");
  if (name == "{scenario}" && !is_scenario_name(value)) {
    return bad("a scenario id ([A-Za-z0-9][A-Za-z0-9._-]{0,63})");
  }
  return std::nullopt;
}

struct Candidate {
  const RouteSpec* spec;
  size_t literals;
};

}  // namespace

bool is_attempt_id(std::string_view s) { return is_lower_hex(s, 16); }
bool is_run_id(std::string_view s) { return is_lower_hex(s, 16); }
bool is_sha256_hex(std::string_view s) { return is_lower_hex(s, 64); }

bool is_evidence_id(std::string_view s) {
  if (s.size() < 4 || s.size() > 9 || s.substr(0, 3) != "ev-") return false;
  return std::all_of(s.begin() + 3, s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_scenario_name(std::string_view s) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  if (s.empty() || s.size() > 64 || !alnum(s[0])) return false;
  return std::all_of(s.begin(), s.end(),
                     [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

const std::vector<std::string_view>& attempt_commands() {
  static const std::vector<std::string_view> c = {"predict", "probe",   "intervention", "authorize",
                                                  "apply",   "ack",     "verify",       "gate",
                                                  "receipt", "reflect", "abandon",      "reset"};
  return c;
}

const std::vector<RouteSpec>& api_routes() {
  using C = Credential;
  using B = BodyRule;
  static const std::vector<RouteSpec> routes = {
      {"GET", "/health", "health"},
      {"GET", "/capabilities", "capabilities"},
      {"GET", "/scenarios", "scenarios.list"},
      {"GET", "/scenarios/{scenario}", "scenarios.get"},
      {"POST", "/attempts", "attempt.create", C::kNone, B::kCreateAttempt},
      {"GET", "/attempts/{attempt}", "attempt.state", C::kToken},
      {"POST", "/attempts/{attempt}/token", "attempt.token", C::kToken, B::kEmptyObject},
      {"POST", "/attempts/{attempt}/{command}", "attempt.command", C::kToken, B::kCommand},
      {"POST", "/attempts/{attempt}/intervention/validate", "attempt.validate", C::kToken, B::kIr},
      {"GET", "/attempts/{attempt}/evidence", "attempt.evidence", C::kToken},
      {"GET", "/attempts/{attempt}/catalog", "attempt.catalog", C::kToken},
      {"GET", "/attempts/{attempt}/evidence/{evidence}", "attempt.evidence", C::kToken},
      {"GET", "/attempts/{attempt}/receipt", "attempt.receipt", C::kToken},
      {"GET", "/attempts/{attempt}/events", "attempt.events", C::kToken, B::kNone, true},
      {"POST", "/receipts/verify", "receipt.verify", C::kNone, B::kReceipt},
      {"GET", "/receipts/{sha256}", "receipt.get"},
      {"GET", "/proof", "proof"},
      {"GET", "/lab-key", "lab.key"},
      {"GET", "/proof/receipts/{sha256}", "proof.receipt"},
      {"GET", "/judge", "judge.list"},
      {"POST", "/judge", "judge.enqueue", C::kNone, B::kJudgeEnqueue},
      {"GET", "/judge/{run}", "judge.get"},
      {"GET", "/judge/{run}/events", "judge.events", C::kNone, B::kNone, true},
      {"POST", "/operator/projections/rebuild", "operator.rebuild", C::kOperator, B::kEmptyObject},
      {"POST", "/operator/checkpoint", "operator.checkpoint", C::kOperator, B::kEmptyObject},
      {"POST", "/operator/snapshot", "operator.snapshot", C::kOperator, B::kEmptyObject},
      {"POST", "/operator/capabilities/refresh", "operator.refresh", C::kOperator, B::kEmptyObject},
      {"POST", "/operator/reap", "operator.reap", C::kOperator, B::kEmptyObject},
      {"POST", "/operator/verify", "operator.verify", C::kOperator, B::kEmptyObject},
  };
  return routes;
}

std::variant<RouteMatch, RouteRefusal> match_route(std::string_view method, std::string_view path,
                                                   const Limits& limits) {
  RouteRefusal refusal;
  refusal.route = "unmatched";
  if (path.substr(0, kApiPrefix.size()) != kApiPrefix) {
    refusal.error = rpc::api_error(404, "not_found", "no such route");
    return refusal;
  }
  const auto segs = split_path(path.substr(kApiPrefix.size()));
  // Each pattern's segments, split once.
  static const std::vector<std::vector<std::string_view>> patterns = [] {
    std::vector<std::vector<std::string_view>> out;
    for (const RouteSpec& r : api_routes()) out.push_back(split_path(r.pattern));
    return out;
  }();
  std::vector<Candidate> found;
  for (size_t k = 0; k < api_routes().size(); ++k) {
    const RouteSpec& r = api_routes()[k];
    const auto& pat = patterns[k];
    if (pat.size() != segs.size()) continue;
    size_t literals = 0;
    bool ok = true;
    for (size_t i = 0; i < pat.size() && ok; ++i) {
      if (is_param(pat[i])) {
        ok = param_matches(pat[i], segs[i]);
      } else {
        ok = pat[i] == segs[i];
        literals += ok;
      }
    }
    if (ok) found.push_back({&r, literals});
  }
  if (found.empty()) {
    refusal.error = rpc::api_error(
        404, "not_found",
        "no such route: " + std::string(method) + " " + std::string(path.substr(0, 256)));
    // POST /attempts/{attempt}/<unknown>: say which commands there are.
    if (segs.size() == 3 && segs[0] == "attempts" && method == "POST") {
      for (auto c : attempt_commands()) refusal.error.expected.emplace_back(c);
    }
    return refusal;
  }
  // The most specific pattern of the request's method ("/attempts/{a}/token" before
  // "/attempts/{a}/{command}").
  const Candidate* best = nullptr;
  std::vector<std::string_view> methods;
  for (const Candidate& c : found) {
    if (std::find(methods.begin(), methods.end(), c.spec->method) == methods.end()) {
      methods.push_back(c.spec->method);
    }
    if (c.spec->method == method && (best == nullptr || c.literals > best->literals)) best = &c;
  }
  if (best == nullptr) {
    std::sort(methods.begin(), methods.end());
    for (auto m : methods) {
      refusal.allow += (refusal.allow.empty() ? "" : ", ") + std::string(m);
      if (m == "GET") refusal.allow += ", HEAD";  // answered as a GET without its body
    }
    refusal.route = std::string(kApiPrefix) + std::string(found.front().spec->pattern);
    refusal.error = rpc::api_error(
        405, "method_not_allowed",
        std::string(method.substr(0, 16)) + " is not allowed here (" + refusal.allow + ")");
    return refusal;
  }
  RouteMatch m;
  m.spec = best->spec;
  m.route = std::string(kApiPrefix) + std::string(m.spec->pattern);
  const auto& pat = patterns[size_t(m.spec - api_routes().data())];
  for (size_t i = 0; i < pat.size(); ++i) {
    if (!is_param(pat[i])) continue;
    if (auto e = check_param(pat[i], segs[i])) {
      refusal.error = std::move(*e);
      refusal.route = m.route;
      return refusal;
    }
    std::string v(segs[i]);
    if (pat[i] == "{attempt}") m.attempt = v;
    if (pat[i] == "{run}") m.run = v;
    if (pat[i] == "{sha256}") m.sha256 = v;
    if (pat[i] == "{evidence}") m.evidence = v;
    if (pat[i] == "{scenario}") m.scenario = v;
    if (pat[i] == "{command}") m.command = v;
  }
  // An InterventionIR takes the larger limit, a receipt the largest.
  const bool ir = m.spec->body == BodyRule::kIr || m.command == "intervention";
  m.max_body_bytes = m.spec->body == BodyRule::kReceipt ? limits.receipt_body_bytes
                     : ir                               ? limits.ir_body_bytes
                                                        : limits.body_bytes;
  return m;
}

}  // namespace aura::serve
