// engine/common/install_layout: an installed aura finds its files relative to its own folder,
// wherever the prefix is; anything else is a build tree's program.
#include "engine/common/install_layout.h"

#include <doctest/doctest.h>

#include <filesystem>

#include "tests/support/temp_dir.h"

using namespace aura;
namespace fs = std::filesystem;

TEST_CASE("install layout: PREFIX/bin with PREFIX/share/aura is installed, at any prefix") {
  aura::testing::TempDir t;
  for (const fs::path prefix : {t / "usr" / "local", t / "opt" / "lab"}) {
    fs::create_directories(prefix / "bin");
    fs::create_directories(prefix / "share" / "aura");
    const InstallLayout l = layout_for(prefix / "bin");
    CHECK(l.installed);
    CHECK(l.share == prefix / "share" / "aura");
    CHECK(l.libexec == prefix / "libexec" / "aura");
    CHECK(l.source_root.empty());
  }
}

TEST_CASE("install layout: a program elsewhere is a build tree's, pointing at its source tree") {
  aura::testing::TempDir t;
  fs::create_directories(t / "bin");  // bin/ without share/aura beside it: not an install
  for (const fs::path dir : {t / "bin", t / "build", t / "share" / "aura"}) {
    const InstallLayout l = layout_for(dir);
    CHECK_FALSE(l.installed);
    CHECK(l.share.empty());
    CHECK(l.libexec.empty());
    CHECK_FALSE(l.source_root.empty());
  }
}

TEST_CASE("install layout: this test program is in the build tree, and finds the sources") {
  const InstallLayout& l = install_layout();
  CHECK_FALSE(l.installed);
  CHECK(fs::exists(l.source_root / "engine" / "common" / "install_layout.h"));
  CHECK(bundled_scenarios_dir() == l.source_root / "scenarios");
}
