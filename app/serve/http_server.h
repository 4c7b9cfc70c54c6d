// The HTTP front's server (Boost.Beast on Boost.Asio, C++20 coroutines): accepts connections
// (plain or TLS 1.2+), reads each request within the named limits, answers the API by
// forwarding checked requests to the daemon (request_check.h, daemon_link.h), relays event
// streams, serves the browser lab and /metrics. A coroutine and a strand per connection; a slow
// or hostile client only ever holds its own connection. Beast stays inside http_server.cc.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "app/serve/serve_limits.h"
#include "engine/common/status.h"

namespace aura::serve {

class FrontMetrics;

struct ServerOptions {
  std::string listen_address = "127.0.0.1";
  uint16_t port = 8080;  // 0: any free port (tests); port() says which
  // Both or neither. Required for an address that is not loopback.
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  std::filesystem::path socket;        // the daemon's, as connect() takes it
  std::filesystem::path socket_label;  // how messages name it (empty: socket)
  std::filesystem::path ui_dir;        // empty: the browser lab is not built
  // Origins allowed besides the server's own (a public name in front of a TLS listener).
  std::vector<std::string> extra_origins;
  Limits limits;
  uid_t daemon_uid = 0;
  size_t threads = 2;
  std::ostream* log = nullptr;  // the request log (JSON lines); null: none
};

// Refuses an address that is not loopback unless TLS is configured; an error also names an
// address that does not parse. `tls`: both files were given.
Status check_listen_address(const std::string& address, bool tls);

class Server {
 public:
  // Binds and listens (as root, before privileges are dropped: the port may be below 1024),
  // loads the TLS certificate and key (readable by root only) and opens the UI folder. Nothing
  // is accepted until run().
  static Result<std::unique_ptr<Server>> create(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  uint16_t port() const;
  // "http://127.0.0.1:8080/" (https with TLS).
  std::string url() const;
  // The origins state-changing requests may come from.
  const std::vector<std::string>& origins() const;

  // Serves on `threads` event loops, a thread each (this one included), until stop() or the
  // end of a drain; returns when they ended.
  void run();
  // Stops taking connections and requests; a request being answered is answered (its
  // connection then closes), idle connections and event streams are closed, and the loops stop
  // when no connection is left or at `grace`. Thread-safe; not async-signal-safe.
  void drain(std::chrono::milliseconds grace);
  // Stops serving now: open connections are dropped. Thread-safe; not async-signal-safe.
  void stop();

  FrontMetrics& metrics();

 private:
  struct Impl;
  explicit Server(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace aura::serve
