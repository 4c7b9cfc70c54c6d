// Consistent snapshots of a data folder while appends go on: a RocksDB checkpoint
// first, then the blobs its events reference, then a signed manifest (DSSE,
// payload type application/vnd.aura.snapshot+json) naming every file's digest and
// the head seq, hash and Merkle root. Only the public key travels with it.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "engine/sign/signed_note.h"

namespace aura {

inline constexpr std::string_view kSnapshotPayloadType = "application/vnd.aura.snapshot+json";
inline constexpr std::string_view kSnapshotManifestFile = "manifest.dsse.json";

struct SnapshotFile {
  std::string path;  // relative to the snapshot folder, '/'-separated
  Digest sha256{};
  uint64_t bytes = 0;
};

struct SnapshotManifest {
  std::string origin;
  uint64_t head_seq = 0;
  Digest head_hash{};
  Digest merkle_root{};
  uint64_t created_us = 0;
  std::vector<SnapshotFile> files;  // sorted by path
};

std::string snapshot_manifest_json(const SnapshotManifest& m);
Result<SnapshotManifest> parse_snapshot_manifest(std::string_view json);

// Writes a snapshot of `log` (and the blobs its events reference, from `blobs`)
// into `out_dir`, which must not exist or be empty. Safe while other threads append.
Result<SnapshotManifest> make_snapshot(EventLog& log, const BlobStore& blobs,
                                       const std::filesystem::path& out_dir,
                                       const NoteSigner& signer);

// Checks the snapshot's manifest signature against `keys` (pinned, never the key in
// the snapshot), every listed file's digest and that no other file is present.
Result<SnapshotManifest> check_snapshot(const std::filesystem::path& snapshot_dir,
                                        std::span<const NoteVerifierKey> keys);

// Checks the snapshot, then copies it into `data_dir` (which must not exist or be
// empty) as DIR/log and DIR/blobs, and reopens the log to confirm head and root.
Result<SnapshotManifest> restore_snapshot(const std::filesystem::path& snapshot_dir,
                                          const std::filesystem::path& data_dir,
                                          std::span<const NoteVerifierKey> keys);

}  // namespace aura
