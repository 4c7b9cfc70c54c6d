// Byte layout of a stored event record (docs/FORMAT.md is the auditor's copy).
//
//   record := version:u8 ‖ body ‖ hash[32]
//   body   := seq:u64be ‖ prev_hash[32] ‖ ts_us:u64be ‖ lp(stream) ‖ lp(type) ‖ lp(actor)
//             ‖ lp(payload)          where lp(x) = u32be(len(x)) ‖ x
//   hash   := SHA-256("AURA-EV1" ‖ body)
//
// The hash covers the stored bytes; nothing is re-serialised before hashing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace aura::event_format {

inline constexpr uint8_t kVersion = 1;
inline constexpr std::string_view kHashDomain = "AURA-EV1";
inline constexpr size_t kHashBytes = 32;

// Offsets into a record.
inline constexpr size_t kVersionOffset = 0;
inline constexpr size_t kSeqOffset = 1;
inline constexpr size_t kPrevHashOffset = kSeqOffset + 8;
inline constexpr size_t kTsOffset = kPrevHashOffset + kHashBytes;
inline constexpr size_t kStreamLenOffset = kTsOffset + 8;

// Fixed bytes of a record besides the four variable fields.
inline constexpr size_t kFixedBytes = 1 + 8 + kHashBytes + 8 + 4 * 4 + kHashBytes;

// Bounds, enforced on append and on decode.
inline constexpr size_t kMaxStreamBytes = 200;
inline constexpr size_t kMaxTypeBytes = 100;
inline constexpr size_t kMaxActorBytes = 200;
inline constexpr size_t kMaxPayloadBytes = 1 << 20;
inline constexpr size_t kMaxRecordBytes =
    kFixedBytes + kMaxStreamBytes + kMaxTypeBytes + kMaxActorBytes + kMaxPayloadBytes;

static_assert(kStreamLenOffset == 49);
static_assert(kFixedBytes == 97);
static_assert(kHashDomain.size() == 8);

}  // namespace aura::event_format
