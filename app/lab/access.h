// Access to an attempt through the lab's service: a token of 256 random bits (64 lowercase
// hex) is handed to whoever started the attempt; only its SHA-256 is kept, in the attempt's
// stream (attempt.access). A request presenting a token is let in when its hash is the
// newest attempt.access's, compared in constant time. Replacing the token appends a new
// attempt.access: the old one no longer matches.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/log/event_log.h"

namespace aura::app {

struct NewToken {
  std::string token;   // shown once to its holder
  std::string sha256;  // what the log keeps
};
NewToken new_token();

// Appends attempt.access for `attempt` (actor "engine").
Status grant_access(EventLog& log, std::string_view attempt, std::string_view token_sha256);

// ok when `token`'s SHA-256 is the newest attempt.access of the attempt; kFailedPrecondition
// ("unauthorized") when the attempt has no access granted (judge attempts, CLI attempts) or the
// token does not match; kNotFound when the attempt has no events.
Status check_access(const EventLog& log, std::string_view attempt, std::string_view token);

// Constant-time equality of two byte strings of the same length (false when lengths differ).
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace aura::app
