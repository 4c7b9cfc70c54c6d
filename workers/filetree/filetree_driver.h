// The "filetree" world driver: a world is a real folder tree on the host, built from the
// package's layer folders, read and changed only by the driver's own typed calls, confined to
// the world root with openat2(RESOLVE_IN_ROOT). It runs no process (run_script is refused), so
// it stands in for the namespace sandbox until that exists. Layout and calls: docs/WORLDS.md.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/world/world_driver.h"
#include "workers/filetree/filetree_world.h"

namespace aura::workers::filetree {

inline constexpr std::string_view kDriverName = "filetree";
inline constexpr size_t kMaxLayers = 16;
inline constexpr size_t kMaxSelectors = 16;

// A world's "build" object: {"layers": [...], "selectors": {NAME: rule, ...}} ("selectors"
// optional). Layers: 1..kMaxLayers distinct safe relative package paths. Selectors: at most
// kMaxSelectors, each a rule of SelectorRule's form ({"kind":"stale_override"|"no_page",
// "var":K,"file":F} or {"kind":"path","path":P}) for the manifest's selector term NAME, whose
// kind the rule's must be. `path` prefixes errors.
struct FiletreeBuild {
  std::vector<std::string> layers;
  std::vector<SelectorRule> selectors;  // in document order
  const SelectorRule* find_selector(std::string_view name) const;
};
Result<FiletreeBuild> parse_build(std::string_view build_json, std::string_view path);

class FiletreeDriver final : public world::WorldDriver {
 public:
  std::string_view name() const override { return kDriverName; }
  Status check_manifest(const scenario::Manifest& manifest) const override;
  // `seed` is recorded in the world's state file and otherwise ignored: a filetree world is
  // exactly its layers (docs/WORLDS.md, "Seed").
  Result<std::unique_ptr<world::World>> create(const std::filesystem::path& package_dir,
                                               const scenario::Manifest& manifest,
                                               std::string_view world_id, uint64_t seed,
                                               const std::filesystem::path& work_dir) override;
  Result<std::unique_ptr<world::World>> open(const scenario::Manifest& manifest,
                                             std::string_view world_id,
                                             const std::filesystem::path& work_dir) override;
  Status destroy(std::unique_ptr<world::World> world) override;
  std::string profile_digest() const override;
  std::string capabilities_json() const override;
};

}  // namespace aura::workers::filetree
