// Where the lab's own files are, found from the running program rather than the working folder:
// the helper programs (aura-runner, aura-svcman, aura-app, aura-holder), the browser lab's build
// and the bundled scenario packages. An installed aura (`meson install`: PREFIX/bin/aura) finds
// them under PREFIX/libexec/aura and PREFIX/share/aura, wherever PREFIX (and DESTDIR) put it; an
// aura in its build tree finds the source tree it was built from. docs/OPERATIONS.md, "Install".
#pragma once

#include <filesystem>

namespace aura {

struct InstallLayout {
  std::filesystem::path program_dir;  // the folder of the running program (symlinks resolved)
  // Installed: the program sits in PREFIX/<bindir> and PREFIX/<datadir>/aura exists.
  bool installed = false;
  std::filesystem::path libexec;      // installed: PREFIX/<libexecdir>/aura; else empty
  std::filesystem::path share;        // installed: PREFIX/<datadir>/aura; else empty
  std::filesystem::path source_root;  // not installed: the source tree built from; else empty
};

// Computed once from /proc/self/exe and the directories `meson setup` was given. Thread-safe.
const InstallLayout& install_layout();

// The layout of a program at `program_dir` (what install_layout() computes; for tests).
InstallLayout layout_for(const std::filesystem::path& program_dir);

// The bundled scenario packages: installed, PREFIX/share/aura/scenarios; in the build tree, the
// source tree's scenarios/. Empty when neither exists.
std::filesystem::path bundled_scenarios_dir();

// The browser lab's build (a folder with index.html): installed, PREFIX/share/aura/ui; in the
// build tree, the source tree's ui/dist once built. Empty when there is none.
std::filesystem::path bundled_ui_dir();

}  // namespace aura
