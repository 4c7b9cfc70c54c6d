#include "tests/workers/t0_package.h"

#include <cstdlib>
#include <stdexcept>

#include "engine/common/file_io.h"

namespace aura::testing {

std::filesystem::path t0_package_dir() {
  const char* dir = std::getenv("AURA_T0_PACKAGE");
  if (dir == nullptr) throw std::runtime_error("AURA_T0_PACKAGE is not set (run through meson)");
  return dir;
}

Result<scenario::Manifest> load_t0_manifest() {
  auto bytes =
      file_io::read_regular_file(t0_package_dir() / "manifest.json", "manifest.json", 1 << 20);
  if (!bytes.ok()) return bytes.status();
  return scenario::parse_manifest(*bytes);
}

std::string slurp(const std::filesystem::path& path) {
  auto r = file_io::read_regular_file(path, path.string(), 1 << 20);
  if (!r.ok()) throw std::runtime_error(r.status().message());
  return std::move(*r);
}

}  // namespace aura::testing
