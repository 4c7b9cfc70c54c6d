// What the benches over HTTP share (`aura bench serve`, `aura bench learners`): a fresh lab
// behind `aura serve` in a folder of its own, and a plain HTTP/1.1 client on loopback sockets.
// A lab's folder is removed after a run that succeeded; a failed run leaves the front's log
// alone (never the keys or the data) and says where, unless the folder was asked to be kept.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::cli {

// A TCP connection to 127.0.0.1:`port` with TCP_NODELAY, bound first to `source` (an IPv4
// loopback address in host byte order, e.g. 127.0.1.5, so the front sees one client per
// address; 0: the kernel's choice). -1 on failure.
int connect_loopback(uint16_t port, uint32_t source = 0);

// One HTTP/1.1 exchange on a keep-alive connection: the status and the body (Content-Length
// framed; neither server here sends chunked answers). -1 on a transport failure. `close` (when
// given) is set when the server said it closes the connection after this answer.
int http(int fd, const std::string& request, std::string* body, bool* close = nullptr);

// fork + execv of `argv` in `cwd`, stderr to `log`, stdout to /dev/null; the child's pid.
pid_t spawn(const std::vector<std::string>& argv, const std::filesystem::path& cwd,
            const std::filesystem::path& log);

// A loopback TCP port that was free a moment ago.
uint16_t free_port();

// A JSON body's top-level string member, or "" when it has none (or the body is no object).
std::string member_of(const std::string& body, std::string_view name);

// One answer of the lab, timed from the request's send to its last byte.
struct HttpAnswer {
  int status = -1;  // -1: the connection failed
  std::string body;
  double ms = 0;
};

// A client of one `aura serve` from one source address: the Host and Origin headers the front
// checks, an attempt's bearer token, a keep-alive connection opened afresh when the last one
// was idle for longer than the front keeps it. Not thread-safe: one per thread.
class LabClient {
 public:
  explicit LabClient(uint16_t port, uint32_t source = 0);
  ~LabClient();
  LabClient(const LabClient&) = delete;
  LabClient& operator=(const LabClient&) = delete;

  HttpAnswer get(const std::string& path, const std::string& token = "");
  // `json` is the body, sent as application/json.
  HttpAnswer post(const std::string& path, const std::string& json, const std::string& token = "");

 private:
  HttpAnswer exchange(const std::string& request, bool retry);

  uint16_t port_;
  uint32_t source_;
  int fd_ = -1;
  std::chrono::steady_clock::time_point last_used_;
  std::string host_, origin_;
};

// A fresh lab behind `aura serve` (which starts its own daemon) in a folder of its own, on a
// free loopback port. The destructor stops the front and removes the folder as a failed run.
class BenchLab {
 public:
  // `command` names the bench in messages ("bench serve"). `root` is the folder to work in:
  // `kept` when the caller asked to keep it (then it is never removed).
  BenchLab(std::string command, std::filesystem::path root, bool kept);
  ~BenchLab();
  BenchLab(const BenchLab&) = delete;
  BenchLab& operator=(const BenchLab&) = delete;

  // Copies `scenarios` (set-up signs them in place), starts `aura serve`, and waits for its
  // health (first use sets the lab up; 120 s at most). A failure names what failed and, once
  // the front was started, its log.
  Status start(const std::filesystem::path& scenarios);

  uint16_t port() const { return port_; }
  const std::filesystem::path& root() const { return root_; }
  // The pid of the front (0 before start).
  pid_t serve_pid() const { return serve_; }

  // Stops the front (SIGTERM, then waits): it stops the daemon it started, which ends every
  // world it made. Idempotent.
  void stop_serve();
  // stop_serve(), then what is left of the folder: nothing after a run that succeeded (`ok`);
  // after a failed one, the front's log alone, named on stderr; a kept folder stays whole.
  void finish(bool ok);

 private:
  std::string command_;
  std::filesystem::path root_;
  bool kept_;
  bool finished_ = false;
  uint16_t port_ = 0;
  pid_t serve_ = 0;
};

}  // namespace aura::cli
