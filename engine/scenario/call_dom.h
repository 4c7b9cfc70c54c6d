// The call validator's entry points on the strict reader (engine/json), shared with the
// InterventionIR validator (engine/intervention), and the message helpers they word refusals
// with. Implemented in call.cc. Not a contract: engine/scenario/call.h is.
//
// Below them, the simdjson DOM helpers the call and IR validators used before the strict reader
// (call_dom.cc). Only parsers that have not moved onto engine/json yet use them (the manifest's
// type names, workers/journal, workers/filetree); delete them with the last user.
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/json/json_reader.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"

namespace aura::scenario::call_reader {

// ---- Message helpers, and the depth scan that runs before the reader (call_dom.cc) ----

// Text as it may appear in a message: printable ASCII kept, other bytes as \xHH, cut after 64
// bytes with "...". quoted() adds double quotes.
std::string shown(std::string_view text);
std::string quoted(std::string_view text);

// "<base>.<member>" ("<member>" when base is empty) and "<base>[<index>]".
std::string member_path(std::string_view base, std::string_view member);
std::string index_path(std::string_view base, size_t index);

// Whether `text` contains a control character: C0, DEL or C1 (U+0080..U+009F). `allowed` lists
// C0 characters that are accepted anyway (e.g. "\n\t").
bool has_control(std::string_view text, std::string_view allowed = {});

// Scans `json` as bytes, without parsing, and refuses nesting of more than `max_depth` arrays and
// objects, naming the path of the first container too deep ("$.actions[0].params.path[0]:
// nesting deeper than 16 levels"). Linear time, memory bounded by max_depth: a document of
// 100000 '[' is refused before a parser (or a recursive walk) sees it. The manifest, the
// InterventionIR and a call alone run it before the strict reader, whose own depth bound can
// name the path only of what its parser accepted (1024 levels).
Status check_depth(std::string_view json, size_t max_depth, std::string_view root_path);

// ---- The call validator on the strict reader ----
// Each refusal is the reader's error at the value's path (the reader's Limits decide how a path
// is written: "$.actions[1].params.path" in an InterventionIR, "params.path" in a call alone).

// How a call given alone is read: `where` names it in every message ("probe: params.path: ...";
// nothing when empty). kMaxCallJsonBytes, 8 levels, strings no longer than a string parameter
// may be; a call holds no array and at most one member per parameter of its catalog entry.
::aura::json::Limits call_limits(std::string_view where);

// {"role":N} | {"selector":N} | {"literal":S}: the shape only; check_param checks the name.
Result<Target> parse_target(const ::aura::json::Value& value);

// parse_call on a call object read by the strict reader (alone, or inside a larger document).
Result<Call> parse_call_value(const ::aura::json::Value& value,
                              const std::vector<CallSpec>& catalog, const Manifest& manifest);

// check_param, the refusal named at `at` (the value the parameter was read from).
Status check_param_at(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest,
                      const ::aura::json::Value& at);

// ---- simdjson DOM helpers (call_dom.cc), for the parsers not yet on engine/json ----

using Element = simdjson::dom::element;

// "an object", "an array", "a string", "an integer", "a number", "a boolean", "null".
std::string_view type_name(Element value);

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

}  // namespace aura::scenario::call_reader
