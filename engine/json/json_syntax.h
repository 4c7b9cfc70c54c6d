// Where a text stops being JSON (RFC 8259): the line and column of the first byte a JSON
// parser cannot accept, for error messages a person can act on ("line 3, column 7"). Only the
// grammar is checked (no limits, no duplicate members, UTF-8 not decoded): the strict reader
// (json_reader.h) decides whether a document is accepted; this only says where a rejected one
// went wrong.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace aura::json {

struct TextPosition {
  size_t line = 1;    // 1-based
  size_t column = 1;  // 1-based, in bytes
};

// The position of the first syntax error of `text` as one JSON value with optional whitespace
// around it; nullopt when the grammar holds everywhere.
std::optional<TextPosition> first_syntax_error(std::string_view text);

}  // namespace aura::json
