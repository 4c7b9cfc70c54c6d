// Raw JSON spans: a receipt hashes and compares the exact bytes of its members, so the parts
// of a document are cut out of its text, never re-serialised. Input is validated (simdjson,
// duplicate members refused) before it is cut.
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

// Validates `text` as JSON (at most `max_bytes`) and returns it without insignificant whitespace;
// strings, numbers and escapes are kept byte for byte. `what` names the input in errors.
Result<std::string> minify_json(std::string_view text, size_t max_bytes, std::string_view what);

// The members of a compact JSON object, in document order. REQUIRES: `compact_object` is valid
// JSON without insignificant whitespace (minify_json's output, or text checked to equal it).
// Refuses a value that is not an object, a member name holding an escape (no AURA name has one,
// and an escaped name could alias another), and a name that occurs twice.
Result<std::vector<RawMember>> raw_members(std::string_view compact_object, std::string_view what);

// The value of the member named `key`; kInvalidArgument naming `what` when it is absent.
Result<std::string_view> raw_member(const std::vector<RawMember>& members, std::string_view key,
                                    std::string_view what);

// Refuses (kInvalidArgument, naming `what`) an object whose members repeat a name: simdjson's
// DOM keeps duplicates, and two readers could then see different values.
Status check_unique_members(simdjson::dom::object object, std::string_view what);

}  // namespace aura::receipt
