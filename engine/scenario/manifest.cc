#include "engine/scenario/manifest.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <span>
#include <utility>

#include "engine/json/json_reader.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"
#include "engine/scenario/capability_ids.h"
#include "engine/scenario/manifest_format.h"

namespace aura::scenario {
namespace {

namespace mf = manifest_format;
// The strict reader (engine/json) parses the document and refuses duplicates at any depth;
// call_reader:: here is the scenario layer's message helpers (quoted values, type names).
namespace strict = ::aura::json;
using strict::Array;
using strict::Object;
using strict::Value;
using Names = std::span<const std::string_view>;

constexpr std::string_view kFile = "manifest.json: ";

// [a-z][a-z0-9<extra>]{0,max_bytes-1}
bool is_word(std::string_view s, size_t max_bytes, std::string_view extra) {
  if (s.empty() || s.size() > max_bytes || s[0] < 'a' || s[0] > 'z') return false;
  return std::all_of(s.begin(), s.end(), [&](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           extra.find(c) != std::string_view::npos;
  });
}

std::string word_pattern(size_t max_bytes, std::string_view extra) {
  return "[a-z][a-z0-9" + std::string(extra) + "]{0," + std::to_string(max_bytes - 1) + "}";
}

// [a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+, at most kMaxCallNameBytes.
bool is_call_name_text(std::string_view s) {
  if (s.size() > mf::kMaxCallNameBytes) return false;
  size_t segments = 0;
  for (size_t start = 0;; ++segments) {
    const size_t dot = s.find('.', start);
    const std::string_view segment =
        s.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (!is_word(segment, mf::kMaxCallNameBytes, "_")) return false;
    if (dot == std::string_view::npos) return segments >= 1;
    start = dot + 1;
  }
}

// ---- Values ----
// Each reads one value the reader has already checked for duplicates and nesting, and words its
// refusal as the manifest's errors are worded ("expected an integer, found a number").

std::string found(const Value& v) { return std::string(call_reader::type_name(v.element())); }

Result<std::string_view> string_of(const Value& v) {
  std::string_view s;
  if (v.element().get_string().get(s) != simdjson::SUCCESS) {
    return v.error("expected a string, found " + found(v));
  }
  return s;
}

Result<std::string> text_of(const Value& v, size_t min_bytes, size_t max_bytes,
                            std::string_view allowed_controls = {}) {
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, string_of(v));
  if (s.size() < min_bytes || s.size() > max_bytes) {
    return v.error(std::to_string(s.size()) + " bytes; must be " + std::to_string(min_bytes) +
                   ".." + std::to_string(max_bytes));
  }
  if (call_reader::has_control(s, allowed_controls)) {
    return v.error(allowed_controls.empty()
                       ? "contains a control character"
                       : "contains a control character other than newline and tab");
  }
  return std::string(s);
}

Result<std::string> word_of(const Value& v, size_t max_bytes, std::string_view extra) {
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, string_of(v));
  if (!is_word(s, max_bytes, extra)) {
    return v.error(call_reader::quoted(s) + " must match " + word_pattern(max_bytes, extra));
  }
  return std::string(s);
}

Result<int64_t> integer_of(const Value& v, int64_t lo, int64_t hi) {
  const auto type = v.element().type();
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (type == simdjson::dom::element_type::UINT64) return v.error("out of range " + range);
  int64_t n = 0;
  if (type != simdjson::dom::element_type::INT64 ||
      v.element().get_int64().get(n) != simdjson::SUCCESS) {
    return v.error("expected an integer, found " + found(v));
  }
  if (n < lo || n > hi) return v.error(std::to_string(n) + " is out of range " + range);
  return n;
}

Result<bool> bool_of(const Value& v) {
  bool b = false;
  if (v.element().get_bool().get(b) != simdjson::SUCCESS) {
    return v.error("expected a boolean, found " + found(v));
  }
  return b;
}

Result<Array> array_of(const Value& v, size_t min_entries, size_t max_entries) {
  if (v.element().type() != simdjson::dom::element_type::ARRAY) {
    return v.error("expected an array, found " + found(v));
  }
  Array a;
  AURA_ASSIGN_OR_RETURN(a, v.as_array());
  const size_t n = a.size();
  if (n > max_entries) {
    return v.error(std::to_string(n) + " entries, more than the limit of " +
                   std::to_string(max_entries));
  }
  if (n < min_entries) {
    return v.error(std::to_string(n) + " entries; needs at least " + std::to_string(min_entries));
  }
  return a;
}

Result<Object> object_of(const Value& v) {
  if (v.element().type() != simdjson::dom::element_type::OBJECT) {
    return v.error("expected an object, found " + found(v));
  }
  return v.as_object();
}

// An object whose members are all in `allowed`: the first other member is refused before any
// member is read, so an unknown member is named even when a known one is also wrong.
Result<Object> object_with(const Value& v, Names allowed) {
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(v));
  for (std::string_view name : o.names()) {
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      return o.error(name, "unknown member");
    }
  }
  return o;
}

// An object value kept as minified JSON text.
Result<std::string> object_text_of(const Value& v, size_t max_bytes) {
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(v));
  std::string text = v.minified();
  if (text.size() > max_bytes) {
    return v.error(std::to_string(text.size()) + " bytes minified, more than the limit of " +
                   std::to_string(max_bytes));
  }
  return text;
}

// ---- Members ----
// A required member missing is "missing (required)"; an optional one absent takes its default.

Result<Value> required(const Object& o, std::string_view name) {
  if (!o.has(name)) return o.error(name, "missing (required)");
  return o.value(name);
}

Result<std::string> required_text(const Object& o, std::string_view name, size_t min_bytes,
                                  size_t max_bytes, std::string_view allowed_controls = {}) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  return text_of(v, min_bytes, max_bytes, allowed_controls);
}

// Absent: "".
Result<std::string> optional_text(const Object& o, std::string_view name, size_t max_bytes) {
  auto v = o.optional_value(name);
  if (!v) return std::string();
  return text_of(*v, 0, max_bytes);
}

Result<std::string> required_word(const Object& o, std::string_view name, size_t max_bytes,
                                  std::string_view extra) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  return word_of(v, max_bytes, extra);
}

Result<std::string> required_call_name(const Object& o, std::string_view name) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, string_of(v));
  if (!is_call_name_text(s)) {
    return v.error(call_reader::quoted(s) +
                   " is not a call name ([a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)+, at most " +
                   std::to_string(mf::kMaxCallNameBytes) + " bytes)");
  }
  return std::string(s);
}

Result<int64_t> required_integer(const Object& o, std::string_view name, int64_t lo, int64_t hi) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  return integer_of(v, lo, hi);
}

Result<int64_t> optional_integer(const Object& o, std::string_view name, int64_t lo, int64_t hi,
                                 int64_t dflt) {
  auto v = o.optional_value(name);
  if (!v) return dflt;
  return integer_of(*v, lo, hi);
}

Result<bool> optional_bool(const Object& o, std::string_view name, bool dflt) {
  auto v = o.optional_value(name);
  if (!v) return dflt;
  return bool_of(*v);
}

Result<Array> required_array(const Object& o, std::string_view name, size_t min_entries,
                             size_t max_entries) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  return array_of(v, min_entries, max_entries);
}

// One of `choices` (a string); returns its index.
Result<size_t> required_choice(const Object& o, std::string_view name, Names choices) {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, required(o, name));
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, string_of(v));
  for (size_t i = 0; i < choices.size(); ++i) {
    if (s == choices[i]) return i;
  }
  std::string list;
  for (std::string_view c : choices) list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
  return v.error(call_reader::quoted(s) + " is not one of " + list);
}

// What a list entry is keyed by: the member that must be unique, and its value.
template <class T>
using KeyOf = const std::string& (*)(const T&);

// Reads the array member `name` of `top`: min_entries..max_entries objects, each with only the
// members `members`, each parsed by `parse(Object) -> Result<T>`; `key_member` (read by `key`)
// must differ between entries. An absent member is an empty list when min_entries is 0.
template <class T, class Parse>
Result<std::vector<T>> parse_list(const Object& top, std::string_view name, size_t min_entries,
                                  size_t max_entries, Names members, std::string_view key_member,
                                  KeyOf<T> key, Parse parse) {
  std::vector<T> out;
  if (min_entries == 0 && !top.has(name)) return out;
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, required_array(top, name, min_entries, max_entries));
  for (const Value& e : entries.elements()) {
    Object o;
    AURA_ASSIGN_OR_RETURN(o, object_with(e, members));
    T item;
    AURA_ASSIGN_OR_RETURN(item, parse(o));
    for (size_t i = 0; i < out.size(); ++i) {
      if (key(out[i]) == key(item)) {
        return o.error(key_member, std::string(key_member) + " " + call_reader::quoted(key(item)) +
                                       " is already used by " +
                                       call_reader::index_path(entries.path(), i));
      }
    }
    out.push_back(std::move(item));
  }
  return out;
}

// ---- Requirements ----

// The list member `name` of "requires" (absent: empty unless `required_member`): capability ids
// of the panel, each once, none already in `required`.
Status parse_capability_list(const Object& o, std::string_view name, bool required_member,
                             const std::vector<std::string>& required,
                             std::vector<std::string>& out) {
  if (!required_member && !o.has(name)) return Status::ok();
  Array list;
  AURA_ASSIGN_OR_RETURN(list, required_array(o, name, 0, mf::kMaxRequiredCapabilities));
  for (const Value& e : list.elements()) {
    std::string_view id;
    AURA_ASSIGN_OR_RETURN(id, string_of(e));
    if (!is_capability_id(id)) {
      return e.error(call_reader::quoted(id) +
                     " is not a capability the panel measures (docs/CAPABILITIES.md)");
    }
    if (std::find(out.begin(), out.end(), id) != out.end()) {
      return e.error(call_reader::quoted(id) + " is listed twice");
    }
    if (std::find(required.begin(), required.end(), id) != required.end()) {
      return e.error(call_reader::quoted(id) + " is also required");
    }
    out.emplace_back(id);
  }
  return Status::ok();
}

Result<std::optional<Requirements>> parse_requires(const Object& top) {
  static constexpr std::array<std::string_view, 2> kMembers = {"capabilities", "optional"};
  auto value = top.optional_value("requires");
  if (!value) return std::optional<Requirements>();
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_with(*value, kMembers));
  Requirements r;
  AURA_RETURN_IF_ERROR(parse_capability_list(o, "capabilities", true, {}, r.capabilities));
  AURA_RETURN_IF_ERROR(parse_capability_list(o, "optional", false, r.capabilities, r.optional));
  return std::optional<Requirements>(std::move(r));
}

// ---- Parameter schemas ----

constexpr std::array<std::string_view, 6> kParamTypes = {"string", "integer", "boolean",
                                                         "path",   "mode",    "target"};
constexpr std::array<ParamType, 6> kParamTypeValues = {ParamType::kString,  ParamType::kInteger,
                                                       ParamType::kBoolean, ParamType::kPath,
                                                       ParamType::kMode,    ParamType::kTarget};

// The members each type takes: the three common ones first.
Names param_members(ParamType type) {
  static constexpr std::array<std::string_view, 6> kString = {
      "type", "required", "description", "min_bytes", "max_bytes", "enum"};
  static constexpr std::array<std::string_view, 7> kPath = {
      "type", "required", "description", "min_bytes", "max_bytes", "prefixes", "excludes"};
  static constexpr std::array<std::string_view, 5> kInteger = {"type", "required", "description",
                                                               "min", "max"};
  static constexpr std::array<std::string_view, 3> kBoolean = {"type", "required", "description"};
  static constexpr std::array<std::string_view, 4> kMode = {"type", "required", "description",
                                                            "mode_mask"};
  static constexpr std::array<std::string_view, 6> kTarget = {
      "type", "required", "description", "target_kind", "allow_literal", "max_literal_bytes"};
  switch (type) {
    case ParamType::kString:
      return kString;
    case ParamType::kPath:
      return kPath;
    case ParamType::kInteger:
      return kInteger;
    case ParamType::kBoolean:
      return kBoolean;
    case ParamType::kMode:
      return kMode;
    case ParamType::kTarget:
      return kTarget;
  }
  return kBoolean;
}

// A prefix is "/" or a normalised absolute path followed by '/'.
bool is_path_prefix(std::string_view p) {
  if (p == "/") return true;
  return p.size() >= 2 && p.back() == '/' && is_normalised_absolute_path(p.substr(0, p.size() - 1));
}

Status parse_byte_bounds(const Object& o, ParamSchema& p, int64_t min_floor, int64_t max_limit) {
  AURA_ASSIGN_OR_RETURN(p.max_bytes, optional_integer(o, "max_bytes", 1, max_limit, p.max_bytes));
  AURA_ASSIGN_OR_RETURN(p.min_bytes,
                        optional_integer(o, "min_bytes", min_floor, max_limit, p.min_bytes));
  if (p.min_bytes > p.max_bytes) {
    return o.error("min_bytes", std::to_string(p.min_bytes) + " is more than max_bytes " +
                                    std::to_string(p.max_bytes));
  }
  return Status::ok();
}

Status parse_enum(const Object& o, ParamSchema& p) {
  auto v = o.optional_value("enum");
  if (!v) return Status::ok();
  Array values;
  AURA_ASSIGN_OR_RETURN(values, array_of(*v, 1, mf::kMaxEnumValues));
  for (const Value& e : values.elements()) {
    std::string value;
    AURA_ASSIGN_OR_RETURN(value, text_of(e, p.min_bytes, p.max_bytes));
    if (std::find(p.enum_values.begin(), p.enum_values.end(), value) != p.enum_values.end()) {
      return e.error(call_reader::quoted(value) + " is listed twice");
    }
    p.enum_values.push_back(std::move(value));
  }
  return Status::ok();
}

// `member` ("prefixes", required, or "excludes", optional) into `out`.
Status parse_prefixes(const Object& o, ParamSchema& p, std::string_view member,
                      std::vector<std::string>& out) {
  Array prefixes;
  if (member == "excludes") {
    auto v = o.optional_value(member);
    if (!v) return Status::ok();
    AURA_ASSIGN_OR_RETURN(prefixes, array_of(*v, 1, mf::kMaxPrefixes));
  } else {
    AURA_ASSIGN_OR_RETURN(prefixes, required_array(o, member, 1, mf::kMaxPrefixes));
  }
  for (const Value& e : prefixes.elements()) {
    std::string prefix;
    AURA_ASSIGN_OR_RETURN(prefix, text_of(e, 1, mf::kMaxPathBytes));
    if (!is_path_prefix(prefix)) {
      return e.error(call_reader::quoted(prefix) +
                     " must be absolute and end in '/' (normalised: no empty, . or .. component)");
    }
    if (prefix.size() >= p.max_bytes) {
      return e.error("no path under " + call_reader::quoted(prefix) + " fits max_bytes " +
                     std::to_string(p.max_bytes));
    }
    if (std::find(out.begin(), out.end(), prefix) != out.end()) {
      return e.error(call_reader::quoted(prefix) + " is listed twice");
    }
    out.push_back(std::move(prefix));
  }
  return Status::ok();
}

Status parse_mode_mask(const Object& o, ParamSchema& p) {
  auto v = o.optional_value("mode_mask");
  if (!v) return Status::ok();
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, string_of(*v));
  uint32_t bits = 0;
  bool octal = s.size() == 3 || s.size() == 4;
  for (char c : s) {
    if (c < '0' || c > '7') octal = false;
    bits = bits * 8 + static_cast<uint32_t>(c - '0');
  }
  if (!octal) return v->error(call_reader::quoted(s) + " is not 3 or 4 octal digits");
  p.mode_mask = bits & mf::kModeBits;
  return Status::ok();
}

Status parse_target_param(const Object& o, ParamSchema& p, const std::vector<TargetTerm>& targets) {
  AURA_ASSIGN_OR_RETURN(p.target_kind,
                        required_word(o, "target_kind", mf::kMaxTargetKindBytes, "_-"));
  if (std::none_of(targets.begin(), targets.end(),
                   [&](const TargetTerm& t) { return t.kind == p.target_kind; })) {
    return o.error("target_kind", "no target term has kind " + call_reader::quoted(p.target_kind));
  }
  AURA_ASSIGN_OR_RETURN(p.allow_literal, optional_bool(o, "allow_literal", p.allow_literal));
  AURA_ASSIGN_OR_RETURN(
      p.max_literal_bytes,
      optional_integer(o, "max_literal_bytes", 1, mf::kMaxLiteralBytes, p.max_literal_bytes));
  return Status::ok();
}

Result<ParamSchema> parse_param(std::string_view name, const Value& value,
                                const std::vector<TargetTerm>& targets) {
  ParamSchema p;
  if (!is_word(name, mf::kMaxParamNameBytes, "_")) {
    return value.error("parameter name must match " + word_pattern(mf::kMaxParamNameBytes, "_"));
  }
  p.name = std::string(name);
  // The type decides which members are allowed, so it is read first.
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_of(value));
  Value type_value;
  AURA_ASSIGN_OR_RETURN(type_value, required(o, "type"));
  std::string_view type_text;
  AURA_ASSIGN_OR_RETURN(type_text, string_of(type_value));
  const auto it = std::find(kParamTypes.begin(), kParamTypes.end(), type_text);
  if (it == kParamTypes.end()) {
    return type_value.error(call_reader::quoted(type_text) +
                            " is not one of \"string\", \"integer\", \"boolean\", \"path\", "
                            "\"mode\", \"target\"");
  }
  p.type = kParamTypeValues[static_cast<size_t>(it - kParamTypes.begin())];
  // A member another type takes gets a clearer message than "unknown member".
  const Names allowed = param_members(p.type);
  for (std::string_view member : o.names()) {
    if (std::find(allowed.begin(), allowed.end(), member) != allowed.end()) continue;
    for (ParamType other : kParamTypeValues) {
      const Names members = param_members(other);
      if (std::find(members.begin(), members.end(), member) != members.end()) {
        return o.error(member, "not a member of a " + std::string(type_text) + " parameter");
      }
    }
  }
  AURA_ASSIGN_OR_RETURN(o, object_with(value, allowed));
  AURA_ASSIGN_OR_RETURN(p.required, optional_bool(o, "required", true));
  AURA_ASSIGN_OR_RETURN(p.description, optional_text(o, "description", mf::kMaxDescriptionBytes));
  switch (p.type) {
    case ParamType::kString:
      AURA_RETURN_IF_ERROR(parse_byte_bounds(o, p, 0, mf::kMaxStringBytes));
      AURA_RETURN_IF_ERROR(parse_enum(o, p));
      break;
    case ParamType::kPath:
      AURA_RETURN_IF_ERROR(parse_byte_bounds(o, p, 1, mf::kMaxPathBytes));
      AURA_RETURN_IF_ERROR(parse_prefixes(o, p, "prefixes", p.path_prefixes));
      AURA_RETURN_IF_ERROR(parse_prefixes(o, p, "excludes", p.path_excludes));
      break;
    case ParamType::kInteger:
      AURA_ASSIGN_OR_RETURN(p.min, required_integer(o, "min", INT64_MIN, INT64_MAX));
      AURA_ASSIGN_OR_RETURN(p.max, required_integer(o, "max", INT64_MIN, INT64_MAX));
      if (p.min > p.max) {
        return o.error("min", std::to_string(p.min) + " is more than max " + std::to_string(p.max));
      }
      break;
    case ParamType::kBoolean:
      break;
    case ParamType::kMode:
      AURA_RETURN_IF_ERROR(parse_mode_mask(o, p));
      break;
    case ParamType::kTarget:
      AURA_RETURN_IF_ERROR(parse_target_param(o, p, targets));
      break;
  }
  return p;
}

// ---- Catalogs ----

enum class Catalog { kProbes, kActions };

Result<CallSpec> parse_call_spec(const Object& o, Catalog catalog,
                                 const std::vector<TargetTerm>& targets) {
  CallSpec spec;
  AURA_ASSIGN_OR_RETURN(spec.name, required_call_name(o, "call"));
  AURA_ASSIGN_OR_RETURN(spec.summary, required_text(o, "summary", 1, mf::kMaxSummaryBytes));
  if (catalog == Catalog::kProbes) {
    AURA_ASSIGN_OR_RETURN(spec.cost, optional_integer(o, "cost", 1, mf::kMaxProbeCost, spec.cost));
    AURA_ASSIGN_OR_RETURN(spec.max_output_bytes,
                          optional_integer(o, "max_output_bytes", 1, mf::kMaxProbeOutputBytes,
                                           static_cast<int64_t>(spec.max_output_bytes)));
  }
  if (auto value = o.optional_value("params")) {
    Object params;
    AURA_ASSIGN_OR_RETURN(params, object_of(*value));
    if (params.size() > mf::kMaxParams) {
      return params.error("", std::to_string(params.size()) +
                                  " parameters, more than the limit of " +
                                  std::to_string(mf::kMaxParams));
    }
    // The reader has refused a parameter declared twice (a duplicate member).
    for (std::string_view name : params.names()) {
      Value schema;
      AURA_ASSIGN_OR_RETURN(schema, params.value(name));
      ParamSchema p;
      AURA_ASSIGN_OR_RETURN(p, parse_param(name, schema, targets));
      spec.params.push_back(std::move(p));
    }
  }
  return spec;
}

Result<std::vector<CallSpec>> parse_catalog(const Object& top, Catalog catalog,
                                            const std::vector<TargetTerm>& targets) {
  static constexpr std::array<std::string_view, 5> kProbe = {"call", "summary", "params", "cost",
                                                             "max_output_bytes"};
  static constexpr std::array<std::string_view, 3> kAction = {"call", "summary", "params"};
  const bool probes = catalog == Catalog::kProbes;
  return parse_list<CallSpec>(
      top, probes ? "probes" : "actions", 1, probes ? mf::kMaxProbes : mf::kMaxActions,
      probes ? Names(kProbe) : Names(kAction), "call",
      [](const CallSpec& c) -> const std::string& { return c.name; },
      [&](const Object& o) { return parse_call_spec(o, catalog, targets); });
}

// ---- Hypotheses, targets, worlds ----

Result<std::vector<Hypothesis>> parse_hypotheses(const Object& top) {
  static constexpr std::array<std::string_view, 2> kMembers = {"id", "text"};
  return parse_list<Hypothesis>(
      top, "hypotheses", mf::kMinHypotheses, mf::kMaxHypotheses, kMembers, "id",
      [](const Hypothesis& h) -> const std::string& { return h.id; },
      [](const Object& o) -> Result<Hypothesis> {
        Hypothesis h;
        AURA_ASSIGN_OR_RETURN(h.id, required_word(o, "id", mf::kMaxHypothesisIdBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(h.text, required_text(o, "text", 1, mf::kMaxHypothesisTextBytes));
        return h;
      });
}

Result<std::vector<TargetTerm>> parse_targets(const Object& top) {
  static constexpr std::array<std::string_view, 5> kMembers = {"name", "type", "kind",
                                                               "description", "max_matches"};
  static constexpr std::array<std::string_view, 2> kTypes = {"role", "selector"};
  return parse_list<TargetTerm>(
      top, "targets", 0, mf::kMaxTargets, kMembers, "name",
      [](const TargetTerm& t) -> const std::string& { return t.name; },
      [](const Object& o) -> Result<TargetTerm> {
        TargetTerm t;
        AURA_ASSIGN_OR_RETURN(t.name, required_word(o, "name", mf::kMaxTargetNameBytes, "_-"));
        size_t type = 0;
        AURA_ASSIGN_OR_RETURN(type, required_choice(o, "type", kTypes));
        t.selector = type == 1;
        AURA_ASSIGN_OR_RETURN(t.kind, required_word(o, "kind", mf::kMaxTargetKindBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(t.description,
                              required_text(o, "description", 1, mf::kMaxDescriptionBytes));
        AURA_ASSIGN_OR_RETURN(
            t.max_matches, optional_integer(o, "max_matches", 1, mf::kMaxMatches, t.max_matches));
        return t;
      });
}

constexpr std::array<std::string_view, 3> kRoleNames = {"primary", "twin", "control"};
constexpr std::array<WorldRole, 3> kRoles = {WorldRole::kPrimary, WorldRole::kTwin,
                                             WorldRole::kControl};

Result<std::vector<WorldSpec>> parse_worlds(const Object& top) {
  static constexpr std::array<std::string_view, 4> kMembers = {"id", "role", "description",
                                                               "build"};
  std::vector<WorldSpec> out;
  AURA_ASSIGN_OR_RETURN(
      out, parse_list<WorldSpec>(
               top, "worlds", mf::kMinWorlds, mf::kMaxWorlds, kMembers, "id",
               [](const WorldSpec& w) -> const std::string& { return w.id; },
               [](const Object& o) -> Result<WorldSpec> {
                 WorldSpec w;
                 AURA_ASSIGN_OR_RETURN(w.id, required_word(o, "id", mf::kMaxWorldIdBytes, "_-"));
                 size_t role = 0;
                 AURA_ASSIGN_OR_RETURN(role, required_choice(o, "role", kRoleNames));
                 w.role = kRoles[role];
                 AURA_ASSIGN_OR_RETURN(w.description,
                                       optional_text(o, "description", mf::kMaxDescriptionBytes));
                 Value build;
                 AURA_ASSIGN_OR_RETURN(build, required(o, "build"));
                 AURA_ASSIGN_OR_RETURN(w.build_json, object_text_of(build, mf::kMaxBuildBytes));
                 return w;
               }));
  for (size_t r = 0; r < kRoles.size(); ++r) {
    const auto n = std::count_if(out.begin(), out.end(),
                                 [&](const WorldSpec& w) { return w.role == kRoles[r]; });
    const bool twin = kRoles[r] == WorldRole::kTwin;
    if (twin ? n == 0 : n != 1) {
      return top.error("worlds", std::string(twin ? "needs at least one" : "needs exactly one") +
                                     " world with role \"" + std::string(kRoleNames[r]) +
                                     "\" (found " + std::to_string(n) + ")");
    }
  }
  return out;
}

// ---- Checks ----

Result<std::vector<WorldRole>> parse_roles(const Object& o) {
  auto v = o.optional_value("roles");
  if (!v) return std::vector<WorldRole>(kRoles.begin(), kRoles.end());
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, array_of(*v, 1, kRoles.size()));
  std::vector<WorldRole> out;
  for (const Value& e : entries.elements()) {
    std::string_view s;
    AURA_ASSIGN_OR_RETURN(s, string_of(e));
    const auto it = std::find(kRoleNames.begin(), kRoleNames.end(), s);
    if (it == kRoleNames.end()) {
      return e.error(call_reader::quoted(s) + " is not a world role (primary, twin, control)");
    }
    const WorldRole role = kRoles[static_cast<size_t>(it - kRoleNames.begin())];
    if (std::find(out.begin(), out.end(), role) != out.end()) {
      return e.error(call_reader::quoted(s) + " is listed twice");
    }
    out.push_back(role);
  }
  return out;
}

// ---- Policies ----

// The paths a policy's parameters name ("path", and "paths" separated by one space).
std::vector<std::string_view> policy_paths(const Object& params) {
  std::vector<std::string_view> out;
  for (std::string_view member : {"path", "paths"}) {
    auto v = params.optional_value(member);
    if (!v) continue;
    auto text = v->as_string();
    if (!text.ok()) continue;  // the driver refuses a path that is no string
    for (size_t at = 0; at < text->size();) {
      const size_t end = std::min(text->find(' ', at), text->size());
      if (end > at) out.push_back(text->substr(at, end - at));
      at = end + 1;
    }
  }
  return out;
}

Result<std::vector<Policy>> parse_policies(const Object& top) {
  static constexpr std::array<std::string_view, 3> kMembers = {"name", "description", "params"};
  std::vector<std::pair<std::string, std::string>> stated;  // path, policy
  return parse_list<Policy>(
      top, "policies", 0, mf::kMaxPolicies, kMembers, "name",
      [](const Policy& p) -> const std::string& { return p.name; },
      [&](const Object& o) -> Result<Policy> {
        Policy p;
        AURA_ASSIGN_OR_RETURN(p.name, required_word(o, "name", mf::kMaxPolicyNameBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(p.description,
                              required_text(o, "description", 1, mf::kMaxDescriptionBytes));
        Value v;
        AURA_ASSIGN_OR_RETURN(v, required(o, "params"));
        AURA_ASSIGN_OR_RETURN(p.params_json, object_text_of(v, mf::kMaxCheckParamsBytes));
        Object params;
        AURA_ASSIGN_OR_RETURN(params, object_of(v));
        if (params.size() == 0 || params.size() > mf::kMaxPolicyParams)
          return v.error("1.." + std::to_string(mf::kMaxPolicyParams) + " members");
        for (std::string_view name : params.names()) {
          if (!is_word(name, mf::kMaxParamNameBytes, "_"))
            return v.error(call_reader::quoted(name) + " must match " +
                           word_pattern(mf::kMaxParamNameBytes, "_"));
          p.param_names.emplace_back(name);
        }
        // One path, one policy: two policies stating the same path could say two things of it.
        for (std::string_view path : policy_paths(params)) {
          for (const auto& [seen, by] : stated) {
            if (seen == path)
              return v.error(call_reader::quoted(path) + " is also stated by policy " +
                             call_reader::quoted(by) + ": a path's policy is stated once");
          }
          stated.emplace_back(std::string(path), p.name);
        }
        return p;
      });
}

// ---- Checks ----

Result<CheckSpec> parse_check(const Object& o, const std::vector<Policy>& policies) {
  static constexpr std::array<std::string_view, 2> kKinds = {"postcondition", "invariant"};
  CheckSpec c;
  AURA_ASSIGN_OR_RETURN(c.id, required_word(o, "id", mf::kMaxCheckIdBytes, "_.-"));
  if (c.id.starts_with(mf::kReservedCheckPrefix)) {
    return o.error(
        "id", call_reader::quoted(c.id) + " is reserved: ids under \"world.\" are the gate's own");
  }
  size_t kind = 0;
  AURA_ASSIGN_OR_RETURN(kind, required_choice(o, "kind", kKinds));
  c.kind = kind == 0 ? CheckKind::kPostcondition : CheckKind::kInvariant;
  AURA_ASSIGN_OR_RETURN(c.description, optional_text(o, "description", mf::kMaxDescriptionBytes));
  AURA_ASSIGN_OR_RETURN(c.call, required_call_name(o, "call"));
  std::string own = "{}";
  std::vector<std::string_view> own_names;
  if (auto params = o.optional_value("params")) {
    AURA_ASSIGN_OR_RETURN(own, object_text_of(*params, mf::kMaxCheckParamsBytes));
    Object p;
    AURA_ASSIGN_OR_RETURN(p, object_of(*params));
    own_names = p.names();
  }
  c.params_json = own;
  if (auto v = o.optional_value("policy")) {
    std::vector<Value> names;
    if (v->element().is_array()) {
      Array list;
      AURA_ASSIGN_OR_RETURN(list, array_of(*v, 1, mf::kMaxPolicies));
      names = list.elements();
    } else {
      names = {*v};
    }
    // The members stated so far, and by which policy ("" for the check's own).
    std::vector<std::pair<std::string_view, std::string_view>> stated;
    for (std::string_view name : own_names) stated.emplace_back(name, "");
    std::string members;
    for (const Value& n : names) {
      std::string name;
      AURA_ASSIGN_OR_RETURN(name, word_of(n, mf::kMaxPolicyNameBytes, "_-"));
      auto it = std::find_if(policies.begin(), policies.end(),
                             [&](const Policy& p) { return p.name == name; });
      if (it == policies.end())
        return n.error(call_reader::quoted(name) + " is not a policy of the package");
      if (std::find(c.policies.begin(), c.policies.end(), name) != c.policies.end())
        return n.error(call_reader::quoted(name) + " is listed twice");
      for (std::string_view member : it->param_names) {
        for (const auto& [seen, by] : stated) {
          if (seen != member) continue;
          return n.error(call_reader::quoted(member) + " is stated by policy " +
                         call_reader::quoted(name) + " and " +
                         (by.empty() ? std::string("by the check's params")
                                     : "by policy " + call_reader::quoted(by)) +
                         ": a policy is stated once, and its checks read it there");
        }
        stated.emplace_back(member, it->name);
      }
      // Each is a minified object: its members without the braces.
      const std::string_view inner =
          std::string_view(it->params_json).substr(1, it->params_json.size() - 2);
      members += (members.empty() ? "" : ",") + std::string(inner);
      c.policies.push_back(std::move(name));
    }
    const std::string_view own_inner = std::string_view(own).substr(1, own.size() - 2);
    c.params_json = "{" + members + (own_inner.empty() ? "" : ",") + std::string(own_inner) + "}";
    if (c.params_json.size() > mf::kMaxCheckParamsBytes)
      return o.error("params", "with its policies', more than " +
                                   std::to_string(mf::kMaxCheckParamsBytes) + " bytes");
  }
  AURA_ASSIGN_OR_RETURN(c.roles, parse_roles(o));
  return c;
}

Result<std::vector<CheckSpec>> parse_checks(const Object& top,
                                            const std::vector<Policy>& policies) {
  static constexpr std::array<std::string_view, 7> kMembers = {
      "id", "kind", "description", "call", "policy", "params", "roles"};
  std::vector<CheckSpec> out;
  AURA_ASSIGN_OR_RETURN(out, parse_list<CheckSpec>(
                                 top, "checks", 1, mf::kMaxChecks, kMembers, "id",
                                 [](const CheckSpec& c) -> const std::string& { return c.id; },
                                 [&](const Object& o) { return parse_check(o, policies); }));
  // Every world the gate examines must have a check, and "recovered" needs a postcondition on
  // the primary (docs/GATE.md, "Required checks").
  auto applies = [&](WorldRole role, bool postcondition_only) {
    return std::any_of(out.begin(), out.end(), [&](const CheckSpec& c) {
      return (!postcondition_only || c.kind == CheckKind::kPostcondition) &&
             std::find(c.roles.begin(), c.roles.end(), role) != c.roles.end();
    });
  };
  if (!applies(WorldRole::kPrimary, true)) {
    return top.error("checks", "needs at least one postcondition that applies to role \"primary\"");
  }
  for (size_t r = 0; r < kRoles.size(); ++r) {
    if (!applies(kRoles[r], false)) {
      return top.error("checks", "no check applies to role \"" + std::string(kRoleNames[r]) + "\"");
    }
  }
  // A policy no check reads is stated for nothing: likely a check that restates it instead.
  for (size_t i = 0; i < policies.size(); ++i) {
    if (std::none_of(out.begin(), out.end(), [&](const CheckSpec& c) {
          return std::find(c.policies.begin(), c.policies.end(), policies[i].name) !=
                 c.policies.end();
        }))
      return top.error("policies[" + std::to_string(i) + "]",
                       call_reader::quoted(policies[i].name) + " is read by no check");
  }
  return out;
}

// ---- Judge ----

// The probes and IR of a case, or of one of its variants.
Status parse_judge_body(const Object& o, JudgeCase& c) {
  if (auto probes = o.optional_value("probes")) {
    Array entries;
    AURA_ASSIGN_OR_RETURN(entries, array_of(*probes, 0, mf::kMaxJudgeProbes));
    for (const Value& e : entries.elements()) {
      std::string text;
      AURA_ASSIGN_OR_RETURN(text, object_text_of(e, mf::kMaxJudgeProbeBytes));
      c.probe_calls_json.push_back(std::move(text));
    }
  }
  Value ir;
  AURA_ASSIGN_OR_RETURN(ir, required(o, "ir"));
  AURA_ASSIGN_OR_RETURN(c.ir_json, object_text_of(ir, mf::kMaxJudgeIrBytes));
  return Status::ok();
}

Result<JudgeCase> parse_judge_case(const Object& judge, std::string_view name) {
  static constexpr std::array<std::string_view, 4> kMembers = {"expect", "probes", "ir",
                                                               "variants"};
  static constexpr std::array<std::string_view, 2> kVariant = {"probes", "ir"};
  static constexpr std::array<std::string_view, 1> kGold = {"VERIFIED"};
  static constexpr std::array<std::string_view, 2> kBad = {"RECOVERED_UNPROVEN", "NOT_RECOVERED"};
  Value value;
  AURA_ASSIGN_OR_RETURN(value, required(judge, name));
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_with(value, kMembers));
  JudgeCase c;
  c.name = std::string(name);
  size_t expect = 0;
  const bool gold = name == "gold";
  AURA_ASSIGN_OR_RETURN(expect, required_choice(o, "expect", gold ? Names(kGold) : Names(kBad)));
  c.expect_verdict = std::string(gold ? kGold[expect] : kBad[expect]);
  auto variants = o.optional_value("variants");
  if (!variants) {
    AURA_RETURN_IF_ERROR(parse_judge_body(o, c));
    return c;
  }
  if (o.has("probes") || o.has("ir")) {
    return variants->error("stands instead of probes and ir, not beside them");
  }
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, array_of(*variants, 1, 16));
  for (const Value& e : entries.elements()) {
    Object vo;
    AURA_ASSIGN_OR_RETURN(vo, object_with(e, kVariant));
    JudgeCase v;
    v.name = c.name;
    v.expect_verdict = c.expect_verdict;
    AURA_RETURN_IF_ERROR(parse_judge_body(vo, v));
    c.variants.push_back(std::move(v));
  }
  c.probe_calls_json = c.variants.front().probe_calls_json;
  c.ir_json = c.variants.front().ir_json;
  return c;
}

Result<std::vector<JudgeCase>> parse_judge(const Object& top) {
  static constexpr std::array<std::string_view, 2> kCases = {"gold", "bad"};
  Value value;
  AURA_ASSIGN_OR_RETURN(value, required(top, "judge"));
  Object judge;
  AURA_ASSIGN_OR_RETURN(judge, object_with(value, kCases));
  std::vector<JudgeCase> out;
  for (std::string_view name : kCases) {
    JudgeCase c;
    AURA_ASSIGN_OR_RETURN(c, parse_judge_case(judge, name));
    out.push_back(std::move(c));
  }
  return out;
}

// ---- The change surface ----

// A path pattern: absolute, normalised, printable ASCII without spaces; '*' anywhere in a
// component, "**" only as a whole component.
Status check_pattern(const Value& v, std::string_view p) {
  if (p.empty() || p.size() > mf::kMaxSurfacePatternBytes || p[0] != '/')
    return v.error("a path pattern is absolute and at most " +
                   std::to_string(mf::kMaxSurfacePatternBytes) + " bytes");
  if (p == "/") return Status::ok();
  for (char c : p) {
    if (c <= ' ' || c > '~') return v.error("a path pattern is printable ASCII without spaces");
  }
  size_t any_depth = 0;
  for (size_t at = 1; at <= p.size();) {
    const size_t end = std::min(p.find('/', at), p.size());
    const std::string_view part = p.substr(at, end - at);
    if (part.empty() || part == "." || part == "..")
      return v.error(call_reader::quoted(p) + " is not normalised");
    if (part != "**" && part.find("**") != std::string_view::npos)
      return v.error(call_reader::quoted(p) + ": \"**\" is only a whole component");
    any_depth += part == "**";
    at = end + 1;
  }
  // Matching backtracks over each "**": a few keep it linear in practice.
  if (any_depth > 2) return v.error(call_reader::quoted(p) + ": at most two \"**\" components");
  return Status::ok();
}

Result<std::vector<SurfaceRule>> parse_rules(const Object& o, std::string_view list, bool runtime) {
  static constexpr std::array<std::string_view, 4> kMembers = {"name", "description", "paths",
                                                               "what"};
  static constexpr std::array<std::string_view, 3> kRuntimeMembers = {"name", "description",
                                                                      "paths"};
  return parse_list<SurfaceRule>(
      o, list, 0, mf::kMaxSurfaceRules, runtime ? Names(kRuntimeMembers) : Names(kMembers), "name",
      [](const SurfaceRule& r) -> const std::string& { return r.name; },
      [&](const Object& r) -> Result<SurfaceRule> {
        SurfaceRule rule;
        AURA_ASSIGN_OR_RETURN(rule.name, required_word(r, "name", mf::kMaxSurfaceNameBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(rule.description,
                              required_text(r, "description", 1, mf::kMaxDescriptionBytes));
        Array paths;
        AURA_ASSIGN_OR_RETURN(paths, required_array(r, "paths", 1, mf::kMaxSurfacePaths));
        for (const Value& e : paths.elements()) {
          std::string_view p;
          AURA_ASSIGN_OR_RETURN(p, string_of(e));
          AURA_RETURN_IF_ERROR(check_pattern(e, p));
          rule.paths.emplace_back(p);
        }
        if (runtime) {
          rule.what.assign(std::begin(kChangeAttributes), std::end(kChangeAttributes));
          return rule;
        }
        Array what;
        AURA_ASSIGN_OR_RETURN(what, required_array(r, "what", 1, std::size(kChangeAttributes)));
        for (const Value& e : what.elements()) {
          std::string_view w;
          AURA_ASSIGN_OR_RETURN(w, string_of(e));
          if (std::find(std::begin(kChangeAttributes), std::end(kChangeAttributes), w) ==
              std::end(kChangeAttributes))
            return e.error(call_reader::quoted(w) +
                           " is not an attribute (create, remove, type, content, mode, owner, "
                           "group, links, xattrs)");
          if (std::find(rule.what.begin(), rule.what.end(), w) != rule.what.end())
            return e.error(call_reader::quoted(w) + " is listed twice");
          rule.what.emplace_back(w);
        }
        return rule;
      });
}

Result<std::optional<ChangeSurface>> parse_changes(const Object& top) {
  static constexpr std::array<std::string_view, 2> kMembers = {"fix", "runtime"};
  auto value = top.optional_value("changes");
  if (!value) return std::optional<ChangeSurface>();
  Object o;
  AURA_ASSIGN_OR_RETURN(o, object_with(*value, kMembers));
  ChangeSurface c;
  AURA_ASSIGN_OR_RETURN(c.fix, parse_rules(o, "fix", false));
  AURA_ASSIGN_OR_RETURN(c.runtime, parse_rules(o, "runtime", true));
  return std::optional<ChangeSurface>(std::move(c));
}

// ---- The document ----

Result<Manifest> parse_document(const Value& root) {
  static constexpr std::array<std::string_view, 19> kTop = {
      "schema",     "id",      "version",      "family",        "title",
      "briefing",   "driver",  "probe_budget", "allow_scripts", "requires",
      "hypotheses", "targets", "worlds",       "probes",        "actions",
      "policies",   "checks",  "judge",        "changes"};
  if (root.element().type() != simdjson::dom::element_type::OBJECT) {
    return root.error("expected a JSON object, found " + found(root));
  }
  Object top;
  AURA_ASSIGN_OR_RETURN(top, object_with(root, kTop));
  // The version comes first, so a reader can tell the schema before reading anything else.
  if (!top.has("schema")) return top.error("schema", "missing (required)");
  if (top.first_name() != "schema") return top.error("schema", "must be the first member");
  int64_t schema = 0;
  AURA_ASSIGN_OR_RETURN(schema, required_integer(top, "schema", INT64_MIN, INT64_MAX));
  if (schema != mf::kSchemaVersion) {
    return top.error("schema", std::to_string(schema) + " is not a supported schema (only " +
                                   std::to_string(mf::kSchemaVersion) + ")");
  }

  Manifest m;
  m.schema = static_cast<int>(schema);
  AURA_ASSIGN_OR_RETURN(m.id, required_text(top, "id", 1, package_format::kMaxIdBytes));
  if (!is_valid_package_id(m.id)) {
    return top.error("id", call_reader::quoted(m.id) + " must match [a-z0-9][a-z0-9._-]{0,63}");
  }
  AURA_ASSIGN_OR_RETURN(m.version,
                        required_text(top, "version", 1, package_format::kMaxVersionBytes));
  if (!is_valid_package_version(m.version)) {
    return top.error("version",
                     call_reader::quoted(m.version) + " must be 1..32 of [0-9A-Za-z.+-]");
  }
  AURA_ASSIGN_OR_RETURN(m.family, required_text(top, "family", 1, package_format::kMaxFamilyBytes));
  AURA_ASSIGN_OR_RETURN(m.title, required_text(top, "title", 1, package_format::kMaxTitleBytes));
  AURA_ASSIGN_OR_RETURN(m.briefing,
                        required_text(top, "briefing", 1, mf::kMaxBriefingBytes, "\n\t"));
  AURA_ASSIGN_OR_RETURN(m.driver, required_word(top, "driver", mf::kMaxDriverBytes, "_-"));
  AURA_ASSIGN_OR_RETURN(m.probe_budget,
                        optional_integer(top, "probe_budget", mf::kMinProbeBudget,
                                         mf::kMaxProbeBudget, mf::kDefaultProbeBudget));
  AURA_ASSIGN_OR_RETURN(m.allow_scripts, optional_bool(top, "allow_scripts", false));
  AURA_ASSIGN_OR_RETURN(m.requirements, parse_requires(top));
  AURA_ASSIGN_OR_RETURN(m.hypotheses, parse_hypotheses(top));
  AURA_ASSIGN_OR_RETURN(m.targets, parse_targets(top));
  AURA_ASSIGN_OR_RETURN(m.worlds, parse_worlds(top));
  AURA_ASSIGN_OR_RETURN(m.probes, parse_catalog(top, Catalog::kProbes, m.targets));
  AURA_ASSIGN_OR_RETURN(m.actions, parse_catalog(top, Catalog::kActions, m.targets));
  AURA_ASSIGN_OR_RETURN(m.policies, parse_policies(top));
  AURA_ASSIGN_OR_RETURN(m.checks, parse_checks(top, m.policies));
  AURA_ASSIGN_OR_RETURN(m.judge, parse_judge(top));
  AURA_ASSIGN_OR_RETURN(m.changes, parse_changes(top));
  return m;
}

// Matches pattern components [pi..] against path components [xi..].
bool match_parts(const std::vector<std::string_view>& pat, size_t pi,
                 const std::vector<std::string_view>& path, size_t xi) {
  if (pi == pat.size()) return xi == path.size();
  if (pat[pi] == "**") {
    for (size_t k = xi; k <= path.size(); ++k)
      if (match_parts(pat, pi + 1, path, k)) return true;
    return false;
  }
  if (xi == path.size()) return false;
  // '*' within one component: the usual backtracking wildcard.
  const std::string_view p = pat[pi], s = path[xi];
  size_t i = 0, j = 0, star = std::string_view::npos, mark = 0;
  while (j < s.size()) {
    if (i < p.size() && p[i] != '*' && p[i] == s[j]) {
      ++i;
      ++j;
    } else if (i < p.size() && p[i] == '*') {
      star = i++;
      mark = j;
    } else if (star != std::string_view::npos) {
      i = star + 1;
      j = ++mark;
    } else {
      return false;
    }
  }
  while (i < p.size() && p[i] == '*') ++i;
  return i == p.size() && match_parts(pat, pi + 1, path, xi + 1);
}

std::vector<std::string_view> components(std::string_view p) {
  std::vector<std::string_view> out;
  for (size_t at = 1; at < p.size();) {
    const size_t end = std::min(p.find('/', at), p.size());
    if (end > at) out.push_back(p.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

template <class T, class Pred>
const T* find_in(const std::vector<T>& items, Pred pred) {
  const auto it = std::find_if(items.begin(), items.end(), pred);
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

bool path_pattern_matches(std::string_view pattern, std::string_view path) {
  if (pattern.empty() || path.empty() || pattern[0] != '/' || path[0] != '/') return false;
  return match_parts(components(pattern), 0, components(path), 0);
}

std::string_view param_type_name(ParamType type) { return kParamTypes[static_cast<size_t>(type)]; }

std::string_view world_role_name(WorldRole role) {
  return kRoleNames[static_cast<size_t>(std::find(kRoles.begin(), kRoles.end(), role) -
                                        kRoles.begin())];
}

std::string_view check_kind_name(CheckKind kind) {
  return kind == CheckKind::kPostcondition ? "postcondition" : "invariant";
}

Result<Manifest> parse_manifest(std::string_view manifest_bytes) {
  const std::string file(kFile);
  if (manifest_bytes.size() > mf::kMaxManifestBytes) {
    return Status::invalid(file + std::to_string(manifest_bytes.size()) +
                           " bytes, more than the limit of " +
                           std::to_string(mf::kMaxManifestBytes));
  }
  // Nesting is checked on the raw bytes, before any parser (or recursive walk) sees them.
  if (Status deep = call_reader::check_depth(manifest_bytes, mf::kMaxDepth, ""); !deep.is_ok()) {
    return Status::invalid(file + deep.message());
  }
  // Every object's members and every array's elements are bounded by the document's size; the
  // schema's own bounds are checked member by member, each with its limit in the message.
  strict::Limits limits;
  limits.max_bytes = mf::kMaxManifestBytes;
  limits.max_depth = mf::kMaxDepth;
  limits.max_members = mf::kMaxManifestBytes;
  limits.max_elements = mf::kMaxManifestBytes;
  limits.max_string_bytes = mf::kMaxManifestBytes;
  limits.style = strict::PathStyle::kRelative;
  limits.prefix = file;
  strict::Reader reader(std::move(limits));
  auto root = reader.parse(manifest_bytes);
  if (!root.ok()) {
    // The reader says "not JSON (...)"; the manifest's documented wording is "not valid JSON".
    const std::string m = root.status().message();
    const std::string not_json = file + "not JSON (";
    if (m.starts_with(not_json)) {
      return Status::invalid(file + "not valid JSON (" + m.substr(not_json.size()));
    }
    return root.status();
  }
  return parse_document(*root);
}

const CallSpec* Manifest::find_probe(std::string_view name) const {
  return find_in(probes, [&](const CallSpec& c) { return c.name == name; });
}
const CallSpec* Manifest::find_action(std::string_view name) const {
  return find_in(actions, [&](const CallSpec& c) { return c.name == name; });
}
const Policy* Manifest::find_policy(std::string_view name) const {
  return find_in(policies, [&](const Policy& p) { return p.name == name; });
}

const CheckSpec* Manifest::find_check(std::string_view id) const {
  return find_in(checks, [&](const CheckSpec& c) { return c.id == id; });
}
const TargetTerm* Manifest::find_target(std::string_view name) const {
  return find_in(targets, [&](const TargetTerm& t) { return t.name == name; });
}
const WorldSpec* Manifest::primary() const {
  return find_in(worlds, [](const WorldSpec& w) { return w.role == WorldRole::kPrimary; });
}
const WorldSpec* Manifest::control() const {
  return find_in(worlds, [](const WorldSpec& w) { return w.role == WorldRole::kControl; });
}
std::vector<const WorldSpec*> Manifest::twins() const {
  std::vector<const WorldSpec*> out;
  for (const WorldSpec& w : worlds) {
    if (w.role == WorldRole::kTwin) out.push_back(&w);
  }
  return out;
}
const JudgeCase* Manifest::find_judge(std::string_view name) const {
  return find_in(judge, [&](const JudgeCase& c) { return c.name == name; });
}

}  // namespace aura::scenario
