// Constants of the Intervention Receipt: a compact JSON document (version first) in a DSSE
// envelope signed by the lab key. Layout, every member and a worked example:
// docs/formats/receipt.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/sign/dsse_format.h"

namespace aura::receipt_format {

inline constexpr uint64_t kVersion = 1;  // "v", the first member
inline constexpr std::string_view kPayloadType = dsse_format::kPayloadTypeReceipt;

// The document's members, exactly these, in this order.
inline constexpr std::array<std::string_view, 13> kMembers = {
    "v",        "attempt",          "scenario", "environment", "intervention",     "facts", "gate",
    "rollback", "model_assistance", "events",   "checkpoint",  "inclusion_proofs", "hashes"};

// The members of "hashes", in this order: each is the SHA-256 (64 lowercase hex) of the exact
// bytes of the document member of that name ("actions": of intervention.actions).
inline constexpr std::array<std::string_view, 9> kHashedSections = {
    "scenario", "environment", "intervention",     "actions", "facts",
    "gate",     "rollback",    "model_assistance", "events"};

// Bounds. A receipt covers at most kMaxEvents events of its attempt; each carries a leaf and an
// inclusion proof of at most kMaxProofHashes hashes (a tree of 2^64 leaves).
inline constexpr size_t kMaxEvents = 2048;
inline constexpr size_t kMaxProofHashes = 64;
inline constexpr size_t kMaxEnvelopeBytes = dsse_format::kMaxEnvelopeBytes;
inline constexpr size_t kAttemptIdHexDigits = 16;  // attempt/<16 lowercase hex>

// Upper bound of one event's share of the document (leaf + proof at 64 hex + quotes + comma per
// hash, plus member names and digits): the receipt of kMaxEvents events fits in an envelope
// (base64 adds a third) with room for the other sections.
inline constexpr size_t kMaxBytesPerEvent = 96 + kMaxProofHashes * 67;

static_assert(kMembers[0] == "v", "the version comes first");
static_assert(kMaxEvents * kMaxBytesPerEvent * 4 / 3 < kMaxEnvelopeBytes);

}  // namespace aura::receipt_format
