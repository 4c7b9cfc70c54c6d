// BlobStore: a content-addressed, append-only store for large evidence.
// Invariant: a file named DIR/sha256/<2 hex>/<62 hex> is complete, durable and read-only once it
// has that name; its content is only ever replaced by bytes with the same digest (repairing a
// damaged copy). Events reference blobs by digest (EvidenceRef, evidence_ref.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <utility>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"

namespace aura {

struct BlobInfo {
  Digest sha256{};
  uint64_t bytes = 0;
};

// Layout: DIR/sha256/<first 2 hex>/<other 62 hex>, temporary files in DIR/tmp/ (see
// docs/formats/blobs.md). A blob is durable (file fsynced, linked or renamed into place, its
// directory fsynced) before put() returns, so an event referencing it may be appended after.
// Symlinks and non-regular files are never followed or read inside the store.
//
// Thread safety: all methods may be called concurrently, from several threads or processes
// sharing DIR. Movable, not copyable; the moved-from store may only be destroyed or assigned.
class BlobStore {
 public:
  static constexpr uint64_t kDefaultMaxBlobBytes = 64ull << 20;

  // Opens the store at `dir`, creating `dir` (0750, parents as needed), DIR/sha256 and DIR/tmp.
  // `dir` itself may be a symlink; DIR/sha256 and DIR/tmp may not.
  static Result<BlobStore> open(const std::filesystem::path& dir,
                                uint64_t max_blob_bytes = kDefaultMaxBlobBytes);

  BlobStore(BlobStore&& other) noexcept;
  BlobStore& operator=(BlobStore&& other) noexcept;
  BlobStore(const BlobStore&) = delete;
  BlobStore& operator=(const BlobStore&) = delete;
  ~BlobStore();

  // Stores `bytes` and returns its digest and size. Refuses more than max_blob_bytes() with
  // kInvalidArgument naming both sizes, before touching the disk. Idempotent: an intact blob with
  // the same digest is kept (and its directory synced); a damaged one (wrong content, wrong size,
  // a symlink, ...) is replaced durably.
  Result<BlobInfo> put(std::span<const uint8_t> bytes);

  // Streams a blob from `fd`, hashing while copying, with limit min(max_bytes, max_blob_bytes()).
  // A regular file (or memfd) is stored whole, read from offset 0 with pread whatever the fd's
  // offset, and refused up front when its size is over the limit; anything else (pipe, socket)
  // is read until EOF and refused as soon as it passes the limit. A refused or failed put_fd
  // leaves nothing behind. Does not close `fd`.
  Result<BlobInfo> put_fd(int fd, uint64_t max_bytes);

  // Reads the whole blob and re-hashes it: kNotFound if absent, kCorruption if it is not a
  // regular file or its content does not hash to its name.
  Result<std::string> get(const Digest& digest) const;

  // Verifies the blob without loading it at once: it exists (kNotFound), is a regular file, has
  // `expected_bytes` bytes and hashes to `digest` (kCorruption otherwise). Messages name the
  // digest.
  Status check(const Digest& digest, uint64_t expected_bytes) const;

  // True if a regular file is stored under `digest` (content not verified; use check()).
  bool contains(const Digest& digest) const;

  // DIR/sha256/<2 hex>/<62 hex>, whether or not it exists.
  std::filesystem::path path_of(const Digest& digest) const;
  const std::filesystem::path& dir() const { return dir_; }
  uint64_t max_blob_bytes() const { return max_blob_bytes_; }

 private:
  class TempFile;
  // What is stored under a digest before a put: nothing, the right bytes, or something to replace.
  enum class Existing { kAbsent, kIntact, kDamaged };

  BlobStore(std::filesystem::path dir, uint64_t max_blob_bytes, int sha_fd, int tmp_fd)
      : dir_(std::move(dir)), max_blob_bytes_(max_blob_bytes), sha_fd_(sha_fd), tmp_fd_(tmp_fd) {}

  // Opens the blob for reading without following symlinks; never blocks on a FIFO.
  Result<int> open_blob(const Digest& digest) const;
  Result<Existing> probe(const Digest& digest, uint64_t bytes) const;
  // Links the fsynced temp file in under info.sha256, replacing a damaged entry, and syncs the
  // folder.
  Status publish(TempFile& temp, const BlobInfo& info, Existing existing);
  Status sync_fanout_dir(const Digest& digest) const;
  // Ensures DIR/sha256/<2 hex> exists (durably) and returns an fd for it.
  Result<int> open_fanout_dir(const Digest& digest, bool create) const;
  void close_fds();

  std::filesystem::path dir_;
  uint64_t max_blob_bytes_ = kDefaultMaxBlobBytes;
  int sha_fd_ = -1;  // DIR/sha256
  int tmp_fd_ = -1;  // DIR/tmp
};

}  // namespace aura
