// Access to an attempt through the lab's service: a token of 256 random bits (64 lowercase
// hex) is handed to whoever started the attempt; only its SHA-256 is kept, in the attempt's
// stream (attempt.access). A request presenting a token is let in when its hash is the
// newest attempt.access's, compared in constant time. Replacing the token appends a new
// attempt.access: the old one no longer matches.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "engine/attempt/attempt_state.h"
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

// The attempts a service reads, each folded once and then only by the events appended since
// (the stream index read from the last seq seen): a state read costs one index seek instead of
// two whole-stream replays. open() applies check_access's rules to the cached access hash and
// returns exactly what attempt::replay_attempt would. Thread-safe; at most `max_attempts` kept
// (past that the cache starts over).
class AttemptCache {
 public:
  explicit AttemptCache(const EventLog& log, size_t max_attempts = 4096)
      : log_(log), max_(max_attempts) {}

  // The attempt's state when `token` opens it: kInvalidArgument for a malformed id, kNotFound
  // for an attempt with no events, kFailedPrecondition ("unauthorized") as check_access.
  Result<attempt::AttemptState> open(std::string_view attempt, std::string_view token);
  // The attempt's state with no token check: for root on the lab's machine only (the CLI).
  Result<attempt::AttemptState> state(std::string_view attempt);

 private:
  struct Entry {
    attempt::AttemptState state;
    std::string token_sha256;  // the newest attempt.access's; empty: none granted
    uint64_t next_seq = 1;     // the first seq not folded yet
  };
  // The entry brought up to the log's head (stored), or the fold's error.
  Result<Entry> fold(std::string_view attempt);

  const EventLog& log_;
  const size_t max_;
  std::mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_;
};

// Constant-time equality of two byte strings of the same length (false when lengths differ).
bool equal_constant_time(std::string_view a, std::string_view b);

}  // namespace aura::app
