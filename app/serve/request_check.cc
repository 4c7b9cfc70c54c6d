#include "app/serve/request_check.h"

#include <algorithm>
#include <cctype>

#include "app/rpc/frame.h"
#include "engine/common/json_writer.h"
#include "engine/json/json_reader.h"

namespace aura::serve {
namespace {

using rpc::api_error;
using rpc::ApiError;

constexpr size_t kTextBytes = 4096;  // a learner's text (attempt::kMaxLearnerTextBytes)
constexpr size_t kScriptBytes = 64 * 1024;

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A query parameter name (or value) that looks like a credential.
bool credential_like(std::string_view name, std::string_view value) {
  static const char* kNames[] = {"capability", "cap",           "token",    "access_token",
                                 "auth",       "authorization", "operator", "operator_token",
                                 "key",        "secret",        "bearer"};
  std::string n = lower(name);
  if (n.rfind("aura_token", 0) == 0 || n.rfind("aura_cap", 0) == 0) return true;
  for (const char* k : kNames) {
    if (n == k) return true;
  }
  return rpc::is_hex(value, rpc::kTokenHexBytes);
}

// "Bearer <token>": the token, or nullopt when the scheme is another.
std::optional<std::string_view> bearer(std::string_view header) {
  header = trim(header);
  if (header.size() < 7 || lower(header.substr(0, 7)) != "bearer ") return std::nullopt;
  return trim(header.substr(7));
}

// The value of cookie `name` in a Cookie header ("a=b; c=d").
std::optional<std::string_view> cookie_value(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    size_t semi = header.find(';');
    std::string_view pair = trim(header.substr(0, semi));
    size_t eq = pair.find('=');
    if (eq != std::string_view::npos && trim(pair.substr(0, eq)) == name) {
      return trim(pair.substr(eq + 1));
    }
    if (semi == std::string_view::npos) break;
    header.remove_prefix(semi + 1);
  }
  return std::nullopt;
}

bool is_learner_name(std::string_view s) {
  if (s.empty() || s.size() > 32 || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

bool is_call_name(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}

ApiError at(const json::Object& o, std::string_view name, std::string_view what) {
  return malformed_json(o.error(name, what));
}

// The learner's credential for `attempt`: Bearer, else the attempt's cookie.
std::variant<std::string, ApiError> token_of(const ApiRequest& r, std::string_view attempt) {
  auto unauthorized = [](std::string m) { return api_error(401, "unauthorized", std::move(m)); };
  if (r.authorization) {
    auto token = bearer(*r.authorization);
    if (!token || !rpc::is_hex(*token, rpc::kTokenHexBytes)) {
      return unauthorized(
          "Authorization: must be 'Bearer' and the attempt's token (64 lowercase hex)");
    }
    return std::string(*token);
  }
  if (r.cookie) {
    const std::string name = token_cookie_name(attempt);
    if (auto v = cookie_value(*r.cookie, name)) {
      if (!rpc::is_hex(*v, rpc::kTokenHexBytes)) {
        return unauthorized("cookie " + name + ": not a token (64 lowercase hex)");
      }
      return std::string(*v);
    }
  }
  return unauthorized(
      "this attempt needs its token: 'Authorization: Bearer <token>' or the cookie " +
      token_cookie_name(attempt));
}

std::variant<std::string, ApiError> operator_token_of(const ApiRequest& r) {
  auto unauthorized = [](std::string m) { return api_error(401, "unauthorized", std::move(m)); };
  if (!r.authorization) {
    return unauthorized("operator routes need 'Authorization: Bearer <operator token>'");
  }
  auto token = bearer(*r.authorization);
  if (!token || token->empty() || token->size() > rpc::kMaxOperatorTokenBytes ||
      !std::all_of(token->begin(), token->end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
    return unauthorized("Authorization: must be 'Bearer' and the operator token");
  }
  return std::string(*token);
}

// One action of an InterventionIR: {call, params?} or {script, target}.
std::optional<ApiError> check_action(const json::Value& v) {
  auto o = v.as_object();
  if (!o.ok()) return malformed_json(o.status());
  if (o->has("call")) {
    auto call = o->required_string("call", 64);
    if (!call.ok()) return malformed_json(call.status());
    if (!is_call_name(*call)) return at(*o, "call", "not a call name");
    if (auto p = o->optional_object("params"); !p.ok()) return malformed_json(p.status());
  } else if (o->has("script")) {
    if (auto s = o->required_string("script", kScriptBytes); !s.ok()) {
      return malformed_json(s.status());
    }
    if (auto t = o->object("target"); !t.ok()) return malformed_json(t.status());
  } else {
    return malformed_json(o->error("", "an action has a call or a script member"));
  }
  if (Status s = o->done(); !s.is_ok()) return malformed_json(s);
  return std::nullopt;
}

// The InterventionIR's shape (docs/formats/intervention-ir.md, "Members"); what it means against
// the scenario and the attempt's evidence is the daemon's to check.
std::optional<ApiError> check_ir(const json::Object& o) {
  if (o.first_name() != "v") return at(o, "v", "must be the first member");
  auto v = o.required_u64("v");
  if (!v.ok()) return malformed_json(v.status());
  if (*v != 1) return at(o, "v", "version " + std::to_string(*v) + " is not supported");
  for (const char* name : {"hypothesis", "claim", "falsifier"}) {
    if (auto s = o.required_string(name, kTextBytes); !s.ok()) return malformed_json(s.status());
  }
  auto ev = o.array("evidence", 64);
  if (!ev.ok()) return malformed_json(ev.status());
  if (auto s = ev->strings(16); !s.ok()) return malformed_json(s.status());
  for (const char* name : {"postconditions", "invariants"}) {
    auto a = o.optional_array(name, 256);
    if (!a.ok()) return malformed_json(a.status());
    if (*a) {
      if (auto s = (*a)->strings(64); !s.ok()) return malformed_json(s.status());
    }
  }
  for (const char* name : {"actions", "rollback"}) {
    auto a = o.array(name, 32);
    if (!a.ok()) return malformed_json(a.status());
    for (const json::Value& e : a->elements()) {
      if (auto err = check_action(e)) return err;
    }
  }
  if (Status s = o.done(); !s.is_ok()) return malformed_json(s);
  return std::nullopt;
}

// A phase command's body: its members by the command (docs/ATTEMPTS.md; an IR by its shape).
std::optional<ApiError> check_command_body(std::string_view command, const json::Object& o) {
  auto text_member = [&](const char* name, bool required) -> std::optional<ApiError> {
    if (required) {
      auto s = o.required_string(name, kTextBytes);
      if (!s.ok()) return malformed_json(s.status());
    } else {
      auto s = o.optional_string(name, kTextBytes);
      if (!s.ok()) return malformed_json(s.status());
    }
    return std::nullopt;
  };
  std::optional<ApiError> err;
  if (command == "intervention") {
    return check_ir(o);
  } else if (command == "predict") {
    if (!(err = text_member("hypothesis", true)) && !(err = text_member("expect", true))) {
      auto c = o.optional_u64("confidence");
      if (!c.ok()) return malformed_json(c.status());
      if (*c && **c > 100) return at(o, "confidence", "must be 0 to 100");
    }
  } else if (command == "probe") {
    auto call = o.required_string("call", 64);
    if (!call.ok()) return malformed_json(call.status());
    if (!is_call_name(*call)) return at(o, "call", "not a call name");
    if (auto p = o.optional_object("params"); !p.ok()) return malformed_json(p.status());
  } else if (command == "authorize") {
    auto h = o.required_string("sha256", 64);
    if (!h.ok()) return malformed_json(h.status());
    if (!is_sha256_hex(*h)) return at(o, "sha256", "must be 64 lowercase hex digits");
  } else if (command == "ack") {
    // readback_seq: the readback acknowledged, as apply's answer named it (docs/api/openapi.yaml).
    if (!(err = text_member("note", false))) {
      auto seq = o.optional_u64("readback_seq");
      if (!seq.ok()) return malformed_json(seq.status());
    }
  } else if (command == "reflect") {
    err = text_member("text", true);
  } else if (command == "abandon" || command == "reset") {
    err = text_member("reason", true);
  }
  // apply, verify, gate, receipt: no member.
  if (err) return err;
  if (Status s = o.done(); !s.is_ok()) return malformed_json(s);
  return std::nullopt;
}

// A receipt file: a DSSE envelope (docs/formats/dsse.md); its signature and contents are the
// daemon's to verify.
std::optional<ApiError> check_envelope(const json::Object& o) {
  if (auto t = o.required_string("payloadType", 256); !t.ok()) return malformed_json(t.status());
  if (auto p = o.required_string("payload"); !p.ok()) return malformed_json(p.status());
  auto sigs = o.array("signatures", 16);
  if (!sigs.ok()) return malformed_json(sigs.status());
  for (const json::Value& v : sigs->elements()) {
    auto sig = v.as_object();
    if (!sig.ok()) return malformed_json(sig.status());
    if (auto x = sig->required_string("sig", 1024); !x.ok()) return malformed_json(x.status());
    if (auto k = sig->optional_string("keyid", 512); !k.ok()) return malformed_json(k.status());
    if (Status st = sig->done(); !st.is_ok()) return malformed_json(st);
  }
  if (Status st = o.done(); !st.is_ok()) return malformed_json(st);
  return std::nullopt;
}

bool is_json_media_type(std::string_view ct) {
  size_t semi = ct.find(';');
  if (lower(trim(ct.substr(0, semi))) != "application/json") return false;
  if (semi == std::string_view::npos) return true;
  // Only a charset parameter, and only UTF-8.
  std::string params = lower(trim(ct.substr(semi + 1)));
  return params.empty() || params == "charset=utf-8" || params == "charset=\"utf-8\"";
}

}  // namespace

std::chrono::milliseconds daemon_timeout(std::string_view op) {
  using std::chrono::minutes;
  // Starting an attempt builds its live world; a phase command may apply, verify or rebuild it.
  if (op == "attempt.create" || op == "attempt.command") return minutes(15);
  // Replaying the log, rebuilding projections, a snapshot: the whole log.
  if (op == "receipt.verify" || op.substr(0, 9) == "operator.") return minutes(30);
  return minutes(2);
}

bool Origins::contains(std::string_view origin) const {
  return std::find(allowed.begin(), allowed.end(), origin) != allowed.end();
}

std::string token_cookie_name(std::string_view attempt) {
  return "aura_token_" + std::string(attempt);
}

std::string_view target_path(std::string_view target) { return target.substr(0, target.find('?')); }

ApiError malformed_json(const Status& s) {
  ApiError e = api_error(400, "malformed", s.message());
  // The strict reader says "$.a.b: what" (PathStyle::kJsonPath, no prefix).
  const std::string& m = s.message();
  if (!m.empty() && m[0] == '$') {
    size_t colon = m.find(": ");
    e.path = m.substr(0, colon);
  }
  return e;
}

std::optional<ApiError> check_query(std::string_view target, bool api) {
  size_t q = target.find('?');
  if (q == std::string_view::npos) return std::nullopt;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    size_t eq = pair.find('=');
    std::string_view name = pair.substr(0, eq);
    std::string_view value = eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (credential_like(name, value)) {
      return api_error(400, "malformed",
                       "a token is never accepted in a URL: send "
                       "'Authorization: Bearer ...' (or the aura_token_<attempt> cookie)");
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  if (api && q + 1 < target.size()) {
    return api_error(400, "malformed", "API routes take no query parameters");
  }
  return std::nullopt;
}

std::optional<ApiError> check_same_origin(const ApiRequest& r, const Origins& origins) {
  if (r.sec_fetch_site) {
    std::string site = lower(trim(*r.sec_fetch_site));
    if (site != "same-origin" && site != "none") {
      return api_error(403, "forbidden",
                       "cross-site request refused (Sec-Fetch-Site: " + site.substr(0, 32) + ")");
    }
  }
  if (r.method == "POST" && r.origin && !origins.contains(trim(*r.origin))) {
    return api_error(403, "forbidden", "cross-origin request refused (Origin is not this lab)");
  }
  return std::nullopt;
}

std::variant<Forward, Refusal> prepare_forward(const ApiRequest& r, const Origins& origins,
                                               const Limits& limits) {
  const std::string_view path = target_path(r.target);
  auto routed = match_route(r.method, path, limits);
  if (auto* no = std::get_if<RouteRefusal>(&routed)) {
    return Refusal{std::move(no->error), std::move(no->allow), std::move(no->route)};
  }
  RouteMatch m = std::get<RouteMatch>(std::move(routed));
  const RouteSpec& spec = *m.spec;
  auto refuse = [&](ApiError e) { return Refusal{std::move(e), "", m.route}; };

  if (!r.repeated_header.empty()) {
    return refuse(api_error(400, "malformed", "header " + r.repeated_header + " given twice"));
  }
  if (auto e = check_query(r.target, true)) return refuse(std::move(*e));
  if (auto e = check_same_origin(r, origins)) return refuse(std::move(*e));

  Forward f;
  f.route = m.route;
  f.op = std::string(spec.op);
  f.stream = spec.stream;
  f.attempt = m.attempt;
  f.sets_cookie = spec.op == "attempt.create" || spec.op == "attempt.token";
  f.timeout = daemon_timeout(spec.op);

  // The credential the route needs (the daemon checks it again; the front only carries it).
  if (spec.credential == Credential::kToken) {
    auto c = token_of(r, m.attempt);
    if (auto* e = std::get_if<ApiError>(&c)) return refuse(std::move(*e));
    f.auth = rpc::AuthKind::kToken;
    f.secret = std::get<std::string>(std::move(c));
  } else if (spec.credential == Credential::kOperator) {
    auto t = operator_token_of(r);
    if (auto* e = std::get_if<ApiError>(&t)) return refuse(std::move(*e));
    f.auth = rpc::AuthKind::kOperator;
    f.secret = std::get<std::string>(std::move(t));
  }

  // The body: size, media type, JSON, members.
  if (r.body.size() > m.max_body_bytes) {
    return refuse(api_error(413, "too_large",
                            "the body is " + std::to_string(r.body.size()) +
                                " bytes, more than this route's " +
                                std::to_string(m.max_body_bytes)));
  }
  JsonWriter args;
  for (auto [name, value] : {std::pair{"attempt", &m.attempt}, std::pair{"run", &m.run},
                             std::pair{"sha256", &m.sha256}, std::pair{"scenario", &m.scenario}}) {
    if (!value->empty()) args.str(name, *value);
  }
  if (spec.op == "attempt.evidence" && !m.evidence.empty()) args.str("evidence", m.evidence);
  if (spec.stream) {
    uint64_t after = 0;
    if (r.last_event_id) {
      std::string_view id = trim(*r.last_event_id);
      // An event seq is below 2^63: "9223372036854775807" is the largest (19 digits).
      if (id.empty() || id.size() > 19 ||
          !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
          (id.size() == 19 && id > "9223372036854775807")) {
        return refuse(api_error(
            400, "malformed", "Last-Event-ID: must be an event seq (at most 9223372036854775807)"));
      }
      after = std::stoull(std::string(id));
    }
    args.num("after_seq", after);
  }
  if (spec.body == BodyRule::kNone) {
    if (!r.body.empty()) {
      return refuse(api_error(400, "malformed", "this route takes no body"));
    }
    f.args_json = args.done();
    return f;
  }
  if (r.body.empty()) {
    if (spec.body == BodyRule::kEmptyObject ||
        (spec.body == BodyRule::kCommand &&
         (m.command == "apply" || m.command == "verify" || m.command == "gate" ||
          m.command == "receipt" || m.command == "ack"))) {
      if (spec.body == BodyRule::kCommand) {
        args.str("command", m.command).raw("body", "{}");
      }
      f.args_json = args.done();
      return f;
    }
    ApiError e = api_error(400, "malformed", "$: a JSON body is required");
    e.path = "$";
    return refuse(std::move(e));
  }
  if (!r.content_type || !is_json_media_type(*r.content_type)) {
    return refuse(api_error(415, "unsupported_media_type",
                            "the body must be sent as Content-Type: application/json"));
  }
  json::Limits jl;
  jl.max_bytes = m.max_body_bytes;
  jl.max_depth = limits.json_depth;
  jl.max_members = 1024;
  json::Reader reader(jl);
  auto root_value = reader.parse(r.body);
  if (!root_value.ok()) return refuse(malformed_json(root_value.status()));
  auto root = root_value->as_object();
  if (!root.ok()) return refuse(malformed_json(root.status()));
  const json::Object& o = *root;

  switch (spec.body) {
    case BodyRule::kNone:
      break;
    case BodyRule::kEmptyObject:
      if (Status s = o.done(); !s.is_ok()) return refuse(malformed_json(s));
      break;
    case BodyRule::kCreateAttempt:
    case BodyRule::kJudgeEnqueue: {
      auto sc = o.required_string("scenario", 64);
      if (!sc.ok()) return refuse(malformed_json(sc.status()));
      if (!is_scenario_name(*sc)) {
        return refuse(at(o, "scenario", "not a scenario id ([A-Za-z0-9][A-Za-z0-9._-]{0,63})"));
      }
      args.str("scenario", *sc);
      if (spec.body == BodyRule::kCreateAttempt) {
        auto l = o.optional_string("learner", 32);
        if (!l.ok()) return refuse(malformed_json(l.status()));
        if (*l) {
          if (!is_learner_name(**l)) {
            return refuse(at(o, "learner", "must match [a-z][a-z0-9_-]{0,31}"));
          }
          args.str("learner", **l);
        }
        if (!r.client.empty()) args.str("client", r.client);
      }
      if (Status s = o.done(); !s.is_ok()) return refuse(malformed_json(s));
      break;
    }
    case BodyRule::kCommand:
      if (auto e = check_command_body(m.command, o)) return refuse(std::move(*e));
      args.str("command", m.command).raw("body", root_value->minified());
      break;
    case BodyRule::kIr:
      if (auto e = check_ir(o)) return refuse(std::move(*e));
      args.raw("ir", root_value->minified());
      break;
    case BodyRule::kReceipt:
      if (auto e = check_envelope(o)) return refuse(std::move(*e));
      args.raw("receipt", root_value->minified());
      break;
  }
  f.args_json = args.done();
  return f;
}

}  // namespace aura::serve
