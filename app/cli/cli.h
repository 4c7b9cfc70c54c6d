// The `aura` command line: a registry of subcommands, each with its flags, its
// positional arguments and its --help. Every command takes --data DIR, --keys DIR,
// --json and --help; with --json the last line printed is one JSON object.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/common/status.h"

namespace aura::cli {

struct Flag {
  std::string name;        // without the leading "--"
  std::string value_name;  // empty: a boolean switch
  std::string help;
};

struct Invocation;

struct Command {
  std::string path;     // "log verify"
  std::string args;     // synopsis of positionals, e.g. "SEQ"
  std::string summary;  // one line
  std::string details;  // further help text, may be empty
  std::vector<Flag> flags;
  size_t min_positional = 0;
  size_t max_positional = 0;
  std::function<int(Invocation&)> run;  // returns the exit status
};

struct Invocation {
  const Command* command = nullptr;
  std::map<std::string, std::string> flags;  // switches map to "1"
  std::vector<std::string> positional;
  std::filesystem::path data_dir;
  std::filesystem::path keys_dir;
  bool json = false;

  bool has(const std::string& name) const { return flags.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  // Parses a non-negative integer flag; an error names the flag.
  Result<uint64_t> get_u64(const std::string& name, uint64_t fallback) const;

  // Reports a failure: "aura <path>: <message>" on stderr, and with --json an
  // {"ok":false,"error":...} line on stdout. Returns `exit_code`.
  int fail(const Status& s, int exit_code = 1) const;
  // Prints `json_object` as the final line when --json is set.
  void emit_json(const std::string& json_object) const;
};

class CommandTable {
 public:
  void add(Command c);
  // Parses argv and runs the command; returns the process exit status.
  int main(int argc, char** argv) const;

 private:
  std::string usage(const Command& c) const;
  // The registered command nearest to the words typed (a typo in any of them), or nullopt when
  // none is near enough or nothing was mistyped ("atempt strat" -> "attempt start").
  std::optional<std::string> suggest(const std::vector<std::string>& typed) const;
  std::string overview(const std::string& prefix) const;
  std::vector<Command> commands_;
};

// Commands of each area register here.
void register_log_commands(CommandTable& r);
void register_bench_commands(CommandTable& r);
void register_scenario_commands(CommandTable& r);
void register_attempt_commands(CommandTable& r);
void register_receipt_commands(CommandTable& r);
void register_projection_commands(CommandTable& r);
void register_bench_replay_commands(CommandTable& r);
void register_caps_commands(CommandTable& r);

// For a command that needs a set-up lab (aura judge): when KEYS holds no lab key yet, runs
// 'aura setup' (its lines, not its JSON) with the bundled scenarios of --scenarios (default
// ./scenarios). 0 when the lab is set up afterwards, else the exit status to return.
int setup_if_new(const Invocation& inv);
void register_sandbox_commands(CommandTable& r);
void register_bench_sandbox_commands(CommandTable& r);
void register_worker_commands(CommandTable& r);
void register_bench_worlds_commands(CommandTable& r);
void register_daemon_commands(CommandTable& r);
void register_bench_serve_commands(CommandTable& r);
void register_bench_learners_commands(CommandTable& r);
void register_serve_commands(CommandTable& r);

// A non-negative decimal integer, nothing else.
std::optional<uint64_t> parse_u64(std::string_view s);

}  // namespace aura::cli
