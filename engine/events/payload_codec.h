// The pieces every codec of the catalog is built from: the header each payload begins with, the
// arrays payloads hold (refs, seqs, strings) and typed reads that name the member that failed.
// For the catalog's own codecs (engine/events/*_events.cc); nothing else encodes a payload.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/common/status.h"
#include "engine/events/attempt_events.h"
#include "engine/events/payload_reader.h"
#include "engine/json/json_reader.h"

namespace aura::events::codec {

// {"v":1,"attempt":ATTEMPT, ... : every attempt event begins so.
JsonWriter header(std::string_view attempt);

// "name":"text", or "name":null when there is none.
void str_or_null(JsonWriter& j, std::string_view name, const std::optional<std::string>& text);

std::string refs_json(const std::vector<EvidenceRef>& refs);
std::string seqs_json(const std::vector<uint64_t>& seqs);
std::string strings_json(const std::vector<std::string>& strings);

// A non-negative integer that fits int64 (counts, seqs, sizes: SQLite's integers).
Result<uint64_t> read_count(const json::Object& o, std::string_view name);
Result<std::string> read_string(const json::Object& o, std::string_view name);
Result<std::string> read_enum(const json::Object& o, std::string_view name,
                              std::span<const std::string_view> allowed);
// 64 lowercase hex digits.
Result<std::string> read_hex(const json::Object& o, std::string_view name);
Result<std::optional<std::string>> read_string_or_null(const json::Object& o,
                                                       std::string_view name);
Result<std::vector<std::string>> read_strings(const json::Array& a);

// Opens `e`'s payload and reads its "attempt" (PayloadReader checked it against the stream).
Result<json::Object> open_attempt(PayloadReader& r, const EventView& e, std::string& attempt);

// The members an action event records after its own (action.completed, gate.action): "call"
// (raw JSON) or "script_sha256", exit_code, error (null when none), truncated, resolved.
void write_action_members(JsonWriter& j, const ActionMembers& a);
// Reads what write_action_members wrote. `truncated` and `resolved` may be absent (false, none).
Status read_action_members(const json::Object& o, ActionMembers& a);

}  // namespace aura::events::codec
