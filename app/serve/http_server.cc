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
#include "app/serve/front_metrics.h"
#include "app/serve/request_check.h"
#include "app/serve/response.h"
#include "app/serve/static_files.h"
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

// Everything the coroutines share. Held by shared_ptr in every coroutine frame, so it outlives
// the last of them however the io_context ends (Asio's documented shutdown order).
struct State {
  State(asio::io_context& ioc, ServerOptions o, StaticFiles ui)
      : ex(ioc.get_executor()),
        options(std::move(o)),
        acceptor(ioc),
        daemon(ioc.get_executor(),
               DaemonLinkOptions{options.socket, options.daemon_uid,
                                 options.limits.max_daemon_calls, options.limits.max_streams,
                                 options.limits.max_idle_daemon_connections,
                                 options.limits.daemon_idle_reuse}),
        ui(std::move(ui)),
        log(options.log) {}

  asio::any_io_executor ex;
  ServerOptions options;
  tcp::acceptor acceptor;
  std::optional<ssl::context> tls;
  DaemonLink daemon;
  StaticFiles ui;
  Origins origins;
  FrontMetrics metrics;
  AccessLog log;
  std::string url;

  std::mutex conn_mu;
  size_t connections = 0;
  std::map<std::string, size_t> per_address;

  // Admits a connection from `address` or says which cap it hit ("" when admitted).
  std::string admit(const std::string& address) {
    std::lock_guard lock(conn_mu);
    if (connections >= options.limits.max_connections) return "total";
    size_t& n = per_address[address];
    if (n >= options.limits.max_connections_per_address) {
      if (n == 0) per_address.erase(address);
      return "per_address";
    }
    ++n;
    ++connections;
    metrics.connection_opened();
    return "";
  }
  void release(const std::string& address) {
    std::lock_guard lock(conn_mu);
    --connections;
    if (--per_address[address] == 0) per_address.erase(address);
    metrics.connection_closed();
  }
};

namespace {

// One response as Beast's message, with the security headers and the request id.
http::response<http::string_body> to_beast(const Response& r, unsigned version, bool api,
                                           const std::string& request_id, bool keep_alive) {
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
                                     bool api, const std::string& request_id, bool keep_alive) {
  auto res = to_beast(r, version, api, request_id, keep_alive);
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
asio::awaitable<Response> metrics_response(State& st, const std::string& request_id) {
  rpc::Request q{"metrics", request_id, rpc::AuthKind::kNone, "", "{}"};
  auto reply = co_await st.daemon.call(q, std::chrono::seconds(30));
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
  if (s.code() == ErrorCode::kBusy) {
    return error_response(rpc::api_error(429, "too_many_requests", s.message()));
  }
  return error_response(
      rpc::api_error(503, "unavailable", "the lab's daemon is not answering: " + s.message()));
}

// An event stream: the daemon's frames relayed as server-sent events until either side ends.
// Returns after the connection's last byte; the connection is then closed.
template <class Stream>
asio::awaitable<void> relay_stream(State& st, Stream& stream, const Forward& f,
                                   const std::string& request_id, unsigned version, Outcome& out) {
  rpc::Request q{f.op, request_id, f.auth, f.secret, f.args_json};
  auto opened = co_await st.daemon.open_stream(q, f.timeout);
  if (!opened.ok() || !opened->stream) {
    Response r = opened.ok() ? reply_response(opened->reply) : daemon_unavailable(opened.status());
    out.status = r.status;
    out.bytes = r.body.size();
    co_await write_response(st, stream, r, version, true, request_id, false);
    co_return;
  }
  std::unique_ptr<DaemonStream> events = std::move(opened->stream);
  st.metrics.stream_opened();
  struct Closed {
    FrontMetrics& m;
    ~Closed() { m.stream_closed(); }
  } closed{st.metrics};

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
}

// One API request after its checks: the daemon's answer as the response.
asio::awaitable<Response> forward(State& st, const Forward& f, const std::string& request_id,
                                  bool tls) {
  rpc::Request q{f.op, request_id, f.auth, f.secret, f.args_json};
  auto reply = co_await st.daemon.call(q, f.timeout);
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
  a.method = std::string(req.method_string());
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

// The connection's requests, one after another, until it closes or a limit closes it.
template <class Stream>
asio::awaitable<void> serve_requests(std::shared_ptr<State> st, Stream& stream, bool tls) {
  const Limits& limits = st->options.limits;
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(std::uint32_t(limits.header_bytes));
    parser.body_limit(limits.ir_body_bytes);
    lowest(stream).expires_after(limits.header_timeout);
    auto [ec, n] = co_await http::async_read_header(stream, buffer, parser, kNothrow);
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
    } else if (path.rfind("/api/", 0) == 0) {
      auto m = match_route(std::string_view(req.method_string()), path, limits);
      if (auto* ok = std::get_if<RouteMatch>(&m)) max_body = ok->max_body_bytes;
    }
    if (!early && parser.content_length() && *parser.content_length() > max_body) {
      early = rpc::api_error(413, "too_large",
                             "the body is " + std::to_string(*parser.content_length()) +
                                 " bytes, more than this route's " + std::to_string(max_body));
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
      if (req.method() != http::verb::get) {
        res = error_response(rpc::api_error(405, "method_not_allowed", "GET only"), "GET");
      } else if (auto e = check_query(req.target(), true)) {
        res = error_response(*e);
      } else {
        res = co_await metrics_response(*st, request_id);
      }
    } else if (api) {
      auto prepared = prepare_forward(api_request_of(req), st->origins, limits);
      if (auto* no = std::get_if<Refusal>(&prepared)) {
        out.route = no->route;
        res = error_response(no->error, no->allow);
      } else {
        Forward& f = std::get<Forward>(prepared);
        out.route = f.route;
        if (f.stream) {
          stream_forward = std::move(f);
        } else {
          res = co_await forward(*st, f, request_id, tls);
        }
      }
    } else {
      out.route = "static";
      if (req.method() != http::verb::get) {
        res = error_response(rpc::api_error(405, "method_not_allowed", "GET only"), "GET");
      } else if (auto e = check_query(req.target(), false)) {
        res = error_response(*e);
      } else if (!req.body().empty()) {
        res = error_response(rpc::api_error(400, "malformed", "a GET takes no body"));
      } else {
        res = st->ui.get(path);
      }
    }

    bool written = false;
    if (stream_forward) {
      co_await relay_stream(*st, stream, *stream_forward, request_id, req.version(), out);
      keep_alive = false;
      written = true;
    } else {
      out.status = res.status;
      out.bytes = res.body.size();
      written = co_await write_response(*st, stream, res, req.version(),
                                        api || res.content_type == "application/json", request_id,
                                        keep_alive);
    }
    double secs = std::chrono::duration<double>(Clock::now() - started).count();
    st->metrics.record(out.route, out.status, secs);
    st->log.write({request_id, std::string(req.method_string()), out.route, out.status, secs * 1000,
                   out.bytes});
    if (!written || !keep_alive) co_return;
  }
}

// Past a connection cap: a 429 on a plain connection (a TLS one is closed), then close.
asio::awaitable<void> refuse_connection(std::shared_ptr<State> st, tcp::socket socket,
                                        std::string reason) {
  if (st->tls) co_return;
  beast::tcp_stream stream(std::move(socket));
  Response r = error_response(
      rpc::api_error(429, "too_many_requests",
                     reason == "total" ? "the server has too many connections open; retry later"
                                       : "too many connections from your address; retry later"));
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

asio::awaitable<void> run_connection(std::shared_ptr<State> st, tcp::socket socket,
                                     std::string address) {
  struct Release {
    State& st;
    std::string address;
    ~Release() { st.release(address); }
  } release{*st, address};
  if (st->tls) {
    beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *st->tls);
    lowest(stream).expires_after(st->options.limits.header_timeout);
    auto [ec] = co_await stream.async_handshake(ssl::stream_base::server, kNothrow);
    if (ec) co_return;
    co_await serve_requests(st, stream, true);
    lowest(stream).expires_after(std::chrono::seconds(2));
    co_await stream.async_shutdown(kNothrow);
  } else {
    beast::tcp_stream stream(std::move(socket));
    co_await serve_requests(st, stream, false);
    error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
  }
}

asio::awaitable<void> accept_loop(std::shared_ptr<State> st) {
  for (;;) {
    auto [ec, socket] = co_await st->acceptor.async_accept(asio::make_strand(st->ex), kNothrow);
    if (ec == asio::error::operation_aborted || !st->acceptor.is_open()) co_return;
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
    std::string refused = st->admit(address);
    auto ex = socket.get_executor();
    if (!refused.empty()) {
      st->metrics.connection_refused(refused);
      asio::co_spawn(ex, refuse_connection(st, std::move(socket), refused), asio::detached);
      continue;
    }
    asio::co_spawn(ex, run_connection(st, std::move(socket), std::move(address)), asio::detached);
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
  // Declared first, destroyed last: the coroutines' frames (and the shared State in them) go
  // with it.
  std::unique_ptr<asio::io_context> ioc;
  std::shared_ptr<State> state;
  std::vector<std::thread> threads;
};

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Server::~Server() {
  stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
  impl_->state.reset();
  impl_->ioc.reset();
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
  impl->ioc = std::make_unique<asio::io_context>(int(std::max<size_t>(1, options.threads)));
  auto st = std::make_shared<State>(*impl->ioc, std::move(options), std::move(ui).value());
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
  st->acceptor.open(ep.protocol(), ec);
  if (!ec) st->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) st->acceptor.bind(ep, ec);
  if (!ec) st->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::unavailable("cannot listen on " + where + ": " + ec.message());

  const uint16_t port = st->acceptor.local_endpoint().port();
  st->origins.allowed = own_origins(addr, port, tls);
  for (const auto& extra : o.extra_origins) st->origins.allowed.push_back(extra);
  const std::string shown = addr.is_unspecified() ? "127.0.0.1" : host_for_url(addr);
  st->url = std::string(tls ? "https://" : "http://") + shown + ":" + std::to_string(port) + "/";
  return std::unique_ptr<Server>(new Server(std::move(impl)));
}

uint16_t Server::port() const {
  error_code ec;
  return impl_->state->acceptor.local_endpoint(ec).port();
}

std::string Server::url() const { return impl_->state->url; }

const std::vector<std::string>& Server::origins() const { return impl_->state->origins.allowed; }

FrontMetrics& Server::metrics() { return impl_->state->metrics; }

void Server::run() {
  auto st = impl_->state;
  asio::co_spawn(st->ex, accept_loop(st), asio::detached);
  const size_t n = std::max<size_t>(1, st->options.threads);
  for (size_t i = 1; i < n; ++i) {
    impl_->threads.emplace_back([this] { impl_->ioc->run(); });
  }
  impl_->ioc->run();
  for (auto& t : impl_->threads) t.join();
  impl_->threads.clear();
}

void Server::stop() {
  if (!impl_ || !impl_->ioc) return;
  auto st = impl_->state;
  asio::post(*impl_->ioc, [st] {
    error_code ignored;
    st->acceptor.close(ignored);
  });
  impl_->ioc->stop();
}

}  // namespace aura::serve
