// Scenario packages: the package layer's signing and loading (engine/package/) with the
// scenario layer's full manifest schema checked on the very bytes signed or verified, so a
// package whose manifest the attempt engine could not use is never signed and never loads.
// The package layer knows nothing of scenarios; this is where the two meet.
#pragma once

#include <filesystem>

#include "engine/package/package.h"

namespace aura::scenario {

// Refuses manifest bytes that parse_manifest refuses (its error, unchanged).
Status check_manifest_schema(std::string_view manifest_bytes);

Result<SignedPackage> sign_scenario_package(const std::filesystem::path& dir,
                                            const NoteSigner& publisher, SignOptions options = {});

Result<LoadedPackage> load_scenario_package(const std::filesystem::path& dir,
                                            const TrustStore& trust);

}  // namespace aura::scenario
