// attempt.access: who may drive an attempt through the lab's service (docs/ATTEMPTS.md,
// "Access"). The SHA-256 of the attempt's token, never the token itself; the newest
// attempt.access of the stream holds, so writing a new one revokes the one before.
#pragma once

#include <string>

#include "engine/common/status.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/log/event.h"

namespace aura::events {

struct AttemptAccess {
  static constexpr std::string_view kType = kAttemptAccess;
  std::string attempt;
  std::string token_sha256;  // 64 lowercase hex

  std::string encode() const;
  // Strict: the documented members only.
  static Result<AttemptAccess> decode(PayloadReader& r, const EventView& e);
};

}  // namespace aura::events
