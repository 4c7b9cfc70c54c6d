#include "app/serve/http_server.h"

#include <openssl/ssl.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "app/serve/access_log.h"
#include "app/serve/daemon_link.h"
#include "app/serve/fair_share.h"
#include "app/serve/front_metrics.h"
#include "app/serve/request_check.h"
#include "app/serve/response.h"
#include "app/serve/static_files.h"
#include "engine/common/memory.h"
#include "engine/common/text.h"
#include "engine/json/json_reader.h"

namespace aura::serve {

namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

namespace {

constexpr auto kNothrow = asio::as_tuple(asio::use_awaitable);

std::string host_for_url(const asio::ip::address& a) {
  return a.is_v6() ? "[" + a.to_string() + "]" : a.to_string();
}

// Errors of a read that mean the client went away or was too slow: close without an answer.
bool is_disconnect(const error_code& ec) {
  return ec == beast::error::timeout || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::operation_aborted ||
         ec == asio::error::broken_pipe || ec == http::error::end_of_stream ||
         ec == http::error::partial_message || ec == asio::ssl::error::stream_truncated;
}

}  // namespace

// One event loop: a thread of its own, the connections it was given and its own link to the
// daemon. Nothing of a loop is touched from another thread, so no loop needs a strand (each
// connection's coroutine, its timers and its daemon calls run on one thread).
// The io_context, with its shutdown (protected in Asio) callable: the server ends every loop's
// pending work while every loop's objects are still there.
struct LoopContext : asio::io_context {
  LoopContext() : asio::io_context(1) {}
  using asio::io_context::shutdown;
};
struct Loop {
  Loop(DaemonLinkOptions o, std::atomic<size_t>* streams)
      : work(asio::make_work_guard(ioc)), daemon(ioc.get_executor(), std::move(o), streams) {}
  LoopContext ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  DaemonLink daemon;
};

// Bytes of request bodies given back after which the front hands freed memory to the system.
constexpr size_t kTrimAfterBytes = size_t(16) << 20;

// Everything the coroutines share. Held by shared_ptr in every coroutine frame; the server
// ends the loops' pending work (and so those frames) before the loops go.
struct State {
  State(ServerOptions o, StaticFiles ui, std::vector<Loop*> l)
      : options(std::move(o)), loops(std::move(l)), ui(std::move(ui)), log(options.log) {
    ex = loops.front()->ioc.get_executor();
    acceptor.emplace(loops.front()->ioc);
  }

  ServerOptions options;
  std::vector<Loop*> loops;  // the server's
  std::atomic<size_t> next_loop{0};
  asio::any_io_executor ex;  // the first loop's: the acceptor's
  std::optional<tcp::acceptor> acceptor;
  std::optional<ssl::context> tls;
  StaticFiles ui;
  Origins origins;
  FrontMetrics metrics;
  AccessLog log;
  std::string url;

  // Request bodies held now (read, parsed, forwarded) against limits.bodies_in_flight_bytes,
  // and the bytes released since memory was last handed back to the system.
  std::atomic<size_t> bodies_held{0};
  std::atomic<size_t> released_since_trim{0};
  bool take_body(size_t n) {
    size_t now = bodies_held.load();
    do {
      if (now + n > options.limits.bodies_in_flight_bytes) return false;
    } while (!bodies_held.compare_exchange_weak(now, now + n));
    return true;
  }
  void give_body(size_t n) {
    const size_t before = bodies_held.fetch_sub(n);
    // The last body of a burst: the allocator keeps what it freed unless asked (glibc's
    // arenas), so a flood would leave the front at its peak.
    if (released_since_trim.fetch_add(n) + n >= kTrimAfterBytes && before == n) {
      released_since_trim = 0;
      release_free_memory();
    }
  }

  // Connections and event streams, each a fair share by client address (fair_share.h).
  // Lock order: conn_mu, then wait_mu.
  std::mutex conn_mu;
  FairShare conns{options.limits.max_connections, options.limits.max_connections_per_address};
  FairShare streams{options.limits.max_streams, options.limits.max_streams_per_address};

  // What an idle connection or a stream registered to be ended by: a drain ends every one; a
  // full server ends one of the heaviest client's (evict) for a newcomer.
  enum class WaitKind { kIdle, kStream };
  // Draining (a stop with a grace): no new connections or requests; a connection waiting for
  // its next request, or relaying an event stream, is ended by the closer it registered here
  // (run on its own loop); one answering a request closes after its answer.
  std::atomic<bool> draining{false};
  std::mutex wait_mu;
  uint64_t next_wait = 1;
  struct Closer {
    asio::any_io_executor ex;
    std::function<void()> close;
    std::string client;
    WaitKind kind;
    bool ending = false;  // its close is posted already
  };
  std::map<uint64_t, Closer> waits;

  // Registers a wait that a drain or an eviction ends by `close`; 0 when draining already (do
  // not wait).
  uint64_t wait_begin(asio::any_io_executor on, std::function<void()> close, std::string client,
                      WaitKind kind) {
    std::lock_guard lock(wait_mu);
    if (draining) return 0;
    uint64_t id = next_wait++;
    waits.emplace(id, Closer{std::move(on), std::move(close), std::move(client), kind});
    return id;
  }
  void wait_end(uint64_t id) {
    std::lock_guard lock(wait_mu);
    waits.erase(id);
  }
  // Runs wait `id`'s closer on its own loop, if it is still waiting when it runs there (the
  // connection may end first: then its closer, holding references into it, is never called).
  void end_wait_locked(uint64_t id, Closer& c) {
    c.ending = true;
    asio::post(c.ex, [this, id] {
      std::function<void()> close;
      {
        std::lock_guard l2(wait_mu);
        auto it = waits.find(id);
        if (it == waits.end()) return;
        close = it->second.close;
      }
      close();
    });
  }
  void drain() {
    std::lock_guard lock(wait_mu);
    draining = true;
    for (auto& [id, c] : waits) {
      if (!c.ending) end_wait_locked(id, c);
    }
  }
  // Ends the oldest wait of `kind` that `client` holds: false when it holds none.
  bool evict(const std::string& client, WaitKind kind) {
    std::lock_guard lock(wait_mu);
    for (auto& [id, c] : waits) {
      if (c.kind == kind && !c.ending && c.client == client) {
        end_wait_locked(id, c);
        return true;
      }
    }
    return false;
  }
  size_t open_connections() {
    std::lock_guard lock(conn_mu);
    return conns.held();
  }

  // Admits one more of `share` for `client`, or says which cap it hit ("" when admitted).
  // Full: a newcomer takes a place back from the heaviest client holding an idle one (a
  // connection between requests, a stream): that one is ended, so for a moment the count is
  // above the cap by the evictions under way.
  std::string admit(FairShare& share, const std::string& client, WaitKind kind) {
    std::lock_guard lock(conn_mu);
    if (share.client_full(client)) return "per_address";
    if (share.full()) {
      bool took = false;
      for (const std::string& heavy : share.over_share(client)) {
        if (evict(heavy, kind)) {
          took = true;
          metrics.share_taken_back(kind == WaitKind::kIdle ? "connection" : "stream");
          break;
        }
      }
      if (!took) return "total";
    }
    share.add(client);
    return "";
  }
  std::string admit_connection(const std::string& address) {
    std::string refused = admit(conns, address, WaitKind::kIdle);
    if (refused.empty()) metrics.connection_opened();
    return refused;
  }
  void release_connection(const std::string& address) {
    std::lock_guard lock(conn_mu);
    conns.remove(address);
    metrics.connection_closed();
  }
  std::string admit_stream(const std::string& address) {
    return admit(streams, address, WaitKind::kStream);
  }
  void release_stream(const std::string& address) {
    std::lock_guard lock(conn_mu);
    streams.remove(address);
  }
};

namespace {

// The bytes a connection's read buffer keeps between requests.
constexpr size_t kKeptBufferBytes = 64 * 1024;

struct BodyHold {
  State& st;
  size_t n = 0;
  ~BodyHold() {
    if (n) st.give_body(n);
  }
};

// One response as Beast's message, with the security headers and the request id.
// `head`: the answer to a HEAD request (the headers a GET would have, Content-Length included,
// and no body).
http::response<http::string_body> to_beast(const Response& r, unsigned version, bool api,
                                           const std::string& request_id, bool keep_alive,
                                           bool head = false) {
  http::response<http::string_body> res;
  res.version(version);
  res.result(unsigned(r.status));
  for (auto& [n, v] : security_headers(api)) res.set(n, v);
  for (auto& [n, v] : r.headers) res.insert(n, v);
  res.set(http::field::content_type, r.content_type);
  if (!request_id.empty()) res.set("X-Request-Id", request_id);
  res.keep_alive(keep_alive);
  res.body() = r.body;
  res.prepare_payload();
  if (head) {
    const size_t n = res.body().size();
    res.body().clear();
    res.content_length(n);
  }
  return res;
}

template <class Stream>
auto& lowest(Stream& s) {
  return beast::get_lowest_layer(s);
}

// What one request produced, for the log and the metrics.
struct Outcome {
  std::string route = "unmatched";
  int status = 0;
  uint64_t bytes = 0;
};

template <class Stream>
asio::awaitable<bool> write_response(State& st, Stream& stream, const Response& r, unsigned version,
                                     bool api, const std::string& request_id, bool keep_alive,
                                     bool head = false) {
  auto res = to_beast(r, version, api, request_id, keep_alive, head);
  lowest(stream).expires_after(st.options.limits.write_timeout);
  auto [ec, n] = co_await http::async_write(stream, res, kNothrow);
  co_return !ec;
}

// A request whose head could not be read in full: answered (431, 400) and the connection closed.
template <class Stream>
asio::awaitable<void> refuse_head(State& st, Stream& stream, const rpc::ApiError& e) {
  const std::string id = rpc::new_request_id();
  auto started = Clock::now();
  co_await write_response(st, stream, error_response(e), 11, true, id, false);
  double secs = std::chrono::duration<double>(Clock::now() - started).count();
  st.metrics.record("unmatched", e.status, secs);
  st.log.write({id, "-", "unmatched", e.status, secs * 1000, e.body().size()});
}

// GET /metrics: the front's series, then the daemon's.
asio::awaitable<Response> metrics_response(State& st, DaemonLink& daemon,
                                           const std::string& request_id) {
  rpc::Request q{"metrics", request_id, rpc::AuthKind::kNone, "", "{}"};
  auto reply = co_await daemon.call(q, std::chrono::seconds(30));
  std::string daemon_text;
  bool up = false;
  if (reply.ok() && !reply->error) {
    json::Reader reader;
    auto o = reader.parse_object(reply->body_json);
    if (o.ok()) {
      auto text = o->required_string("text");
      if (text.ok()) {
        daemon_text = std::string(*text);
        up = true;
      }
    }
  }
  Response r;
  r.content_type = "text/plain; version=0.0.4; charset=utf-8";
  r.body = st.metrics.render();
  r.body += "# HELP aura_front_daemon_up Whether the daemon answered its metrics just now.\n";
  r.body += "# TYPE aura_front_daemon_up gauge\n";
  r.body += std::string("aura_front_daemon_up ") + (up ? "1" : "0") + "\n";
  r.body += daemon_text;
  if (!daemon_text.empty() && daemon_text.back() != '\n') r.body += '\n';
  co_return r;
}

Response daemon_unavailable(const Status& s) {
  rpc::ApiError e =
      s.code() == ErrorCode::kBusy
          ? rpc::api_error(429, "too_many_requests", s.message())
          : rpc::api_error(503, "unavailable", "the lab's daemon is not answering: " + s.message());
  e.retry_after_s = 5;
  return error_response(e);
}

// An event stream: the daemon's frames relayed as server-sent events until either side ends.
// Returns after the connection's last byte; the connection is then closed.
template <class Stream>
asio::awaitable<void> relay_stream(State& st, DaemonLink& daemon, Stream& stream, const Forward& f,
                                   const std::string& request_id, unsigned version, Outcome& out,
                                   const std::string& client) {
  // (A named response for each early answer: GCC 12 destroys a temporary twice inside a
  // co_await expression.)
  // A place among the streams: a fair share of them (fair_share.h).
  if (std::string refused = st.admit_stream(client); !refused.empty()) {
    rpc::ApiError e = rpc::api_error(
        429, "too_many_requests",
        refused == "total" ? "every event stream slot (" + std::to_string(st.streams.cap()) +
                                 ") is in use by clients holding no more than you; retry later"
                           : "your address holds " + std::to_string(st.streams.per_client()) +
                                 " event streams, its most; close one");
    e.retry_after_s = 5;
    Response r = error_response(e);
    out.status = r.status;
    out.bytes = r.body.size();
    co_await write_response(st, stream, r, version, true, request_id, false);
    co_return;
  }
  struct Share {
    State& st;
    const std::string& client;
    ~Share() { st.release_stream(client); }
  } share{st, client};
  rpc::Request q{f.op, request_id, f.auth, f.secret, f.args_json};
  auto opened = co_await daemon.open_stream(q, f.timeout);
  // A place taken back from another client frees its daemon slot when that stream has ended
  // on its own loop: a moment.
  for (int i = 0; i < 40 && !opened.ok() && opened.status().code() == ErrorCode::kBusy; ++i) {
    asio::steady_timer t(daemon.executor(), std::chrono::milliseconds(50));
    co_await t.async_wait(kNothrow);
    opened = co_await daemon.open_stream(q, f.timeout);
  }
  if (!opened.ok() || !opened->stream) {
    Response r = opened.ok() ? reply_response(opened->reply) : daemon_unavailable(opened.status());
    out.status = r.status;
    out.bytes = r.body.size();
    co_await write_response(st, stream, r, version, true, request_id, false);
    co_return;
  }
  // Shared with the two ways a stream ends early: the client leaving (a read on its socket
  // ends: an SSE client sends nothing) and a drain. Each holds it weakly.
  std::shared_ptr<DaemonStream> events = std::move(opened->stream);
  st.metrics.stream_opened();
  struct Closed {
    State& st;
    uint64_t wait;
    ~Closed() {
      st.metrics.stream_closed();
      if (wait) st.wait_end(wait);
    }
  } closed{st, 0};
  std::weak_ptr<DaemonStream> weak = events;
  closed.wait = st.wait_begin(
      daemon.executor(),
      [weak] {
        if (auto ev = weak.lock()) ev->close();
      },
      client, State::WaitKind::kStream);
  if (closed.wait == 0) co_return;
  {
    auto sink = std::make_shared<std::array<char, 512>>();
    lowest(stream).socket().async_read_some(asio::buffer(*sink),
                                            [weak, sink](const error_code&, size_t) {
                                              if (auto ev = weak.lock()) ev->close();
                                            });
  }

  http::response<http::empty_body> res;
  res.version(version);
  res.result(http::status::ok);
  for (auto& [n, v] : security_headers(true)) res.set(n, v);
  res.set(http::field::content_type, "text/event-stream");
  res.set("X-Request-Id", request_id);
  res.set("X-Accel-Buffering", "no");
  res.keep_alive(false);  // the stream's end is the connection's end
  http::response_serializer<http::empty_body> sr(res);
  lowest(stream).expires_after(st.options.limits.write_timeout);
  auto [hec, hn] = co_await http::async_write_header(stream, sr, kNothrow);
  out.status = 200;
  if (hec) co_return;
  for (;;) {
    auto frame = co_await events->next(st.options.limits.stream_silence);
    if (!frame.ok()) {
      st.log.note("stream.ended", frame.status().message());
      break;
    }
    if (!frame->has_value()) break;
    std::string text;
    if ((*frame)->kind == rpc::Kind::kKeepAlive) {
      text = std::string(kSseKeepAlive);
    } else {
      auto ev = sse_event((*frame)->body);
      if (!ev.ok()) {
        st.log.note("stream.ended", ev.status().message());
        break;
      }
      text = std::move(ev).value();
    }
    lowest(stream).expires_after(st.options.limits.write_timeout);
    auto [ec, n] = co_await asio::async_write(stream, asio::buffer(text), kNothrow);
    if (ec) break;
    out.bytes += n;
  }
  events->close();
  error_code ignored;
  lowest(stream).socket().cancel(ignored);  // the read that watched for the client leaving
}

// One API request after its checks: the daemon's answer as the response.
asio::awaitable<Response> forward(DaemonLink& daemon, const Forward& f,
                                  const std::string& request_id, bool tls) {
  rpc::Request q{f.op, request_id, f.auth, f.secret, f.args_json};
  auto reply = co_await daemon.call(q, f.timeout);
  if (!reply.ok()) co_return daemon_unavailable(reply.status());
  Response r = reply_response(*reply);
  if (f.sets_cookie) {
    if (auto cap = reply_token(*reply, f.attempt)) {
      std::string cookie = token_cookie(cap->first, cap->second, tls);
      if (!cookie.empty()) r.headers.emplace_back("Set-Cookie", cookie);
    }
  }
  co_return r;
}

ApiRequest api_request_of(const http::request<http::string_body>& req) {
  ApiRequest a;
  // HEAD is checked and answered as a GET (its body is then left out).
  a.method = req.method() == http::verb::head ? "GET" : std::string(req.method_string());
  a.target = std::string(req.target());
  struct Wanted {
    http::field field;
    std::optional<std::string> ApiRequest::*member;
    const char* name;
  };
  static const Wanted kWanted[] = {
      {http::field::content_type, &ApiRequest::content_type, "content-type"},
      {http::field::authorization, &ApiRequest::authorization, "authorization"},
      {http::field::cookie, &ApiRequest::cookie, "cookie"},
      {http::field::origin, &ApiRequest::origin, "origin"},
      {http::field::unknown, &ApiRequest::sec_fetch_site, "sec-fetch-site"},
      {http::field::unknown, &ApiRequest::last_event_id, "last-event-id"},
  };
  for (const Wanted& w : kWanted) {
    auto range =
        w.field == http::field::unknown ? req.equal_range(w.name) : req.equal_range(w.field);
    size_t n = 0;
    for (auto it = range.first; it != range.second; ++it) {
      if (n++ == 0) a.*(w.member) = std::string(it->value());
    }
    if (n > 1 && a.repeated_header.empty()) a.repeated_header = w.name;
  }
  a.body = req.body();
  return a;
}

// RFC 9112 (3.2): exactly one Host. And it must name this lab (one of its origins' hosts, the
// names --origin adds included): a page a DNS-rebinding attack loads under another name reaches
// the front's address with that name as Host, and is refused before any route answers it.
std::optional<rpc::ApiError> check_host(const http::request<http::string_body>& req,
                                        const Origins& origins) {
  if (req.count(http::field::host) != 1)
    return rpc::api_error(400, "malformed", "a request needs exactly one Host header");
  const std::string_view host = req[http::field::host];
  for (const std::string& origin : origins.allowed) {
    const size_t at = origin.find("://");
    if (at != std::string::npos && beast::iequals(std::string_view(origin).substr(at + 3), host))
      return std::nullopt;
  }
  std::string names;
  for (const std::string& origin : origins.allowed) {
    const size_t at = origin.find("://");
    names += (names.empty() ? "" : ", ") + origin.substr(at == std::string::npos ? 0 : at + 3);
  }
  return rpc::api_error(421, "misdirected",
                        "Host \"" + safe_text(req[http::field::host], 64) +
                            "\" is not this lab (it answers to " + names +
                            "; aura serve --origin adds a name)");
}

// The connection's requests, one after another, until it closes or a limit closes it.
template <class Stream>
asio::awaitable<void> serve_requests(std::shared_ptr<State> st, Loop& loop, Stream& stream,
                                     bool tls, const std::string& client) {
  const Limits& limits = st->options.limits;
  beast::flat_buffer buffer;
  for (;;) {
    // The body's bytes, held against the front's budget for bodies until the answer is written
    // (a chunked body is held at the route's limit). Declared first: given back after the
    // request's own memory.
    BodyHold hold{*st};
    http::request_parser<http::string_body> parser;
    parser.header_limit(std::uint32_t(limits.header_bytes));
    // No body limit while the head is read (Beast would refuse a long Content-Length there as
    // a malformed head); the route's limit is checked from the head below, then set for the
    // body's read.
    parser.body_limit(boost::none);
    lowest(stream).expires_after(limits.header_timeout);
    const uint64_t wait = st->wait_begin(
        loop.ioc.get_executor(), [&stream] { lowest(stream).cancel(); }, client,
        State::WaitKind::kIdle);
    if (wait == 0) co_return;
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kNothrow);
    st->wait_end(wait);
    if (ec) {
      if (ec == http::error::header_limit) {
        co_await refuse_head(*st, stream,
                             rpc::api_error(431, "headers_too_large",
                                            "the request's headers are over " +
                                                std::to_string(limits.header_bytes) + " bytes"));
      } else if (!is_disconnect(ec)) {
        co_await refuse_head(
            *st, stream, rpc::api_error(400, "malformed", "not an HTTP request: " + ec.message()));
      }
      co_return;
    }
    const auto started = Clock::now();
    const std::string request_id = rpc::new_request_id();
    auto& req = parser.get();
    const std::string path(target_path(req.target()));
    const bool api = path == "/api" || path.rfind("/api/", 0) == 0 || path == "/metrics";
    Outcome out;
    bool keep_alive = req.keep_alive();
    const bool head = req.method() == http::verb::head;
    const std::string method = head ? "GET" : std::string(req.method_string());
    Response res;
    std::optional<Forward> stream_forward;

    size_t fields = 0;
    for (auto it = req.begin(); it != req.end(); ++it) ++fields;
    // Body limit by route, known from the head alone.
    size_t max_body = limits.body_bytes;
    std::optional<rpc::ApiError> early;
    if (fields > limits.header_fields) {
      early = rpc::api_error(431, "headers_too_large",
                             std::to_string(fields) + " header fields, more than " +
                                 std::to_string(limits.header_fields));
    } else if (auto e = check_host(req, st->origins)) {
      early = std::move(e);
    } else if (path.rfind("/api/", 0) == 0) {
      auto m = match_route(method, path, limits);
      if (auto* ok = std::get_if<RouteMatch>(&m)) max_body = ok->max_body_bytes;
    }
    if (!early && parser.content_length() && *parser.content_length() > max_body) {
      early = rpc::api_error(413, "too_large",
                             "the body is " + std::to_string(*parser.content_length()) +
                                 " bytes, more than this route's " + std::to_string(max_body));
    }
    if (!early && !parser.is_done()) {
      const size_t want = parser.content_length() ? size_t(*parser.content_length()) : max_body;
      if (!st->take_body(want)) {
        early = rpc::api_error(503, "unavailable",
                               "the lab is reading other requests' bodies (" +
                                   std::to_string(limits.bodies_in_flight_bytes >> 20) +
                                   " MiB at once at most); retry in a moment");
        early->retry_after_s = 1;
      } else {
        hold.n = want;
      }
    }
    if (!early && !parser.is_done()) {
      if (beast::iequals(req[http::field::expect], "100-continue")) {
        http::response<http::empty_body> cont{http::status::continue_, req.version()};
        lowest(stream).expires_after(limits.write_timeout);
        auto [cec, cn] = co_await http::async_write(stream, cont, kNothrow);
        if (cec) co_return;
      }
      parser.body_limit(max_body);
      lowest(stream).expires_after(limits.body_timeout);
      auto [bec, bn] = co_await http::async_read(stream, buffer, parser, kNothrow);
      if (bec == http::error::body_limit) {
        early = rpc::api_error(
            413, "too_large",
            "the body is more than this route's " + std::to_string(max_body) + " bytes");
      } else if (bec && is_disconnect(bec)) {
        co_return;
      } else if (bec) {
        early = rpc::api_error(400, "malformed", "the body could not be read: " + bec.message());
      }
    }
    lowest(stream).expires_never();

    if (early) {
      res = error_response(*early);
      keep_alive = false;  // what is left of the request is not read
    } else if (path == "/metrics") {
      out.route = "/metrics";
      if (method != "GET") {
        res = error_response(rpc::api_error(405, "method_not_allowed", "GET or HEAD only"),
                             "GET, HEAD");
      } else if (auto e = check_query(req.target(), true)) {
        res = error_response(*e);
      } else {
        res = co_await metrics_response(*st, loop.daemon, request_id);
      }
    } else if (api) {
      ApiRequest ar = api_request_of(req);
      ar.client = client;
      auto prepared = prepare_forward(ar, st->origins, limits);
      if (auto* no = std::get_if<Refusal>(&prepared)) {
        out.route = no->route;
        res = error_response(no->error, no->allow);
      } else {
        Forward& f = std::get<Forward>(prepared);
        out.route = f.route;
        if (f.stream && head) {
          res = error_response(
              rpc::api_error(405, "method_not_allowed", "an event stream is read with GET"), "GET");
        } else if (f.stream) {
          stream_forward = std::move(f);
        } else {
          res = co_await forward(loop.daemon, f, request_id, tls);
        }
      }
    } else {
      out.route = "static";
      if (method != "GET") {
        res = error_response(rpc::api_error(405, "method_not_allowed", "GET or HEAD only"),
                             "GET, HEAD");
      } else if (auto e = check_query(req.target(), false)) {
        res = error_response(*e);
      } else if (!req.body().empty()) {
        res = error_response(rpc::api_error(400, "malformed", "a GET takes no body"));
      } else {
        res = st->ui.get(path);
      }
    }

    if (st->draining) keep_alive = false;  // the answer says the connection ends with it
    bool written = false;
    if (stream_forward) {
      co_await relay_stream(*st, loop.daemon, stream, *stream_forward, request_id, req.version(),
                            out, client);
      keep_alive = false;
      written = true;
    } else {
      out.status = res.status;
      out.bytes = res.body.size();
      written = co_await write_response(*st, stream, res, req.version(),
                                        api || res.content_type == "application/json", request_id,
                                        keep_alive, head);
    }
    double secs = std::chrono::duration<double>(Clock::now() - started).count();
    st->metrics.record(out.route, out.status, secs);
    st->log.write({request_id, std::string(req.method_string()), out.route, out.status, secs * 1000,
                   out.bytes});
    // A connection kept for its next request keeps no large buffer.
    if (buffer.capacity() > kKeptBufferBytes) buffer.shrink_to_fit();
    if (!written || !keep_alive || st->draining) co_return;
  }
}

// Past a connection cap: a 429 on a plain connection (a TLS one is closed), then close.
asio::awaitable<void> refuse_connection(std::shared_ptr<State> st, tcp::socket socket,
                                        std::string reason) {
  if (st->tls) co_return;
  beast::tcp_stream stream(std::move(socket));
  rpc::ApiError e = rpc::api_error(
      429, "too_many_requests",
      reason == "total" ? "every connection is busy answering clients holding no more than you; "
                          "retry later"
                        : "your address holds " + std::to_string(st->conns.per_client()) +
                              " connections, its most; retry later");
  e.retry_after_s = 1;
  Response r = error_response(e);
  auto res = to_beast(r, 11, true, "", false);
  stream.expires_after(std::chrono::seconds(2));
  co_await http::async_write(stream, res, kNothrow);
  error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  // Drain a little of the request so closing does not reset the connection under the answer.
  std::array<char, 4096> sink;
  for (int i = 0; i < 4; ++i) {
    stream.expires_after(std::chrono::milliseconds(500));
    auto [ec, n] = co_await stream.async_read_some(asio::buffer(sink), kNothrow);
    if (ec) break;
  }
}

asio::awaitable<void> run_connection(std::shared_ptr<State> st, Loop& loop, tcp::socket socket,
                                     std::string address) {
  struct Release {
    State& st;
    std::string address;
    ~Release() { st.release_connection(address); }
  } release{*st, address};
  if (st->tls) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *st->tls);
    lowest(stream).expires_after(st->options.limits.header_timeout);
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kNothrow);
    if (ec) co_return;
    co_await serve_requests(st, loop, stream, true, address);
    lowest(stream).expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(kNothrow);
  } else {
    beast::tcp_stream stream(std::move(socket));
    co_await serve_requests(st, loop, stream, false, address);
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }
}

asio::awaitable<void> accept_loop(std::shared_ptr<State> st) {
  for (;;) {
    // Connections go to the loops in turn.
    Loop& loop = *st->loops[st->next_loop++ % st->loops.size()];
    auto [ec, socket] = co_await st->acceptor->async_accept(loop.ioc.get_executor(), kNothrow);
    if (ec == asio::error::operation_aborted || !st->acceptor->is_open() || st->draining) co_return;
    if (ec) {
      // Out of descriptors or memory: say so, breathe, go on serving the open connections.
      st->log.note("accept.failed", ec.message());
      asio::steady_timer t(st->ex, std::chrono::milliseconds(100));
      co_await t.async_wait(kNothrow);
      continue;
    }
    error_code aec;
    auto remote = socket.remote_endpoint(aec);
    if (aec) continue;
    auto addr = remote.address();
    if (addr.is_v6() && addr.to_v6().is_v4_mapped()) {
      addr = asio::ip::make_address_v4(asio::ip::v4_mapped, addr.to_v6());
    }
    std::string address = addr.to_string();
    std::string refused = st->admit_connection(address);
    auto ex = socket.get_executor();
    if (!refused.empty()) {
      st->metrics.connection_refused(refused);
      asio::co_spawn(ex, refuse_connection(st, std::move(socket), refused), asio::detached);
      continue;
    }
    asio::co_spawn(ex, run_connection(st, loop, std::move(socket), std::move(address)),
                   asio::detached);
  }
}

std::vector<std::string> own_origins(const asio::ip::address& a, uint16_t port, bool tls) {
  const std::string scheme = tls ? "https://" : "http://";
  const bool default_port = (tls && port == 443) || (!tls && port == 80);
  std::vector<std::string> hosts = {host_for_url(a)};
  if (a.is_loopback() || a.is_unspecified()) {
    for (const char* h : {"127.0.0.1", "localhost", "[::1]"}) {
      if (std::find(hosts.begin(), hosts.end(), h) == hosts.end()) hosts.emplace_back(h);
    }
  }
  std::vector<std::string> out;
  for (const auto& h : hosts) {
    out.push_back(scheme + h + ":" + std::to_string(port));
    if (default_port) out.push_back(scheme + h);
  }
  return out;
}

}  // namespace

Status check_listen_address(const std::string& address, bool tls) {
  error_code ec;
  auto a = asio::ip::make_address(address, ec);
  if (ec) return Status::invalid("--listen " + address + ": not an IP address");
  if (!a.is_loopback() && !tls) {
    return Status::invalid("--listen " + address +
                           ": not a loopback address; serving beyond this machine needs "
                           "--tls-cert and --tls-key");
  }
  return Status::ok();
}

struct Server::Impl {
  std::atomic<size_t> streams{0};  // open event streams, across the loops' daemon links
  std::vector<std::unique_ptr<Loop>> loops;
  std::shared_ptr<State> state;
  std::vector<std::thread> threads;
  std::atomic<bool> stopped{false};

  void stop_loops() {
    for (auto& l : loops) {
      l->work.reset();
      l->ioc.stop();
    }
  }
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  // Frames still suspended in the loops hold the State and use the loops' daemon links: their
  // pending work is ended here, on this thread, with no loop running and every loop there.
  for (auto& l : impl_->loops) l->ioc.shutdown();
  impl_->state.reset();
}

Result<std::unique_ptr<Server>> Server::create(ServerOptions options) {
  const bool tls = !options.tls_cert.empty() || !options.tls_key.empty();
  if (tls && (options.tls_cert.empty() || options.tls_key.empty())) {
    return Status::invalid("--tls-cert and --tls-key go together");
  }
  AURA_RETURN_IF_ERROR(check_listen_address(options.listen_address, tls));
  auto ui = StaticFiles::open(options.ui_dir);
  if (!ui.ok()) return ui.status();

  auto impl = std::make_unique<Impl>();
  {
    const size_t n = std::max<size_t>(1, options.threads);
    const Limits& l = options.limits;
    // The daemon's connection caps are the server's: each loop gets its share of the calls and
    // of the idle connections; the streams are counted across the loops.
    auto share = [n](size_t total) { return std::max<size_t>(1, (total + n - 1) / n); };
    for (size_t i = 0; i < n; ++i) {
      impl->loops.push_back(
          std::make_unique<Loop>(DaemonLinkOptions{.socket = options.socket,
                                                   .daemon_uid = options.daemon_uid,
                                                   .max_calls = share(l.max_daemon_calls),
                                                   .max_streams = l.max_streams,
                                                   .max_idle = share(l.max_idle_daemon_connections),
                                                   .idle_reuse = l.daemon_idle_reuse,
                                                   .socket_label = options.socket_label},
                                 &impl->streams));
    }
  }
  std::vector<Loop*> loops;
  for (auto& l : impl->loops) loops.push_back(l.get());
  auto st = std::make_shared<State>(std::move(options), std::move(ui).value(), std::move(loops));
  impl->state = st;
  const ServerOptions& o = st->options;

  if (tls) {
    st->tls.emplace(ssl::context::tls_server);
    st->tls->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                         ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                         ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
    SSL_CTX_set_min_proto_version(st->tls->native_handle(), TLS1_2_VERSION);
    error_code ec;
    st->tls->use_certificate_chain_file(o.tls_cert.string(), ec);
    if (ec) return Status::invalid("--tls-cert " + o.tls_cert.string() + ": " + ec.message());
    st->tls->use_private_key_file(o.tls_key.string(), ssl::context::pem, ec);
    if (ec) return Status::invalid("--tls-key " + o.tls_key.string() + ": " + ec.message());
  }

  error_code ec;
  auto addr = asio::ip::make_address(o.listen_address, ec);
  tcp::endpoint ep(addr, o.port);
  const std::string where = o.listen_address + " port " + std::to_string(o.port);
  st->acceptor->open(ep.protocol(), ec);
  if (!ec) st->acceptor->set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) st->acceptor->bind(ep, ec);
  if (!ec) st->acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::unavailable("cannot listen on " + where + ": " + ec.message());

  const uint16_t port = st->acceptor->local_endpoint().port();
  st->origins.allowed = own_origins(addr, port, tls);
  for (const auto& extra : o.extra_origins) st->origins.allowed.push_back(extra);
  const std::string shown = addr.is_unspecified() ? "127.0.0.1" : host_for_url(addr);
  st->url = std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port) + "/";
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

uint16_t Server::port() const {
  error_code ec;
  return impl_->state->acceptor->local_endpoint(ec).port();
}

std::string Server::url() const { return impl_->state->url; }

const std::vector<std::string>& Server::origins() const { return impl_->state->origins.allowed; }

FrontMetrics& Server::metrics() { return impl_->state->metrics; }

void Server::run() {
  auto st = impl_->state;
  asio::co_spawn(st->ex, accept_loop(st), asio::detached);
  for (size_t i = 1; i < st->loops.size(); ++i) {
    impl_->threads.emplace_back([l = st->loops[i]] { l->ioc.run(); });
  }
  st->loops.front()->ioc.run();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
  st->log.flush();
}

void Server::drain(std::chrono::milliseconds grace) {
  if (!impl_ || !impl_->state || impl_->stopped) return;
  auto st = impl_->state;
  Impl* impl = impl_.get();
  asio::post(st->ex, [st] {
    error_code ignored;
    st->acceptor->close(ignored);
  });
  st->drain();
  // Watches the connections end, then stops the loops (at the grace at the latest).
  asio::co_spawn(
      st->ex,
      [st, impl, grace]() -> asio::awaitable<void> {
        const auto until = Clock::now() + grace;
        asio::steady_timer t(st->ex);
        while (st->open_connections() > 0 && Clock::now() < until) {
          t.expires_after(std::chrono::milliseconds(20));
          co_await t.async_wait(kNothrow);
        }
        if (st->open_connections() > 0) {
          st->log.note("drain.grace_ended",
                       std::to_string(st->open_connections()) + " connections were still open");
        }
        impl->stopped = true;
        impl->stop_loops();
      },
      asio::detached);
}

void Server::stop() {
  if (!impl_ || !impl_->state || impl_->stopped.exchange(true)) return;
  auto st = impl_->state;
  asio::post(st->ex, [st] {
    error_code ignored;
    st->acceptor->close(ignored);
  });
  impl_->stop_loops();
}

}  // namespace aura::serve
