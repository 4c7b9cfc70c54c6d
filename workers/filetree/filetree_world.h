// One world of the filetree driver: a host folder tree (<work_dir>/root) built from package
// layers, read by probes and checks and changed by actions only through code in the driver,
// confined to the root by WorldFs; every change is journalled (<work_dir>/journal) so
// journal.undo can restore it. No process ever runs in a filetree world. Calls, targets and
// checks: docs/WORLDS.md.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/world/world_driver.h"
#include "workers/filetree/fleet.h"
#include "workers/filetree/journal.h"
#include "workers/filetree/world_fs.h"

namespace aura::workers::filetree {

// The parameters a call of this driver takes: a catalog entry must declare exactly these,
// all required (targets of kind "node"), so that a Call validated against it is one the driver
// can run. A parameter with `or_path_target` may instead be declared a target of kind "path":
// a selector the world's build resolves to one path, or {"literal":PATH}.
struct ParamShape {
  std::string_view name;
  scenario::ParamType type;
  bool or_path_target = false;
};
struct CallShape {
  std::string_view name;
  std::vector<ParamShape> params;
};
const std::vector<CallShape>& probe_shapes();
const std::vector<CallShape>& action_shapes();
const std::vector<std::string_view>& check_calls();  // "fleet.healthy" ...

// How a selector term of the manifest resolves in one world: a rule the package declares in
// that world's build ("selectors": {NAME: {"kind":..,...}}; docs/WORLDS.md, "Targets"), so the
// driver names no scenario's selector itself. The kinds:
//  stale_override {var, file} (term kind node): the nodes whose host vars set `var` to another
//    value than the group vars do, and whose value does not name a folder holding the regular
//    file `file` (a value that is not a normalised absolute path names none).
//  no_page {var, file} (term kind node): the nodes whose rendered app.conf sets `var` to a value
//    that names no folder holding `file` (or sets none, or does not parse): the nodes that
//    serve no page, whatever put them there.
//  path {path} (term kind path): the one normalised absolute path `path`, which may differ
//    from world to world (a file a hypothesis's fix would write, wherever it sits there).
inline constexpr std::string_view kStaleOverride = "stale_override";
inline constexpr std::string_view kNoPage = "no_page";
inline constexpr std::string_view kPathRule = "path";
struct SelectorRule {
  std::string name;  // the manifest's selector term
  std::string kind;  // kStaleOverride, kNoPage or kPathRule
  std::string var;   // stale_override, no_page: a vars key ([a-z][a-z0-9_-]{0,63})
  std::string file;  // stale_override, no_page: a normalised relative path ("index.html")
  std::string path;  // path: a normalised absolute path
  std::string_view term_kind() const { return kind == kPathRule ? "path" : "node"; }
};

// Validates a check's params JSON for `call` (one of check_calls()); `path` prefixes errors.
Status check_params(std::string_view call, std::string_view params_json, std::string_view path);

inline constexpr size_t kMaxActionOutputBytes = 64 << 10;
inline constexpr size_t kMaxObservedBytes = 1024;
inline constexpr std::string_view kScriptsUnavailable =
    "scripts need the namespace sandbox, not available in the filetree driver";

class FiletreeWorld final : public world::World {
 public:
  // Attaches to the world folder `work_dir` (root/ and journal/ inside). `targets` are the
  // manifest's target terms (roles and selectors are resolved against them), `selectors` the
  // rules this world's build gives its selector terms.
  static Result<std::unique_ptr<FiletreeWorld>> attach(std::string id,
                                                       std::vector<scenario::TargetTerm> targets,
                                                       std::vector<SelectorRule> selectors,
                                                       const std::filesystem::path& work_dir);

  const std::string& id() const override { return id_; }
  Result<world::CallOutput> probe(const scenario::Call& call, uint64_t max_output_bytes) override;
  Result<world::CallOutput> act(const scenario::Call& call) override;
  // Always kUnavailable (kScriptsUnavailable): there is no sandbox to run a script in.
  Result<world::CallOutput> run_script(const scenario::Target& target,
                                       std::string_view script) override;
  Result<world::CheckOutput> check(const scenario::CheckSpec& check) override;
  Result<std::string> fingerprint() override;
  // readback.cc. The build record is the one create() gave (set_build_record); a world reopened
  // later has none.
  Result<world::BuildRecord> build_record() override;
  Result<world::Readback> read_back(const scenario::Call& action,
                                    const world::AppliedCall& applied) override;
  void set_build_record(world::BuildRecord record) { record_ = std::move(record); }

  const std::filesystem::path& work_dir() const { return work_dir_; }

 private:
  FiletreeWorld() = default;

  Result<std::vector<std::string>> resolve(const scenario::Target& target, const Fleet& fleet,
                                           std::vector<std::string>& resolved) const;
  // The path a call's "path" parameter names: the string itself, or what its target (kind
  // path) resolves to here, recorded in `resolved`.
  Result<std::string> path_of(const scenario::Call& call, std::vector<std::string>& resolved) const;
  // The fleet and the nodes the call's "node" target resolves to. When the world refuses (a
  // fleet file that does not load, a target that resolves to nothing ...), `failure` holds the
  // call's result.
  struct Targeted {
    std::optional<Fleet> fleet;
    std::vector<std::string> nodes;
    std::vector<std::string> resolved;
    std::optional<world::CallOutput> failure;
  };
  Result<Targeted> targeted(const scenario::Call& call) const;
  Result<world::CallOutput> file_read(const scenario::Call& call, uint64_t max_output_bytes);
  Result<world::CallOutput> dir_list(const scenario::Call& call, uint64_t max_output_bytes);
  Result<world::CallOutput> fleet_effective(const scenario::Call& call, uint64_t max_output_bytes);
  Result<world::CallOutput> fleet_diff(uint64_t max_output_bytes);
  Result<world::CallOutput> vars_change(const scenario::Call& call, bool set);
  Result<world::CallOutput> file_write(const scenario::Call& call);
  Result<world::CallOutput> file_chmod(const scenario::Call& call);
  Result<world::CallOutput> fleet_converge(const scenario::Call& call);
  Result<world::CallOutput> journal_undo();
  // Journals `path`, then writes it (keeping its mode, 0644 when new).
  Status change_file(std::string_view path, std::string_view bytes);

  std::string id_;
  std::vector<scenario::TargetTerm> targets_;
  std::vector<SelectorRule> selectors_;
  std::filesystem::path work_dir_;
  std::unique_ptr<WorldFs> fs_;
  std::unique_ptr<Journal> journal_;
  std::optional<world::BuildRecord> record_;
};

}  // namespace aura::workers::filetree
