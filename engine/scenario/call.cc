#include "engine/scenario/call.h"

#include <algorithm>
#include <array>
#include <optional>

#include "engine/common/json_writer.h"
#include "engine/common/text.h"
#include "engine/json/value_type.h"
#include "engine/scenario/call_dom.h"
#include "engine/scenario/manifest_format.h"
#include "engine/scenario/names.h"

namespace aura::scenario {
namespace call_reader {

std::string shown(std::string_view text) {
  static constexpr char kDigits[] = "0123456789abcdef";
  static constexpr size_t kMaxShown = 64;
  std::string out;
  for (size_t i = 0; i < text.size() && i < kMaxShown; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '"') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  if (text.size() > kMaxShown) out += "...";
  return out;
}

std::string quoted(std::string_view text) { return "\"" + shown(text) + "\""; }

std::string member_path(std::string_view base, std::string_view member) {
  std::string out(base);
  if (!out.empty()) out += '.';
  out += shown(member);
  return out;
}

std::string index_path(std::string_view base, size_t index) {
  return std::string(base) + "[" + std::to_string(index) + "]";
}

bool has_control(std::string_view text, std::string_view allowed) {
  for (size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 && allowed.find(static_cast<char>(c)) == std::string_view::npos) return true;
    if (c == 0x7f) return true;
    // U+0080..U+009F are encoded as C2 80..C2 9F.
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      return true;
    }
  }
  return false;
}

}  // namespace call_reader

namespace {

namespace strict = ::aura::json;
namespace mf = manifest_format;

// A call's JSON is {"call", "params"} holding scalars and target objects: depth 3. The limit
// leaves room for a clear "wrong type" message on a nested value and bounds everything else.
constexpr size_t kMaxCallDepth = 8;
// No call holds an array (a parameter is a scalar or a target): one is refused by its
// parameter's type, and this only keeps what is refused small.
constexpr size_t kMaxCallArrayElements = 16;

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// [a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+, at most mf::kMaxCallNameBytes (the reader's bound).
bool is_call_name(std::string_view name) {
  if (name.empty()) return false;
  size_t segments = 0;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('.', start);
    if (end == std::string_view::npos) end = name.size();
    std::string_view segment = name.substr(start, end - start);
    if (segment.empty() || segment[0] < 'a' || segment[0] > 'z') return false;
    if (!std::all_of(segment.begin(), segment.end(), is_name_char)) return false;
    ++segments;
    start = end + 1;
  }
  return segments >= 2;
}

std::string octal(uint32_t bits) {
  std::string out;
  for (int shift = 9; shift >= 0; shift -= 3) out += static_cast<char>('0' + ((bits >> shift) & 7));
  return out;
}

std::string target_form(Target::Kind kind) {
  switch (kind) {
    case Target::Kind::kRole:
      return "role";
    case Target::Kind::kSelector:
      return "selector";
    case Target::Kind::kLiteral:
      return "literal";
  }
  return "unknown";
}

// The checks below return what is wrong without a path; check_param and check_param_at name it.
Status wrong(std::string what) { return Status::invalid(std::move(what)); }

Status check_bytes(std::string_view value, uint32_t min_bytes, uint32_t max_bytes) {
  if (value.size() < min_bytes) {
    return wrong(std::to_string(value.size()) + " bytes, fewer than the minimum " +
                 std::to_string(min_bytes));
  }
  if (value.size() > max_bytes) {
    return wrong(std::to_string(value.size()) + " bytes, more than the maximum " +
                 std::to_string(max_bytes));
  }
  return Status::ok();
}

Status check_text(std::string_view value) {
  if (!is_valid_utf8(value)) return wrong("not valid UTF-8");
  if (call_reader::has_control(value)) return wrong("contains a control character");
  return Status::ok();
}

Status check_string(const ParamSchema& schema, std::string_view value) {
  AURA_RETURN_IF_ERROR(check_bytes(value, schema.min_bytes, schema.max_bytes));
  AURA_RETURN_IF_ERROR(check_text(value));
  if (schema.enum_values.empty() || std::find(schema.enum_values.begin(), schema.enum_values.end(),
                                              value) != schema.enum_values.end()) {
    return Status::ok();
  }
  std::string message =
      call_reader::quoted(value) + " is not one of: " + name_list(schema.enum_values);
  if (auto near = nearest_name(value, schema.enum_values))
    message += " (did you mean " + *near + "?)";
  return wrong(std::move(message));
}

Status check_path(const ParamSchema& schema, std::string_view value) {
  if (!is_normalised_absolute_path(value)) {
    return wrong(call_reader::quoted(value) + " is not a normalised absolute path");
  }
  AURA_RETURN_IF_ERROR(check_bytes(value, schema.min_bytes, schema.max_bytes));
  // An excluded prefix wins over every allowed one: the folder itself and all beneath it.
  for (const std::string& ex : schema.path_excludes) {
    if (path_has_prefix(value, ex) || value == std::string_view(ex).substr(0, ex.size() - 1)) {
      return wrong(call_reader::quoted(value) + " is under " + ex +
                   ", which this call may not change");
    }
  }
  for (const std::string& prefix : schema.path_prefixes) {
    if (path_has_prefix(value, prefix)) return Status::ok();
  }
  std::string prefixes;
  for (const std::string& prefix : schema.path_prefixes) {
    if (!prefixes.empty()) prefixes += ", ";
    prefixes += prefix;
  }
  return wrong(call_reader::quoted(value) + " is not under " +
               (prefixes.empty() ? std::string("any allowed prefix") : prefixes));
}

Status check_mode(const ParamSchema& schema, std::string_view value) {
  bool digits = value.size() == 3 || value.size() == 4;
  uint32_t bits = 0;
  for (char c : value) {
    if (c < '0' || c > '7') digits = false;
    bits = bits * 8 + static_cast<uint32_t>(c - '0');
  }
  if (!digits) return wrong(call_reader::quoted(value) + " is not a mode of 3 or 4 octal digits");
  if (uint32_t outside = bits & ~schema.mode_mask; outside != 0) {
    return wrong("mode " + call_reader::quoted(value) + " sets bits " + octal(outside) +
                 " outside the allowed mask " + octal(schema.mode_mask));
  }
  return Status::ok();
}

Status check_target(const ParamSchema& schema, const Target& target, const Manifest& manifest) {
  // Every refusal names the terms this parameter takes, so a learner is never left guessing.
  const std::vector<std::string> takes = term_labels(manifest, schema.target_kind);
  // A name that is no term may have been meant as a literal: the example says how to write it.
  const std::string literal =
      target.kind == Target::Kind::kLiteral || manifest.find_target(target.name) != nullptr
          ? std::string("\"...\"")
          : call_reader::quoted(target.name);
  const std::string terms_of_kind =
      "the terms of kind " + schema.target_kind + ": " + name_list(takes) +
      (schema.allow_literal ? ", or {\"literal\":" + literal + "}" : "");
  if (target.kind == Target::Kind::kLiteral) {
    if (!schema.allow_literal) {
      return wrong("a literal target is not allowed here (name a role or selector of kind " +
                   schema.target_kind + "); " + terms_of_kind);
    }
    AURA_RETURN_IF_ERROR(check_bytes(target.name, 1, schema.max_literal_bytes));
    return check_text(target.name);
  }
  const TargetTerm* term = manifest.find_target(target.name);
  if (term == nullptr) {
    std::vector<std::string> names;
    for (const TargetTerm& t : manifest.targets)
      if (t.kind == schema.target_kind) names.push_back(t.name);
    std::string message = "no target term named " + call_reader::quoted(target.name);
    if (auto near = nearest_name(target.name, names)) message += " (did you mean " + *near + "?)";
    return wrong(message + "; " + terms_of_kind).with_expected(std::move(names));
  }
  bool want_selector = target.kind == Target::Kind::kSelector;
  if (term->selector != want_selector) {
    const std::string form = term->selector ? "selector" : "role";
    return wrong(call_reader::quoted(target.name) + " is a " + form + ", not a " +
                 target_form(target.kind) + " (write {\"" + form +
                 "\":" + call_reader::quoted(target.name) + "})");
  }
  if (term->kind != schema.target_kind) {
    return wrong(call_reader::quoted(target.name) + " names a " + term->kind +
                 " target; this parameter takes a " + schema.target_kind + "; " + terms_of_kind);
  }
  return Status::ok();
}

// What is wrong with `value` for `schema` (no path), or ok.
Status check_value(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest) {
  const auto wrong_type = [&] {
    std::string_view type = param_type_name(schema.type);
    return wrong(std::string(type == "integer" ? "expected an " : "expected a ") +
                 std::string(type) + " value");
  };
  switch (schema.type) {
    case ParamType::kString:
    case ParamType::kPath:
    case ParamType::kMode: {
      const auto* text = std::get_if<std::string>(&value);
      if (text == nullptr) return wrong_type();
      if (schema.type == ParamType::kString) return check_string(schema, *text);
      if (schema.type == ParamType::kPath) return check_path(schema, *text);
      return check_mode(schema, *text);
    }
    case ParamType::kInteger: {
      const auto* number = std::get_if<int64_t>(&value);
      if (number == nullptr) return wrong_type();
      if (*number < schema.min || *number > schema.max) {
        return wrong(std::to_string(*number) + " is outside [" + std::to_string(schema.min) + ", " +
                     std::to_string(schema.max) + "]");
      }
      return Status::ok();
    }
    case ParamType::kBoolean:
      return std::holds_alternative<bool>(value) ? Status::ok() : wrong_type();
    case ParamType::kTarget: {
      const auto* target = std::get_if<Target>(&value);
      if (target == nullptr) return wrong_type();
      return check_target(schema, *target, manifest);
    }
  }
  return wrong_type();
}

// "expected <expected>, found <what the value is>", at the value.
Status expected(const strict::Value& value, std::string_view what) {
  return value.error("expected " + std::string(what) + ", found " +
                     std::string(strict::type_name(value)));
}

Result<ParamValue> parse_value(const ParamSchema& schema, const strict::Value& value) {
  switch (schema.type) {
    case ParamType::kString:
    case ParamType::kPath:
    case ParamType::kMode: {
      auto text = value.as_string();
      if (!text.ok()) return expected(value, "a string");
      return ParamValue(std::string(*text));
    }
    case ParamType::kInteger: {
      // Only a JSON integer: 1.0, 1e3 and "1" are refused, as is anything beyond int64.
      auto number = value.as_i64();
      if (number.ok()) return ParamValue(*number);
      if (strict::is_integer(value)) {
        return value.error("integer out of range [" + std::to_string(schema.min) + ", " +
                           std::to_string(schema.max) + "]");
      }
      return expected(value, "an integer");
    }
    case ParamType::kBoolean: {
      auto flag = value.as_bool();
      if (!flag.ok()) return expected(value, "a boolean");
      return ParamValue(*flag);
    }
    case ParamType::kTarget: {
      auto target = call_reader::parse_target(value);
      if (!target.ok()) return target.status();
      return ParamValue(std::move(target).value());
    }
  }
  return expected(value, "a known parameter type");
}

// Why `name` is not a call of `catalog`, listing the calls it offers. A probe named where an
// action belongs (or the reverse) is said to be one.
std::string unknown_call(std::string_view name, const std::vector<CallSpec>& catalog,
                         const Manifest& manifest,
                         std::string_view not_offered = "is not offered by this scenario") {
  const bool probes = &catalog == &manifest.probes;
  const bool actions = &catalog == &manifest.actions;
  const std::string label = probes ? "its probes" : actions ? "its actions" : "its calls";
  std::string problem(not_offered);
  if (probes && manifest.find_action(name) != nullptr) {
    problem = "is an action of this scenario, not a probe (actions go in an InterventionIR)";
  } else if (actions && manifest.find_probe(name) != nullptr) {
    problem = "is a probe of this scenario, not an action (run it with 'probe')";
  }
  return unknown_name(call_reader::quoted(name), name, problem, label, call_names(catalog));
}

}  // namespace

namespace call_reader {

strict::Limits call_limits(std::string_view where) {
  strict::Limits limits;
  limits.max_bytes = kMaxCallJsonBytes;
  limits.max_depth = kMaxCallDepth;
  limits.max_members = mf::kMaxParams;  // "params": one member per parameter of the entry
  limits.max_elements = kMaxCallArrayElements;
  limits.max_string_bytes = static_cast<size_t>(mf::kMaxStringBytes);
  limits.style = strict::PathStyle::kRelative;
  limits.prefix = where.empty() ? std::string() : std::string(where) + ": ";
  return limits;
}

Result<Target> parse_target(const strict::Value& value) {
  static constexpr std::array<std::string_view, 3> kForms = {"role", "selector", "literal"};
  static constexpr std::array<Target::Kind, 3> kKinds = {
      Target::Kind::kRole, Target::Kind::kSelector, Target::Kind::kLiteral};
  auto object = value.as_object();
  if (!object.ok()) {
    return expected(value, "a target ({\"role\"|\"selector\"|\"literal\": name})");
  }
  // Unknown members first, then the form, then its name's type.
  std::array<std::optional<strict::Value>, 3> forms;
  for (size_t i = 0; i < kForms.size(); ++i) forms[i] = object->optional_value(kForms[i]);
  AURA_RETURN_IF_ERROR(object->done());
  std::optional<Target> target;
  for (size_t i = 0; i < kForms.size(); ++i) {
    if (!forms[i]) continue;
    if (target) return value.error("a target has exactly one member: role, selector or literal");
    auto name = forms[i]->as_string();
    if (!name.ok()) return expected(*forms[i], "a string");
    target = Target{kKinds[i], std::string(*name)};
  }
  if (!target) return value.error("a target has exactly one member: role, selector or literal");
  return *std::move(target);
}

Status check_param_at(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest,
                      const strict::Value& at) {
  Status problem = check_value(schema, value, manifest);
  return problem.is_ok() ? problem : at.error(problem.message()).with_expected(problem.expected());
}

Result<Call> parse_call_value(const strict::Value& value, const std::vector<CallSpec>& catalog,
                              const Manifest& manifest) {
  auto object = value.as_object();
  if (!object.ok()) return expected(value, "an object");
  const std::optional<strict::Value> call_value = object->optional_value("call");
  const std::optional<strict::Value> params_value = object->optional_value("params");
  AURA_RETURN_IF_ERROR(object->done());
  if (!call_value) return object->error("call", "missing");
  if (!call_value->as_string().ok()) return expected(*call_value, "a string");
  std::string_view name;
  AURA_ASSIGN_OR_RETURN(name, call_value->as_string(mf::kMaxCallNameBytes));
  if (!is_call_name(name)) {
    return call_value->error(unknown_call(name, catalog, manifest, "is not a call name"))
        .with_expected(call_names(catalog));
  }
  auto spec = std::find_if(catalog.begin(), catalog.end(),
                           [&](const CallSpec& s) { return s.name == name; });
  if (spec == catalog.end()) {
    return call_value->error(unknown_call(name, catalog, manifest))
        .with_expected(call_names(catalog));
  }

  std::vector<std::optional<strict::Value>> given(spec->params.size());
  strict::Object params;
  if (params_value) {
    auto p = params_value->as_object();
    if (!p.ok()) return expected(*params_value, "an object");
    params = std::move(p).value();
    // In document order, the first member the entry does not declare (the reader has already
    // refused a duplicate).
    for (std::string_view member : params.names()) {
      const bool declared = std::any_of(spec->params.begin(), spec->params.end(),
                                        [&](const ParamSchema& s) { return s.name == member; });
      if (!declared) {
        const std::vector<std::string> names = param_names(*spec);
        std::string message = "unknown parameter of " + spec->name;
        if (auto near = nearest_name(member, names)) message += " (did you mean " + *near + "?)";
        message += names.empty() ? "; it takes none" : "; its parameters: " + name_list(names);
        return params.error(member, message);
      }
    }
    for (size_t i = 0; i < spec->params.size(); ++i) {
      given[i] = params.optional_value(spec->params[i].name);
    }
  }

  Call call;
  call.name = spec->name;
  for (size_t i = 0; i < spec->params.size(); ++i) {
    const ParamSchema& schema = spec->params[i];
    if (!given[i]) {
      if (schema.required) {
        // Named where it belongs, whether or not "params" was written.
        return params_value ? params.error(schema.name, "missing (required)")
                            : object->error("params." + schema.name, "missing (required)");
      }
      continue;
    }
    ParamValue parsed;
    AURA_ASSIGN_OR_RETURN(parsed, parse_value(schema, *given[i]));
    AURA_RETURN_IF_ERROR(check_param_at(schema, parsed, manifest, *given[i]));
    call.params.emplace_back(schema.name, std::move(parsed));
  }
  std::sort(call.params.begin(), call.params.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return call;
}

}  // namespace call_reader

const ParamValue* Call::find(std::string_view param) const {
  for (const auto& [name, value] : params) {
    if (name == param) return &value;
  }
  return nullptr;
}

Result<Call> parse_call(std::string_view json, const std::vector<CallSpec>& catalog,
                        const Manifest& manifest, std::string_view where) {
  const std::string named = where.empty() ? std::string() : std::string(where) + ": ";
  if (json.size() > kMaxCallJsonBytes) {
    return Status::invalid(named + "call of " + std::to_string(json.size()) +
                           " bytes exceeds the limit of " + std::to_string(kMaxCallJsonBytes) +
                           " bytes");
  }
  // Nesting is checked on the raw bytes first, naming the first container too deep however deep
  // the input goes (the reader's own bound names it only within the parser's).
  if (Status deep = call_reader::check_depth(json, kMaxCallDepth, ""); !deep.is_ok()) {
    return Status::invalid(named + deep.message());
  }
  strict::Reader reader(call_reader::call_limits(where));
  strict::Value root;
  AURA_ASSIGN_OR_RETURN(root, reader.parse(json));
  return call_reader::parse_call_value(root, catalog, manifest);
}

Status check_param(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest,
                   std::string_view json_path) {
  Status problem = check_value(schema, value, manifest);
  if (problem.is_ok()) return problem;
  return problem.with_message(std::string(json_path) + ": " + problem.message());
}

bool is_normalised_absolute_path(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  if (call_reader::has_control(path)) return false;  // NUL included
  size_t start = 1;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view component = path.substr(start, end - start);
    if (component.empty() || component == "." || component == "..") return false;
    start = end + 1;
  }
  return true;
}

bool path_has_prefix(std::string_view path, std::string_view prefix) {
  if (!is_normalised_absolute_path(path)) return false;
  if (prefix.empty() || prefix[0] != '/') return false;
  // A prefix covers what lies beneath it, compared a whole component at a time: "/etc/app/"
  // covers "/etc/app/x" but neither "/etc/apps" nor the directory "/etc/app" itself.
  std::string dir(prefix);
  if (dir.back() != '/') dir += '/';
  return path.size() > dir.size() && path.starts_with(dir);
}

std::string call_json(const Call& call) {
  std::vector<const std::pair<std::string, ParamValue>*> sorted;
  sorted.reserve(call.params.size());
  for (const auto& param : call.params) sorted.push_back(&param);
  std::sort(sorted.begin(), sorted.end(),
            [](const auto* a, const auto* b) { return a->first < b->first; });
  JsonWriter params;
  for (const auto* param : sorted) {
    const ParamValue& value = param->second;
    if (const auto* text = std::get_if<std::string>(&value)) {
      params.str(param->first, *text);
    } else if (const auto* number = std::get_if<int64_t>(&value)) {
      params.num(param->first, *number);
    } else if (const auto* flag = std::get_if<bool>(&value)) {
      params.boolean(param->first, *flag);
    } else {
      const auto& target = std::get<Target>(value);
      params.raw(param->first, JsonWriter().str(target_form(target.kind), target.name).done());
    }
  }
  return JsonWriter().str("call", call.name).raw("params", params.done()).done();
}

}  // namespace aura::scenario
