// Raw JSON spans: a receipt hashes and compares the exact bytes of its members, so the parts
// of a document are cut out of its text, never re-serialised. Input is validated by the strict
// reader (engine/json: UTF-8, duplicate members at any depth, bounds) before it is cut.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::receipt {

// One member of a JSON object: its name and the exact bytes of its value.
struct RawMember {
  std::string_view key;
  std::string_view value;
};

// Validates `text` with the strict reader (at most `max_bytes`, nesting at most
// kMaxRawJsonDepth, no duplicate member at any depth; members, elements and strings bounded by
// the size alone) and returns it without insignificant whitespace; strings, numbers and escapes
// are kept byte for byte. `what` names the input in errors ("IR blob ir-1: evidence[0]:
// duplicate member"). Nothing the lab hashes nests near kMaxRawJsonDepth (an IR: 16 levels, an
// event payload a few); simdjson's own bound, which this replaces, was 1024.
inline constexpr size_t kMaxRawJsonDepth = 64;
Result<std::string> minify_json(std::string_view text, size_t max_bytes, std::string_view what);

// `json` without insignificant whitespace, every other byte kept. REQUIRES: `json` is valid JSON
// (read by the strict reader first).
std::string without_whitespace(std::string_view json);

// The members of a compact JSON object, in document order. REQUIRES: `compact_object` is valid
// JSON without insignificant whitespace (minify_json's output, or text checked to equal it).
// Refuses a value that is not an object, a member name holding an escape (no AURA name has one,
// and an escaped name could alias another), and a name that occurs twice.
Result<std::vector<RawMember>> raw_members(std::string_view compact_object, std::string_view what);

// The value of the member named `key`; kInvalidArgument naming `what` when it is absent.
Result<std::string_view> raw_member(const std::vector<RawMember>& members, std::string_view key,
                                    std::string_view what);

// Refuses (kInvalidArgument, naming `what`) an object whose members repeat a name: simdjson's
// DOM keeps duplicates, and two readers could then see different values. Only the receipt
// builder's own event reader (receipt_builder.cc) still reads simdjson's DOM and uses this; it
// goes when that reader moves onto engine/json or the event codecs.
Status check_unique_members(simdjson::dom::object object, std::string_view what);

}  // namespace aura::receipt
