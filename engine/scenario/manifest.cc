#include "engine/scenario/manifest.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <span>
#include <utility>

#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/call_dom.h"
#include "engine/scenario/manifest_format.h"

// `target = value of expr` (a Result), or return its status.
namespace aura::scenario {
namespace {

namespace mf = manifest_format;
using json::Element;
using Array = simdjson::dom::array;

Status invalid_at(std::string_view path, std::string_view what) {
  return Status::invalid(std::string(path) + ": " + std::string(what));
}

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

Result<std::string> text_of(Element v, std::string_view path, size_t min_bytes, size_t max_bytes,
                            std::string_view allowed_controls = {}) {
  auto s = json::string_of(v, path);
  if (!s.ok()) return s.status();
  if (s->size() < min_bytes || s->size() > max_bytes) {
    return invalid_at(path, std::to_string(s->size()) + " bytes; must be " +
                                std::to_string(min_bytes) + ".." + std::to_string(max_bytes));
  }
  if (json::has_control(*s, allowed_controls)) {
    return invalid_at(path, allowed_controls.empty()
                                ? "contains a control character"
                                : "contains a control character other than newline and tab");
  }
  return std::string(*s);
}

Result<std::string> word_of(Element v, std::string_view path, size_t max_bytes,
                            std::string_view extra) {
  auto s = json::string_of(v, path);
  if (!s.ok()) return s.status();
  if (!is_word(*s, max_bytes, extra)) {
    return invalid_at(path, json::quoted(*s) + " must match " + word_pattern(max_bytes, extra));
  }
  return std::string(*s);
}

Result<int64_t> integer_of(Element v, std::string_view path, int64_t lo, int64_t hi) {
  const auto type = v.type();
  const std::string range = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (type == simdjson::dom::element_type::UINT64) {
    return invalid_at(path, "out of range " + range);
  }
  int64_t n = 0;
  if (type != simdjson::dom::element_type::INT64 || v.get_int64().get(n) != simdjson::SUCCESS) {
    return invalid_at(path, "expected an integer, found " + std::string(json::type_name(v)));
  }
  if (n < lo || n > hi) return invalid_at(path, std::to_string(n) + " is out of range " + range);
  return n;
}

Result<bool> bool_of(Element v, std::string_view path) {
  bool b = false;
  if (v.get_bool().get(b) != simdjson::SUCCESS) {
    return invalid_at(path, "expected a boolean, found " + std::string(json::type_name(v)));
  }
  return b;
}

Result<Array> array_of(Element v, std::string_view path, size_t min_entries, size_t max_entries) {
  Array a;
  if (v.get_array().get(a) != simdjson::SUCCESS) {
    return invalid_at(path, "expected an array, found " + std::string(json::type_name(v)));
  }
  const size_t n = a.size();
  if (n > max_entries) {
    return invalid_at(path, std::to_string(n) + " entries, more than the limit of " +
                                std::to_string(max_entries));
  }
  if (n < min_entries) {
    return invalid_at(
        path, std::to_string(n) + " entries; needs at least " + std::to_string(min_entries));
  }
  return a;
}

// An object value kept as minified JSON text.
Result<std::string> object_text_of(Element v, std::string_view path, size_t max_bytes) {
  if (v.type() != simdjson::dom::element_type::OBJECT) {
    return invalid_at(path, "expected an object, found " + std::string(json::type_name(v)));
  }
  std::string text = simdjson::minify(v);
  if (text.size() > max_bytes) {
    return invalid_at(path, std::to_string(text.size()) +
                                " bytes minified, more than the limit of " +
                                std::to_string(max_bytes));
  }
  return text;
}

// One JSON object being read: unknown members are refused up front; required members are
// named in the error when missing.
class Obj {
 public:
  Obj() = default;
  static Result<Obj> read(Element value, std::string path,
                          std::span<const std::string_view> names) {
    auto members = json::members_of(value, path, names);
    if (!members.ok()) return members.status();
    return Obj(std::move(path), names, std::move(members).value());
  }

  const std::string& path() const { return path_; }
  std::string at(std::string_view name) const { return json::member_path(path_, name); }

  std::optional<Element> get(std::string_view name) const {
    for (size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) return values_[i];
    }
    return std::nullopt;
  }
  Result<Element> need(std::string_view name) const {
    auto v = get(name);
    if (!v) return invalid_at(at(name), "missing (required)");
    return *v;
  }

  Result<std::string> text(std::string_view name, size_t min_bytes, size_t max_bytes,
                           std::string_view allowed_controls = {}) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    return text_of(*v, at(name), min_bytes, max_bytes, allowed_controls);
  }
  // Absent: "".
  Result<std::string> opt_text(std::string_view name, size_t max_bytes) const {
    auto v = get(name);
    if (!v) return std::string();
    return text_of(*v, at(name), 0, max_bytes);
  }
  Result<std::string> word(std::string_view name, size_t max_bytes, std::string_view extra) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    return word_of(*v, at(name), max_bytes, extra);
  }
  Result<std::string> call_name(std::string_view name) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    auto s = json::string_of(*v, at(name));
    if (!s.ok()) return s.status();
    if (!is_call_name_text(*s)) {
      return invalid_at(at(name), json::quoted(*s) +
                                      " is not a call name ([a-z][a-z0-9_]*(.[a-z][a-z0-9_]*)+, "
                                      "at most " +
                                      std::to_string(mf::kMaxCallNameBytes) + " bytes)");
    }
    return std::string(*s);
  }
  Result<int64_t> integer(std::string_view name, int64_t lo, int64_t hi) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    return integer_of(*v, at(name), lo, hi);
  }
  Result<int64_t> opt_integer(std::string_view name, int64_t lo, int64_t hi, int64_t dflt) const {
    auto v = get(name);
    if (!v) return dflt;
    return integer_of(*v, at(name), lo, hi);
  }
  Result<bool> opt_bool(std::string_view name, bool dflt) const {
    auto v = get(name);
    if (!v) return dflt;
    return bool_of(*v, at(name));
  }
  Result<Array> array(std::string_view name, size_t min_entries, size_t max_entries) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    return array_of(*v, at(name), min_entries, max_entries);
  }
  // One of `choices` (a string); returns its index.
  Result<size_t> choice(std::string_view name, std::span<const std::string_view> choices) const {
    auto v = need(name);
    if (!v.ok()) return v.status();
    auto s = json::string_of(*v, at(name));
    if (!s.ok()) return s.status();
    for (size_t i = 0; i < choices.size(); ++i) {
      if (*s == choices[i]) return i;
    }
    std::string list;
    for (std::string_view c : choices)
      list += (list.empty() ? "\"" : ", \"") + std::string(c) + "\"";
    return invalid_at(at(name), json::quoted(*s) + " is not one of " + list);
  }

 private:
  Obj(std::string path, std::span<const std::string_view> names,
      std::vector<std::optional<Element>> values)
      : path_(std::move(path)), names_(names), values_(std::move(values)) {}

  std::string path_;
  std::span<const std::string_view> names_;
  std::vector<std::optional<Element>> values_;
};

// What a list entry is keyed by: the member that must be unique, and its value.
template <class T>
using KeyOf = const std::string& (*)(const T&);

// Reads the array member `name` of `top`: min_entries..max_entries objects, each with only the
// members `members`, each parsed by `parse(Obj) -> Result<T>`; `key_member` (read by `key`) must
// differ between entries. An absent member is an empty list when min_entries is 0.
template <class T, class Parse>
Result<std::vector<T>> parse_list(const Obj& top, std::string_view name, size_t min_entries,
                                  size_t max_entries, std::span<const std::string_view> members,
                                  std::string_view key_member, KeyOf<T> key, Parse parse) {
  std::vector<T> out;
  if (min_entries == 0 && !top.get(name)) return out;
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, top.array(name, min_entries, max_entries));
  for (Element e : entries) {
    Obj o;
    AURA_ASSIGN_OR_RETURN(o, Obj::read(e, json::index_path(top.at(name), out.size()), members));
    T item;
    AURA_ASSIGN_OR_RETURN(item, parse(o));
    for (size_t i = 0; i < out.size(); ++i) {
      if (key(out[i]) == key(item)) {
        return invalid_at(o.at(key_member), std::string(key_member) + " " +
                                                json::quoted(key(item)) + " is already used by " +
                                                json::index_path(top.at(name), i));
      }
    }
    out.push_back(std::move(item));
  }
  return out;
}

// ---- Parameter schemas ----

constexpr std::array<std::string_view, 6> kParamTypes = {"string", "integer", "boolean",
                                                         "path",   "mode",    "target"};
constexpr std::array<ParamType, 6> kParamTypeValues = {ParamType::kString,  ParamType::kInteger,
                                                       ParamType::kBoolean, ParamType::kPath,
                                                       ParamType::kMode,    ParamType::kTarget};

// The members each type takes: the three common ones first.
std::span<const std::string_view> param_members(ParamType type) {
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

Status parse_byte_bounds(const Obj& o, ParamSchema& p, int64_t min_floor, int64_t max_limit) {
  AURA_ASSIGN_OR_RETURN(p.max_bytes, o.opt_integer("max_bytes", 1, max_limit, p.max_bytes));
  AURA_ASSIGN_OR_RETURN(p.min_bytes, o.opt_integer("min_bytes", min_floor, max_limit, p.min_bytes));
  if (p.min_bytes > p.max_bytes) {
    return invalid_at(o.at("min_bytes"), std::to_string(p.min_bytes) + " is more than max_bytes " +
                                             std::to_string(p.max_bytes));
  }
  return Status::ok();
}

Status parse_enum(const Obj& o, ParamSchema& p) {
  auto v = o.get("enum");
  if (!v) return Status::ok();
  Array values;
  AURA_ASSIGN_OR_RETURN(values, array_of(*v, o.at("enum"), 1, mf::kMaxEnumValues));
  size_t i = 0;
  for (Element e : values) {
    const std::string path = json::index_path(o.at("enum"), i++);
    std::string value;
    AURA_ASSIGN_OR_RETURN(value, text_of(e, path, p.min_bytes, p.max_bytes));
    if (std::find(p.enum_values.begin(), p.enum_values.end(), value) != p.enum_values.end()) {
      return invalid_at(path, json::quoted(value) + " is listed twice");
    }
    p.enum_values.push_back(std::move(value));
  }
  return Status::ok();
}

// `member` ("prefixes", required, or "excludes", optional) into `out`.
Status parse_prefixes(const Obj& o, ParamSchema& p, std::string_view member,
                      std::vector<std::string>& out) {
  Array prefixes;
  if (member == "excludes") {
    auto v = o.get(member);
    if (!v) return Status::ok();
    AURA_ASSIGN_OR_RETURN(prefixes, array_of(*v, o.at(member), 1, mf::kMaxPrefixes));
  } else {
    AURA_ASSIGN_OR_RETURN(prefixes, o.array(member, 1, mf::kMaxPrefixes));
  }
  size_t i = 0;
  for (Element e : prefixes) {
    const std::string path = json::index_path(o.at(member), i++);
    std::string prefix;
    AURA_ASSIGN_OR_RETURN(prefix, text_of(e, path, 1, mf::kMaxPathBytes));
    if (!is_path_prefix(prefix)) {
      return invalid_at(path, json::quoted(prefix) +
                                  " must be absolute and end in '/' (normalised: no empty, . or .. "
                                  "component)");
    }
    if (prefix.size() >= p.max_bytes) {
      return invalid_at(path, "no path under " + json::quoted(prefix) + " fits max_bytes " +
                                  std::to_string(p.max_bytes));
    }
    if (std::find(out.begin(), out.end(), prefix) != out.end()) {
      return invalid_at(path, json::quoted(prefix) + " is listed twice");
    }
    out.push_back(std::move(prefix));
  }
  return Status::ok();
}

Status parse_mode_mask(const Obj& o, ParamSchema& p) {
  auto v = o.get("mode_mask");
  if (!v) return Status::ok();
  auto s = json::string_of(*v, o.at("mode_mask"));
  if (!s.ok()) return s.status();
  uint32_t bits = 0;
  bool octal = s->size() == 3 || s->size() == 4;
  for (char c : *s) {
    if (c < '0' || c > '7') octal = false;
    bits = bits * 8 + static_cast<uint32_t>(c - '0');
  }
  if (!octal) {
    return invalid_at(o.at("mode_mask"), json::quoted(*s) + " is not 3 or 4 octal digits");
  }
  p.mode_mask = bits & mf::kModeBits;
  return Status::ok();
}

Status parse_target_param(const Obj& o, ParamSchema& p, const std::vector<TargetTerm>& targets) {
  AURA_ASSIGN_OR_RETURN(p.target_kind, o.word("target_kind", mf::kMaxTargetKindBytes, "_-"));
  if (std::none_of(targets.begin(), targets.end(),
                   [&](const TargetTerm& t) { return t.kind == p.target_kind; })) {
    return invalid_at(o.at("target_kind"),
                      "no target term has kind " + json::quoted(p.target_kind));
  }
  AURA_ASSIGN_OR_RETURN(p.allow_literal, o.opt_bool("allow_literal", p.allow_literal));
  AURA_ASSIGN_OR_RETURN(
      p.max_literal_bytes,
      o.opt_integer("max_literal_bytes", 1, mf::kMaxLiteralBytes, p.max_literal_bytes));
  return Status::ok();
}

Result<ParamSchema> parse_param(std::string_view name, Element value, const std::string& path,
                                const std::vector<TargetTerm>& targets) {
  ParamSchema p;
  if (!is_word(name, mf::kMaxParamNameBytes, "_")) {
    return invalid_at(path,
                      "parameter name must match " + word_pattern(mf::kMaxParamNameBytes, "_"));
  }
  p.name = std::string(name);
  // The type decides which members are allowed, so it is read first.
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return invalid_at(path, "expected an object, found " + std::string(json::type_name(value)));
  }
  Element type_value;
  if (object["type"].get(type_value) != simdjson::SUCCESS) {
    return invalid_at(json::member_path(path, "type"), "missing (required)");
  }
  auto type_text = json::string_of(type_value, json::member_path(path, "type"));
  if (!type_text.ok()) return type_text.status();
  const auto it = std::find(kParamTypes.begin(), kParamTypes.end(), *type_text);
  if (it == kParamTypes.end()) {
    return invalid_at(json::member_path(path, "type"),
                      json::quoted(*type_text) +
                          " is not one of \"string\", \"integer\", \"boolean\", \"path\", "
                          "\"mode\", \"target\"");
  }
  p.type = kParamTypeValues[static_cast<size_t>(it - kParamTypes.begin())];
  // A member another type takes gets a clearer message than "unknown member".
  const auto allowed = param_members(p.type);
  for (auto field : object) {
    if (std::find(allowed.begin(), allowed.end(), field.key) != allowed.end()) continue;
    for (ParamType other : kParamTypeValues) {
      const auto members = param_members(other);
      if (std::find(members.begin(), members.end(), field.key) != members.end()) {
        return invalid_at(json::member_path(path, field.key),
                          "not a member of a " + std::string(*type_text) + " parameter");
      }
    }
  }
  Obj o;
  AURA_ASSIGN_OR_RETURN(o, Obj::read(value, path, allowed));
  AURA_ASSIGN_OR_RETURN(p.required, o.opt_bool("required", true));
  AURA_ASSIGN_OR_RETURN(p.description, o.opt_text("description", mf::kMaxDescriptionBytes));
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
      AURA_ASSIGN_OR_RETURN(p.min, o.integer("min", INT64_MIN, INT64_MAX));
      AURA_ASSIGN_OR_RETURN(p.max, o.integer("max", INT64_MIN, INT64_MAX));
      if (p.min > p.max) {
        return invalid_at(o.at("min"),
                          std::to_string(p.min) + " is more than max " + std::to_string(p.max));
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

Result<CallSpec> parse_call_spec(const Obj& o, Catalog catalog,
                                 const std::vector<TargetTerm>& targets) {
  CallSpec spec;
  AURA_ASSIGN_OR_RETURN(spec.name, o.call_name("call"));
  AURA_ASSIGN_OR_RETURN(spec.summary, o.text("summary", 1, mf::kMaxSummaryBytes));
  if (catalog == Catalog::kProbes) {
    AURA_ASSIGN_OR_RETURN(spec.cost, o.opt_integer("cost", 1, mf::kMaxProbeCost, spec.cost));
    AURA_ASSIGN_OR_RETURN(spec.max_output_bytes,
                          o.opt_integer("max_output_bytes", 1, mf::kMaxProbeOutputBytes,
                                        static_cast<int64_t>(spec.max_output_bytes)));
  }
  if (auto params = o.get("params")) {
    simdjson::dom::object object;
    if (params->get_object().get(object) != simdjson::SUCCESS) {
      return invalid_at(o.at("params"),
                        "expected an object, found " + std::string(json::type_name(*params)));
    }
    if (object.size() > mf::kMaxParams) {
      return invalid_at(o.at("params"), std::to_string(object.size()) +
                                            " parameters, more than the limit of " +
                                            std::to_string(mf::kMaxParams));
    }
    for (auto field : object) {
      const std::string param_path = json::member_path(o.at("params"), field.key);
      if (std::any_of(spec.params.begin(), spec.params.end(),
                      [&](const ParamSchema& p) { return p.name == field.key; })) {
        return invalid_at(param_path, "duplicate member");
      }
      ParamSchema p;
      AURA_ASSIGN_OR_RETURN(p, parse_param(field.key, field.value, param_path, targets));
      spec.params.push_back(std::move(p));
    }
  }
  return spec;
}

Result<std::vector<CallSpec>> parse_catalog(const Obj& top, Catalog catalog,
                                            const std::vector<TargetTerm>& targets) {
  static constexpr std::array<std::string_view, 5> kProbe = {"call", "summary", "params", "cost",
                                                             "max_output_bytes"};
  static constexpr std::array<std::string_view, 3> kAction = {"call", "summary", "params"};
  const bool probes = catalog == Catalog::kProbes;
  return parse_list<CallSpec>(
      top, probes ? "probes" : "actions", 1, probes ? mf::kMaxProbes : mf::kMaxActions,
      probes ? std::span<const std::string_view>(kProbe)
             : std::span<const std::string_view>(kAction),
      "call", [](const CallSpec& c) -> const std::string& { return c.name; },
      [&](const Obj& o) { return parse_call_spec(o, catalog, targets); });
}

// ---- Hypotheses, targets, worlds ----

Result<std::vector<Hypothesis>> parse_hypotheses(const Obj& top) {
  static constexpr std::array<std::string_view, 2> kMembers = {"id", "text"};
  return parse_list<Hypothesis>(
      top, "hypotheses", mf::kMinHypotheses, mf::kMaxHypotheses, kMembers, "id",
      [](const Hypothesis& h) -> const std::string& { return h.id; },
      [](const Obj& o) -> Result<Hypothesis> {
        Hypothesis h;
        AURA_ASSIGN_OR_RETURN(h.id, o.word("id", mf::kMaxHypothesisIdBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(h.text, o.text("text", 1, mf::kMaxHypothesisTextBytes));
        return h;
      });
}

Result<std::vector<TargetTerm>> parse_targets(const Obj& top) {
  static constexpr std::array<std::string_view, 5> kMembers = {"name", "type", "kind",
                                                               "description", "max_matches"};
  static constexpr std::array<std::string_view, 2> kTypes = {"role", "selector"};
  return parse_list<TargetTerm>(
      top, "targets", 0, mf::kMaxTargets, kMembers, "name",
      [](const TargetTerm& t) -> const std::string& { return t.name; },
      [](const Obj& o) -> Result<TargetTerm> {
        TargetTerm t;
        AURA_ASSIGN_OR_RETURN(t.name, o.word("name", mf::kMaxTargetNameBytes, "_-"));
        size_t type = 0;
        AURA_ASSIGN_OR_RETURN(type, o.choice("type", kTypes));
        t.selector = type == 1;
        AURA_ASSIGN_OR_RETURN(t.kind, o.word("kind", mf::kMaxTargetKindBytes, "_-"));
        AURA_ASSIGN_OR_RETURN(t.description, o.text("description", 1, mf::kMaxDescriptionBytes));
        AURA_ASSIGN_OR_RETURN(t.max_matches,
                              o.opt_integer("max_matches", 1, mf::kMaxMatches, t.max_matches));
        return t;
      });
}

constexpr std::array<std::string_view, 3> kRoleNames = {"primary", "twin", "control"};
constexpr std::array<WorldRole, 3> kRoles = {WorldRole::kPrimary, WorldRole::kTwin,
                                             WorldRole::kControl};

Result<std::vector<WorldSpec>> parse_worlds(const Obj& top) {
  static constexpr std::array<std::string_view, 4> kMembers = {"id", "role", "description",
                                                               "build"};
  std::vector<WorldSpec> out;
  AURA_ASSIGN_OR_RETURN(
      out, parse_list<WorldSpec>(
               top, "worlds", mf::kMinWorlds, mf::kMaxWorlds, kMembers, "id",
               [](const WorldSpec& w) -> const std::string& { return w.id; },
               [](const Obj& o) -> Result<WorldSpec> {
                 WorldSpec w;
                 AURA_ASSIGN_OR_RETURN(w.id, o.word("id", mf::kMaxWorldIdBytes, "_-"));
                 size_t role = 0;
                 AURA_ASSIGN_OR_RETURN(role, o.choice("role", kRoleNames));
                 w.role = kRoles[role];
                 AURA_ASSIGN_OR_RETURN(w.description,
                                       o.opt_text("description", mf::kMaxDescriptionBytes));
                 Element build;
                 AURA_ASSIGN_OR_RETURN(build, o.need("build"));
                 AURA_ASSIGN_OR_RETURN(w.build_json,
                                       object_text_of(build, o.at("build"), mf::kMaxBuildBytes));
                 return w;
               }));
  for (size_t r = 0; r < kRoles.size(); ++r) {
    const auto n = std::count_if(out.begin(), out.end(),
                                 [&](const WorldSpec& w) { return w.role == kRoles[r]; });
    const bool twin = kRoles[r] == WorldRole::kTwin;
    if (twin ? n == 0 : n != 1) {
      return invalid_at(top.at("worlds"),
                        std::string(twin ? "needs at least one" : "needs exactly one") +
                            " world with role \"" + std::string(kRoleNames[r]) + "\" (found " +
                            std::to_string(n) + ")");
    }
  }
  return out;
}

// ---- Checks ----

Result<std::vector<WorldRole>> parse_roles(const Obj& o) {
  auto v = o.get("roles");
  if (!v) return std::vector<WorldRole>(kRoles.begin(), kRoles.end());
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, array_of(*v, o.at("roles"), 1, kRoles.size()));
  std::vector<WorldRole> out;
  for (Element e : entries) {
    const std::string path = json::index_path(o.at("roles"), out.size());
    auto s = json::string_of(e, path);
    if (!s.ok()) return s.status();
    const auto it = std::find(kRoleNames.begin(), kRoleNames.end(), *s);
    if (it == kRoleNames.end()) {
      return invalid_at(path, json::quoted(*s) + " is not a world role (primary, twin, control)");
    }
    const WorldRole role = kRoles[static_cast<size_t>(it - kRoleNames.begin())];
    if (std::find(out.begin(), out.end(), role) != out.end()) {
      return invalid_at(path, json::quoted(*s) + " is listed twice");
    }
    out.push_back(role);
  }
  return out;
}

Result<CheckSpec> parse_check(const Obj& o) {
  static constexpr std::array<std::string_view, 2> kKinds = {"postcondition", "invariant"};
  CheckSpec c;
  AURA_ASSIGN_OR_RETURN(c.id, o.word("id", mf::kMaxCheckIdBytes, "_.-"));
  if (c.id == mf::kReservedCheckId) {
    return invalid_at(o.at("id"), json::quoted(c.id) + " is reserved for the gate's fingerprint");
  }
  size_t kind = 0;
  AURA_ASSIGN_OR_RETURN(kind, o.choice("kind", kKinds));
  c.kind = kind == 0 ? CheckKind::kPostcondition : CheckKind::kInvariant;
  AURA_ASSIGN_OR_RETURN(c.description, o.opt_text("description", mf::kMaxDescriptionBytes));
  AURA_ASSIGN_OR_RETURN(c.call, o.call_name("call"));
  c.params_json = "{}";
  if (auto params = o.get("params")) {
    AURA_ASSIGN_OR_RETURN(c.params_json,
                          object_text_of(*params, o.at("params"), mf::kMaxCheckParamsBytes));
  }
  AURA_ASSIGN_OR_RETURN(c.roles, parse_roles(o));
  return c;
}

Result<std::vector<CheckSpec>> parse_checks(const Obj& top) {
  static constexpr std::array<std::string_view, 6> kMembers = {"id",   "kind",   "description",
                                                               "call", "params", "roles"};
  std::vector<CheckSpec> out;
  AURA_ASSIGN_OR_RETURN(
      out, parse_list<CheckSpec>(
               top, "checks", 1, mf::kMaxChecks, kMembers, "id",
               [](const CheckSpec& c) -> const std::string& { return c.id; }, parse_check));
  // Every world the gate examines must have a check, and "recovered" needs a postcondition on
  // the primary (docs/GATE.md, "Required checks").
  auto applies = [&](WorldRole role, bool postcondition_only) {
    return std::any_of(out.begin(), out.end(), [&](const CheckSpec& c) {
      return (!postcondition_only || c.kind == CheckKind::kPostcondition) &&
             std::find(c.roles.begin(), c.roles.end(), role) != c.roles.end();
    });
  };
  if (!applies(WorldRole::kPrimary, true)) {
    return invalid_at(top.at("checks"),
                      "needs at least one postcondition that applies to role \"primary\"");
  }
  for (size_t r = 0; r < kRoles.size(); ++r) {
    if (!applies(kRoles[r], false)) {
      return invalid_at(top.at("checks"),
                        "no check applies to role \"" + std::string(kRoleNames[r]) + "\"");
    }
  }
  return out;
}

// ---- Judge ----

// The probes and IR of a case, or of one of its variants.
Status parse_judge_body(const Obj& o, JudgeCase& c) {
  if (auto probes = o.get("probes")) {
    Array entries;
    AURA_ASSIGN_OR_RETURN(entries, array_of(*probes, o.at("probes"), 0, mf::kMaxJudgeProbes));
    for (Element e : entries) {
      const std::string path = json::index_path(o.at("probes"), c.probe_calls_json.size());
      std::string text;
      AURA_ASSIGN_OR_RETURN(text, object_text_of(e, path, mf::kMaxJudgeProbeBytes));
      c.probe_calls_json.push_back(std::move(text));
    }
  }
  Element ir;
  AURA_ASSIGN_OR_RETURN(ir, o.need("ir"));
  AURA_ASSIGN_OR_RETURN(c.ir_json, object_text_of(ir, o.at("ir"), mf::kMaxJudgeIrBytes));
  return Status::ok();
}

Result<JudgeCase> parse_judge_case(const Obj& judge, std::string_view name) {
  static constexpr std::array<std::string_view, 4> kMembers = {"expect", "probes", "ir",
                                                               "variants"};
  static constexpr std::array<std::string_view, 2> kVariant = {"probes", "ir"};
  static constexpr std::array<std::string_view, 1> kGold = {"VERIFIED"};
  static constexpr std::array<std::string_view, 2> kBad = {"RECOVERED_UNPROVEN", "NOT_RECOVERED"};
  Element value;
  AURA_ASSIGN_OR_RETURN(value, judge.need(name));
  Obj o;
  AURA_ASSIGN_OR_RETURN(o, Obj::read(value, judge.at(name), kMembers));
  JudgeCase c;
  c.name = std::string(name);
  size_t expect = 0;
  const bool gold = name == "gold";
  AURA_ASSIGN_OR_RETURN(expect, o.choice("expect", gold ? std::span<const std::string_view>(kGold)
                                                        : std::span<const std::string_view>(kBad)));
  c.expect_verdict = std::string(gold ? kGold[expect] : kBad[expect]);
  auto variants = o.get("variants");
  if (!variants) {
    AURA_RETURN_IF_ERROR(parse_judge_body(o, c));
    return c;
  }
  if (o.get("probes") || o.get("ir"))
    return Status::invalid(o.at("variants") + ": stands instead of probes and ir, not beside them");
  Array entries;
  AURA_ASSIGN_OR_RETURN(entries, array_of(*variants, o.at("variants"), 1, 16));
  for (Element e : entries) {
    const std::string path = json::index_path(o.at("variants"), c.variants.size());
    Obj vo;
    AURA_ASSIGN_OR_RETURN(vo, Obj::read(e, path, kVariant));
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

Result<std::vector<JudgeCase>> parse_judge(const Obj& top) {
  static constexpr std::array<std::string_view, 2> kCases = {"gold", "bad"};
  Element value;
  AURA_ASSIGN_OR_RETURN(value, top.need("judge"));
  Obj judge;
  AURA_ASSIGN_OR_RETURN(judge, Obj::read(value, top.at("judge"), kCases));
  std::vector<JudgeCase> out;
  for (std::string_view name : kCases) {
    JudgeCase c;
    AURA_ASSIGN_OR_RETURN(c, parse_judge_case(judge, name));
    out.push_back(std::move(c));
  }
  return out;
}

// ---- The document ----

Result<Manifest> parse_document(std::string_view bytes) {
  static constexpr std::array<std::string_view, 16> kTop = {
      "schema", "id",           "version",       "family",     "title",   "briefing",
      "driver", "probe_budget", "allow_scripts", "hypotheses", "targets", "worlds",
      "probes", "actions",      "checks",        "judge"};
  if (bytes.size() > mf::kMaxManifestBytes) {
    return Status::invalid(std::to_string(bytes.size()) + " bytes, more than the limit of " +
                           std::to_string(mf::kMaxManifestBytes));
  }
  simdjson::dom::parser parser;
  Element root;
  AURA_ASSIGN_OR_RETURN(root, json::parse_strict(parser, bytes, mf::kMaxDepth, ""));
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid("expected a JSON object, found " + std::string(json::type_name(root)));
  }
  Obj top;
  AURA_ASSIGN_OR_RETURN(top, Obj::read(root, "", kTop));
  // The version comes first, so a reader can tell the schema before reading anything else.
  if (!top.get("schema")) return invalid_at("schema", "missing (required)");
  if ((*object.begin()).key != "schema") return invalid_at("schema", "must be the first member");
  int64_t schema = 0;
  AURA_ASSIGN_OR_RETURN(schema, top.integer("schema", INT64_MIN, INT64_MAX));
  if (schema != mf::kSchemaVersion) {
    return invalid_at("schema", std::to_string(schema) + " is not a supported schema (only " +
                                    std::to_string(mf::kSchemaVersion) + ")");
  }

  Manifest m;
  m.schema = static_cast<int>(schema);
  AURA_ASSIGN_OR_RETURN(m.id, top.text("id", 1, package_format::kMaxIdBytes));
  if (!is_valid_package_id(m.id)) {
    return invalid_at("id", json::quoted(m.id) + " must match [a-z0-9][a-z0-9._-]{0,63}");
  }
  AURA_ASSIGN_OR_RETURN(m.version, top.text("version", 1, package_format::kMaxVersionBytes));
  if (!is_valid_package_version(m.version)) {
    return invalid_at("version", json::quoted(m.version) + " must be 1..32 of [0-9A-Za-z.+-]");
  }
  AURA_ASSIGN_OR_RETURN(m.family, top.text("family", 1, package_format::kMaxFamilyBytes));
  AURA_ASSIGN_OR_RETURN(m.title, top.text("title", 1, package_format::kMaxTitleBytes));
  AURA_ASSIGN_OR_RETURN(m.briefing, top.text("briefing", 1, mf::kMaxBriefingBytes, "\n\t"));
  AURA_ASSIGN_OR_RETURN(m.driver, top.word("driver", mf::kMaxDriverBytes, "_-"));
  AURA_ASSIGN_OR_RETURN(m.probe_budget,
                        top.opt_integer("probe_budget", mf::kMinProbeBudget, mf::kMaxProbeBudget,
                                        mf::kDefaultProbeBudget));
  AURA_ASSIGN_OR_RETURN(m.allow_scripts, top.opt_bool("allow_scripts", false));
  AURA_ASSIGN_OR_RETURN(m.hypotheses, parse_hypotheses(top));
  AURA_ASSIGN_OR_RETURN(m.targets, parse_targets(top));
  AURA_ASSIGN_OR_RETURN(m.worlds, parse_worlds(top));
  AURA_ASSIGN_OR_RETURN(m.probes, parse_catalog(top, Catalog::kProbes, m.targets));
  AURA_ASSIGN_OR_RETURN(m.actions, parse_catalog(top, Catalog::kActions, m.targets));
  AURA_ASSIGN_OR_RETURN(m.checks, parse_checks(top));
  AURA_ASSIGN_OR_RETURN(m.judge, parse_judge(top));
  return m;
}

template <class T, class Pred>
const T* find_in(const std::vector<T>& items, Pred pred) {
  const auto it = std::find_if(items.begin(), items.end(), pred);
  return it == items.end() ? nullptr : &*it;
}

}  // namespace

std::string_view param_type_name(ParamType type) { return kParamTypes[static_cast<size_t>(type)]; }

std::string_view world_role_name(WorldRole role) {
  return kRoleNames[static_cast<size_t>(std::find(kRoles.begin(), kRoles.end(), role) -
                                        kRoles.begin())];
}

std::string_view check_kind_name(CheckKind kind) {
  return kind == CheckKind::kPostcondition ? "postcondition" : "invariant";
}

Result<Manifest> parse_manifest(std::string_view manifest_bytes) {
  auto m = parse_document(manifest_bytes);
  if (m.ok()) return m;
  // Paths are relative to the document; a document-level error has an empty path.
  const Status error = m.status();
  std::string_view message = error.message();
  if (message.starts_with(": ")) message.remove_prefix(2);
  return Status::invalid("manifest.json: " + std::string(message));
}

const CallSpec* Manifest::find_probe(std::string_view name) const {
  return find_in(probes, [&](const CallSpec& c) { return c.name == name; });
}
const CallSpec* Manifest::find_action(std::string_view name) const {
  return find_in(actions, [&](const CallSpec& c) { return c.name == name; });
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
