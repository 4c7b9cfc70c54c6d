// Intervention Receipts: issued for a VERIFIED attempt as a DSSE envelope signed by the lab key,
// verified offline against a pinned key (signature, section hashes, checkpoint, inclusion
// proofs) and, given the log, by replay (the log's events, every section rebuilt, the verdict
// re-graded). A report names every check that failed; a receipt holds only when none did.
// Format: docs/formats/receipt.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/log/event_log.h"
#include "engine/sign/signed_note.h"

namespace aura::receipt {

struct IssuedReceipt {
  std::string envelope;      // the DSSE envelope, compact JSON: what is stored as a blob
  Digest envelope_sha256{};  // SHA-256 of `envelope`: receipt.issued's receipt_sha256
  std::string document;      // the signed payload (the receipt JSON document)
  uint64_t first_seq = 0;    // attempt.started
  uint64_t last_seq = 0;     // the gate.verdict
  uint64_t checkpoint_size = 0;
};

// Builds and signs the receipt of attempt `attempt_id` (16 lowercase hex): the events of its
// stream from attempt.started through its last gate.verdict, which must be VERIFIED
// (kFailedPrecondition otherwise, and when the range is over receipt_format::kMaxEvents). Signs a
// checkpoint at the log's head (EventLog::checkpoint, so the log needs a signer) and proves every
// event of the range in it. Reads the IR blob from `blobs`. Appends nothing: the caller stores the
// envelope as a blob and appends receipt.issued. Does not re-grade (verify_receipt's replay
// does). Thread-safe as far as the log is.
Result<IssuedReceipt> issue_receipt(EventLog& log, std::string_view attempt_id,
                                    const NoteSigner& lab_signer, const BlobStore& blobs);

// What replay reads. Both must be set; the log may be a read-only open.
struct ReplayContext {
  const EventLog* log = nullptr;
  const BlobStore* blobs = nullptr;
  // True (an auditor's `aura receipt verify --replay`): the whole log verifies, as `aura log
  // verify` would. False (the lab's service, per request): only the receipt's events, each
  // proven into the log's tree under the checkpoint's root (verify_events): the attempt's
  // size, not the log's.
  bool whole_log = true;
};

// One check that did not hold: the receipt field it concerns ("signature", "hashes.facts",
// "events.leaves[3].hash", "inclusion_proofs[3]", "checkpoint.note", "gate", "log" ...) and what
// differs.
struct ReceiptFailure {
  std::string field;
  std::string what;
};

struct ReceiptReport {
  std::vector<std::string> passed;       // the checks that held, in the order they ran
  std::vector<ReceiptFailure> failures;  // every check that did not
  bool replayed = false;                 // replay checks ran
  // What the receipt claims, once its signature verified and it parsed (else empty / 0).
  std::string attempt;
  std::string scenario_id;
  std::string verdict;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
  uint64_t checkpoint_size = 0;

  bool ok() const { return failures.empty() && !passed.empty(); }
};

// Verifies `envelope` (bounded by receipt_format::kMaxEnvelopeBytes). Offline: the DSSE
// signature with `pinned` only (never a key the receipt names) and the payload type; the document
// parses strictly; every hashes.<section> is the SHA-256 of that section's bytes; the gate says
// VERIFIED with five passing properties; the events are one stream's, ascending, counted, and
// every seq the facts, gate and rollback cite is among them; the checkpoint note verifies with
// `pinned`, its size covers last_seq, and every event's inclusion proof leads to its root.
// With `replay`: the log verifies as `aura log verify` would (with `pinned`; with whole_log
// false, only the bound events, each in the log's tree under the checkpoint's root), holds every
// bound event (same hash, same stream) and no other event of the stream in range, its tree at the
// checkpoint's size has the checkpoint's root, every section rebuilt from the log equals the
// receipt's byte for byte, and re-grading the recorded facts gives the recorded verdict.
// A signature that does not verify is reported alone: nothing else of the document is read.
ReceiptReport verify_receipt(std::string_view envelope, const NoteVerifierKey& pinned,
                             std::optional<ReplayContext> replay = std::nullopt);

}  // namespace aura::receipt
