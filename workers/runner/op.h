// One typed catalog call as aura-runner performs it (docs/RUNNER.md): the op table entry, its
// parsed arguments, the bounded output it writes, and how it fails. An op returns a Status:
// ok (exit 0); kInvalidArgument for a bad argument (exit 2, message on stderr, nothing sent);
// any other code for a failure the world's state caused (exit 1, the output becomes the line
// "error: <message>"), or, with an empty message, for one the op has already put in its output.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/file_io.h"
#include "engine/common/status.h"

namespace aura::runner {

inline constexpr size_t kMaxOutputBytes = 16 << 20;      // max_output's upper bound
inline constexpr size_t kMaxOpJsonBytes = 64 << 10;      // argv[1]
inline constexpr size_t kMaxSystemFileBytes = 16 << 20;  // /etc/passwd, /proc/net/tcp, ...

// The op's output: at most `cap` bytes are kept; anything past that is dropped and flagged.
class Output {
 public:
  explicit Output(size_t cap) : cap_(cap) {}
  void append(std::string_view s) {
    const size_t room = cap_ - bytes_.size();
    if (s.size() > room) truncated_ = true;
    bytes_.append(s.substr(0, room));
  }
  void line(std::string_view s) {
    append(s);
    append("\n");
  }
  void mark_truncated() { truncated_ = true; }
  // The op refused its target before reading or changing anything (refuse() below).
  void mark_refused() { refused_ = true; }
  void clear() {
    bytes_.clear();
    truncated_ = false;
    refused_ = false;
  }
  size_t cap() const { return cap_; }
  const std::string& bytes() const { return bytes_; }
  bool truncated() const { return truncated_; }
  bool refused() const { return refused_; }

 private:
  size_t cap_;
  std::string bytes_;
  bool truncated_ = false;
  bool refused_ = false;
};

// Where the node keeps what the ops touch besides their arguments (the environment's values).
struct Context {
  std::string journal_dir = "/var/lib/aura/journal";
  std::string svcman_state = "/run/svcman";
  std::string svcman_bin = "/aura/bin/aura-svcman";
  std::string ansible_project = "/srv/ansible";  // site.yml and ansible.cfg (AURA_ANSIBLE_PROJECT)
};

// An op's arguments, checked against its ArgSpecs before it runs: every required one present,
// no other member, each of its declared JSON type.
class Args {
 public:
  bool has(std::string_view name) const { return strings_.count(name) + ints_.count(name) > 0; }
  // REQUIRES: `name` is declared as a string argument and present (or required).
  const std::string& str(std::string_view name) const { return strings_.find(name)->second; }
  std::optional<std::string_view> opt_str(std::string_view name) const {
    auto it = strings_.find(name);
    if (it == strings_.end()) return std::nullopt;
    return it->second;
  }
  int64_t integer(std::string_view name, int64_t absent) const {
    auto it = ints_.find(name);
    return it == ints_.end() ? absent : it->second;
  }
  void set_str(std::string name, std::string v) { strings_[std::move(name)] = std::move(v); }
  void set_int(std::string name, int64_t v) { ints_[std::move(name)] = v; }

 private:
  std::map<std::string, std::string, std::less<>> strings_;
  std::map<std::string, int64_t, std::less<>> ints_;
};

struct ArgSpec {
  std::string_view name;
  bool required = true;
  bool integer = false;  // a JSON integer, else a JSON string
};

enum class OpClass { kProbe, kAction };

struct OpSpec {
  std::string_view name;
  OpClass cls;
  std::vector<ArgSpec> args;
  Status (*run)(const Args& args, const Context& ctx, Output& out);
};

// Each ops_*.cc file contributes its part of the table.
std::vector<OpSpec> file_ops();
std::vector<OpSpec> system_ops();
std::vector<OpSpec> net_ops();
std::vector<OpSpec> ansible_ops();

// Status helpers with the message shapes main() turns into output or stderr.
inline Status world_error(std::string_view what, std::string_view reason) {
  return Status::failed_precondition(std::string(what) + " : " + std::string(reason));
}
inline Status errno_error(std::string_view what, int err) {
  return world_error(what, file_io::errno_text(err));
}
// "what : step: strerror(err)": the step that failed belongs to the reason.
inline Status errno_error(std::string_view what, std::string_view step, int err) {
  return world_error(what, std::string(step) + ": " + file_io::errno_text(err));
}
inline Status failure_in_output() { return Status(ErrorCode::kFailedPrecondition, ""); }
// The op's own check refused its target before anything was read or changed (not a regular file,
// missing, a symlink that leaves the allowed prefixes): the output is the one line
// "refused: <what> : <reason>" and the runner exits 5 (docs/RUNNER.md), so the lab knows from
// the runner's exit status, not from anything the world wrote, that nothing was done.
inline Status refuse(Output& out, std::string_view what, std::string_view reason) {
  out.clear();
  out.line("refused: " + std::string(what) + " : " + std::string(reason));
  out.mark_refused();
  return failure_in_output();
}
inline Status bad_arg(std::string_view name, std::string_view why) {
  return Status::invalid("args." + std::string(name) + ": " + std::string(why));
}

}  // namespace aura::runner
