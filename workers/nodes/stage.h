// What a node mounts from the host, copied where the node's uids (unprivileged on the host) can
// reach it, and only that: each package layer a node names, copied from the package's verified
// bytes (every file re-hashed against SHA256SUMS while it is copied, nothing followed), and the
// lab's programs when their folders are private. Copies live in stage entries under
// /run/aura-stage (a tmpfs, emptied at boot), shared by the worlds that use the same input and
// removed once no world uses them (docs/WORLDS.md, "Build").
//
//   /run/aura-stage/              0711 root
//     .lock                       0600, flock()ed while an entry is made, claimed or removed
//     <name>-<key>/               0711 root: one entry
//       data/                     0755 the copy (a layer's folder; a program: data/<program>)
//       users/<run id>/           0700 one marker per world using the entry
//
// Each marker is recorded in the world's leak ledger (kDir, the world's run id, owned by its
// holder) before it is made, so destroying the world or reaping it (the holder's teardown,
// sandbox::reap) removes it; an entry whose users/ is empty is removed by the next claim or
// release on the machine. Entries are made, claimed and removed under the flock only, so two
// worlds building or being destroyed at once (threads or processes) never lose one in use.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "workers/sandbox/leak_ledger.h"

namespace aura::workers::nodes {

inline constexpr const char* kStageRoot = "/run/aura-stage";

// A world's use of stage entries: a marker users/<run_id> per entry it uses, recorded in
// `ledger` under `run_id` before it is made.
struct StageUse {
  sandbox::LeakLedger* ledger = nullptr;
  std::string run_id;  // [0-9a-z]+ (the world's network tag)
};

// The staged copy of each of `layers` (distinct safe package paths) of the package in
// `package_dir`, by layer. The package's SHA256SUMS is read (a regular file, parsed strictly);
// each layer is walked one name at a time beneath the package folder with
// openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV), each entry
// opened O_PATH|O_NOFOLLOW and fstat()ed first: a symlink, FIFO, socket or device anywhere, a
// file SHA256SUMS does not list, a listed file missing, or a file whose bytes (hashed while
// copied) differ from SHA256SUMS fails closed, naming the package path. Copies are root-owned;
// folders 0755, files 0755 when the package's file has its owner's execute bit, else 0644 (the
// build's `owners` then set the declared owners and modes inside the node). An entry is keyed
// by the package folder's real path and the layer's SHA256SUMS lines: an unchanged layer is
// reused while a world uses it. `sums_sha256`, when given, gets the SHA-256 (hex) of the
// SHA256SUMS bytes the copies were checked against.
Result<std::map<std::string, std::string>> stage_layers(const std::filesystem::path& package_dir,
                                                        const std::vector<std::string>& layers,
                                                        const StageUse& use,
                                                        std::string* sums_sha256 = nullptr);

// A lab program (a regular file, not a symlink): `program` itself when the node's uids can reach
// it (every folder above searchable by others, the file readable by them); else its staged copy
// data/<name>, opened O_NOFOLLOW and copied from that descriptor (key: the path, mode, size,
// inode and mtime, so a rebuilt program gets a new copy).
Result<std::string> reachable_by_nodes(const std::string& program, const StageUse& use);

// Removes the markers `owner` recorded in `ledger` (a world being destroyed: REQUIRES its
// nodes are gone) and releases them, then every entry no world uses.
Status release_stage_uses(sandbox::LeakLedger& ledger, const std::string& owner);

// Removes every entry whose users/ is empty, and copies abandoned half-made. Entries of another
// layout (no users/ folder) are left alone.
Status sweep_stage();

// Tests only: called with each package path just before staging opens it (to swap a file
// mid-copy). Not for concurrent use with staging.
void set_stage_open_hook(std::function<void(std::string_view package_path)> hook);

}  // namespace aura::workers::nodes
