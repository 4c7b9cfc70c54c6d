// The t0-config-drift package for the driver tests: where it is (AURA_T0_PACKAGE, set by
// meson), its manifest.json parsed by the real manifest parser, and a file reader.
#pragma once

#include <filesystem>
#include <string>

#include "engine/common/status.h"
#include "engine/scenario/manifest.h"

namespace aura::testing {

std::filesystem::path t0_package_dir();

Result<scenario::Manifest> load_t0_manifest();

// The bytes of the regular file `path` (at most 1 MiB); throws when it cannot be read.
std::string slurp(const std::filesystem::path& path);

}  // namespace aura::testing
