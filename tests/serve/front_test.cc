// The front on loopback against a test double of the daemon (daemon_double.h): what reaches the
// daemon for each route, what comes back, every refusal class, the connection caps, a slow
// client, 200 concurrent connections, a malformed-request corpus, event streams, the cookie,
// metrics, the request log and the browser lab's files. Deadlines here are hang guards.
#include <doctest/doctest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "app/serve/http_server.h"
#include "app/serve/response.h"
#include "tests/serve/daemon_double.h"
#include "tests/serve/http_client.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using namespace aura::serve;
using namespace aura::testing;
using namespace std::chrono_literals;

namespace {

// The Host line of a request to the front on `port` (the front answers only to its own names).
std::string host(uint16_t port) { return "Host: 127.0.0.1:" + std::to_string(port) + "\r\n"; }

const std::string kAttempt = "0123456789abcdef";
const std::string kCap(64, 'a');
const std::string kBearer = "Bearer " + kCap;

// A front on a free loopback port, its daemon double, and its request log.
class Front {
 public:
  explicit Front(Limits limits = {}, std::filesystem::path ui = {}, bool with_daemon = true) {
    if (with_daemon) daemon_ = std::make_unique<DaemonDouble>(dir_ / "daemon.sock");
    ServerOptions o;
    o.port = 0;
    o.socket = dir_ / "daemon.sock";
    o.daemon_uid = ::getuid();
    o.limits = limits;
    o.ui_dir = std::move(ui);
    o.log = &log_;
    o.threads = 2;
    auto s = Server::create(o);
    REQUIRE_MESSAGE(s.ok(), s.status().message());
    server_ = std::move(s).value();
    runner_ = std::thread([this] { server_->run(); });
  }
  ~Front() { stop(); }

  void stop() {
    if (runner_.joinable()) {
      server_->stop();
      runner_.join();
    }
  }
  // Starts a drain; wait_stopped() then returns when the server's loops have ended.
  void drain(std::chrono::milliseconds grace) { server_->drain(grace); }
  void wait_stopped() {
    if (runner_.joinable()) runner_.join();
  }
  uint16_t port() const { return server_->port(); }
  DaemonDouble& daemon() { return *daemon_; }
  // The request log; stops the server first (its threads write it).
  std::string log() {
    stop();
    return log_.str();
  }
  const TempDir& dir() const { return dir_; }

  HttpResponse get(const std::string& target,
                   const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    return http(port(), "GET", target, headers);
  }
  HttpResponse post(const std::string& target, const std::string& body,
                    std::vector<std::pair<std::string, std::string>> headers = {}) {
    headers.emplace_back("Content-Type", "application/json");
    return http(port(), "POST", target, headers, body);
  }

 private:
  TempDir dir_;
  std::unique_ptr<DaemonDouble> daemon_;
  std::unique_ptr<Server> server_;
  std::ostringstream log_;
  std::thread runner_;
};

void check_security_headers(const HttpResponse& r, bool api) {
  CHECK(r.header("content-security-policy") == std::string(kContentSecurityPolicy));
  CHECK(r.header("x-content-type-options") == "nosniff");
  CHECK(r.header("referrer-policy") == "no-referrer");
  CHECK(r.header("x-frame-options") == "DENY");
  if (api) CHECK(r.header("cache-control") == "no-store");
}

// Reads from `fd` until `needle` has arrived or the peer closed; what was read.
std::string read_until(int fd, const std::string& needle) {
  std::string got;
  char buf[4096];
  while (got.find(needle) == std::string::npos) {
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    got.append(buf, size_t(n));
  }
  return got;
}

// A judge run's event stream: one event, then held open until the front leaves.
DoubleAnswer held_judge_stream() {
  DoubleAnswer a;
  a.events = {R"({"seq":1,"type":"judge.queued","data":{}})"};
  a.hold_open = true;
  return a;
}

// A connection that has asked for a judge run's event stream (from loopback address `from`).
int open_judge_stream(uint16_t port, const std::string& from = "") {
  int fd = connect_loopback_from(port, from);
  REQUIRE(
      send_all(fd, "GET /api/v1/judge/00000000000000aa/events HTTP/1.1\r\n" + host(port) + "\r\n"));
  return fd;
}

std::string error_code_of(const HttpResponse& r) {
  auto at = r.body.find("\"code\":\"");
  if (at == std::string::npos) return "";
  at += 8;
  return r.body.substr(at, r.body.find('"', at) - at);
}

}  // namespace

TEST_CASE("front: each route reaches the daemon as its op, args and credential") {
  Front f;
  struct Case {
    std::string method, target, body, op, args;
    bool cap = false;
  };
  const std::string a = "/api/v1/attempts/" + kAttempt;
  const Case cases[] = {
      {"GET", "/api/v1/health", "", "health", "{}"},
      {"GET", "/api/v1/capabilities", "", "capabilities", "{}"},
      {"GET", "/api/v1/scenarios", "", "scenarios.list", "{}"},
      {"GET", "/api/v1/scenarios/o1-fleet-drift", "", "scenarios.get",
       R"({"scenario":"o1-fleet-drift"})"},
      // The client's address goes with a new attempt: the daemon's per-client limits count by it.
      {"POST", "/api/v1/attempts", R"({"scenario":"O1"})", "attempt.create",
       R"({"scenario":"O1","client":"127.0.0.1"})"},
      {"GET", a, "", "attempt.state", R"({"attempt":")" + kAttempt + "\"}", true},
      {"POST", a + "/token", "", "attempt.token", R"({"attempt":")" + kAttempt + "\"}", true},
      {"POST", a + "/reset", R"({"reason":"start over"})", "attempt.command",
       R"({"attempt":")" + kAttempt + R"(","command":"reset","body":{"reason":"start over"}})",
       true},
      {"POST", a + "/gate", "", "attempt.command",
       R"({"attempt":")" + kAttempt + R"(","command":"gate","body":{}})", true},
      {"GET", a + "/evidence/ev-3", "", "attempt.evidence",
       R"({"attempt":")" + kAttempt + R"(","evidence":"ev-3"})", true},
      {"GET", a + "/receipt", "", "attempt.receipt", R"({"attempt":")" + kAttempt + "\"}", true},
      {"GET", a + "/catalog", "", "attempt.catalog", R"({"attempt":")" + kAttempt + "\"}", true},
      {"POST", "/api/v1/receipts/verify", R"({"payloadType":"x","payload":"","signatures":[]})",
       "receipt.verify", R"({"receipt":{"payloadType":"x","payload":"","signatures":[]}})"},
      {"GET", "/api/v1/proof", "", "proof", "{}"},
      {"GET", "/api/v1/lab-key", "", "lab.key", "{}"},
      {"GET", "/api/v1/judge", "", "judge.list", "{}"},
      {"POST", "/api/v1/judge", R"({"scenario":"O2"})", "judge.enqueue", R"({"scenario":"O2"})"},
      {"GET", "/api/v1/judge/00000000000000ff", "", "judge.get", R"({"run":"00000000000000ff"})"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.method);
    CAPTURE(c.target);
    std::vector<std::pair<std::string, std::string>> h;
    if (c.cap) h.emplace_back("Authorization", kBearer);
    if (!c.body.empty()) h.emplace_back("Content-Type", "application/json");
    auto r = http(f.port(), c.method, c.target, h,
                  c.body.empty() ? std::nullopt : std::optional<std::string>(c.body));
    CHECK(r.status == 200);
    CHECK(r.header("content-type") == "application/json");
    check_security_headers(r, true);
    auto seen = f.daemon().last(c.op);
    REQUIRE(seen.has_value());
    CHECK(seen->args_json == c.args);
    CHECK(seen->request_id == r.header("x-request-id"));
    CHECK(seen->auth == (c.cap ? rpc::AuthKind::kToken : rpc::AuthKind::kNone));
    if (c.cap) CHECK(seen->secret == kCap);
    if (c.op != "health") CHECK(r.body == R"({"op":")" + c.op + R"(","args":)" + c.args + "}");
  }
}

TEST_CASE("front: the daemon's status and errors pass through") {
  Front f;
  f.daemon().set_handler([](const rpc::Request& r) {
    DoubleAnswer a;
    if (r.op == "attempt.state") {
      a.status = r.secret == kCap ? 403 : 401;
      a.error = rpc::api_error(a.status, a.status == 403 ? "forbidden" : "unauthorized", "no");
    } else if (r.op == "attempt.command") {
      a.status = 409;
      a.error = rpc::api_error(409, "out_of_phase", "probe is refused in phase apply");
      a.error->phase = "apply";
      a.error->next = "ack";
    } else if (r.op == "judge.enqueue") {
      a.status = 429;
      a.error = rpc::api_error(429, "too_many_requests", "the judge queue is full");
    } else if (r.op == "scenarios.get") {
      a.status = 404;
      a.error = rpc::api_error(404, "not_found", "no scenario nope");
    } else if (r.op == "attempt.create") {
      a.status = 201;
      a.body = R"({"attempt":")" + kAttempt + R"(","token":")" + kCap +
               R"(","phase":"observe","next":"probe"})";
    } else {
      return DaemonDouble::default_answer(r);
    }
    return a;
  });
  const std::string a = "/api/v1/attempts/" + kAttempt;
  auto forbidden = f.get(a, {{"Authorization", kBearer}});
  CHECK(forbidden.status == 403);
  CHECK(forbidden.body == R"({"error":{"status":403,"code":"forbidden","message":"no"}})");
  check_security_headers(forbidden, true);
  auto other = f.get(a, {{"Authorization", "Bearer " + std::string(64, 'e')}});
  CHECK(other.status == 401);
  auto phase = f.post(a + "/probe", R"({"call":"fleet.status"})", {{"Authorization", kBearer}});
  CHECK(phase.status == 409);
  CHECK(phase.body.find(R"("phase":"apply")") != std::string::npos);
  CHECK(phase.body.find(R"("next":"ack")") != std::string::npos);
  CHECK(f.post("/api/v1/judge", R"({"scenario":"O1"})").status == 429);
  CHECK(f.get("/api/v1/scenarios/nope").status == 404);

  // A new attempt: 201 and its token as an HttpOnly, SameSite=Strict cookie for its path.
  auto created = f.post("/api/v1/attempts", R"({"scenario":"O1"})");
  CHECK(created.status == 201);
  CHECK(created.header("set-cookie") == "aura_token_" + kAttempt + "=" + kCap +
                                            "; Path=/api/v1/attempts/" + kAttempt +
                                            "; HttpOnly; SameSite=Strict");
  // ...which is then a credential for that attempt.
  f.get(a, {{"Cookie", "aura_token_" + kAttempt + "=" + kCap}});
  CHECK(f.daemon().last("attempt.state")->secret == kCap);
}

TEST_CASE("front: refusals (400, 404, 405, 413, 415, 431) never reach the daemon") {
  Limits limits;
  limits.body_bytes = 1024;
  Front f(limits);
  const std::string a = "/api/v1/attempts/" + kAttempt;
  auto malformed = f.post("/api/v1/attempts", R"({"scenario":"O1","extra":{"deep":1}})");
  CHECK(malformed.status == 400);
  CHECK(malformed.body.find(R"("path":"$.extra")") != std::string::npos);
  check_security_headers(malformed, true);
  CHECK(f.get("/api/v1/nowhere").status == 404);
  auto m = http(f.port(), "PUT", "/api/v1/health");
  CHECK(m.status == 405);
  CHECK(m.header("allow") == "GET, HEAD");
  CHECK(error_code_of(m) == "method_not_allowed");
  // 413 from Content-Length alone (the body is not read), and from a chunked body.
  auto big = f.post("/api/v1/attempts", std::string(2000, ' '));
  CHECK(big.status == 413);
  CHECK(error_code_of(big) == "too_large");
  std::string chunk(1500, ' ');
  std::ostringstream hex;
  hex << std::hex << chunk.size();
  auto chunked = http_raw(f.port(), "POST /api/v1/attempts HTTP/1.1\r\n" + host(f.port()) +
                                        "Content-Type: "
                                        "application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                                        hex.str() + "\r\n" + chunk + "\r\n0\r\n\r\n");
  CHECK(chunked.status == 413);
  // The IR routes take more.
  std::string ir =
      R"({"v":1,"hypothesis":")" + std::string(1500, 'h') +
      R"(","claim":"c","evidence":["ev-1"],"falsifier":"f","actions":[],"rollback":[]})";
  CHECK(f.post(a + "/intervention/validate", ir, {{"Authorization", kBearer}}).status == 200);
  auto plain = http(f.port(), "POST", "/api/v1/judge", {{"Content-Type", "text/plain"}},
                    std::string(R"({"scenario":"O1"})"));
  CHECK(plain.status == 415);
  CHECK(error_code_of(plain) == "unsupported_media_type");
  auto no_cap = f.get(a);
  CHECK(no_cap.status == 401);
  auto cross = f.post("/api/v1/judge", R"({"scenario":"O1"})", {{"Origin", "https://evil.test"}});
  CHECK(cross.status == 403);
  // 431: the header block's bytes, and its field count.
  auto huge = f.get("/api/v1/health", {{"Cookie", std::string(17 * 1024, 'c')}});
  CHECK(huge.status == 431);
  CHECK(error_code_of(huge) == "headers_too_large");
  std::vector<std::pair<std::string, std::string>> many;
  for (int i = 0; i < 70; ++i) many.emplace_back("X-F" + std::to_string(i), "1");
  auto fields = f.get("/api/v1/health", many);
  CHECK(fields.status == 431);
  check_security_headers(fields, true);
  // Nothing but the one valid IR reached the daemon.
  auto seen = f.daemon().seen();
  REQUIRE(seen.size() == 1);
  CHECK(seen[0].op == "attempt.validate");
}

TEST_CASE("front: past the per-address cap a connection gets 429, and the server goes on") {
  Limits limits;
  limits.max_connections_per_address = 3;
  Front f(limits);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) held.push_back(connect_loopback(f.port()));
  // Each held connection is admitted before the next is tried: one request through each.
  for (int fd : held) {
    REQUIRE(fd >= 0);
    REQUIRE(send_all(fd, "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "\r\n"));
    char buf[4096];
    CHECK(::recv(fd, buf, sizeof buf, 0) > 0);
  }
  auto refused = f.get("/api/v1/health");
  CHECK(refused.status == 429);
  CHECK(error_code_of(refused) == "too_many_requests");
  check_security_headers(refused, true);
  for (int fd : held) ::close(fd);
  // The held connections' ends are seen by the server in its own time: retry (hang guard).
  HttpResponse ok;
  for (int i = 0; i < 200 && ok.status != 200; ++i) {
    ok = f.get("/api/v1/health");
    if (ok.status != 200) std::this_thread::sleep_for(50ms);
  }
  CHECK(ok.status == 200);
  auto metrics = f.get("/metrics");
  CHECK(metrics.body.find("aura_front_connections_refused_total{reason=\"per_address\"} ") !=
        std::string::npos);
}

TEST_CASE("front: past the total cap a connection gets 429") {
  Limits limits;
  limits.max_connections = 2;
  Front f(limits);
  int a = connect_loopback(f.port()), b = connect_loopback(f.port());
  for (int fd : {a, b}) {
    REQUIRE(send_all(fd, "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "\r\n"));
    char buf[4096];
    CHECK(::recv(fd, buf, sizeof buf, 0) > 0);
  }
  CHECK(f.get("/api/v1/health").status == 429);
  ::close(a);
  ::close(b);
}

// A connection from `from` that asked for health and read the answer: open and idle now.
int idle_connection(uint16_t port, const std::string& from) {
  int fd = connect_loopback_from(port, from);
  REQUIRE(fd >= 0);
  REQUIRE(send_all(fd, "GET /api/v1/health HTTP/1.1\r\n" + host(port) + "\r\n"));
  REQUIRE(read_until(fd, "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  return fd;
}

// One request on its own connection from `from`.
HttpResponse get_from(uint16_t port, const std::string& from, const std::string& target) {
  int fd = connect_loopback_from(port, from);
  REQUIRE(fd >= 0);
  REQUIRE(
      send_all(fd, "GET " + target + " HTTP/1.1\r\n" + host(port) + "Connection: close\r\n\r\n"));
  auto r = read_response(fd);
  ::close(fd);
  return r;
}

// How many of `fds` the server has closed (a read returns 0 or an error): waits until `want`
// are (30 s at most: a hang guard), then a moment more for any beyond them.
size_t closed_by_server(const std::vector<int>& fds, size_t want) {
  std::vector<bool> closed(fds.size(), false);
  auto count = [&] { return size_t(std::count(closed.begin(), closed.end(), true)); };
  auto look = [&](int ms) {
    std::vector<pollfd> p;
    for (int fd : fds) p.push_back({fd, POLLIN, 0});
    if (::poll(p.data(), p.size(), ms) <= 0) return;
    for (size_t i = 0; i < p.size(); ++i) {
      char c;
      if (p[i].revents != 0 && ::recv(fds[i], &c, 1, MSG_DONTWAIT) <= 0) closed[i] = true;
    }
  };
  const auto guard = std::chrono::steady_clock::now() + 30s;
  while (count() < want && std::chrono::steady_clock::now() < guard) look(100);
  look(300);
  return count();
}

TEST_CASE("front: a full server takes an idle connection back from the client holding most") {
  // The issue's case in small: quiet connections from a few addresses fill the server; a
  // newcomer is still answered, at the heaviest client's expense, and only while that client
  // would keep more than the newcomer.
  Limits limits;
  limits.max_connections = 6;
  limits.max_connections_per_address = 6;
  Front f(limits);
  std::vector<int> heavy, light;
  for (int i = 0; i < 4; ++i) heavy.push_back(idle_connection(f.port(), "127.0.0.2"));
  for (int i = 0; i < 2; ++i) light.push_back(idle_connection(f.port(), "127.0.0.3"));

  // Full: a newcomer is answered, and one of the heaviest client's idle connections ends.
  auto newcomer = get_from(f.port(), "127.0.0.4", "/api/v1/health");
  CHECK(newcomer.status == 200);
  CHECK(closed_by_server(heavy, 1) == 1);
  CHECK(closed_by_server(light, 0) == 0);

  // Full again once the light client takes a third place (3 and 3): the heavy client asking
  // for another is refused, as nobody holds two more than it; a newcomer (the metrics below)
  // still takes one back from the heaviest.
  light.push_back(idle_connection(f.port(), "127.0.0.3"));
  auto heavy_again = get_from(f.port(), "127.0.0.2", "/api/v1/health");
  CHECK(heavy_again.status == 429);
  CHECK(error_code_of(heavy_again) == "too_many_requests");
  CHECK(heavy_again.header("retry-after") == "1");
  auto metrics = get_from(f.port(), "127.0.0.5", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.body.find("aura_front_shares_taken_back_total{what=\"connection\"} 2") !=
        std::string::npos);
  for (int fd : heavy) ::close(fd);
  for (int fd : light) ::close(fd);
}

TEST_CASE("front: a client that never finishes its headers is closed; others are served") {
  Limits limits;
  limits.header_timeout = 1s;  // short, so the test does not wait 10 s; not a speed bar
  limits.body_timeout = 1s;
  Front f(limits);
  int slow = connect_loopback(f.port());
  REQUIRE(send_all(slow, "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "X-Slow: "));
  int slow_body = connect_loopback(f.port());
  REQUIRE(send_all(slow_body, "POST /api/v1/judge HTTP/1.1\r\n" + host(f.port()) +
                                  "Content-Type: application/json\r\n"
                                  "Content-Length: 100\r\n\r\n{\"scen"));
  for (int i = 0; i < 20; ++i) CHECK(f.get("/api/v1/health").status == 200);
  // The slow ones end without an answer once their time is up.
  auto r = read_response(slow);
  CHECK(r.status == 0);
  CHECK(r.raw.empty());
  auto rb = read_response(slow_body);
  CHECK(rb.status == 0);
  ::close(slow);
  ::close(slow_body);
  CHECK(!f.daemon().last("judge.enqueue").has_value());
}

TEST_CASE("front: 200 concurrent connections are all answered") {
  Front f;
  constexpr int kClients = 200;
  std::vector<int> fds;
  for (int i = 0; i < kClients; ++i) {
    int fd = connect_loopback(f.port());
    REQUIRE(fd >= 0);
    fds.push_back(fd);
  }
  for (int fd : fds) {
    REQUIRE(send_all(
        fd, "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "Connection: close\r\n\r\n"));
  }
  int ok = 0;
  for (int fd : fds) {
    ok += read_response(fd).status == 200;
    ::close(fd);
  }
  CHECK(ok == kClients);
  // The daemon was reached through a bounded number of connections at once (the double sees a
  // closed connection's end a moment after the front closed it, hence the few more).
  CHECK(f.daemon().max_open() <= Limits{}.max_daemon_calls + 4);
}

TEST_CASE("front: a malformed-request corpus is refused or closed; health still answers") {
  Limits limits;
  limits.header_timeout = 1s;
  limits.body_timeout = 1s;
  Front f(limits);
  const std::string json_post =
      "POST /api/v1/judge HTTP/1.1\r\n" + host(f.port()) + "Content-Type: application/json\r\n";
  auto with_body = [&](const std::string& body) {
    return json_post + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  };
  struct Entry {
    std::string name, bytes;
    std::vector<int> statuses;  // 0: closed without an answer
  };
  const std::vector<Entry> corpus = {
      {"truncated request line", "GET /api/v1/hea", {0}},
      {"truncated headers", "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "", {0}},
      {"truncated body", json_post + "Content-Length: 50\r\n\r\n{\"scenario\"", {0}},
      {"not HTTP", "GARBAGE\r\n\r\n", {400}},
      {"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", {400}},
      {"NUL in a header",
       std::string("GET /api/v1/health HTTP/1.1\r\nHost: x\0y\r\n\r\n", 42),
       {400}},
      {"oversized headers",
       "GET /api/v1/health HTTP/1.1\r\nX: " + std::string(20000, 'a') + "\r\n\r\n",
       {431}},
      {"bad chunk size",
       json_post + "Transfer-Encoding: chunked\r\n\r\nZZ\r\n{}\r\n0\r\n\r\n",
       {400}},
      {"chunk over the limit",
       json_post + "Transfer-Encoding: chunked\r\n\r\n100000\r\n" + std::string(70000, ' '),
       {413}},
      {"negative length", json_post + "Content-Length: -5\r\n\r\n", {400}},
      {"absurd length", json_post + "Content-Length: 99999999999999999999\r\n\r\n", {400, 413}},
      {"two lengths", json_post + "Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}", {400}},
      {"bad UTF-8 in JSON", with_body("{\"scenario\":\"\xc3\x28\"}"), {400}},
      {"bad UTF-8 in the target",
       "GET /api/v1/\xff\xfe HTTP/1.1\r\n" + host(f.port()) + "\r\n",
       {400, 404}},
      {"deep JSON", with_body(std::string(5000, '[') + std::string(5000, ']')), {400}},
      {"duplicate members", with_body(R"({"scenario":"O1","scenario":"O2"})"), {400}},
      {"escaped duplicate", with_body(R"({"scenario":"O1","sc\u0065nario":"O2"})"), {400}},
      {"trailing garbage", with_body(R"({"scenario":"O1"} x)"), {400}},
      {"not an object", with_body(R"("O1")"), {400}},
      {"huge number", with_body(R"({"scenario":1e999999})"), {400}},
      {"lone surrogate", with_body(R"({"scenario":"\ud800"})"), {400}},
      {"capability in the query",
       "GET /api/v1/attempts/" + kAttempt + "?capability=" + kCap + " HTTP/1.1\r\n" +
           host(f.port()) + "\r\n",
       {400}},
      {"bad method", "BREW /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "\r\n", {405}},
      {"absolute target",
       "GET http://evil/api/v1/health HTTP/1.1\r\n" + host(f.port()) + "\r\n",
       {400, 404}},
  };
  for (const Entry& e : corpus) {
    CAPTURE(e.name);
    int fd = connect_loopback(f.port());
    REQUIRE(fd >= 0);
    send_all(fd, e.bytes);
    ::shutdown(fd, SHUT_WR);
    auto r = read_response(fd);
    ::close(fd);
    CHECK(std::find(e.statuses.begin(), e.statuses.end(), r.status) != e.statuses.end());
    if (r.status != 0) check_security_headers(r, false);
  }
  CHECK(f.get("/api/v1/health").status == 200);
  for (const auto& q : f.daemon().seen()) CHECK(q.op == "health");
}

TEST_CASE("front: an event stream is relayed as server-sent events from Last-Event-ID") {
  Front f;
  f.daemon().set_handler([](const rpc::Request& r) {
    if (r.op != "attempt.events" && r.op != "judge.events") return DaemonDouble::default_answer(r);
    DoubleAnswer a;
    a.body = R"({"from_seq":42})";
    a.events = {R"({"seq":42,"type":"probe.completed","data":{"evidence":"ev-1"}})", "",
                R"({"seq":43,"type":"attempt.phase","data":{"phase":"contract"}})"};
    return a;
  });
  auto r = f.get("/api/v1/attempts/" + kAttempt + "/events",
                 {{"Authorization", kBearer}, {"Last-Event-ID", "41"}});
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  check_security_headers(r, true);
  CHECK(r.body ==
        "id: 42\nevent: probe.completed\ndata: {\"evidence\":\"ev-1\"}\n\n"
        ": keep-alive\n\n"
        "id: 43\nevent: attempt.phase\ndata: {\"phase\":\"contract\"}\n\n");
  auto seen = f.daemon().last("attempt.events");
  REQUIRE(seen.has_value());
  CHECK(seen->args_json == R"({"attempt":")" + kAttempt + R"(","after_seq":41})");
  CHECK(seen->secret == kCap);
  // A judge run's stream needs no credential; without Last-Event-ID it starts at 0.
  auto j = f.get("/api/v1/judge/00000000000000aa/events");
  CHECK(j.status == 200);
  CHECK(f.daemon().last("judge.events")->args_json ==
        R"({"run":"00000000000000aa","after_seq":0})");
  // No token: refused before the daemon; the daemon's own refusal passes through as JSON.
  CHECK(f.get("/api/v1/attempts/" + kAttempt + "/events").status == 401);
  f.daemon().set_handler([](const rpc::Request&) {
    DoubleAnswer a;
    a.status = 403;
    a.error = rpc::api_error(403, "forbidden", "another attempt's token");
    return a;
  });
  auto no = f.get("/api/v1/attempts/" + kAttempt + "/events", {{"Authorization", kBearer}});
  CHECK(no.status == 403);
  CHECK(no.header("content-type") == "application/json");
}

TEST_CASE("front: event streams past their cap get 429; a stream ends when its client goes") {
  Limits limits;
  limits.max_streams = 1;
  Front f(limits);
  f.daemon().set_handler([](const rpc::Request& r) {
    return r.op == "judge.events" ? held_judge_stream() : DaemonDouble::default_answer(r);
  });
  int held = open_judge_stream(f.port());
  REQUIRE(read_until(held, "judge.queued").find("judge.queued") != std::string::npos);
  auto second = f.get("/api/v1/judge/00000000000000aa/events");
  CHECK(second.status == 429);
  // The client leaves while the daemon sends nothing (no event, no keep-alive): the front
  // notices from the client's socket, not at its next write, and the slot is free again long
  // before the stream's silence limit (45 s) would have ended it.
  ::close(held);
  CHECK(f.get("/api/v1/health").status == 200);
  const auto guard = std::chrono::steady_clock::now() + 20s;
  std::string again;
  while (std::chrono::steady_clock::now() < guard) {
    int fd = open_judge_stream(f.port());
    again = read_until(fd, "\r\n\r\n");
    if (again.rfind("HTTP/1.1 200", 0) == 0 && again.find("judge.queued") == std::string::npos) {
      again += read_until(fd, "judge.queued");  // the event, when it came after the head
    }
    ::close(fd);
    if (again.find("judge.queued") != std::string::npos) break;
    std::this_thread::sleep_for(50ms);
  }
  CHECK(again.find("judge.queued") != std::string::npos);
}

TEST_CASE("front: a full set of event streams gives one back to a newcomer, fairly") {
  Limits limits;
  limits.max_streams = 4;
  limits.max_streams_per_address = 4;
  Front f(limits);
  f.daemon().set_handler([](const rpc::Request& r) {
    return r.op == "judge.events" ? held_judge_stream() : DaemonDouble::default_answer(r);
  });
  // The issue's case in small: one client holds every stream slot.
  std::vector<int> hog;
  for (int i = 0; i < 4; ++i) {
    hog.push_back(open_judge_stream(f.port(), "127.0.0.2"));
    REQUIRE(read_until(hog.back(), "judge.queued").find("judge.queued") != std::string::npos);
  }
  // Its own fifth: past its address's share.
  int fifth = open_judge_stream(f.port(), "127.0.0.2");
  auto refused = read_response(fifth);
  ::close(fifth);
  CHECK(refused.status == 429);
  CHECK(refused.body.find("its most") != std::string::npos);
  CHECK(refused.header("retry-after") == "5");

  // Another learner's two streams are opened, each taking one back from the hog (4 -> 3 -> 2).
  int mine = open_judge_stream(f.port(), "127.0.0.3");
  CHECK(read_until(mine, "judge.queued").find("judge.queued") != std::string::npos);
  int second = open_judge_stream(f.port(), "127.0.0.3");
  CHECK(read_until(second, "judge.queued").find("judge.queued") != std::string::npos);
  CHECK(closed_by_server(hog, 2) == 2);
  // Two and two: nobody holds two more than the hog, so its next one waits for a free slot.
  int again = open_judge_stream(f.port(), "127.0.0.2");
  auto full = read_response(again);
  ::close(again);
  CHECK(full.status == 429);
  CHECK(full.body.find("every event stream slot (4)") != std::string::npos);
  for (int fd : hog) ::close(fd);
  ::close(mine);
  ::close(second);
}

TEST_CASE("front: request bodies share a bounded budget: past it 503 with Retry-After") {
  Limits limits;
  limits.bodies_in_flight_bytes = 400 * 1024;
  Front f(limits);
  const std::string body =
      R"({"payloadType":"x","payload":")" + std::string(300 * 1024, 'A') + R"(","signatures":[]})";
  // One client's body half sent: its bytes are held from its head on.
  int slow = connect_loopback(f.port());
  REQUIRE(send_all(slow, "POST /api/v1/receipts/verify HTTP/1.1\r\n" + host(f.port()) +
                             "Content-Type: application/json\r\nContent-Length: " +
                             std::to_string(body.size()) + "\r\n\r\n" + body.substr(0, 1000)));
  // Another's whole body does not fit beside it (a hang guard: the first head is read by the
  // time the answer says so).
  HttpResponse busy;
  for (int i = 0; i < 100; ++i) {
    busy = f.post("/api/v1/receipts/verify", body);
    if (busy.status == 503) break;
    std::this_thread::sleep_for(20ms);
  }
  CHECK(busy.status == 503);
  CHECK(error_code_of(busy) == "unavailable");
  CHECK(busy.header("retry-after") == "1");
  CHECK_FALSE(f.daemon().last("receipt.verify").has_value());
  // The first finishes and is answered; its bytes come back, and the second fits now.
  REQUIRE(send_all(slow, body.substr(1000)));
  CHECK(read_until(slow, "\r\n\r\n").rfind("HTTP/1.1 200", 0) == 0);
  ::close(slow);
  HttpResponse ok;
  for (int i = 0; i < 100 && ok.status != 200; ++i) {
    ok = f.post("/api/v1/receipts/verify", body);
    if (ok.status != 200) std::this_thread::sleep_for(20ms);
  }
  CHECK(ok.status == 200);
}

TEST_CASE("front: a receipt of 300 KiB reaches the daemon to be verified; one over 1 MiB is 413") {
  Front f;
  const auto receipt = [](size_t payload) {
    return R"({"payloadType":"application/vnd.aura.receipt+json","payload":")" +
           std::string(payload, 'A') + R"(","signatures":[]})";
  };
  auto mid = f.post("/api/v1/receipts/verify", receipt(300 * 1024));
  CHECK(mid.status == 200);
  auto seen = f.daemon().last("receipt.verify");
  REQUIRE(seen.has_value());
  CHECK(seen->args_json.size() > 300 * 1024);
  auto over = f.post("/api/v1/receipts/verify", receipt(1100 * 1024));
  CHECK(over.status == 413);
  CHECK_MESSAGE(error_code_of(over) == "too_large", over.body);
  CHECK(f.get("/api/v1/health").status == 200);
}

TEST_CASE("front: HEAD is a GET's headers without its body, on the API and the static files") {
  TempDir ui;
  { std::ofstream(ui / "index.html") << "<!doctype html><title>lab</title>"; }
  Front f({}, ui.path());
  for (const std::string target : {"/api/v1/health", "/api/v1/scenarios", "/", "/metrics"}) {
    CAPTURE(target);
    auto get = f.get(target);
    REQUIRE(get.status == 200);
    // HEAD, then a GET on the same connection: had the HEAD's answer carried a body, the GET's
    // answer would not parse.
    int fd = connect_loopback(f.port());
    REQUIRE(send_all(fd, "HEAD " + target + " HTTP/1.1\r\n" + host(f.port()) + "\r\n"));
    std::string head;
    char buf[4096];
    while (head.find("\r\n\r\n") == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      REQUIRE(n > 0);
      head.append(buf, size_t(n));
    }
    CHECK(head.rfind("HTTP/1.1 200", 0) == 0);
    CHECK(head.size() == head.find("\r\n\r\n") + 4);  // nothing after the headers
    auto h = parse_response(head);
    if (target != "/metrics") {  // the metrics' text changes between two reads
      CHECK(h.header("content-length") == std::to_string(get.body.size()));
    }
    CHECK(h.header("content-type") == get.header("content-type"));
    REQUIRE(send_all(
        fd, "GET " + target + " HTTP/1.1\r\n" + host(f.port()) + "Connection: close\r\n\r\n"));
    auto after = read_response(fd, 30s);
    CHECK(after.status == 200);
    ::close(fd);
  }
  // HEAD where only POST is offered, and on an event stream: 405 naming what is. (Read up to
  // the headers: a HEAD's Content-Length is the GET's, with no body after it.)
  auto head_only = [&](const std::string& target) {
    int fd = connect_loopback(f.port());
    REQUIRE(send_all(
        fd, "HEAD " + target + " HTTP/1.1\r\n" + host(f.port()) + "Connection: close\r\n\r\n"));
    std::string raw;
    char buf[4096];
    for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) raw.append(buf, size_t(n));
    ::close(fd);
    CHECK(raw.size() == raw.find("\r\n\r\n") + 4);
    return raw;
  };
  auto post_only = head_only("/api/v1/operator/checkpoint");
  CHECK_MESSAGE(post_only.rfind("HTTP/1.1 405", 0) == 0, post_only);
  CHECK(post_only.find("\r\nAllow: POST\r\n") != std::string::npos);
  auto stream = head_only("/api/v1/judge/00000000000000aa/events");
  CHECK(stream.rfind("HTTP/1.1 405", 0) == 0);
  CHECK(!f.daemon().last("judge.events"));
  CHECK(http(f.port(), "DELETE", "/api/v1/health").header("allow") == "GET, HEAD");
}

TEST_CASE("front: a drain answers the request under way, closes idle connections and streams") {
  Limits limits;
  limits.header_timeout = 120s;  // an idle connection is closed by the drain, not by this
  limits.stream_silence = 120s;
  Front f(limits);
  f.daemon().set_handler([](const rpc::Request& r) {
    DoubleAnswer a = DaemonDouble::default_answer(r);
    if (r.op == "scenarios.list") a.delay = 1500ms;  // the request under way
    return r.op == "judge.events" ? held_judge_stream() : a;
  });
  // An idle keep-alive connection (one answer read, waiting for its next request).
  int idle = connect_loopback(f.port());
  REQUIRE(send_all(idle, "GET /api/v1/health HTTP/1.1\r\n" + host(f.port()) + "\r\n"));
  {
    // One answer, read by its Content-Length (the connection stays open).
    std::string raw;
    char b[4096];
    size_t end = std::string::npos;
    while ((end = raw.find("\r\n\r\n")) == std::string::npos ||
           raw.size() <
               end + 4 +
                   std::stoul(parse_response(raw.substr(0, end + 4)).header("content-length"))) {
      ssize_t n = ::recv(idle, b, sizeof b, 0);
      REQUIRE(n > 0);
      raw.append(b, size_t(n));
    }
    CHECK(parse_response(raw).status == 200);
  }
  // An event stream, open.
  int stream = open_judge_stream(f.port());
  REQUIRE(read_until(stream, "judge.queued").find("judge.queued") != std::string::npos);
  char buf[4096];
  // A request under way when the drain begins.
  HttpResponse slow;
  std::thread t([&] { slow = f.get("/api/v1/scenarios"); });
  while (!f.daemon().last("scenarios.list")) std::this_thread::sleep_for(10ms);
  const uint16_t port = f.port();
  f.drain(60s);
  // The idle connection and the stream end (each read sees the close; the guard is far below
  // both limits above).
  auto closed = [&](int fd) {
    pollfd p{fd, POLLIN, 0};
    for (;;) {
      if (::poll(&p, 1, 30'000) <= 0) return false;
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) return true;
    }
  };
  CHECK(closed(idle));
  CHECK(closed(stream));
  ::close(idle);
  ::close(stream);
  t.join();
  CHECK(slow.status == 200);  // answered in full, though the drain began before its answer
  CHECK(slow.body.find("scenarios.list") != std::string::npos);
  CHECK(slow.header("connection") == "close");
  f.wait_stopped();  // the loops end once no connection is left, long before the 60 s grace
  CHECK(connect_loopback(port) < 0);
}

TEST_CASE("front: /metrics carries the front's series, then the daemon's") {
  Front f;
  CHECK(f.get("/api/v1/health").status == 200);
  CHECK(f.get("/api/v1/nowhere").status == 404);
  auto m = f.get("/metrics");
  CHECK(m.status == 200);
  CHECK(m.header("content-type").rfind("text/plain; version=0.0.4", 0) == 0);
  check_security_headers(m, true);
  for (const char* s : {
           "aura_front_requests_total{route=\"/api/v1/health\",status=\"200\"} 1",
           "aura_front_requests_total{route=\"unmatched\",status=\"404\"} 1",
           "aura_front_request_duration_seconds_bucket{route=\"/api/v1/health\",le=\"+Inf\"} 1",
           "aura_front_request_duration_seconds_count{route=\"/api/v1/health\"} 1",
           "# TYPE aura_front_request_duration_seconds histogram",
           "aura_front_open_connections ",
           "aura_front_sse_streams 0",
           "aura_front_daemon_up 1",
           "aura_daemon_double 1",
       }) {
    CAPTURE(s);
    CHECK(m.body.find(s) != std::string::npos);
  }
}

TEST_CASE("front: one JSON log line per request, with its id and never a secret") {
  Front f;
  const std::string a = "/api/v1/attempts/" + kAttempt;
  auto r1 = f.get(a, {{"Authorization", kBearer}});
  auto r2 = f.get(a, {{"Cookie", "aura_token_" + kAttempt + "=" + std::string(64, 'c')}});
  auto r3 = http(f.port(), "POST", "/api/v1/operator/reap",
                 {{"Authorization", "Bearer operator-secret-token"}});
  auto r4 = f.get("/api/v1/nowhere?token=" + std::string(64, 'd'));
  std::string log = f.log();
  for (const auto* r : {&r1, &r2, &r3, &r4}) {
    CHECK(log.find("\"request_id\":\"" + r->header("x-request-id") + "\"") != std::string::npos);
  }
  CHECK(log.find("\"route\":\"/api/v1/attempts/{attempt}\"") != std::string::npos);
  CHECK(log.find("\"route\":\"/api/v1/operator/reap\"") != std::string::npos);
  for (const std::string secret : {kCap, std::string(64, 'c'), std::string("operator-secret-token"),
                                   std::string(64, 'd'), kAttempt}) {
    CHECK(log.find(secret) == std::string::npos);
  }
  std::istringstream lines(log);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    CHECK(line.front() == '{');
    CHECK(line.back() == '}');
    for (const char* k : {"\"ts\":", "\"method\":", "\"status\":", "\"ms\":", "\"bytes\":"}) {
      CHECK(line.find(k) != std::string::npos);
    }
    ++n;
  }
  CHECK(n == 4);
}

TEST_CASE("front: the browser lab's files, and a page saying it is not built") {
  {
    Front bare;
    auto page = bare.get("/");
    CHECK(page.status == 200);
    CHECK(page.header("content-type") == "text/html; charset=utf-8");
    CHECK(page.body.find("not built") != std::string::npos);
    CHECK(page.body.find("<script") == std::string::npos);
    check_security_headers(page, false);
    CHECK(bare.get("/app.js").status == 404);
  }
  TempDir ui;
  std::filesystem::create_directories(ui / "assets");
  std::ofstream(ui / "index.html") << "<!doctype html><script src=\"/assets/app.js\"></script>";
  std::ofstream(ui / "assets" / "app.js") << "console.log(1)";
  std::ofstream(ui / ".secret") << "no";
  TempDir outside;
  std::ofstream(outside / "private.txt") << "private";
  std::filesystem::create_symlink(outside / "private.txt", ui / "link.txt");
  Front f({}, ui.path());
  auto index = f.get("/");
  CHECK(index.status == 200);
  CHECK(index.body.find("/assets/app.js") != std::string::npos);
  check_security_headers(index, false);
  CHECK(index.header("cache-control") == "no-cache");
  auto js = f.get("/assets/app.js?v=2");
  CHECK(js.status == 200);
  CHECK(js.header("content-type") == "text/javascript; charset=utf-8");
  CHECK(f.get("/attempts/0123456789abcdef").body == index.body);  // the lab's own routes
  CHECK(f.get("/.secret").status == 404);
  CHECK(f.get("/link.txt").status == 404);
  CHECK(f.get("/assets/../../etc/passwd").status == 404);
  CHECK(f.get("/assets/%2e%2e/index.html").status == 404);
  CHECK(f.get("/missing.js").status == 404);
  CHECK(http(f.port(), "POST", "/", {}, std::string("x")).status == 405);
}

TEST_CASE("front: with no daemon answering, the API says 503 and the server goes on") {
  Front f({}, {}, false);
  auto r = f.get("/api/v1/health");
  CHECK(r.status == 503);
  CHECK(error_code_of(r) == "unavailable");
  auto m = f.get("/metrics");
  CHECK(m.status == 200);
  CHECK(m.body.find("aura_front_daemon_up 0") != std::string::npos);
}

TEST_CASE("listen: beyond loopback only with TLS") {
  CHECK(check_listen_address("127.0.0.1", false).is_ok());
  CHECK(check_listen_address("::1", false).is_ok());
  Status s = check_listen_address("0.0.0.0", false);
  CHECK(!s.is_ok());
  CHECK(s.message().find("--tls-cert") != std::string::npos);
  CHECK(check_listen_address("192.0.2.1", true).is_ok());
  CHECK(!check_listen_address("localhost", false).is_ok());
  ServerOptions o;
  o.listen_address = "0.0.0.0";
  o.port = 0;
  CHECK(!Server::create(o).ok());
  o.tls_cert = "/nonexistent.pem";
  CHECK(!Server::create(o).ok());  // a key is missing
}

namespace {

// A throwaway self-signed P-256 certificate for localhost, written as PEM files.
void write_self_signed(const std::filesystem::path& cert, const std::filesystem::path& key) {
  EVP_PKEY* pkey = EVP_EC_gen("P-256");
  REQUIRE(pkey != nullptr);
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, pkey);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(x, name);
  REQUIRE(X509_sign(x, pkey, EVP_sha256()) > 0);
  FILE* c = std::fopen(cert.c_str(), "w");
  FILE* k = std::fopen(key.c_str(), "w");
  REQUIRE((c && k));
  PEM_write_X509(c, x);
  PEM_write_PrivateKey(k, pkey, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(c);
  std::fclose(k);
  X509_free(x);
  EVP_PKEY_free(pkey);
}

// One request over TLS at most `max_version`; the raw answer, or "" when the handshake failed.
std::string tls_exchange(uint16_t port, int max_version, const std::string& request) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_set_min_proto_version(ctx, TLS1_VERSION);
  SSL_CTX_set_max_proto_version(ctx, max_version);
  SSL_CTX_set_security_level(ctx, 0);  // let the client offer TLS 1.0/1.1 at all
  int fd = connect_loopback(port);
  SSL* ssl = SSL_new(ctx);
  SSL_set_fd(ssl, fd);
  std::string out;
  if (SSL_connect(ssl) == 1) {
    SSL_write(ssl, request.data(), int(request.size()));
    char buf[16384];
    int n;
    while ((n = SSL_read(ssl, buf, sizeof buf)) > 0) out.append(buf, size_t(n));
  }
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  return out;
}

}  // namespace

// RFC 9112 wants one Host; and a page loaded under another name (DNS rebinding) reaches the
// front's address with that name as Host: refused before any route, static files included.
TEST_CASE("front: exactly one Host, and one of the lab's own names") {
  Front f;
  const std::string port = std::to_string(f.port());
  auto get = [&](const std::string& target, const std::string& hosts) {
    return http_raw(f.port(),
                    "GET " + target + " HTTP/1.1\r\n" + hosts + "Connection: close\r\n\r\n");
  };
  for (const std::string name :
       {"127.0.0.1:" + port, "localhost:" + port, "LocalHost:" + port, "[::1]:" + port}) {
    CAPTURE(name);
    CHECK(get("/api/v1/health", "Host: " + name + "\r\n").status == 200);
  }
  auto none = get("/api/v1/health", "");
  CHECK(none.status == 400);
  CHECK(error_code_of(none) == "malformed");
  CHECK(get("/api/v1/health", "Host: 127.0.0.1:" + port + "\r\nHost: 127.0.0.1:" + port + "\r\n")
            .status == 400);
  for (const std::string& other :
       std::vector<std::string>{"evil.example:" + port, "127.0.0.1", "127.0.0.1:1", "x"}) {
    CAPTURE(other);
    for (const char* target : {"/api/v1/health", "/", "/metrics"}) {
      auto r = get(target, "Host: " + other + "\r\n");
      CHECK(r.status == 421);
      CHECK(error_code_of(r) == "misdirected");
    }
  }
}

TEST_CASE("front: over TLS 1.2 and later only, and the token cookie is Secure") {
  TempDir dir;
  write_self_signed(dir / "cert.pem", dir / "key.pem");
  DaemonDouble daemon(dir / "daemon.sock");
  daemon.set_handler([](const rpc::Request& r) {
    if (r.op != "attempt.create") return DaemonDouble::default_answer(r);
    DoubleAnswer a;
    a.status = 201;
    a.body = R"({"attempt":")" + kAttempt + R"(","token":")" + kCap + R"("})";
    return a;
  });
  ServerOptions o;
  o.port = 0;
  o.socket = dir / "daemon.sock";
  o.daemon_uid = ::getuid();
  o.tls_cert = dir / "cert.pem";
  o.tls_key = dir / "key.pem";
  auto s = Server::create(o);
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  std::thread runner([&] { (*s)->run(); });
  CHECK((*s)->url().rfind("https://127.0.0.1:", 0) == 0);
  const std::string body = R"({"scenario":"O1"})";
  const std::string post = "POST /api/v1/attempts HTTP/1.1\r\n" + host((*s)->port()) +
                           "Connection: close\r\n"
                           "Content-Type: application/json\r\nContent-Length: " +
                           std::to_string(body.size()) + "\r\n\r\n" + body;
  auto r = parse_response(tls_exchange((*s)->port(), TLS1_3_VERSION, post));
  CHECK(r.status == 201);
  CHECK(r.header("set-cookie").ends_with("; HttpOnly; SameSite=Strict; Secure"));
  check_security_headers(r, true);
  CHECK(tls_exchange((*s)->port(), TLS1_2_VERSION, post).rfind("HTTP/1.1 201", 0) == 0);
  CHECK(tls_exchange((*s)->port(), TLS1_1_VERSION, post).empty());
  // Plain HTTP on the TLS port gets nothing.
  CHECK(http((*s)->port(), "GET", "/api/v1/health").status == 0);
  (*s)->stop();
  runner.join();
}
