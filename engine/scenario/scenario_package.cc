#include "engine/scenario/scenario_package.h"

#include "engine/scenario/manifest.h"

namespace aura::scenario {

Status check_manifest_schema(std::string_view manifest_bytes) {
  return parse_manifest(manifest_bytes).status();
}

Result<SignedPackage> sign_scenario_package(const std::filesystem::path& dir,
                                            const NoteSigner& publisher, SignOptions options) {
  options.check_manifest = check_manifest_schema;
  return sign_package(dir, publisher, options);
}

Result<LoadedPackage> load_scenario_package(const std::filesystem::path& dir,
                                            const TrustStore& trust) {
  return load_package(dir, trust, check_manifest_schema);
}

}  // namespace aura::scenario
