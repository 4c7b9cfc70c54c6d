// What the lab projections share about events: the streams they read and the catalog's payload
// reader (engine/events: strict decoders, docs/ATTEMPTS.md). Each projection keeps one
// events::PayloadReader and reuses it: the parser keeps its buffers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/events/attempt_events.h"
#include "engine/events/event_types.h"
#include "engine/events/payload_reader.h"
#include "engine/events/registry_events.h"
#include "engine/log/event.h"

// Declares `name` as a reference to the value of `expr` (a Result), or returns its error.
#define LAB_TRY(name, expr)                                 \
  auto name##_result_ = (expr);                             \
  if (!name##_result_.ok()) return name##_result_.status(); \
  auto& name = *name##_result_

namespace aura::lab {

namespace ev = aura::events;

// The stream of attempt ID: "attempt/" + 16 lowercase hex digits.
inline constexpr std::string_view kAttemptStreamPrefix = ev::kAttemptStreamPrefix;
inline constexpr size_t kAttemptIdHexDigits = ev::kAttemptIdHexDigits;
// The scenario registry's stream.
inline constexpr std::string_view kScenarioStream = ev::kScenarioStream;

// The attempt ID if `stream` is an attempt stream by the contract, else empty.
inline std::string_view attempt_id_of_stream(std::string_view stream) {
  return ev::attempt_id_of_stream(stream);
}
// The attempt ID of `e`'s stream; empty for a stream outside attempt/. A stream under attempt/
// that is not "attempt/" + 16 lowercase hex digits is refused (kCorruption): only the engine
// writes attempt streams (`aura log append` refuses them), and it writes no other name.
inline Result<std::string_view> attempt_of(const EventView& e) {
  const std::string_view id = attempt_id_of_stream(e.stream);
  if (id.empty() && e.stream.starts_with(kAttemptStreamPrefix)) {
    return Status::corruption(std::string(e.type) + " at seq " + std::to_string(e.seq) +
                              ": stream \"" + std::string(e.stream) +
                              "\" is under attempt/ but is not attempt/ and 16 lowercase hex "
                              "digits");
  }
  return id;
}
// The 64 bits an attempt ID's 16 hex digits spell, as SQLite's int64 row key.
// REQUIRES: `id` came from attempt_id_of_stream.
int64_t attempt_key(std::string_view id);

// Counts, seqs and sizes as SQLite's int64 (the decoders bound them below 2^63).
inline int64_t sql_int(uint64_t v) { return static_cast<int64_t>(v); }

}  // namespace aura::lab
