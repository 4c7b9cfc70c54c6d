// `aura serve` as one function: find or start the engine daemon, bind, drop privileges, prove
// the data folder is out of reach, serve until SIGINT or SIGTERM, stop what it started. The CLI
// parses flags into ServeOptions and prints the lines it is given.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "app/serve/serve_limits.h"
#include "engine/common/status.h"

namespace aura::serve {

struct ServeOptions {
  std::filesystem::path data = "var/aura";
  std::filesystem::path keys = "var/keys";
  std::filesystem::path socket;  // empty: DATA/../run/daemon.sock
  std::string listen = "127.0.0.1";
  uint16_t port = 8080;
  std::string user = "aura-web";
  std::filesystem::path ui;  // empty: the source tree's ui/dist when built, else none
  std::filesystem::path tls_cert;
  std::filesystem::path tls_key;
  std::filesystem::path operator_token_file;  // the daemon's; passed to one it starts
  std::filesystem::path scenarios;       // the bundled packages a daemon it starts sets up with
  std::vector<std::string> origins;      // more allowed origins (a public name)
  bool start_daemon = true;              // start one when none answers health on the socket
  size_t threads = 0;                    // event loops (a thread each); 0: one per core
  std::chrono::seconds drain_grace{10};  // a stop waits this long for answers under way
  Limits limits;
};

// The daemon socket for a data folder: DATA/../run/daemon.sock.
std::filesystem::path default_socket(const std::filesystem::path& data);

// The browser lab's build in the source tree (ui/dist), or empty when it is not built.
std::filesystem::path default_ui_dir();

// Whether a daemon answers `health` on `socket` (as root: the peer must be root).
bool daemon_answers(const std::filesystem::path& socket);

// Runs the front until a stop signal. `say` receives the lines a person reads (progress, the
// URL); the request log goes to stderr. REQUIRES: one thread; root, or the front's user itself
// (then it starts no daemon and has no privilege to drop).
Status run(const ServeOptions& options, const std::function<void(std::string_view)>& say);

}  // namespace aura::serve
