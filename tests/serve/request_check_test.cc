// The front's routing and checks as pure functions (app/serve/route.h, request_check.h,
// response.h): no socket, no daemon. Which op and args each route forwards; each refusal and
// its status; credentials; same-origin; the headers every response carries; SSE framing.
#include "app/serve/request_check.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "app/serve/response.h"
#include "app/serve/route.h"

using namespace aura;
using namespace aura::serve;

namespace {

const std::string kAttempt = "0123456789abcdef";
const std::string kCap(64, 'a');
const std::string kSha(64, 'b');

Origins origins() { return Origins{{"http://127.0.0.1:8080", "http://localhost:8080"}}; }

ApiRequest req(std::string method, std::string target, std::string body = "") {
  ApiRequest r;
  r.method = std::move(method);
  r.target = std::move(target);
  r.body = std::move(body);
  if (!r.body.empty()) r.content_type = "application/json";
  return r;
}

ApiRequest with_cap(ApiRequest r) {
  r.authorization = "Bearer " + kCap;
  return r;
}

Forward forwarded(const ApiRequest& r, Limits limits = {}) {
  auto out = prepare_forward(r, origins(), limits);
  if (auto* no = std::get_if<Refusal>(&out)) {
    FAIL_CHECK("refused: " << no->error.body());
    return {};
  }
  return std::get<Forward>(out);
}

Refusal refused(const ApiRequest& r, Limits limits = {}) {
  auto out = prepare_forward(r, origins(), limits);
  if (auto* f = std::get_if<Forward>(&out)) {
    FAIL_CHECK("forwarded " << f->op << " " << f->args_json);
    return {};
  }
  return std::get<Refusal>(out);
}

}  // namespace

TEST_CASE("route: every API route maps to its daemon op, args and credential") {
  struct Case {
    ApiRequest r;
    std::string op, args;
    rpc::AuthKind auth = rpc::AuthKind::kNone;
  };
  const std::string a = "/api/v1/attempts/" + kAttempt;
  const Case cases[] = {
      {req("GET", "/api/v1/health"), "health", "{}"},
      {req("GET", "/api/v1/capabilities"), "capabilities", "{}"},
      {req("GET", "/api/v1/scenarios"), "scenarios.list", "{}"},
      {req("GET", "/api/v1/scenarios/t0-config-drift"), "scenarios.get",
       R"({"scenario":"t0-config-drift"})"},
      {req("POST", "/api/v1/attempts", R"({"scenario":"O1","learner":"ada"})"), "attempt.create",
       R"({"scenario":"O1","learner":"ada"})"},
      {with_cap(req("GET", a)), "attempt.state", R"({"attempt":")" + kAttempt + "\"}",
       rpc::AuthKind::kToken},
      {with_cap(req("POST", a + "/token")), "attempt.token", R"({"attempt":")" + kAttempt + "\"}",
       rpc::AuthKind::kToken},
      {with_cap(req("POST", a + "/predict", R"({"hypothesis":"h","expect":"e","confidence":70})")),
       "attempt.command",
       R"({"attempt":")" + kAttempt +
           R"(","command":"predict","body":{"hypothesis":"h","expect":"e","confidence":70}})",
       rpc::AuthKind::kToken},
      {with_cap(req("POST", a + "/probe", R"({"call":"fleet.status","params":{"node":"web1"}})")),
       "attempt.command",
       R"({"attempt":")" + kAttempt +
           R"(","command":"probe","body":{"call":"fleet.status","params":{"node":"web1"}}})",
       rpc::AuthKind::kToken},
      {with_cap(req("POST", a + "/apply")), "attempt.command",
       R"({"attempt":")" + kAttempt + R"(","command":"apply","body":{}})", rpc::AuthKind::kToken},
      {with_cap(req("POST", a + "/receipt", "{}")), "attempt.command",
       R"({"attempt":")" + kAttempt + R"(","command":"receipt","body":{}})", rpc::AuthKind::kToken},
      {with_cap(req("GET", a + "/evidence")), "attempt.evidence",
       R"({"attempt":")" + kAttempt + "\"}", rpc::AuthKind::kToken},
      {with_cap(req("GET", a + "/evidence/ev-12")), "attempt.evidence",
       R"({"attempt":")" + kAttempt + R"(","evidence":"ev-12"})", rpc::AuthKind::kToken},
      {with_cap(req("GET", a + "/receipt")), "attempt.receipt",
       R"({"attempt":")" + kAttempt + "\"}", rpc::AuthKind::kToken},
      {with_cap(req("GET", a + "/events")), "attempt.events",
       R"({"attempt":")" + kAttempt + R"(","after_seq":0})", rpc::AuthKind::kToken},
      {req("GET", "/api/v1/receipts/" + kSha), "receipt.get", R"({"sha256":")" + kSha + "\"}"},
      {req("GET", "/api/v1/proof"), "proof", "{}"},
      {req("GET", "/api/v1/lab-key"), "lab.key", "{}"},
      {req("GET", "/api/v1/proof/receipts/" + kSha), "proof.receipt",
       R"({"sha256":")" + kSha + "\"}"},
      {req("GET", "/api/v1/judge"), "judge.list", "{}"},
      {req("POST", "/api/v1/judge", R"({"scenario":"O2"})"), "judge.enqueue",
       R"({"scenario":"O2"})"},
      {req("GET", "/api/v1/judge/fedcba9876543210"), "judge.get", R"({"run":"fedcba9876543210"})"},
      {req("GET", "/api/v1/judge/fedcba9876543210/events"), "judge.events",
       R"({"run":"fedcba9876543210","after_seq":0})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.r.method);
    CAPTURE(c.r.target);
    Forward f = forwarded(c.r);
    CHECK(f.op == c.op);
    CHECK(f.args_json == c.args);
    CHECK(f.auth == c.auth);
    if (c.auth == rpc::AuthKind::kToken) CHECK(f.secret == kCap);
  }
}

TEST_CASE("route: operator actions map to operator ops with the bearer token") {
  const std::pair<const char*, const char*> actions[] = {
      {"projections/rebuild", "operator.rebuild"},
      {"checkpoint", "operator.checkpoint"},
      {"snapshot", "operator.snapshot"},
      {"capabilities/refresh", "operator.refresh"},
      {"reap", "operator.reap"},
      {"verify", "operator.verify"}};
  for (auto [path, op] : actions) {
    ApiRequest r = req("POST", std::string("/api/v1/operator/") + path);
    r.authorization = "Bearer s3cret-token";
    Forward f = forwarded(r);
    CHECK(f.op == op);
    CHECK(f.auth == rpc::AuthKind::kOperator);
    CHECK(f.secret == "s3cret-token");
    CHECK(f.args_json == "{}");
  }
  Refusal no = refused(req("POST", "/api/v1/operator/reap"));
  CHECK(no.error.status == 401);
  CHECK(no.error.message.find("operator") != std::string::npos);
}

TEST_CASE("route: the InterventionIR and a receipt go to the daemon as documents") {
  const std::string ir =
      "{\"v\": 1, \"hypothesis\": \"h\", \"claim\": \"c\", \"evidence\": [\"ev-1\"],\n"
      " \"falsifier\": \"f\", \"actions\": [{\"call\": \"vars.unset\", \"params\": {}}],\n"
      " \"rollback\": [{\"script\": \"#!/bin/sh\\ntrue\\n\", \"target\": {\"role\": \"web\"}}]}";
  const std::string minified =
      R"({"v":1,"hypothesis":"h","claim":"c","evidence":["ev-1"],"falsifier":"f",)"
      R"("actions":[{"call":"vars.unset","params":{}}],)"
      R"("rollback":[{"script":"#!/bin/sh\ntrue\n","target":{"role":"web"}}]})";
  const std::string a = "/api/v1/attempts/" + kAttempt;
  Forward submit = forwarded(with_cap(req("POST", a + "/intervention", ir)));
  CHECK(submit.op == "attempt.command");
  CHECK(submit.args_json ==
        R"({"attempt":")" + kAttempt + R"(","command":"intervention","body":)" + minified + "}");
  Forward validate = forwarded(with_cap(req("POST", a + "/intervention/validate", ir)));
  CHECK(validate.op == "attempt.validate");
  CHECK(validate.args_json == R"({"attempt":")" + kAttempt + R"(","ir":)" + minified + "}");
  // A receipt: a DSSE envelope, its members checked.
  const std::string envelope =
      R"({"payloadType":"application/vnd.aura.receipt+json","payload":"e30=",)"
      R"("signatures":[{"keyid":"lab+0011aabb","sig":"c2ln"}]})";
  CHECK(forwarded(req("POST", "/api/v1/receipts/verify", envelope)).args_json ==
        R"({"receipt":)" + envelope + "}");
  CHECK(refused(req("POST", "/api/v1/receipts/verify", R"({"payload":"e30="})")).error.path ==
        "$.payloadType");
  CHECK(refused(req("POST", "/api/v1/receipts/verify",
                    R"({"payloadType":"t","payload":"","signatures":[{"sig":"x","by":"me"}]})"))
            .error.path == "$.signatures[0].by");

  // Its shape is checked here; an unknown member is named.
  std::string extra = ir;
  extra.insert(extra.size() - 1, ", \"sneaky\": 1");
  Refusal no = refused(with_cap(req("POST", a + "/intervention/validate", extra)));
  CHECK(no.error.status == 400);
  CHECK(no.error.path == "$.sneaky");
  Refusal bad_action = refused(with_cap(req(
      "POST", a + "/intervention",
      R"({"v":1,"hypothesis":"h","claim":"c","evidence":[],"falsifier":"f","actions":[{"call":"a.b","x":1}],"rollback":[]})")));
  CHECK(bad_action.error.path == "$.actions[0].x");
  Refusal not_first =
      refused(with_cap(req("POST", a + "/intervention", R"({"hypothesis":"h","v":1})")));
  CHECK(not_first.error.path == "$.v");
}

TEST_CASE("route: 404 unknown, 405 with Allow, 400 for a path parameter off its pattern") {
  CHECK(refused(req("GET", "/api/v1/nothing")).error.status == 404);
  CHECK(refused(req("GET", "/api/v2/health")).error.status == 404);
  CHECK(refused(req("GET", "/api/v1/health/")).error.status == 404);
  Refusal cmd = refused(with_cap(req("POST", "/api/v1/attempts/" + kAttempt + "/explode")));
  CHECK(cmd.error.status == 404);
  CHECK(cmd.error.expected.size() == attempt_commands().size());

  Refusal m = refused(req("DELETE", "/api/v1/health"));
  CHECK(m.error.status == 405);
  CHECK(m.allow == "GET, HEAD");  // HEAD is answered as a GET without its body
  CHECK(m.error.code == "method_not_allowed");
  Refusal both = refused(req("PUT", "/api/v1/attempts/" + kAttempt + "/receipt"));
  CHECK(both.allow == "GET, HEAD, POST");
  CHECK(refused(req("POST", "/api/v1/attempts/" + kAttempt + "/evidence")).allow == "GET, HEAD");
}

TEST_CASE("route: path parameters are checked against their patterns") {
  Refusal a = refused(with_cap(req("GET", "/api/v1/attempts/0123456789ABCDEF")));
  CHECK(a.error.status == 400);
  CHECK(a.error.message.find("attempt") != std::string::npos);
  CHECK(refused(req("GET", "/api/v1/judge/123")).error.status == 400);
  CHECK(refused(req("GET", "/api/v1/receipts/" + std::string(63, 'a'))).error.status == 400);
  CHECK(refused(with_cap(req("GET", "/api/v1/attempts/" + kAttempt + "/evidence/ev-x")))
            .error.status == 400);
  CHECK(refused(with_cap(req("GET", "/api/v1/attempts/" + kAttempt + "/evidence/ev-1234567")))
            .error.status == 400);
  CHECK(refused(req("GET", "/api/v1/scenarios/..")).error.status == 400);
}

TEST_CASE("credentials: Bearer or the attempt's cookie, never the URL") {
  const std::string a = "/api/v1/attempts/" + kAttempt;
  // No credential: 401, naming both ways.
  Refusal none = refused(req("GET", a));
  CHECK(none.error.status == 401);
  CHECK(none.error.message.find("aura_token_" + kAttempt) != std::string::npos);
  // The cookie of this attempt (another attempt's cookie is not it).
  ApiRequest c = req("GET", a);
  c.cookie = "theme=dark; aura_token_ffffffffffffffff=" + std::string(64, 'c') + "; aura_token_" +
             kAttempt + "=" + kCap;
  CHECK(forwarded(c).secret == kCap);
  c.cookie = "aura_token_ffffffffffffffff=" + kCap;
  CHECK(refused(c).error.status == 401);
  // Bearer wins over a cookie; a malformed one is refused, not ignored.
  ApiRequest b = with_cap(req("GET", a));
  b.cookie = "aura_token_" + kAttempt + "=" + std::string(64, 'd');
  CHECK(forwarded(b).secret == kCap);
  b.authorization = "Bearer " + std::string(64, 'A');
  CHECK(refused(b).error.status == 401);
  b.authorization = "Basic " + kCap;
  CHECK(refused(b).error.status == 401);
  // In the query: 400, whatever the route.
  for (std::string q : std::vector<std::string>{"?capability=" + kCap, "?token=x", "?x=" + kCap,
                                                "?access_token=y"}) {
    CAPTURE(q);
    Refusal r = refused(with_cap(req("GET", a + q)));
    CHECK(r.error.status == 400);
    CHECK(r.error.message.find("never accepted in a URL") != std::string::npos);
    CHECK(check_query("/app.js" + q, false).has_value());
  }
  CHECK(refused(req("GET", "/api/v1/health?verbose=1")).error.status == 400);
  CHECK(!check_query("/app.js?v=3", false).has_value());
  // A credential header given twice.
  ApiRequest twice = with_cap(req("GET", a));
  twice.repeated_header = "authorization";
  CHECK(refused(twice).error.status == 400);
}

TEST_CASE("same origin: a POST from another origin or a cross-site fetch is refused") {
  ApiRequest r = req("POST", "/api/v1/judge", R"({"scenario":"O1"})");
  CHECK(forwarded(r).op == "judge.enqueue");  // no Origin (curl): allowed
  r.origin = "http://localhost:8080";
  CHECK(forwarded(r).op == "judge.enqueue");
  r.origin = "http://evil.example:8080";
  Refusal no = refused(r);
  CHECK(no.error.status == 403);
  CHECK(no.error.code == "forbidden");
  r.origin = "null";
  CHECK(refused(r).error.status == 403);
  ApiRequest g = req("GET", "/api/v1/health");
  g.sec_fetch_site = "cross-site";
  CHECK(refused(g).error.status == 403);
  g.sec_fetch_site = "same-site";
  CHECK(refused(g).error.status == 403);
  g.sec_fetch_site = "same-origin";
  CHECK(forwarded(g).op == "health");
  g.sec_fetch_site = "none";
  CHECK(forwarded(g).op == "health");
}

TEST_CASE("bodies: media type, size, strict JSON and members, each with its status") {
  // 415: no or another media type; a JSON charset other than UTF-8.
  ApiRequest r = req("POST", "/api/v1/attempts", R"({"scenario":"O1"})");
  r.content_type = std::nullopt;
  CHECK(refused(r).error.status == 415);
  r.content_type = "text/plain";
  CHECK(refused(r).error.status == 415);
  r.content_type = "application/json; charset=latin1";
  CHECK(refused(r).error.status == 415);
  r.content_type = "Application/JSON; charset=UTF-8";
  CHECK(forwarded(r).op == "attempt.create");
  // 413 past the route's limit (64 KiB; the IR routes 256 KiB).
  Limits small;
  small.body_bytes = 16;
  ApiRequest big = req("POST", "/api/v1/attempts", R"({"scenario":"O1","learner":"ada"})");
  CHECK(refused(big, small).error.status == 413);
  CHECK(refused(big, small).error.code == "too_large");
  // Each route class has its own limit: an IR past the IR limit, a receipt past the receipt's.
  Limits classes;
  classes.body_bytes = 16;
  classes.ir_body_bytes = 64;
  classes.receipt_body_bytes = 256;
  const std::string envelope =
      R"({"payloadType":"x","payload":")" + std::string(150, 'A') + R"(","signatures":[]})";
  CHECK(forwarded(req("POST", "/api/v1/receipts/verify", envelope), classes).op ==
        "receipt.verify");
  CHECK(refused(req("POST", "/api/v1/receipts/verify", envelope + std::string(100, ' ')), classes)
            .error.status == 413);
  CHECK(refused(with_cap(req("POST", "/api/v1/attempts/" + kAttempt + "/intervention", envelope)),
                classes)
            .error.status == 413);
  // 400: malformed JSON names the path; unknown and duplicate members; depth; UTF-8; types.
  struct Bad {
    std::string body, path, words;
  };
  std::string index32;
  for (int i = 0; i < 32; ++i) index32 += "[0]";
  const Bad bads[] = {
      {R"({"scenario":"O1")", "$", "not JSON"},
      {R"({"scenario":"O1","color":"red"})", "$.color", "unknown member"},
      {R"({"scenario":"O1","scenario":"O2"})", "$.scenario", "duplicate"},
      {R"({"scenario":7})", "$.scenario", "string"},
      {R"({"scenario":"../etc"})", "$.scenario", "scenario id"},
      {R"({"scenario":"O1","learner":"Ada"})", "$.learner", "[a-z]"},
      {"{\"scenario\":\"O\xff\"}", "$", "UTF-8"},
      {R"(["O1"])", "$", "object"},
      {std::string(40, '[') + std::string(40, ']'), "$" + index32, "nested deeper than 32"},
      {R"({"learner":"ada"})", "$.scenario", "missing"},
  };
  for (const Bad& b : bads) {
    CAPTURE(b.body);
    Refusal no = refused(req("POST", "/api/v1/attempts", b.body));
    CHECK(no.error.status == 400);
    CHECK(no.error.code == "malformed");
    CHECK(no.error.path == b.path);
    CHECK(no.error.message.find(b.words) != std::string::npos);
  }
  // Nesting inside a member is named where it happens.
  std::string deep =
      R"({"call":"a.b","params":)" + std::string(33, '[') + std::string(33, ']') + "}";
  Refusal d = refused(with_cap(req("POST", "/api/v1/attempts/" + kAttempt + "/probe", deep)));
  CHECK(d.error.status == 400);
  CHECK(d.error.message.find("nested deeper than 32") != std::string::npos);
  // A body where none is taken; none where one is needed.
  CHECK(refused(req("GET", "/api/v1/health", "{}")).error.status == 400);
  Refusal missing = refused(req("POST", "/api/v1/judge"));
  CHECK(missing.error.status == 400);
  CHECK(missing.error.path == "$");
  // Command bodies: per command.
  const std::string a = "/api/v1/attempts/" + kAttempt;
  CHECK(refused(with_cap(req("POST", a + "/apply", R"({"force":true})"))).error.path == "$.force");
  CHECK(refused(with_cap(req("POST", a + "/predict",
                             R"({"hypothesis":"h","expect":"e","confidence":101})")))
            .error.path == "$.confidence");
  CHECK(refused(with_cap(req("POST", a + "/authorize", R"({"sha256":"xyz"})"))).error.path ==
        "$.sha256");
  CHECK(refused(with_cap(req("POST", a + "/reflect", "{}"))).error.path == "$.text");
  CHECK(refused(with_cap(
                    req("POST", a + "/abandon", R"({"reason":")" + std::string(4097, 'x') + "\"}")))
            .error.path == "$.reason");
  CHECK(forwarded(with_cap(req("POST", a + "/ack"))).args_json.find(R"("body":{})") !=
        std::string::npos);
  // Last-Event-ID: a seq, or 400.
  ApiRequest ev = with_cap(req("GET", a + "/events"));
  ev.last_event_id = "41";
  CHECK(forwarded(ev).args_json.find(R"("after_seq":41)") != std::string::npos);
  ev.last_event_id = "41; DROP";
  CHECK(refused(ev).error.status == 400);
  ev.last_event_id = "99999999999999999999";
  CHECK(refused(ev).error.status == 400);
  // The largest seq passes; one more, or 2^64 - 1 (which once wrapped to a replay from the
  // start), is refused.
  ev.last_event_id = "9223372036854775807";
  CHECK(forwarded(ev).args_json.find(R"("after_seq":9223372036854775807)") != std::string::npos);
  for (const char* beyond : {"9223372036854775808", "18446744073709551615"}) {
    ev.last_event_id = beyond;
    CHECK(refused(ev).error.status == 400);
  }
}

// Every request member the API's contract documents for a phase command reaches the daemon:
// the test reads the commands' bodies from docs/api/openapi.yaml ("ack {note?, readback_seq?}"),
// builds each with every member, and requires the front to forward it (ack once refused
// readback_seq, which the contract names and the daemon reads).
TEST_CASE("command bodies: every member the contract documents is accepted") {
  const char* path = std::getenv("AURA_OPENAPI");
  REQUIRE_MESSAGE(path != nullptr, "AURA_OPENAPI names docs/api/openapi.yaml (meson sets it)");
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string doc = ss.str();
  const size_t from = doc.find("Bodies: "), to = doc.find("apply, verify, gate, receipt", from);
  REQUIRE((from != std::string::npos && to != std::string::npos));
  std::string bodies = doc.substr(from + 8, to - from - 8);
  // "predict {hypothesis, expect, confidence?}; probe {call, params} ..." across lines.
  std::replace(bodies.begin(), bodies.end(), '\n', ' ');
  const std::map<std::string, std::string> value = {
      {"hypothesis", R"("h")"}, {"expect", R"("e")"},
      {"confidence", "50"},     {"call", R"("file.read")"},
      {"params", "{}"},         {"sha256", '"' + std::string(64, 'a') + '"'},
      {"note", R"("n")"},       {"readback_seq", "7"},
      {"text", R"("t")"},       {"reason", R"("r")"}};
  int commands = 0;
  for (size_t at = 0; (at = bodies.find('{', at)) != std::string::npos;) {
    const size_t close = bodies.find('}', at);
    REQUIRE(close != std::string::npos);
    // The command is the word before the brace.
    size_t w = bodies.find_last_not_of(' ', at - 1), v = w;
    while (v > 0 && std::isalpha(static_cast<unsigned char>(bodies[v - 1]))) --v;
    const std::string command = bodies.substr(v, w - v + 1);
    std::string body = "{";
    std::istringstream members(bodies.substr(at + 1, close - at - 1));
    for (std::string m; std::getline(members, m, ',');) {
      m.erase(0, m.find_first_not_of(' '));
      m.erase(m.find_last_not_of(" ?") + 1);
      REQUIRE_MESSAGE(value.contains(m), "no test value for " << command << "'s member " << m);
      body += (body.size() > 1 ? "," : "") + ('"' + m + "\":") + value.at(m);
    }
    body += "}";
    CAPTURE(command);
    CAPTURE(body);
    CHECK(forwarded(with_cap(req("POST", "/api/v1/attempts/" + kAttempt + "/" + command, body)))
              .args_json.find(body) != std::string::npos);
    ++commands;
    at = close;
  }
  CHECK(commands >= 7);  // predict, probe, authorize, ack, reflect, abandon, reset
}

TEST_CASE("responses: security headers, the error shape, the token cookie") {
  auto h = security_headers(true);
  auto value = [&](const std::string& n) {
    for (auto& [k, v] : h)
      if (k == n) return v;
    return std::string();
  };
  CHECK(value("Content-Security-Policy") ==
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  CHECK(value("X-Content-Type-Options") == "nosniff");
  CHECK(value("Referrer-Policy") == "no-referrer");
  CHECK(value("X-Frame-Options") == "DENY");
  CHECK(value("Cache-Control") == "no-store");

  rpc::ApiError e = rpc::api_error(405, "method_not_allowed", "no");
  Response r = error_response(e, "GET, POST");
  CHECK(r.status == 405);
  CHECK(*r.find("allow") == "GET, POST");
  CHECK(r.body == R"({"error":{"status":405,"code":"method_not_allowed","message":"no"}})");

  CHECK(token_cookie(kAttempt, kCap, false) == "aura_token_" + kAttempt + "=" + kCap +
                                                   "; Path=/api/v1/attempts/" + kAttempt +
                                                   "; HttpOnly; SameSite=Strict");
  CHECK(token_cookie(kAttempt, kCap, true).ends_with("; Secure"));
  CHECK(token_cookie("x;y", kCap, false).empty());
  rpc::Reply created;
  created.status = 201;
  created.body_json =
      R"({"attempt":")" + kAttempt + R"(","token":")" + kCap + R"(","phase":"observe"})";
  auto cap = reply_token(created, "");
  REQUIRE(cap.has_value());
  CHECK(cap->first == kAttempt);
  CHECK(cap->second == kCap);
  created.body_json = R"({"attempt":"x","token":"not hex"})";
  CHECK(!reply_token(created, "").has_value());
}

TEST_CASE("sse: a daemon stream event becomes one server-sent event") {
  auto e = sse_event(
      R"({"seq":42,"type":"probe.completed","ts_us":1700000000000000,"data":{"a":"line1\nline2"}})");
  REQUIRE(e.ok());
  CHECK(*e == "id: 42\nevent: probe.completed\ndata: {\"a\":\"line1\\nline2\"}\n\n");
  CHECK(!sse_event(R"({"seq":1,"type":"x\ny","data":{}})").ok());  // no header injection
  CHECK(!sse_event(R"({"seq":1,"type":"t","data":{},"extra":1})").ok());
  CHECK(!sse_event(R"({"type":"t","data":{}})").ok());
}
