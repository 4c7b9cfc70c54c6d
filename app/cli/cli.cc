#include "app/cli/cli.h"

#include <iostream>
#include <sstream>

#include "app/cli/daemon_forward.h"
#include "engine/common/json_writer.h"
#include "engine/scenario/names.h"

namespace aura::cli {
namespace {

const std::vector<Flag>& common_flags() {
  static const std::vector<Flag> flags = {
      {"data", "DIR", "data folder (default ./var/aura)"},
      {"keys", "DIR", "keys folder, never inside the data folder (default ./var/keys)"},
      {"json", "", "print one JSON object as the last line"},
      {"help", "", "show this help"},
  };
  return flags;
}

const Flag* find_flag(const Command& c, const std::string& name) {
  for (const auto& f : c.flags) {
    if (f.name == name) return &f;
  }
  for (const auto& f : common_flags()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::vector<std::string> words_of(const std::string& path) {
  std::istringstream in(path);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The option names `c` takes, as typed ("--learner").
std::vector<std::string> option_names(const Command& c) {
  std::vector<std::string> out;
  for (const auto& f : c.flags) out.push_back("--" + f.name);
  for (const auto& f : common_flags()) out.push_back("--" + f.name);
  return out;
}

}  // namespace

std::optional<std::string> CommandTable::suggest(const std::vector<std::string>& typed) const {
  // Word by word: each typed word, or the nearest word a registered path continues with.
  std::vector<std::string> resolved;
  bool changed = false;
  for (const std::string& word : typed) {
    std::vector<std::string> next;
    bool complete = false;
    for (const auto& c : commands_) {
      const std::vector<std::string> path = words_of(c.path);
      if (path.size() <= resolved.size() ||
          !std::equal(resolved.begin(), resolved.end(), path.begin())) {
        complete |= path.size() == resolved.size() && !resolved.empty() &&
                    std::equal(resolved.begin(), resolved.end(), path.begin());
        continue;
      }
      if (std::find(next.begin(), next.end(), path[resolved.size()]) == next.end())
        next.push_back(path[resolved.size()]);
    }
    if (complete || next.empty()) break;
    if (std::find(next.begin(), next.end(), word) != next.end()) {
      resolved.push_back(word);
      continue;
    }
    auto near = scenario::nearest_name(word, next);
    if (!near) break;
    resolved.push_back(*near);
    changed = true;
  }
  if (!changed) return std::nullopt;
  std::string out;
  for (const auto& w : resolved) out += (out.empty() ? "" : " ") + w;
  return out;
}

std::optional<uint64_t> parse_u64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = uint64_t(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::string Invocation::get(const std::string& name, const std::string& fallback) const {
  auto it = flags.find(name);
  return it == flags.end() ? fallback : it->second;
}

Result<uint64_t> Invocation::get_u64(const std::string& name, uint64_t fallback) const {
  auto it = flags.find(name);
  if (it == flags.end()) return fallback;
  auto v = parse_u64(it->second);
  if (!v)
    return Status::invalid("--" + name + ": '" + it->second + "' is not a non-negative integer");
  return *v;
}

int Invocation::fail(const Status& s, int exit_code) const {
  std::cerr << "aura " << command->path << ": " << s.message() << "\n";
  if (json) {
    std::cout << JsonWriter().boolean("ok", false).str("error", s.message()).done() << std::endl;
  }
  return exit_code;
}

void Invocation::emit_json(const std::string& json_object) const {
  if (json) std::cout << json_object << std::endl;
}

void CommandTable::add(Command c) { commands_.push_back(std::move(c)); }

std::string CommandTable::usage(const Command& c) const {
  std::ostringstream o;
  o << "usage: aura " << c.path;
  if (!c.args.empty()) o << " " << c.args;
  o << " [options]\n\n" << c.summary << "\n";
  if (!c.details.empty()) o << "\n" << c.details << "\n";
  o << "\noptions:\n";
  auto line = [&](const Flag& f) {
    std::string left = "  --" + f.name + (f.value_name.empty() ? "" : " " + f.value_name);
    o << left << std::string(left.size() < 28 ? 28 - left.size() : 1, ' ') << f.help << "\n";
  };
  for (const auto& f : c.flags) line(f);
  for (const auto& f : common_flags()) line(f);
  return o.str();
}

std::string CommandTable::overview(const std::string& prefix) const {
  std::ostringstream o;
  o << "usage: aura " << (prefix.empty() ? "COMMAND" : prefix + " COMMAND") << " [options]\n\n"
    << "AURA Systems Lab: an evidence-first lab for Linux incident response.\n\ncommands:\n";
  for (const auto& c : commands_) {
    if (!prefix.empty() && c.path.rfind(prefix + " ", 0) != 0) continue;
    std::string left = "  " + c.path + (c.args.empty() ? "" : " " + c.args);
    o << left << std::string(left.size() < 38 ? 38 - left.size() : 1, ' ') << c.summary << "\n";
  }
  o << "\nRun 'aura COMMAND --help' for a command's options.\n";
  return o.str();
}

int CommandTable::main(int argc, char** argv) const {
  std::vector<std::string> args(argv + 1, argv + argc);
  // The command is the longest registered path matching the leading words.
  const Command* cmd = nullptr;
  size_t words = 0;
  for (const auto& c : commands_) {
    std::istringstream in(c.path);
    std::string w;
    size_t i = 0;
    bool match = true;
    while (in >> w) {
      if (i >= args.size() || args[i] != w) {
        match = false;
        break;
      }
      ++i;
    }
    if (match && i > words) {
      cmd = &c;
      words = i;
    }
  }
  if (cmd == nullptr) {
    std::string prefix = args.empty() || args[0].rfind("-", 0) == 0 ? "" : args[0];
    bool known_prefix = false;
    for (const auto& c : commands_) known_prefix |= c.path.rfind(prefix + " ", 0) == 0;
    if (!known_prefix) prefix.clear();
    const bool asked = args.empty() || args.back() == "--help" || args.back() == "-h" ||
                       (args.size() == 1 && known_prefix);
    if (asked) {
      std::cout << overview(prefix);
      return 0;
    }
    std::string tried;
    std::vector<std::string> typed;
    for (size_t i = 0; i < args.size() && i < 3 && args[i].rfind("-", 0) != 0; ++i) {
      if (i < 2) tried += (tried.empty() ? "" : " ") + args[i];
      typed.push_back(args[i]);
    }
    std::cerr << "aura: unknown command '" << tried << "'";
    if (auto near = suggest(typed)) {
      std::cerr << "; did you mean 'aura " << *near << "'?";
      // The overview of what the suggestion belongs to, when it names a group of commands.
      const std::string first = near->substr(0, near->find(' '));
      for (const auto& c : commands_) {
        if (prefix.empty() && c.path.rfind(first + " ", 0) == 0) prefix = first;
      }
    }
    std::cerr << "\n\n" << overview(prefix);
    return 2;
  }

  Invocation inv;
  inv.command = cmd;
  for (size_t i = words; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      inv.positional.insert(inv.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (a == "-h") {
      std::cout << usage(*cmd);
      return 0;
    }
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2), value;
      auto eq = name.find('=');
      bool inline_value = eq != std::string::npos;
      if (inline_value) {
        value = name.substr(eq + 1);
        name = name.substr(0, eq);
      }
      const Flag* f = find_flag(*cmd, name);
      if (f == nullptr) {
        std::cerr << "aura " << cmd->path << ": unknown option --" << name;
        if (auto near = scenario::nearest_name("--" + name, option_names(*cmd))) {
          std::cerr << "; did you mean " << *near << "?";
        }
        std::cerr << "\n\n" << usage(*cmd);
        return 2;
      }
      if (f->value_name.empty()) {
        if (inline_value) {
          std::cerr << "aura " << cmd->path << ": --" << name << " takes no value\n";
          return 2;
        }
        value = "1";
      } else if (!inline_value) {
        if (i + 1 >= args.size()) {
          std::cerr << "aura " << cmd->path << ": --" << name << " needs " << f->value_name << "\n";
          return 2;
        }
        value = args[++i];
      }
      inv.flags[name] = value;
    } else {
      inv.positional.push_back(a);
    }
  }
  if (inv.has("help")) {
    std::cout << usage(*cmd);
    return 0;
  }
  if (inv.positional.size() < cmd->min_positional || inv.positional.size() > cmd->max_positional) {
    std::cerr << "aura " << cmd->path << ": expected "
              << (cmd->args.empty() ? "no arguments" : cmd->args) << "\n\n"
              << usage(*cmd);
    return 2;
  }
  for (const char* path_flag : {"data", "keys", "pubkey", "out", "trusted"}) {
    if (inv.has(path_flag) && inv.get(path_flag).empty()) {
      std::cerr << "aura " << cmd->path << ": --" << path_flag << ": empty path\n";
      return 2;
    }
  }
  inv.json = inv.has("json");
  inv.data_dir = inv.get("data", "var/aura");
  inv.keys_dir = inv.get("keys", "var/keys");
  // An attempt command on a data folder the lab's daemon holds goes to the daemon.
  if (auto forwarded = forward_attempt(inv)) return *forwarded;
  return cmd->run(inv);
}

}  // namespace aura::cli
