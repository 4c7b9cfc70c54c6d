// The engine daemon (`aura daemon`): one process, root, that owns a lab's data folder, keys,
// attempt engine, projections, judge queue and worlds, and serves them over a Unix socket with
// the daemon protocol (docs/formats/daemon-protocol.md) to the HTTP front and the CLI. Every
// request is read strictly and checked here again, whatever the front checked: capabilities and
// the operator token are verified by the daemon itself. Stopping it ends what it started: it
// waits for the judge run and any gate in progress (they are not cut short), drops the queued
// runs, and destroys every live world it holds.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "app/lab/folders.h"
#include "engine/common/status.h"

namespace aura::daemon {

struct Options {
  app::LabFolders folders;
  std::filesystem::path socket;          // the Unix socket
  std::filesystem::path scenarios;       // bundled packages, set up on first use
  std::string front_user = "aura-web";   // the only non-root uid served
  std::filesystem::path operator_token;  // file; read on every operator request
  std::filesystem::path receipts_dir;    // judge runs' receipts
  size_t judge_queue_limit = 4;          // runs waiting (the one running not counted)
  size_t max_connections = 128;
  // A live attempt with no command for this long is ended (0: 30 minutes). For tests and
  // operators who want it shorter.
  std::chrono::seconds live_idle{0};
};

// The embedded default's socket for a data folder: DATA/../run/daemon.sock.
std::filesystem::path default_socket(const std::filesystem::path& data);

// One structured log line (a JSON object), never an attempt token or the operator token.
using LogLine = std::function<void(const std::string& json)>;

class Daemon {
 public:
  // Sets the lab up on first use, opens the session, the projections and the socket.
  static Result<std::unique_ptr<Daemon>> open(const Options& options, LogLine log);
  ~Daemon();

  // Serves until stop(); then the judge queue and every world this daemon holds end.
  Status serve();
  // Thread-safe; serve() returns soon after.
  void stop();

  struct Impl;

 private:
  explicit Daemon(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace aura::daemon
