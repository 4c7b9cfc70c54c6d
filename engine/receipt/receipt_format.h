// Constants of the Intervention Receipt: a compact JSON document (version first) in a DSSE
// envelope signed by the lab key. Layout, every member and a worked example:
// docs/formats/receipt.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/events/event_types.h"
#include "engine/sign/dsse_format.h"

namespace aura::receipt::receipt_format {

// "v", the first member. 2: the evidence section and the recomputed environment (binaries, world
// images, the recorded capability panel and build profile). A receipt of another version is
// refused by verify, naming its version (docs/formats/receipt.md, "Versions").
inline constexpr uint64_t kVersion = 2;
inline constexpr std::string_view kPayloadType = dsse_format::kPayloadTypeReceipt;

// The document's members, exactly these, in this order.
inline constexpr std::array<std::string_view, 14> kMembers = {"v",
                                                              "attempt",
                                                              "scenario",
                                                              "environment",
                                                              "intervention",
                                                              "evidence",
                                                              "facts",
                                                              "gate",
                                                              "rollback",
                                                              "model_assistance",
                                                              "events",
                                                              "checkpoint",
                                                              "inclusion_proofs",
                                                              "hashes"};

// The members of "hashes", in this order: each is the SHA-256 (64 lowercase hex) of the exact
// bytes of the document member of that name ("actions": of intervention.actions).
inline constexpr std::array<std::string_view, 10> kHashedSections = {
    "scenario", "environment", "intervention", "actions",          "evidence",
    "facts",    "gate",        "rollback",     "model_assistance", "events"};

// The members of "environment", in this order (docs/formats/receipt.md).
inline constexpr std::array<std::string_view, 8> kEnvironmentMembers = {
    "kernel_release",   "lab_build_digest", "sandbox_profile_digest", "capability_snapshot_digest",
    "capabilities_seq", "binaries",         "world_images",           "worlds"};
// The members of each "evidence" entry, in this order.
inline constexpr std::array<std::string_view, 5> kEvidenceMembers = {"id", "kind", "sha256",
                                                                     "bytes", "seq"};
inline constexpr size_t kMaxEvidence = 64;     // the IR cites at most this many
inline constexpr size_t kMaxBinaries = 256;    // environment.binaries
inline constexpr size_t kMaxWorldImages = 64;  // environment.world_images
inline constexpr size_t kMaxLayers = 256;      // layers of one world image
// A lab build digest of all zeros is a placeholder, never bound.
inline constexpr std::string_view kUnknownDigest =
    "0000000000000000000000000000000000000000000000000000000000000000";
inline constexpr std::string_view kCapabilityStream = "lab/capabilities";
inline constexpr std::string_view kCapabilityEventType = events::kCapabilitiesMeasured;

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

}  // namespace aura::receipt::receipt_format
