#include "workers/filetree/filetree_world.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "engine/scenario/call_dom.h"
#include "engine/scenario/check_params.h"
#include "engine/scenario/target_rules.h"

namespace aura::workers::filetree {
namespace fs = std::filesystem;
using scenario::Call;
using scenario::ParamType;
using scenario::Target;
using world::CallOutput;
using world::CheckOutput;

namespace {

// Text accumulated up to `cap` bytes; what does not fit is dropped and flagged.
class Output {
 public:
  explicit Output(uint64_t cap) : cap_(cap) {}
  void add(std::string_view text) {
    if (truncated_) return;
    if (out_.size() + text.size() > cap_) {
      out_.append(text.substr(0, cap_ - out_.size()));
      truncated_ = true;
      return;
    }
    out_.append(text);
  }
  CallOutput done(std::vector<std::string> resolved = {}) {
    CallOutput o;
    o.output = std::move(out_);
    o.truncated = truncated_;
    o.resolved = std::move(resolved);
    return o;
  }

 private:
  uint64_t cap_;
  std::string out_;
  bool truncated_ = false;
};

// Failures of the world's state (a path missing or refused, a config that does not parse, a
// target that resolves to nothing) are the call's result: exit 1 and an error, recorded as
// evidence. Failures of the host (I/O, a missing kernel feature, a damaged journal) are errors
// of the driver.
bool is_world_failure(const Status& s) {
  return s.code() != ErrorCode::kIo && s.code() != ErrorCode::kUnavailable &&
         s.code() != ErrorCode::kCorruption;
}

Result<CallOutput> failed(const Status& s, std::vector<std::string> resolved = {}) {
  if (!is_world_failure(s)) return s;
  CallOutput o;
  o.exit_code = 1;
  o.error = s.message();
  o.resolved = std::move(resolved);
  return o;
}

// The driver's own check before a reading probe reads anything, on the host through WorldFs
// (no symlink followed): the path must be there and be a `want`. Otherwise the call is refused
// (CallOutput::refused, with the reason as its error: nothing was read, and the probe costs
// nothing); nullopt when it may read.
Result<std::optional<CallOutput>> refusal(const WorldFs& fs, const std::string& path,
                                          EntryType want) {
  auto entry = fs.stat(path);
  std::string why;
  if (!entry.ok()) {
    if (!is_world_failure(entry.status())) return entry.status();
    why = entry.status().message();
  } else if (!*entry) {
    why = path + ": not found";
  } else if ((*entry)->type != want) {
    why = path + ": a " + std::string(entry_type_name((*entry)->type)) + ", not " +
          (want == EntryType::kDir ? "a folder" : "a regular file");
  } else {
    return std::optional<CallOutput>();
  }
  CallOutput o;
  o.exit_code = 1;
  o.refused = true;
  o.error = "refused: " + why;  // the output stays empty: nothing was read
  return std::optional<CallOutput>(std::move(o));
}

Result<std::string> string_param(const Call& call, std::string_view name) {
  const scenario::ParamValue* v = call.find(name);
  const auto* s = v != nullptr ? std::get_if<std::string>(v) : nullptr;
  if (s == nullptr) {
    return Status::invalid("call " + call.name + ": parameter " + std::string(name) +
                           " is missing or not a string");
  }
  return *s;
}

Result<Target> target_param(const Call& call, std::string_view name) {
  const scenario::ParamValue* v = call.find(name);
  const auto* t = v != nullptr ? std::get_if<Target>(v) : nullptr;
  if (t == nullptr) {
    return Status::invalid("call " + call.name + ": parameter " + std::string(name) +
                           " is missing or not a target");
  }
  return *t;
}

std::string mode_text(uint32_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

// `text` cut to at most `max` bytes on a UTF-8 boundary, "..." marking a cut.
std::string bounded(std::string text, size_t max) {
  if (text.size() <= max) return text;
  size_t end = max - 3;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) --end;
  text.resize(end);
  return text + "...";
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += sep;
    out += s;
  }
  return out;
}

const CallShape* find_shape(const std::vector<CallShape>& shapes, std::string_view name) {
  for (const CallShape& s : shapes) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

struct FleetCheck {
  std::string expect_text;
  std::string node, key, value;
};

// The check's parameters by the rule every driver shares (engine/scenario/check_params.h), then
// what each value must be in a fleet.
Result<FleetCheck> parse_fleet_check(std::string_view call, std::string_view params_json,
                                     std::string_view path) {
  namespace json = scenario::call_reader;
  using Spec = scenario::CheckParamSpec;
  static constexpr std::array<Spec, 1> kHealthy = {Spec{"expect_text"}};
  static constexpr std::array<Spec, 3> kValue = {Spec{"node"}, Spec{"key"}, Spec{"value"}};
  std::span<const Spec> spec;
  if (call == "fleet.healthy") {
    spec = kHealthy;
  } else if (call == "node.value") {
    spec = kValue;
  } else if (call != "fleet.converged") {
    return Status::invalid(std::string(path) + ": " + std::string(call) +
                           " is not a check the filetree driver implements");
  }
  scenario::CheckParams params;
  AURA_ASSIGN_OR_RETURN(params, scenario::parse_check_params(params_json, spec, path));
  FleetCheck out;
  if (call == "fleet.healthy") {
    out.expect_text = params.get("expect_text");
    if (out.expect_text.size() > 256 || json::has_control(out.expect_text)) {
      return Status::invalid(json::member_path(path, "expect_text") +
                             ": 1..256 bytes without control characters");
    }
  } else if (call == "node.value") {
    out.node = params.get("node");
    out.key = params.get("key");
    out.value = params.get("value");
    if (!is_fleet_name(out.node)) {
      return Status::invalid(json::member_path(path, "node") + ": not a node name");
    }
    if (!is_fleet_name(out.key)) {
      return Status::invalid(json::member_path(path, "key") + ": not a key");
    }
    if (!is_var_value(out.value)) {
      return Status::invalid(json::member_path(path, "value") + ": not a config value");
    }
  }
  return out;
}

// The keys whose values differ between two vars files ("app_root, port").
std::vector<std::string> differing_keys(const Vars& a, const Vars& b) {
  std::set<std::string> keys;
  for (const auto& [k, v] : a.entries) {
    const std::string* o = b.find(k);
    if (o == nullptr || *o != v) keys.insert(k);
  }
  for (const auto& [k, v] : b.entries) {
    if (a.find(k) == nullptr) keys.insert(k);
  }
  return {keys.begin(), keys.end()};
}

}  // namespace

const std::vector<CallShape>& probe_shapes() {
  static const std::vector<CallShape> k = {
      {"file.read", {{"path", ParamType::kPath}}},
      {"dir.list", {{"path", ParamType::kPath}}},
      {"fleet.effective", {{"node", ParamType::kTarget}}},
      {"fleet.diff", {}},
  };
  return k;
}

const std::vector<CallShape>& action_shapes() {
  static const std::vector<CallShape> k = {
      {"vars.unset", {{"key", ParamType::kString}, {"node", ParamType::kTarget}}},
      {"vars.set",
       {{"key", ParamType::kString}, {"node", ParamType::kTarget}, {"value", ParamType::kString}}},
      {"file.write", {{"content", ParamType::kString}, {"path", ParamType::kPath, true}}},
      {"file.chmod", {{"mode", ParamType::kMode}, {"path", ParamType::kPath, true}}},
      {"fleet.converge", {{"node", ParamType::kTarget}}},
      {"journal.undo", {}},
  };
  return k;
}

const std::vector<std::string_view>& check_calls() {
  static const std::vector<std::string_view> k = {"fleet.healthy", "fleet.converged", "node.value"};
  return k;
}

Status check_params(std::string_view call, std::string_view params_json, std::string_view path) {
  return parse_fleet_check(call, params_json, path).status();
}

Result<std::unique_ptr<FiletreeWorld>> FiletreeWorld::attach(
    std::string id, std::vector<scenario::TargetTerm> targets, std::vector<SelectorRule> selectors,
    const fs::path& work_dir) {
  std::unique_ptr<FiletreeWorld> w(new FiletreeWorld());
  w->id_ = std::move(id);
  w->targets_ = std::move(targets);
  w->selectors_ = std::move(selectors);
  w->work_dir_ = work_dir;
  auto root = WorldFs::open(work_dir / "root");
  if (!root.ok()) return root.status();
  w->fs_ = std::move(*root);
  auto journal = Journal::open(work_dir / "journal");
  if (!journal.ok()) return journal.status();
  w->journal_ = std::move(*journal);
  return w;
}

Result<std::vector<std::string>> FiletreeWorld::resolve(const Target& target, const Fleet& fleet,
                                                        std::vector<std::string>& resolved) const {
  if (target.kind == Target::Kind::kLiteral) {
    if (fleet.find(target.name) == nullptr) {
      return Status::invalid("literal " + target.name + ": no node of that name in this world");
    }
    resolved = {target.name};
    return resolved;
  }
  const scenario::TargetTerm* term = nullptr;
  AURA_ASSIGN_OR_RETURN(term, scenario::find_term(targets_, target));
  const std::string what = scenario::target_label(target);
  if (term->kind != "node") {
    return Status::invalid(what + ": kind " + term->kind + ", the filetree driver targets nodes");
  }
  std::vector<std::string> nodes;
  if (term->selector) {
    const auto rule = std::find_if(selectors_.begin(), selectors_.end(),
                                   [&](const SelectorRule& r) { return r.name == term->name; });
    if (rule == selectors_.end() || rule->term_kind() != "node") {
      return Status::invalid(what + ": not a selector of nodes this world's build defines");
    }
    auto found = rule->kind == kStaleOverride ? fleet.stale_overrides(rule->var, rule->file)
                                              : fleet.without_file(rule->var, rule->file);
    if (!found.ok()) return found.status().with_context(what);
    nodes = std::move(*found);
  } else {
    for (const Node& n : fleet.nodes()) {
      if (n.role == term->name) nodes.push_back(n.name);
    }
  }
  // The rule every driver shares: at least one node, at most the term's max_matches.
  Status admitted = scenario::admit_matches(target, *term, nodes);
  resolved = nodes;
  if (!admitted.is_ok()) return admitted;
  return nodes;
}

Result<std::string> FiletreeWorld::path_of(const Call& call,
                                           std::vector<std::string>& resolved) const {
  const scenario::ParamValue* v = call.find("path");
  if (const auto* s = v != nullptr ? std::get_if<std::string>(v) : nullptr) return *s;
  auto target = target_param(call, "path");
  if (!target.ok()) return target.status();
  const std::string what = scenario::target_label(*target);
  std::vector<std::string> paths;
  if (target->kind == Target::Kind::kLiteral) {
    paths.push_back(target->name);
  } else {
    const scenario::TargetTerm* term = nullptr;
    AURA_ASSIGN_OR_RETURN(term, scenario::find_term(targets_, *target));
    const auto rule = std::find_if(selectors_.begin(), selectors_.end(),
                                   [&](const SelectorRule& r) { return r.name == term->name; });
    if (!term->selector || rule == selectors_.end() || rule->kind != kPathRule)
      return Status::invalid(what + ": not a selector of paths this world's build defines");
    paths.push_back(rule->path);
    AURA_RETURN_IF_ERROR(scenario::admit_matches(*target, *term, paths));
  }
  AURA_RETURN_IF_ERROR(scenario::admit_path("path", paths.front()));
  resolved = paths;
  return paths.front();
}

Result<FiletreeWorld::Targeted> FiletreeWorld::targeted(const Call& call) const {
  auto target = target_param(call, "node");
  if (!target.ok()) return target.status();
  Targeted t;
  auto fleet = Fleet::load(*fs_);
  if (!fleet.ok()) {
    auto f = failed(fleet.status());
    if (!f.ok()) return f.status();
    t.failure = std::move(*f);
    return t;
  }
  t.fleet.emplace(std::move(*fleet));
  auto nodes = resolve(*target, *t.fleet, t.resolved);
  if (!nodes.ok()) {
    auto f = failed(nodes.status(), t.resolved);
    if (!f.ok()) return f.status();
    t.failure = std::move(*f);
    return t;
  }
  t.nodes = std::move(*nodes);
  return t;
}

Result<CallOutput> FiletreeWorld::probe(const Call& call, uint64_t max_output_bytes) {
  if (find_shape(probe_shapes(), call.name) == nullptr) {
    return Status::invalid(call.name + ": not a probe of the filetree driver");
  }
  if (call.name == "file.read") return file_read(call, max_output_bytes);
  if (call.name == "dir.list") return dir_list(call, max_output_bytes);
  if (call.name == "fleet.effective") return fleet_effective(call, max_output_bytes);
  return fleet_diff(max_output_bytes);
}

Result<CallOutput> FiletreeWorld::act(const Call& call) {
  if (find_shape(action_shapes(), call.name) == nullptr) {
    return Status::invalid(call.name + ": not an action of the filetree driver");
  }
  if (call.name == "vars.unset") return vars_change(call, false);
  if (call.name == "vars.set") return vars_change(call, true);
  if (call.name == "file.write") return file_write(call);
  if (call.name == "file.chmod") return file_chmod(call);
  if (call.name == "fleet.converge") return fleet_converge(call);
  return journal_undo();
}

Result<CallOutput> FiletreeWorld::run_script(const Target&, std::string_view) {
  return Status::unavailable(std::string(kScriptsUnavailable));
}

Result<CallOutput> FiletreeWorld::file_read(const Call& call, uint64_t max_output_bytes) {
  auto path = string_param(call, "path");
  if (!path.ok()) return path.status();
  auto refused = refusal(*fs_, *path, EntryType::kFile);
  if (!refused.ok()) return refused.status();
  if (*refused) return std::move(**refused);
  auto data = fs_->read_file(*path, max_output_bytes);
  if (!data.ok()) return failed(data.status());
  CallOutput o;
  o.output = std::move(data->bytes);
  o.truncated = data->truncated;
  return o;
}

Result<CallOutput> FiletreeWorld::dir_list(const Call& call, uint64_t max_output_bytes) {
  auto path = string_param(call, "path");
  if (!path.ok()) return path.status();
  auto refused = refusal(*fs_, *path, EntryType::kDir);
  if (!refused.ok()) return refused.status();
  if (*refused) return std::move(**refused);
  auto entries = fs_->list_dir(*path);
  if (!entries.ok()) return failed(entries.status());
  Output out(max_output_bytes);
  for (const Entry& e : *entries) {
    // Folder sizes depend on the host's file system; only file sizes are shown.
    const std::string size = e.type == EntryType::kFile ? std::to_string(e.bytes) : "-";
    out.add(std::string(entry_type_name(e.type)) + " " + mode_text(e.mode) + " " + size + " " +
            e.name + "\n");
  }
  return out.done();
}

Result<CallOutput> FiletreeWorld::fleet_effective(const Call& call, uint64_t max_output_bytes) {
  auto t = targeted(call);
  if (!t.ok()) return t.status();
  if (t->failure) return *t->failure;
  const Fleet& fleet = *t->fleet;
  Output out(max_output_bytes);
  for (const std::string& node : t->nodes) {
    auto eff = fleet.effective(node);
    if (!eff.ok()) return failed(eff.status(), t->resolved);
    out.add(node + " (role " + fleet.find(node)->role + ")\n");
    for (const auto& [key, v] : *eff) {
      std::string line = "  " + key + "=" + v.value + "  from " + v.source;
      const std::string* group = fleet.group_vars().find(key);
      if (v.source != kGroupVarsPath && group != nullptr) {
        line += " (group default " + *group + ")";
      }
      out.add(line + "\n");
    }
  }
  return out.done(std::move(t->resolved));
}

Result<CallOutput> FiletreeWorld::fleet_diff(uint64_t max_output_bytes) {
  auto fleet = Fleet::load(*fs_);
  if (!fleet.ok()) return failed(fleet.status());
  Output out(max_output_bytes);
  for (const Node& n : fleet->nodes()) {
    const std::string path = app_conf_path(n.name);
    auto want = fleet->render(n.name);
    if (!want.ok()) return failed(want.status());
    auto have = read_config(*fs_, path);
    if (!have.ok()) {
      if (!is_world_failure(have.status())) return have.status();
      out.add(n.name + ": " + have.status().message() + "\n");
      continue;
    }
    if (*have == *want) {
      out.add(n.name + ": " + path + " matches the source of truth\n");
      continue;
    }
    auto have_vars = parse_vars(*have, path);
    if (!have_vars.ok()) {
      out.add(n.name + ": " + have_vars.status().message() + "\n");
      continue;
    }
    auto want_vars = parse_vars(*want, "render");
    if (!want_vars.ok()) return want_vars.status();
    const std::vector<std::string> keys = differing_keys(*have_vars, *want_vars);
    if (keys.empty()) {
      out.add(n.name + ": " + path + " differs from the render in comments or order only\n");
      continue;
    }
    out.add(n.name + ": " + path + " differs from the source of truth\n");
    for (const std::string& k : keys) {
      const std::string* h = have_vars->find(k);
      const std::string* w = want_vars->find(k);
      out.add("  " + k + ": rendered " + (h ? *h : std::string("(unset)")) + ", source " +
              (w ? *w : std::string("(unset)")) + "\n");
    }
  }
  return out.done();
}

Status FiletreeWorld::change_file(std::string_view path, std::string_view bytes) {
  AURA_RETURN_IF_ERROR(journal_->record(*fs_, path));
  return fs_->write_file(path, bytes);
}

Result<CallOutput> FiletreeWorld::vars_change(const Call& call, bool set) {
  auto key = string_param(call, "key");
  if (!key.ok()) return key.status();
  std::string value;
  if (set) {
    auto v = string_param(call, "value");
    if (!v.ok()) return v.status();
    value = *v;
  }
  if (!is_fleet_name(*key)) return failed(Status::invalid("key " + *key + ": not a config key"));
  if (set && !is_var_value(value)) {
    return failed(Status::invalid("value: a control character or more than " +
                                  std::to_string(kMaxValueBytes) + " bytes"));
  }
  auto t = targeted(call);
  if (!t.ok()) return t.status();
  if (t->failure) return *t->failure;
  const Fleet& fleet = *t->fleet;
  // Every node's file is read and parsed before any is written: a bad file changes nothing.
  std::vector<std::pair<std::string, std::string>> writes;  // path, new text
  Output out(kMaxActionOutputBytes);
  for (const std::string& node : t->nodes) {
    auto text = fleet.host_vars_text(node);
    if (!text.ok()) return failed(text.status(), t->resolved);
    auto vars = parse_vars(*text, host_vars_path(node));
    if (!vars.ok()) return failed(vars.status(), t->resolved);
    const std::string* old = vars->find(*key);
    if (set) {
      if (old != nullptr && *old == value) {
        out.add(node + ": " + *key + " already " + value + "; unchanged\n");
        continue;
      }
      writes.emplace_back(host_vars_path(node), with_var_set(*text, *key, value));
      out.add(node + ": " + *key + "=" + value + " set in " + host_vars_path(node) +
              (old ? " (was " + *old + ")" : std::string()) + "\n");
    } else {
      if (old == nullptr) {
        out.add(node + ": " + *key + " not set in " + host_vars_path(node) + "; unchanged\n");
        continue;
      }
      writes.emplace_back(host_vars_path(node), with_var_unset(*text, *key));
      out.add(node + ": " + *key + " unset in " + host_vars_path(node) + " (was " + *old + ")\n");
    }
  }
  for (const auto& [path, text] : writes) {
    if (Status s = change_file(path, text); !s.is_ok()) return failed(s, t->resolved);
  }
  return out.done(std::move(t->resolved));
}

Result<CallOutput> FiletreeWorld::file_write(const Call& call) {
  std::vector<std::string> resolved;
  auto path = path_of(call, resolved);
  if (!path.ok()) return failed(path.status());
  auto content = string_param(call, "content");
  if (!content.ok()) return content.status();
  auto done = [&](CallOutput o) {
    o.resolved = resolved;
    return o;
  };
  auto now = fs_->stat(*path);
  if (!now.ok()) return failed(now.status(), resolved);
  if (now->has_value()) {
    if ((*now)->type != EntryType::kFile) {
      return failed(Status::invalid(*path + ": a " + std::string(entry_type_name((*now)->type)) +
                                    " is there; only a regular file is replaced"),
                    resolved);
    }
    auto old = fs_->read_file(*path, kMaxFileBytes);
    if (!old.ok()) return failed(old.status(), resolved);
    if (!old->truncated && old->bytes == *content) {
      CallOutput o;
      o.output = *path + ": already holds these bytes; unchanged\n";
      return done(std::move(o));
    }
  } else if (path->rfind('/') > 0) {
    auto parent = fs_->stat(path->substr(0, path->rfind('/')));
    if (!parent.ok()) return failed(parent.status(), resolved);
    if (!parent->has_value() || (*parent)->type != EntryType::kDir) {
      return failed(Status::not_found(*path + ": its folder does not exist"), resolved);
    }
  }
  if (Status s = change_file(*path, *content); !s.is_ok()) return failed(s, resolved);
  CallOutput o;
  o.output = *path + ": " + std::to_string(content->size()) + " bytes written\n";
  return done(std::move(o));
}

Result<CallOutput> FiletreeWorld::file_chmod(const Call& call) {
  std::vector<std::string> resolved;
  auto path = path_of(call, resolved);
  if (!path.ok()) return failed(path.status());
  auto mode_str = string_param(call, "mode");
  if (!mode_str.ok()) return mode_str.status();
  uint32_t mode = 0;
  const bool digits =
      (mode_str->size() == 3 || mode_str->size() == 4) &&
      std::all_of(mode_str->begin(), mode_str->end(), [](char c) { return c >= '0' && c <= '7'; });
  if (!digits) return Status::invalid("file.chmod: mode " + *mode_str + " is not octal");
  for (char c : *mode_str) mode = mode * 8 + static_cast<uint32_t>(c - '0');
  if ((mode & ~0777u) != 0) {
    return failed(Status::invalid(*path + ": mode " + *mode_str +
                                  ": setuid, setgid and sticky bits are refused"),
                  resolved);
  }
  auto now = fs_->stat(*path);
  if (!now.ok()) return failed(now.status(), resolved);
  if (!now->has_value()) return failed(Status::not_found(*path + ": not found"), resolved);
  const Entry& e = **now;
  // The driver reads every file and folder of the world as its owner: a mode that takes the
  // owner's access away would make the world impossible to check or fingerprint.
  if (e.type == EntryType::kFile && (mode & 0400) == 0) {
    return failed(Status::invalid(*path + ": mode " + mode_text(mode) +
                                  " takes read from the owner; refused"),
                  resolved);
  }
  if (e.type == EntryType::kDir && (mode & 0700) != 0700) {
    return failed(
        Status::invalid(*path + ": mode " + mode_text(mode) + " takes rwx from the owner; refused"),
        resolved);
  }
  CallOutput o;
  o.resolved = resolved;
  if (e.mode == mode) {
    o.output = *path + ": already " + mode_text(mode) + "; unchanged\n";
    return o;
  }
  if (Status s = journal_->record(*fs_, *path); !s.is_ok()) return failed(s, resolved);
  if (Status s = fs_->chmod(*path, mode); !s.is_ok()) return failed(s, resolved);
  o.output = *path + ": mode " + mode_text(e.mode) + " -> " + mode_text(mode) + "\n";
  return o;
}

Result<CallOutput> FiletreeWorld::fleet_converge(const Call& call) {
  auto t = targeted(call);
  if (!t.ok()) return t.status();
  if (t->failure) return *t->failure;
  const Fleet& fleet = *t->fleet;
  // Every render is computed before any file is written: one bad source changes nothing.
  std::vector<std::pair<std::string, std::string>> writes;
  Output out(kMaxActionOutputBytes);
  for (const std::string& node : t->nodes) {
    auto want = fleet.render(node);
    if (!want.ok()) return failed(want.status(), t->resolved);
    const std::string path = app_conf_path(node);
    auto have = fs_->read_file(path, kMaxConfigBytes);
    if (have.ok() && !have->truncated && have->bytes == *want) {
      out.add(node + ": " + path + " already matches the source of truth; unchanged\n");
      continue;
    }
    if (!have.ok() && have.status().code() != ErrorCode::kNotFound) {
      return failed(have.status(), t->resolved);
    }
    writes.emplace_back(path, *want);
    out.add(node + ": " + path + " re-rendered from the source of truth\n");
  }
  for (const auto& [path, text] : writes) {
    if (Status s = change_file(path, text); !s.is_ok()) return failed(s, t->resolved);
  }
  return out.done(std::move(t->resolved));
}

Result<CallOutput> FiletreeWorld::journal_undo() {
  auto restored = journal_->undo(*fs_);
  if (!restored.ok()) return failed(restored.status());
  Output out(kMaxActionOutputBytes);
  if (restored->empty()) out.add("the journal is empty; nothing to undo\n");
  for (const std::string& p : *restored) out.add(p + ": restored\n");
  return out.done();
}

Result<CheckOutput> FiletreeWorld::check(const scenario::CheckSpec& check) {
  auto params = parse_fleet_check(check.call, check.params_json, "checks." + check.id + ".params");
  if (!params.ok()) return params.status();
  CheckOutput result;
  auto fleet = Fleet::load(*fs_);
  if (!fleet.ok()) {
    if (!is_world_failure(fleet.status())) return fleet.status();
    result.observed = bounded(fleet.status().message(), kMaxObservedBytes);
    return result;
  }
  std::vector<std::string> notes;
  bool ok = true;
  // A node's rendered config, parsed; a failure is noted and fails the check.
  const auto rendered = [&](const std::string& node) -> Result<std::optional<Vars>> {
    auto text = read_config(*fs_, app_conf_path(node));
    if (!text.ok()) {
      if (!is_world_failure(text.status())) return text.status();
      notes.push_back(node + ": " + text.status().message());
      return std::optional<Vars>();
    }
    auto vars = parse_vars(*text, app_conf_path(node));
    if (!vars.ok()) {
      notes.push_back(node + ": " + vars.status().message());
      return std::optional<Vars>();
    }
    return std::optional<Vars>(std::move(*vars));
  };

  if (check.call == "fleet.healthy") {
    for (const Node& n : fleet->nodes()) {
      auto vars = rendered(n.name);
      if (!vars.ok()) return vars.status();
      if (!vars->has_value()) {
        ok = false;
        continue;
      }
      const std::string* root = (*vars)->find("app_root");
      if (root == nullptr || !scenario::is_normalised_absolute_path(*root)) {
        ok = false;
        notes.push_back(n.name + ": app_root " + (root ? *root : std::string("unset")) +
                        " is not an absolute path");
        continue;
      }
      const std::string index = *root == "/" ? "/index.html" : *root + "/index.html";
      auto page = fs_->read_file(index, kMaxFileBytes);
      if (!page.ok()) {
        if (!is_world_failure(page.status())) return page.status();
        ok = false;
        notes.push_back(n.name + ": " + page.status().message());
      } else if (page->bytes.find(params->expect_text) == std::string::npos) {
        ok = false;
        notes.push_back(n.name + ": " + index + " lacks the expected text");
      } else {
        notes.push_back(n.name + " ok");
      }
    }
  } else if (check.call == "fleet.converged") {
    for (const Node& n : fleet->nodes()) {
      auto want = fleet->render(n.name);
      if (!want.ok()) {
        if (!is_world_failure(want.status())) return want.status();
        ok = false;
        notes.push_back(n.name + ": " + want.status().message());
        continue;
      }
      auto have = read_config(*fs_, app_conf_path(n.name));
      if (!have.ok()) {
        if (!is_world_failure(have.status())) return have.status();
        ok = false;
        notes.push_back(n.name + ": " + have.status().message());
      } else if (*have != *want) {
        ok = false;
        auto have_vars = parse_vars(*have, "app.conf");
        auto want_vars = parse_vars(*want, "render");
        std::string which;
        if (have_vars.ok() && want_vars.ok()) {
          which = join(differing_keys(*have_vars, *want_vars), ", ");
        }
        notes.push_back(n.name + ": app.conf differs from the source of truth" +
                        (which.empty() ? std::string() : " (" + which + ")"));
      } else {
        notes.push_back(n.name + " converged");
      }
    }
  } else {  // node.value
    if (fleet->find(params->node) == nullptr) {
      ok = false;
      notes.push_back(params->node + ": no such node in this world");
    } else {
      auto vars = rendered(params->node);
      if (!vars.ok()) return vars.status();
      if (!vars->has_value()) {
        ok = false;
      } else {
        const std::string* v = (*vars)->find(params->key);
        ok = v != nullptr && *v == params->value;
        notes.push_back(params->node + ": " + params->key + "=" +
                        (v ? *v : std::string("(unset)")) +
                        (ok ? std::string() : " (expected " + params->value + ")"));
      }
    }
  }
  result.ok = ok;
  result.observed = bounded(join(notes, "; "), kMaxObservedBytes);
  return result;
}

Result<std::string> FiletreeWorld::fingerprint() { return fs_->fingerprint(); }

}  // namespace aura::workers::filetree
