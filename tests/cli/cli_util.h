// Black-box helpers for the CLI tests: spawn the real `aura` binary (AURA_BIN) and
// capture its stdout, stderr and exit status; parse its JSON output; edit files on disk.
// Every test works in its own temporary folder; nothing here knows the engine's internals.
#pragma once

#include <simdjson.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "tests/support/temp_dir.h"

namespace aura::testing {

// What one run of the binary did.
struct CliResult {
  int exit_code = -1;     // the exit status, or 128 + the signal that killed it
  bool signaled = false;  // killed by a signal (a crash, or our time-out)
  // Its hang guard (CliOptions::timeout) passed before its stdout and stderr closed: it hung,
  // or a process it left behind still holds them (the run is then killed, or already exited).
  bool timed_out = false;
  std::string out;
  std::string err;

  // The last non-empty stdout line ("" when there is none).
  std::string last_line() const;
  // The non-empty stdout lines.
  std::vector<std::string> lines() const;
  // "exit=N stdout=... stderr=..." for failure messages.
  std::string describe() const;
};

// Hang guards for one run of the binary (house style: a deadline in a test is a hang guard sized
// for a machine half as fast, never a speed bar). Each is sized from the slowest such run
// on an idle two-core machine, times four or more (a machine half as fast, both cores busy); a
// run killed at its guard fails with "(timed out)" in its description.
//
// Any command but a judge run: the slowest is an O1 `attempt gate` outside judge mode (its five
// properties one after another, each on fresh worlds), 29-36 s idle (docs/PERFORMANCE.md).
inline constexpr std::chrono::seconds kCliHangGuard{300};
// `aura judge` on a scenario of real worlds (both cases, each a live world, probes and a whole
// TransferGate): `aura judge O1` takes 55 s idle here, about 90 s on a slower two-core machine.
inline constexpr std::chrono::seconds kJudgeHangGuard{600};

struct CliOptions {
  std::filesystem::path cwd;  // empty: the test's own working folder
  std::chrono::seconds timeout = kCliHangGuard;
};

// The binary under test, from the AURA_BIN environment variable.
std::filesystem::path aura_bin();

// Runs `aura args...` with stdin from /dev/null and waits for it.
CliResult run_aura(const std::vector<std::string>& args, const CliOptions& options = {});

// A long-running `aura` (e.g. `log tail --follow`): one of its outputs is read line by line
// (the other goes to /dev/null). The destructor kills this child, by its pid, and reaps it.
class CliProcess {
 public:
  enum class Output { kStdout, kStderr };
  explicit CliProcess(const std::vector<std::string>& args, Output read = Output::kStdout);
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  // The next line, or nullopt when none arrives within `timeout`.
  std::optional<std::string> next_line(std::chrono::milliseconds timeout);
  // Reads lines until one contains `text`; false when none does within `timeout`.
  bool wait_for(std::string_view text, std::chrono::milliseconds timeout);
  // SIGKILL, as a crash or power cut would end it, and reap.
  void kill_now();

 private:
  pid_t pid_ = -1;
  int fd_ = -1;
  std::string buffer_;
};

// One parsed JSON document; elements stay valid while the Json lives.
class Json {
 public:
  explicit Json(std::string_view text);
  bool ok() const { return ok_; }
  simdjson::dom::element root() const { return root_; }

  bool has(std::string_view key) const;
  bool is_null(std::string_view key) const;
  std::optional<bool> boolean(std::string_view key) const;
  std::optional<uint64_t> u64(std::string_view key) const;
  std::optional<double> number(std::string_view key) const;  // any JSON number
  std::optional<std::string> str(std::string_view key) const;

 private:
  std::unique_ptr<simdjson::dom::parser> parser_;
  simdjson::dom::element root_;
  bool ok_ = false;
};

// A fresh temporary folder ROOT with the data folder ROOT/data and the keys folder ROOT/keys
// (initialised with `aura keys init` unless told otherwise); removed at scope end.
class Lab {
 public:
  enum class Keys { kInit, kNone };
  explicit Lab(Keys keys = Keys::kInit);

  const std::filesystem::path& root() const { return dir_.path(); }
  std::filesystem::path data() const { return root() / "data"; }
  std::filesystem::path keys() const { return root() / "keys"; }
  std::filesystem::path operator/(const std::string& name) const { return root() / name; }

  // `aura args... --data DATA --keys KEYS`, run as `options` says.
  CliResult aura(std::vector<std::string> args, const CliOptions& options = {}) const;
  // aura(args, options), REQUIREd to exit 0 before its hang guard (the failure message describes
  // the run).
  CliResult ok(std::vector<std::string> args, const CliOptions& options = {}) const;
  // Appends one event and REQUIREs success; returns its seq.
  uint64_t append(const std::string& stream, const std::string& type,
                  const std::string& payload) const;
  // `log head --json`, REQUIREd to succeed.
  Json head() const;

 private:
  TempDir dir_;
};

// Files.
std::string read_file(const std::filesystem::path& p);
void write_file(const std::filesystem::path& p, std::string_view bytes);
// Every regular file under `dir` whose name ends with `suffix`.
std::vector<std::filesystem::path> files_with_suffix(const std::filesystem::path& dir,
                                                     std::string_view suffix);
// Occurrences of `needle` in the file's bytes.
size_t count_in_file(const std::filesystem::path& p, std::string_view needle);
// Names (relative paths) of everything under `dir`, sorted; empty when it does not exist.
std::vector<std::string> tree(const std::filesystem::path& dir);
// The entries of `dir` whose names start with `prefix` (a bench's temporary folders in /tmp).
std::set<std::filesystem::path> entries_starting(const std::filesystem::path& dir,
                                                 std::string_view prefix);

// The one file under `dir` whose name ends with `suffix` and holds `needle`; REQUIREs exactly
// one occurrence in all such files together.
std::filesystem::path file_holding(const std::filesystem::path& dir, std::string_view suffix,
                                   std::string_view needle);
// Flips the lowest bit of the byte at `needle[offset]` in the one file under `dir` whose name
// ends with `suffix` and holds `needle` (see file_holding).
std::filesystem::path flip_byte_in(const std::filesystem::path& dir, std::string_view suffix,
                                   std::string_view needle, size_t offset);

// `hex` with its first digit replaced by a different hex digit.
std::string flip_hex_digit(std::string hex);
// `text` with the single occurrence of `from` replaced by `to`; REQUIREs exactly one.
std::string replace_once(const std::string& text, const std::string& from, const std::string& to);

}  // namespace aura::testing
