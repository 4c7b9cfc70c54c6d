// The auditor's verify: recomputes every event hash and chain link, every stored
// Merkle node, every checkpoint's signature, root and chain head, rebuilds the stream
// index and compares it, checks referenced blobs, and proves the log extends a
// trusted checkpoint. Read-only; runs the per-event work in parallel.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/log/event_log.h"
#include "engine/sign/signed_note.h"

namespace aura {

struct VerifyOptions {
  uint64_t from_seq = 1;              // events before this are trusted (an incremental audit)
  std::vector<NoteVerifierKey> keys;  // pinned lab keys; checkpoints must verify with one
  std::optional<std::string> trusted_checkpoint;  // a signed note the log must extend
  // Referenced blobs are checked in `blobs`; with check_blobs and no store, every
  // referenced blob is reported missing. check_blobs=false skips them (unit tests).
  const BlobStore* blobs = nullptr;
  bool check_blobs = true;
  unsigned threads = 0;  // 0: one per core
  // Called now and then from worker threads with events checked so far.
  std::function<void(uint64_t done, uint64_t total)> progress;
};

struct VerifyProblem {
  uint64_t seq = 0;  // the first sequence number the problem concerns
  std::string what;
};

struct VerifyReport {
  bool ok() const { return problems.empty(); }
  uint64_t head_seq = 0;
  Digest head_hash{};
  uint64_t events_checked = 0;
  uint64_t bytes_checked = 0;
  uint64_t tree_nodes_checked = 0;
  uint64_t index_entries_checked = 0;
  uint64_t blobs_checked = 0;
  uint64_t checkpoints_checked = 0;
  uint64_t latest_checkpoint_size = 0;   // 0: none
  uint64_t uncovered_tail = 0;           // events after the latest checkpoint
  std::optional<uint64_t> trusted_size;  // set when a trusted checkpoint was proven
  double seconds = 0;
  std::vector<VerifyProblem> problems;  // sorted by seq, capped
  std::optional<uint64_t> first_bad_seq() const {
    if (problems.empty()) return std::nullopt;
    return problems.front().seq;
  }
};

VerifyReport verify_log(const EventLog& log, const VerifyOptions& options);

}  // namespace aura
