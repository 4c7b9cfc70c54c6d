#include "workers/filetree/filetree_driver.h"

#include <errno.h>
#include <simdjson.h>
#include <sys/stat.h>

#include <algorithm>
#include <charconv>

#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "engine/package/package.h"
#include "engine/scenario/call_dom.h"
#include "workers/filetree/filetree_world.h"
#include "workers/filetree/fleet.h"
#include "workers/filetree/world_fs.h"

namespace aura::workers::filetree {
namespace fs = std::filesystem;
using scenario::Manifest;
using scenario::ParamType;

namespace {

constexpr std::string_view kStateFile = "world.state";
constexpr uint64_t kMaxStateBytes = 4096;

// What profile_digest() hashes: the mechanisms calls really run under.
constexpr std::string_view kProfile =
    "aura filetree driver profile 1\n"
    "isolation: none; no process runs in a world\n"
    "paths: openat2 from an O_PATH root, RESOLVE_IN_ROOT|RESOLVE_NO_MAGICLINKS|"
    "RESOLVE_NO_SYMLINKS|RESOLVE_NO_XDEV\n"
    "special files: refused by fstat of an O_PATH descriptor before any read; reads O_NONBLOCK\n"
    "reads: bounded; writes: temporary file and renameat in the same folder\n"
    "modes: permission bits only (at most 0777)\n"
    "scripts: refused\n";

std::string names_of(const std::vector<CallShape>& shapes) {
  std::string out;
  for (const CallShape& s : shapes) {
    if (!out.empty()) out += ", ";
    out += s.name;
  }
  return out;
}

// A catalog entry must declare exactly the driver's parameters, each required and of its type.
Status check_catalog(const std::vector<scenario::CallSpec>& catalog,
                     const std::vector<CallShape>& shapes, std::string_view catalog_name) {
  for (size_t i = 0; i < catalog.size(); ++i) {
    const scenario::CallSpec& spec = catalog[i];
    const std::string path = "manifest.json: " + std::string(catalog_name) + "[" +
                             std::to_string(i) + "] (" + spec.name + ")";
    const CallShape* shape = nullptr;
    for (const CallShape& s : shapes) {
      if (s.name == spec.name) shape = &s;
    }
    if (shape == nullptr) {
      return Status::invalid(path + ": not one of the filetree driver's " +
                             std::string(catalog_name) + " (" + names_of(shapes) + ")");
    }
    if (spec.params.size() != shape->params.size()) {
      return Status::invalid(path + ": takes " + std::to_string(shape->params.size()) +
                             " parameters in the filetree driver, the catalog declares " +
                             std::to_string(spec.params.size()));
    }
    for (const ParamShape& want : shape->params) {
      const auto it = std::find_if(spec.params.begin(), spec.params.end(),
                                   [&](const auto& p) { return p.name == want.name; });
      const std::string where = path + ".params." + std::string(want.name);
      if (it == spec.params.end()) return Status::invalid(where + ": missing");
      const bool path_target = want.or_path_target && it->type == ParamType::kTarget;
      if (it->type != want.type && !path_target) {
        return Status::invalid(where + ": must be of type " +
                               std::string(param_type_name(want.type)) +
                               (want.or_path_target ? " or a target of kind path" : ""));
      }
      if (!it->required) return Status::invalid(where + ": must be required");
      if (path_target && it->target_kind != "path") {
        return Status::invalid(where + ": target_kind must be path");
      }
      if (want.type == ParamType::kTarget && it->target_kind != "node") {
        return Status::invalid(where + ": target_kind must be node");
      }
    }
  }
  return Status::ok();
}

std::string state_text(const Manifest& m, std::string_view world_id, uint64_t seed) {
  return "aura-filetree-world 1\nscenario " + m.id + " " + m.version + "\nworld " +
         std::string(world_id) + "\nseed " + std::to_string(seed) + "\n";
}

const scenario::WorldSpec* find_world(const Manifest& m, std::string_view id) {
  for (const scenario::WorldSpec& w : m.worlds) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

Status make_owned_dir(const fs::path& dir, mode_t mode) {
  if (::mkdir(dir.c_str(), mode) != 0) {
    return Status::io(dir.string() + ": mkdir: " + file_io::errno_text(errno));
  }
  if (::chmod(dir.c_str(), mode) != 0) {  // the umask may have narrowed it
    return Status::io(dir.string() + ": chmod: " + file_io::errno_text(errno));
  }
  return Status::ok();
}

// Fills the fresh folder `work_dir` with the world; the caller removes it on failure.
Result<std::unique_ptr<world::World>> build(const fs::path& package_dir, const Manifest& manifest,
                                            const scenario::WorldSpec& spec,
                                            const FiletreeBuild& recipe, uint64_t seed,
                                            const fs::path& work_dir) {
  const std::vector<std::string>& layers = recipe.layers;
  AURA_RETURN_IF_ERROR(make_owned_dir(work_dir / "root", 0755));
  AURA_RETURN_IF_ERROR(make_owned_dir(work_dir / "journal", 0700));
  {
    auto root = WorldFs::open(work_dir / "root");
    if (!root.ok()) return root.status();
    for (const std::string& layer : layers) {
      AURA_RETURN_IF_ERROR(copy_layer(package_dir, layer, **root));
    }
    // A world whose fleet files do not load could not resolve a single target: refuse it now.
    auto fleet = Fleet::load(**root);
    if (!fleet.ok()) {
      return fleet.status().with_context("world " + spec.id + " as built is not a fleet");
    }
  }
  AURA_RETURN_IF_ERROR(file_io::create_file_durably(work_dir, work_dir / kStateFile,
                                                    state_text(manifest, spec.id, seed), 0600));
  auto w = FiletreeWorld::attach(spec.id, manifest.targets, recipe.selectors, work_dir);
  if (!w.ok()) return w.status();
  // What it was built with: no process runs in it, so no program; its layers, as listed.
  world::BuildRecord record;
  record.profile = std::string(kProfile);
  record.layers = layers;
  std::sort(record.layers.begin(), record.layers.end());
  record.layers.erase(std::unique(record.layers.begin(), record.layers.end()), record.layers.end());
  (*w)->set_build_record(std::move(record));
  return std::unique_ptr<world::World>(std::move(*w));
}

namespace json = scenario::call_reader;

Result<std::vector<std::string>> parse_layers(json::Element value, const std::string& where) {
  simdjson::dom::array array;
  if (value.get_array().get(array) != simdjson::SUCCESS) {
    return Status::invalid(where + ": expected an array");
  }
  std::vector<std::string> out;
  for (json::Element e : array) {
    const std::string at = json::index_path(where, out.size());
    if (out.size() >= kMaxLayers) {
      return Status::invalid(where + ": more than " + std::to_string(kMaxLayers) + " layers");
    }
    auto s = json::string_of(e, at);
    if (!s.ok()) return s.status();
    if (!is_safe_package_path(*s)) {
      return Status::invalid(at + ": " + json::quoted(*s) + " is not a safe relative package path");
    }
    if (std::find(out.begin(), out.end(), *s) != out.end()) {
      return Status::invalid(at + ": " + json::quoted(*s) + " is listed twice");
    }
    out.emplace_back(*s);
  }
  if (out.empty()) return Status::invalid(where + ": at least one layer");
  return out;
}

// A required string member of a selector rule.
Result<std::string_view> rule_text(const std::optional<json::Element>& value,
                                   const std::string& where) {
  if (!value) return Status::invalid(where + ": required");
  return json::string_of(*value, where);
}

Result<SelectorRule> parse_selector(std::string_view name, json::Element value,
                                    const std::string& where) {
  static constexpr std::array<std::string_view, 4> kNames = {"kind", "var", "file", "path"};
  auto members = json::members_of(value, where, kNames);
  if (!members.ok()) return members.status();
  SelectorRule r;
  r.name = std::string(name);
  std::string_view text;
  AURA_ASSIGN_OR_RETURN(text, rule_text((*members)[0], json::member_path(where, "kind")));
  if (text != kStaleOverride && text != kNoPage && text != kPathRule) {
    return Status::invalid(json::member_path(where, "kind") + ": " + json::quoted(text) +
                           " is not a selector kind the filetree driver implements (" +
                           std::string(kStaleOverride) + ", " + std::string(kNoPage) + ", " +
                           std::string(kPathRule) + ")");
  }
  r.kind = std::string(text);
  // Each kind takes its own members and no other.
  const bool is_path = r.kind == kPathRule;
  for (size_t i = 1; i < kNames.size(); ++i) {
    const bool wanted = is_path == (kNames[i] == "path");
    if (!wanted && (*members)[i]) {
      return Status::invalid(json::member_path(where, kNames[i]) + ": not a member of a " + r.kind +
                             " rule");
    }
  }
  if (is_path) {
    AURA_ASSIGN_OR_RETURN(text, rule_text((*members)[3], json::member_path(where, "path")));
    if (!scenario::is_normalised_absolute_path(text)) {
      return Status::invalid(json::member_path(where, "path") + ": " + json::quoted(text) +
                             " is not a normalised absolute path");
    }
    r.path = std::string(text);
    return r;
  }
  AURA_ASSIGN_OR_RETURN(text, rule_text((*members)[1], json::member_path(where, "var")));
  if (!is_fleet_name(text)) {
    return Status::invalid(json::member_path(where, "var") + ": " + json::quoted(text) +
                           " is not a vars key");
  }
  r.var = std::string(text);
  AURA_ASSIGN_OR_RETURN(text, rule_text((*members)[2], json::member_path(where, "file")));
  if (text.empty() || !scenario::is_normalised_absolute_path("/" + std::string(text))) {
    return Status::invalid(json::member_path(where, "file") + ": " + json::quoted(text) +
                           " is not a normalised relative path");
  }
  r.file = std::string(text);
  return r;
}

}  // namespace

const SelectorRule* FiletreeBuild::find_selector(std::string_view name) const {
  for (const SelectorRule& r : selectors) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

Result<FiletreeBuild> parse_build(std::string_view build_json, std::string_view path) {
  simdjson::dom::parser parser;
  auto root = json::parse_strict(parser, build_json, 4, path);
  if (!root.ok()) return root.status();
  static constexpr std::array<std::string_view, 2> kNames = {"layers", "selectors"};
  auto members = json::members_of(*root, path, kNames);
  if (!members.ok()) return members.status();
  FiletreeBuild b;
  const std::string layers = json::member_path(path, "layers");
  if (!(*members)[0]) return Status::invalid(layers + ": required");
  AURA_ASSIGN_OR_RETURN(b.layers, parse_layers(*(*members)[0], layers));
  if (!(*members)[1]) return b;
  const std::string where = json::member_path(path, "selectors");
  simdjson::dom::object selectors;
  if ((*(*members)[1]).get_object().get(selectors) != simdjson::SUCCESS) {
    return Status::invalid(where + ": expected an object");
  }
  if (selectors.size() > kMaxSelectors) {
    return Status::invalid(where + ": more than " + std::to_string(kMaxSelectors) + " selectors");
  }
  for (auto field : selectors) {  // parse_strict refused a name given twice
    SelectorRule r;
    AURA_ASSIGN_OR_RETURN(
        r, parse_selector(field.key, field.value, json::member_path(where, field.key)));
    b.selectors.push_back(std::move(r));
  }
  return b;
}

namespace {

// Every selector term of the manifest has a rule in `build` (worlds[i].build), and every rule
// names a selector term: a world that could not resolve a term is refused at load.
Status check_selectors(const Manifest& manifest, const FiletreeBuild& build,
                       const std::string& where) {
  for (const scenario::TargetTerm& t : manifest.targets) {
    if (t.selector && build.find_selector(t.name) == nullptr) {
      return Status::invalid(where + ".selectors: selector " + json::quoted(t.name) +
                             " is not defined");
    }
  }
  for (const SelectorRule& r : build.selectors) {
    const scenario::TargetTerm* term = manifest.find_target(r.name);
    if (term == nullptr || !term->selector) {
      return Status::invalid(json::member_path(where + ".selectors", r.name) +
                             ": not a selector term of the manifest");
    }
    if (term->kind != r.term_kind()) {
      return Status::invalid(json::member_path(where + ".selectors", r.name) + ": a " + r.kind +
                             " rule names " + std::string(r.term_kind()) +
                             "s; the term is of kind " + term->kind);
    }
  }
  return Status::ok();
}

}  // namespace

Status FiletreeDriver::check_manifest(const Manifest& manifest) const {
  if (manifest.driver != kDriverName) {
    return Status::invalid("manifest.json: driver: " + manifest.driver + ", not filetree");
  }
  for (size_t i = 0; i < manifest.targets.size(); ++i) {
    const scenario::TargetTerm& t = manifest.targets[i];
    const std::string path = "manifest.json: targets[" + std::to_string(i) + "] (" + t.name + ")";
    if (t.kind != "node" && !(t.kind == "path" && t.selector)) {
      return Status::invalid(path + ": kind " + t.kind +
                             "; the filetree driver targets nodes, and paths by selector");
    }
  }
  for (size_t i = 0; i < manifest.worlds.size(); ++i) {
    const std::string where = "manifest.json: worlds[" + std::to_string(i) + "].build";
    auto build = parse_build(manifest.worlds[i].build_json, where);
    if (!build.ok()) return build.status();
    AURA_RETURN_IF_ERROR(check_selectors(manifest, *build, where));
  }
  AURA_RETURN_IF_ERROR(check_catalog(manifest.probes, probe_shapes(), "probes"));
  AURA_RETURN_IF_ERROR(check_catalog(manifest.actions, action_shapes(), "actions"));
  for (size_t i = 0; i < manifest.checks.size(); ++i) {
    const scenario::CheckSpec& c = manifest.checks[i];
    const std::string path = "manifest.json: checks[" + std::to_string(i) + "]";
    if (std::find(check_calls().begin(), check_calls().end(), c.call) == check_calls().end()) {
      return Status::invalid(path + ".call: " + c.call +
                             " is not a check the filetree driver implements");
    }
    AURA_RETURN_IF_ERROR(check_params(c.call, c.params_json, path + ".params"));
  }
  return Status::ok();
}

Result<std::unique_ptr<world::World>> FiletreeDriver::create(const fs::path& package_dir,
                                                             const Manifest& manifest,
                                                             std::string_view world_id,
                                                             uint64_t seed,
                                                             const fs::path& work_dir) {
  if (manifest.driver != kDriverName) {
    return Status::invalid("create: the manifest's driver is " + manifest.driver);
  }
  const scenario::WorldSpec* spec = find_world(manifest, world_id);
  if (spec == nullptr) {
    return Status::not_found("create: no world " + std::string(world_id) + " in the manifest");
  }
  auto parsed = parse_build(spec->build_json, "worlds." + spec->id + ".build");
  if (!parsed.ok()) return parsed.status();
  if (!openat2_available()) return Status::unavailable("openat2() is not available on this kernel");
  if (work_dir.empty()) return Status::invalid("create: empty work_dir");
  std::error_code ec;
  if (work_dir.has_parent_path()) fs::create_directories(work_dir.parent_path(), ec);
  if (ec) return Status::io("create: " + work_dir.parent_path().string() + ": " + ec.message());
  if (::mkdir(work_dir.c_str(), 0700) != 0) {
    if (errno == EEXIST) {
      return Status::failed_precondition("create: " + work_dir.string() +
                                         " already exists; a world is built in a fresh folder");
    }
    return Status::io("create: " + work_dir.string() + ": mkdir: " + file_io::errno_text(errno));
  }
  auto world = build(package_dir, manifest, *spec, *parsed, seed, work_dir);
  if (!world.ok()) {
    (void)remove_tree(work_dir);  // the folder is ours; the build error is what matters
    return world.status().with_context("create world " + spec->id);
  }
  return world;
}

Result<std::unique_ptr<world::World>> FiletreeDriver::open(const Manifest& manifest,
                                                           std::string_view world_id,
                                                           const fs::path& work_dir) {
  const scenario::WorldSpec* spec = find_world(manifest, world_id);
  if (spec == nullptr) {
    return Status::not_found("open: no world " + std::string(world_id) + " in the manifest");
  }
  auto recipe = parse_build(spec->build_json, "worlds." + spec->id + ".build");
  if (!recipe.ok()) return recipe.status();
  auto state = file_io::read_regular_file(work_dir / kStateFile, "world state", kMaxStateBytes);
  if (!state.ok()) return state.status().with_context("open " + work_dir.string());
  const std::string_view text = *state;
  const size_t seed_at = text.rfind("\nseed ");
  uint64_t seed = 0;
  bool parsed = seed_at != std::string_view::npos && text.ends_with('\n');
  if (parsed) {
    const std::string_view digits = text.substr(seed_at + 6, text.size() - seed_at - 7);
    const auto [end, err] = std::from_chars(digits.data(), digits.data() + digits.size(), seed);
    parsed = err == std::errc() && end == digits.data() + digits.size();
  }
  if (!parsed || text != state_text(manifest, world_id, seed)) {
    return Status::failed_precondition("open " + work_dir.string() + ": it holds no world " +
                                       std::string(world_id) + " of " + manifest.id + " " +
                                       manifest.version);
  }
  auto w =
      FiletreeWorld::attach(std::string(world_id), manifest.targets, recipe->selectors, work_dir);
  if (!w.ok()) return w.status();
  return std::unique_ptr<world::World>(std::move(*w));
}

Status FiletreeDriver::destroy(std::unique_ptr<world::World> world) {
  if (world == nullptr) return Status::invalid("destroy: no world");
  auto* tree = dynamic_cast<FiletreeWorld*>(world.get());
  if (tree == nullptr) return Status::invalid("destroy: not a filetree world");
  const fs::path dir = tree->work_dir();
  world.reset();  // closes its descriptors first
  return remove_tree(dir).with_context("destroy");
}

std::string FiletreeDriver::profile_digest() const { return to_hex(sha256(kProfile)); }

std::string FiletreeDriver::capabilities_json() const {
  return JsonWriter()
      .str("driver", kDriverName)
      .str("isolation", "none")
      .boolean("processes", false)
      .boolean("scripts", false)
      .boolean("namespaces", false)
      .boolean("openat2_in_root", openat2_available())
      .done();
}

}  // namespace aura::workers::filetree
