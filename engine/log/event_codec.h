// The one codec between events and stored records (layout in event_format.h).
#pragma once

#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/log/event.h"

namespace aura {

// Checks a draft before it may be appended: stream, type and actor non-empty,
// bounded and from their character sets; payload a UTF-8 JSON object within
// kMaxPayloadBytes. The message names the field that failed.
Status validate_draft(const EventDraft& draft);

// Builds the record for `draft` at `seq` after `prev_hash`, with its hash
// appended. REQUIRES: validate_draft(draft).is_ok().
std::string encode_record(uint64_t seq, const Digest& prev_hash, uint64_t ts_us,
                          const EventDraft& draft, Digest* hash_out);

// Parses a record's structure (version, lengths, bounds). Does not check the hash.
Result<EventView> decode_record(std::string_view record);

// SHA-256("AURA-EV1" ‖ body) over the record's stored body bytes.
// REQUIRES: record.size() >= kFixedBytes.
Digest compute_record_hash(std::string_view record);

// The hash per the documented formula from separate fields (used by tests and
// docs to show the formula independently of the record layout).
Digest event_hash(uint64_t seq, const Digest& prev_hash, uint64_t ts_us, std::string_view stream,
                  std::string_view type, std::string_view actor, std::string_view payload);

void put_u64be(std::string& out, uint64_t v);
uint64_t get_u64be(const char* p);
std::string seq_key(uint64_t seq);  // 8-byte big-endian

}  // namespace aura
