// Reads the payloads of lab events (docs/ATTEMPTS.md) for the lab projections: JSON objects
// whose members are looked up by name, each getter checking the member's type and naming it in
// the error. Duplicate members are refused (simdjson's DOM would keep both).
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/status.h"
#include "engine/log/event.h"

// Declares `name` as a reference to the value of `expr` (a Result), or returns its error.
#define LAB_TRY(name, expr)                                 \
  auto name##_result_ = (expr);                             \
  if (!name##_result_.ok()) return name##_result_.status(); \
  auto& name = *name##_result_

namespace aura::lab {

// The stream of attempt ID: "attempt/" + 16 lowercase hex digits.
inline constexpr std::string_view kAttemptStreamPrefix = "attempt/";
inline constexpr size_t kAttemptIdHexDigits = 16;
// The scenario registry's stream.
inline constexpr std::string_view kScenarioStream = "lab/scenarios";

// The attempt ID if `stream` is an attempt stream by the contract, else empty. Streams named
// attempt/<anything else> (the demo's "attempt/demo-…") are not attempt streams.
std::string_view attempt_id_of_stream(std::string_view stream);
// The 64 bits an attempt ID's 16 hex digits spell, as SQLite's int64 row key.
// REQUIRES: `id` came from attempt_id_of_stream.
int64_t attempt_key(std::string_view id);

// The members of one JSON object, by name. Views into the parser's document: valid until the
// owning Payload parses the next event.
class Members {
 public:
  // At most this many members (the contract's objects have fewer than 16).
  static constexpr size_t kMaxMembers = 64;

  // `type` and `prefix` only name things in errors: "<type>: member \"<prefix><name>\": ...".
  Status load(simdjson::dom::object object, std::string_view type, std::string prefix);

  bool has(std::string_view name) const { return find(name) != nullptr; }
  size_t size() const { return members_.size(); }
  std::string_view first_name() const { return members_.empty() ? "" : members_[0].first; }

  // Required members of one type; the error names the member and what it is not.
  Result<std::string_view> str(std::string_view name) const;
  Result<uint64_t> u64(std::string_view name) const;
  // A non-negative integer that fits SQLite's int64 (counts, seqs, sizes).
  Result<int64_t> count(std::string_view name) const;
  // Any integer that fits int64 (exit codes).
  Result<int64_t> i64(std::string_view name) const;
  // A string, or null (nullopt); absent is refused.
  Result<std::optional<std::string_view>> str_or_null(std::string_view name) const;
  Result<bool> boolean(std::string_view name) const;
  // A string of exactly 64 lowercase hex digits (a SHA-256).
  Result<std::string_view> sha256_hex(std::string_view name) const;
  // A string that is one of `allowed`.
  Result<std::string_view> one_of(std::string_view name,
                                  std::span<const std::string_view> allowed) const;
  Result<std::string_view> one_of(std::string_view name,
                                  std::initializer_list<std::string_view> allowed) const {
    return one_of(name, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  // The value as minified JSON text (any type).
  Result<std::string> json(std::string_view name) const;
  // An array of non-negative integers, as compact JSON text "[1,2]".
  Result<std::string> u64_array_json(std::string_view name) const;
  // An array; errors name it.
  Result<simdjson::dom::array> array(std::string_view name) const;
  // A nested object's members.
  Result<Members> object(std::string_view name) const;

  // "<type>: member \"<prefix><name>\": <what>".
  Status error(std::string_view name, std::string_view what) const;

 private:
  const simdjson::dom::element* find(std::string_view name) const;
  Result<simdjson::dom::element> need(std::string_view name) const;

  std::string_view type_;
  std::string prefix_;
  std::vector<std::pair<std::string_view, simdjson::dom::element>> members_;
};

// One event's payload. Keep one per projection and reuse it: the parser keeps its buffers.
class Payload {
 public:
  // Parses `event.payload`: a JSON object with no duplicate member whose first member is "v":1.
  // For an event in an attempt stream, "attempt" must equal the stream's ID. Errors name the
  // event type and the member ("attempt.started: member \"seed\": not a non-negative integer").
  Status parse(const EventView& event);

  const Members& members() const { return members_; }

  // The ref with this id from the payload's "refs" (docs/formats/blobs.md), if listed. Refs are
  // read with extract_refs, so they are validated exactly as the log validated them.
  Result<std::optional<EvidenceRef>> ref(std::string_view id) const;
  // Every ref, in payload order.
  Result<std::vector<EvidenceRef>> refs() const;

 private:
  simdjson::dom::parser parser_;
  std::string_view type_;
  std::string_view payload_;  // the event's bytes, for extract_refs (valid during apply)
  Members members_;
};

}  // namespace aura::lab
