// Helpers shared by the blob tests: a fresh temporary directory per test and small file tools.
#pragma once

#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>

#include "tests/support/temp_dir.h"

namespace aura::blob_test {

using TempDir = aura::testing::TempDir;

// Overwrites a file (blobs are stored read-only, so it is made writable first).
inline void overwrite(const std::filesystem::path& p, std::string_view content) {
  ::chmod(p.c_str(), 0640);
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  if (!out) throw std::runtime_error("cannot write " + p.string());
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Number of non-directory entries (files, symlinks, ...) anywhere under `dir`.
inline size_t count_files(const std::filesystem::path& dir) {
  size_t n = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
    if (e.symlink_status().type() != std::filesystem::file_type::directory) ++n;
  }
  return n;
}

}  // namespace aura::blob_test
