// The call validator's DOM-level entry points and the strict-JSON helpers it shares with the
// InterventionIR validator (engine/intervention): a depth scan that runs before any parser,
// member walks that refuse unknown and duplicate members, and every error named by JSON path.
// Implemented in call.cc. Not a contract: engine/scenario/call.h is.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"

namespace aura::scenario::json {

using Element = simdjson::dom::element;

// Text as it may appear in a message: printable ASCII kept, other bytes as \xHH, cut after 64
// bytes with "...". quoted() adds double quotes.
std::string shown(std::string_view text);
std::string quoted(std::string_view text);

// "<base>.<member>" ("<member>" when base is empty) and "<base>[<index>]".
std::string member_path(std::string_view base, std::string_view member);
std::string index_path(std::string_view base, size_t index);

// "an object", "an array", "a string", "an integer", "a number", "a boolean", "null".
std::string_view type_name(Element value);

// Scans `json` as bytes, without parsing, and refuses nesting of more than `max_depth` arrays and
// objects, naming the path of the first container too deep ("$.actions[0].params.path[0]:
// nesting deeper than 16 levels"). Linear time, memory bounded by max_depth: a document of
// 100000 '[' is refused before a parser (or a recursive walk) sees it.
Status check_depth(std::string_view json, size_t max_depth, std::string_view root_path);

// Parses `json` (UTF-8 is validated) into `parser` after check_depth; then walks the DOM and
// refuses a duplicate member in any object and nesting deeper than max_depth (the walk's own
// depth counter, should the scan and the parser ever disagree).
Result<Element> parse_strict(simdjson::dom::parser& parser, std::string_view json, size_t max_depth,
                             std::string_view root_path);

// The members of the object `value` at `path`, parallel to `names`; refuses a value that is not
// an object, a member not in `names` ("<path>.<key>: unknown member") and a duplicate member.
Result<std::vector<std::optional<Element>>> members_of(Element value, std::string_view path,
                                                       std::span<const std::string_view> names);

// Reads a string value ("<path>: expected a string, found an array").
Result<std::string_view> string_of(Element value, std::string_view path);

// {"role":N} | {"selector":N} | {"literal":S}: the shape only; check_param checks the name.
Result<Target> parse_target(Element value, std::string_view path);

// parse_call on an already parsed (and parse_strict-checked) call object.
Result<Call> parse_call_value(Element value, const std::vector<CallSpec>& catalog,
                              const Manifest& manifest, std::string_view json_path);

// Whether `text` contains a control character: C0, DEL or C1 (U+0080..U+009F). `allowed` lists
// C0 characters that are accepted anyway (e.g. "\n\t").
bool has_control(std::string_view text, std::string_view allowed = {});

}  // namespace aura::scenario::json
