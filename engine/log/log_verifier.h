// The auditor's verify: recomputes every event hash and chain link, every stored
// Merkle node, every checkpoint's signature, root and chain head, rebuilds the stream
// index and compares it, checks referenced blobs, and proves the log extends a
// trusted checkpoint. Read-only; runs the per-event work in parallel.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
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

// The events `seqs` alone (a receipt's, an attempt's): their number times the log's depth in
// reads, not the whole log. Each record's bytes hash to its stored hash, which is leaf seq-1 of
// the log's tree of `tree_size` leaves with root `root` (an inclusion proof from the log's
// stored nodes, checked against `root`: a root the caller trusts, a signed checkpoint's); its
// prev_hash is the stored hash of the event before it, whose bytes hash to it; every blob it
// references is in `blobs` (missing when `blobs` is null). Not checked, as verify_log does:
// the events outside `seqs`, the stream index, the other tree nodes, the checkpoints.
VerifyReport verify_events(const EventLog& log, std::span<const uint64_t> seqs, uint64_t tree_size,
                           const merkle::Hash& root, const BlobStore* blobs);

}  // namespace aura
