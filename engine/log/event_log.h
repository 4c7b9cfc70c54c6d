// The append-only, hash-chained event log on RocksDB. One sequencer owns the head:
// appends are group-committed (one synced write batch per group) and acknowledged
// only once durable. The API has no update or delete.
#pragma once

#include <rocksdb/db.h>
#include <rocksdb/env.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/log/event.h"
#include "engine/merkle/merkle.h"
#include "engine/sign/signed_note.h"

namespace aura {

struct Appended {
  uint64_t seq = 0;
  Digest hash{};
};

// The newest event: seq 0 and 32 zero bytes for an empty log.
struct LogHead {
  uint64_t seq = 0;
  Digest hash{};
};

struct StoredCheckpoint {
  uint64_t size = 0;
  std::string signed_note;
};

class EventLog {
 public:
  struct Options {
    bool read_only = false;
    bool create_if_missing = true;
    // Tests inject a power-loss file system here; null means the default Env.
    rocksdb::Env* env = nullptr;
    // Signs checkpoints. Null: no checkpoints are made and checkpoint() refuses.
    // Must outlive the log.
    const NoteSigner* signer = nullptr;
    // Where the blobs that events reference live. An event whose payload lists "refs"
    // is appended only if each blob is already stored (durably, with that size and
    // digest); without a store such an event is refused. Must outlive the log.
    const BlobStore* blobs = nullptr;
    // A checkpoint is signed whenever a group crosses a multiple of this; 0: only on demand.
    uint64_t checkpoint_every = 1000;
    // Microseconds since the Unix epoch; default CLOCK_REALTIME. Stamps are kept non-decreasing.
    std::function<uint64_t()> clock_us;
    // Upper bounds on one group commit.
    size_t max_group_events = 1024;
    size_t max_group_bytes = 8 << 20;
  };

  // Opens (or creates) the RocksDB database in `db_dir`. A read-only open sees the
  // log as of the open and refuses appends.
  static Result<std::unique_ptr<EventLog>> open(const std::filesystem::path& db_dir,
                                                Options options);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  // Validates, sequences and durably appends one event. Thread-safe; returns only
  // after the event's batch is synced. After a failed write every later append
  // fails with the same error until the log is reopened (sticky).
  Result<Appended> append(const EventDraft& draft);
  // Appends several events contiguously and atomically (all or none). Thread-safe.
  Result<std::vector<Appended>> append_all(std::span<const EventDraft> drafts);

  // Signs and durably stores a checkpoint at the current head (no-op if one exists
  // at that size) and returns it. Thread-safe. Refuses on an empty log or without a signer.
  Result<StoredCheckpoint> checkpoint();

  LogHead head() const;  // thread-safe

  // Group commits and events committed since open (for benchmarks). Thread-safe.
  struct Stats {
    uint64_t groups = 0;
    uint64_t events = 0;
  };
  Stats stats() const;
  const std::string& origin() const { return origin_; }
  bool read_only() const { return options_.read_only; }
  // A read-only open tolerates stored state that disagrees with the events (so
  // verify can name it); this says what disagreed, empty when nothing did.
  const std::string& state_problem() const { return state_problem_; }
  // The compact range as stored in meta (the right edge the next append extends).
  merkle::CompactRange tree_state() const;
  uint64_t meta_tree_size() const { return meta_tree_size_; }

  // Reads. Thread-safe; see only durable events.
  Result<StoredEvent> get(uint64_t seq) const;
  // Calls `fn` for seq in [from, to] in order until it returns false. Stops with an
  // error at a record that does not decode or whose key does not match its seq.
  Status read_range(uint64_t from, uint64_t to,
                    const std::function<bool(const EventView&)>& fn) const;
  // Events of one stream with seq >= from_seq, in order, through the stream index.
  // Each event is checked to belong to `stream` (the index is not trusted).
  Status read_stream(std::string_view stream, uint64_t from_seq,
                     const std::function<bool(const EventView&)>& fn) const;
  // Blocks until head().seq >= seq or the timeout passes; returns the head seq then.
  uint64_t wait_for(uint64_t seq, std::chrono::milliseconds timeout) const;

  // Merkle tree over the event hashes (leaf i = event seq i+1).
  merkle::NodeReader& nodes() const;
  Result<merkle::Hash> root_at(uint64_t size) const;
  // All stored checkpoints in increasing size, and the newest.
  Result<std::vector<StoredCheckpoint>> checkpoints() const;
  Result<std::optional<StoredCheckpoint>> latest_checkpoint() const;

  // Storage internals for the verifier and snapshots in this folder.
  rocksdb::DB* db() const { return db_.get(); }
  rocksdb::ColumnFamilyHandle* events_cf() const { return cfs_[0]; }
  rocksdb::ColumnFamilyHandle* stream_cf() const { return cfs_[1]; }
  rocksdb::ColumnFamilyHandle* tree_cf() const { return cfs_[2]; }
  rocksdb::ColumnFamilyHandle* checkpoint_cf() const { return cfs_[3]; }
  rocksdb::ColumnFamilyHandle* meta_cf() const { return cfs_[4]; }

  static std::string stream_key(std::string_view stream, uint64_t seq);
  // Tree column key: u64be((index + 1) << level) ‖ u8(level), levels >= 1.
  static std::string node_key(uint8_t level, uint64_t index);
  static bool parse_node_key(std::string_view key, uint8_t* level, uint64_t* index);
  static const std::vector<std::string>& column_family_names();

 private:
  struct Writer;
  class LogNodeReader;

  EventLog(Options options);
  Status load_state();
  // REQUIRES: caller is the group leader (front of writers_), mu_ not held.
  Status write_group(std::vector<Writer*>& group, LogHead& head, merkle::CompactRange& tree,
                     uint64_t& last_ts, uint64_t& checkpoint_size);
  Result<StoredCheckpoint> make_checkpoint(uint64_t size, const merkle::Hash& root,
                                           const Digest& chain_head) const;
  Result<std::vector<Appended>> submit(Writer& w);
  Status check_refs(const EventDraft& draft) const;

  Options options_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> cfs_;
  std::unique_ptr<LogNodeReader> nodes_;
  std::string origin_;

  mutable std::mutex mu_;
  mutable std::condition_variable head_cv_;
  std::deque<Writer*> writers_;        // guarded by mu_
  LogHead head_;                       // guarded by mu_
  merkle::CompactRange tree_;          // guarded by mu_
  uint64_t last_ts_us_ = 0;            // guarded by mu_
  uint64_t last_checkpoint_size_ = 0;  // guarded by mu_
  Stats stats_;                        // guarded by mu_
  Status sticky_;                      // guarded by mu_
  std::string state_problem_;
  uint64_t meta_tree_size_ = 0;
};

}  // namespace aura
