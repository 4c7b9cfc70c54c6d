// Events: what a caller appends (EventDraft), and what the log stores (StoredEvent,
// or EventView over a record's bytes). One codec (event_codec.h) converts between them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/crypto/sha256.h"

namespace aura {

// An event before the sequencer gives it a seq, prev_hash and timestamp.
struct EventDraft {
  std::string stream;   // e.g. "attempt/9f2c", "log", "lab"
  std::string type;     // e.g. "attempt.started"
  std::string actor;    // who caused it, e.g. "engine", "supervisor", "learner:alice"
  std::string payload;  // UTF-8 JSON object, kept as these exact bytes
};

// A view of a decoded record. Valid while the record's bytes live.
struct EventView {
  uint64_t seq = 0;
  Digest prev_hash{};
  uint64_t ts_us = 0;
  std::string_view stream;
  std::string_view type;
  std::string_view actor;
  std::string_view payload;
  Digest hash{};  // as stored; compare with compute_record_hash() to check it
};

// An owning copy of a stored event.
struct StoredEvent {
  uint64_t seq = 0;
  Digest prev_hash{};
  uint64_t ts_us = 0;
  std::string stream;
  std::string type;
  std::string actor;
  std::string payload;
  Digest hash{};

  static StoredEvent from_view(const EventView& v) {
    return {v.seq,
            v.prev_hash,
            v.ts_us,
            std::string(v.stream),
            std::string(v.type),
            std::string(v.actor),
            std::string(v.payload),
            v.hash};
  }
};

}  // namespace aura
