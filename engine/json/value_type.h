// What a JSON value is, in the words a refusal uses ("expected a string, found an array"), so
// parsers on the strict reader can name what they found without reaching into simdjson.
#pragma once

#include <string_view>

#include "engine/json/json_reader.h"

namespace aura::json {

// "an object", "an array", "a string", "an integer", "a number", "a boolean" or "null".
inline std::string_view type_name(const Value& v) {
  switch (v.element().type()) {
    case simdjson::dom::element_type::OBJECT:
      return "an object";
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
      return "an integer";
    case simdjson::dom::element_type::DOUBLE:
      return "a number";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
  }
  return "an unknown value";
}

// A JSON integer (no fraction, no exponent) of any size: as_i64() refuses one above INT64_MAX,
// which is out of range rather than of the wrong type.
inline bool is_integer(const Value& v) { return type_name(v) == "an integer"; }

}  // namespace aura::json
