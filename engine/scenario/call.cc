#include "engine/scenario/call.h"

#include <algorithm>
#include <array>
#include <unordered_set>

#include "engine/common/json_writer.h"
#include "engine/scenario/call_dom.h"

namespace aura::scenario {
namespace json {

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

std::string_view type_name(Element value) {
  switch (value.type()) {
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

namespace {

std::string depth_message(size_t max_depth) {
  return "nesting deeper than " + std::to_string(max_depth) + " levels";
}

// One open array or object met by check_depth; `key` is the raw (still escaped) text of the
// member whose value is being scanned.
struct ScanFrame {
  bool object = false;
  size_t index = 0;
  std::string_view key;
};

std::string scan_path(std::string_view root, const std::vector<ScanFrame>& stack) {
  std::string path(root);
  for (const ScanFrame& frame : stack) {
    path = frame.object ? member_path(path, frame.key) : index_path(path, frame.index);
  }
  return path;
}

// Refuses duplicate members anywhere below `value` and nesting deeper than max_depth.
// `path` is extended and restored in place; depth is the nesting of `value` (the root is 1).
Status check_tree(Element value, std::string& path, size_t depth, size_t max_depth) {
  simdjson::dom::array array;
  simdjson::dom::object object;
  if (value.get_array().get(array) == simdjson::SUCCESS) {
    if (depth > max_depth) return Status::invalid(path + ": " + depth_message(max_depth));
    size_t index = 0;
    for (Element item : array) {
      size_t mark = path.size();
      path = index_path(path, index++);
      AURA_RETURN_IF_ERROR(check_tree(item, path, depth + 1, max_depth));
      path.resize(mark);
    }
  } else if (value.get_object().get(object) == simdjson::SUCCESS) {
    if (depth > max_depth) return Status::invalid(path + ": " + depth_message(max_depth));
    // Keys compare after unescaping ("a" and "\u0061" are the same member). Two parsers can
    // disagree on which duplicate wins, so a duplicate is refused.
    std::unordered_set<std::string_view> seen;
    for (simdjson::dom::key_value_pair field : object) {
      size_t mark = path.size();
      path = member_path(path, field.key);
      if (!seen.insert(field.key).second) return Status::invalid(path + ": duplicate member");
      AURA_RETURN_IF_ERROR(check_tree(field.value, path, depth + 1, max_depth));
      path.resize(mark);
    }
  }
  return Status::ok();
}

}  // namespace

Status check_depth(std::string_view json, size_t max_depth, std::string_view root_path) {
  std::vector<ScanFrame> stack;
  stack.reserve(max_depth);
  bool in_string = false;
  bool escaped = false;
  bool string_is_key = false;
  bool expect_key = false;
  size_t key_start = 0;
  for (size_t i = 0; i < json.size(); ++i) {
    char c = json[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (string_is_key) {
          stack.back().key = json.substr(key_start, i - key_start);
          expect_key = false;
        }
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        string_is_key = expect_key && !stack.empty() && stack.back().object;
        key_start = i + 1;
        break;
      case '{':
      case '[':
        if (stack.size() >= max_depth) {
          return Status::invalid(scan_path(root_path, stack) + ": " + depth_message(max_depth));
        }
        stack.push_back({c == '{', 0, {}});
        expect_key = c == '{';
        break;
      case '}':
      case ']':
        if (!stack.empty()) stack.pop_back();
        expect_key = false;
        break;
      case ',':
        if (!stack.empty()) {
          if (stack.back().object) {
            expect_key = true;
          } else {
            ++stack.back().index;
          }
        }
        break;
      default:
        break;
    }
  }
  return Status::ok();
}

Result<Element> parse_strict(simdjson::dom::parser& parser, std::string_view json, size_t max_depth,
                             std::string_view root_path) {
  AURA_RETURN_IF_ERROR(check_depth(json, max_depth, root_path));
  Element root;
  if (auto err = parser.parse(json.data(), json.size(), /*realloc_if_needed=*/true).get(root);
      err != simdjson::SUCCESS) {
    return Status::invalid(std::string(root_path) + ": not valid JSON (" +
                           simdjson::error_message(err) + ")");
  }
  std::string path(root_path);
  AURA_RETURN_IF_ERROR(check_tree(root, path, 1, max_depth));
  return root;
}

Result<std::vector<std::optional<Element>>> members_of(Element value, std::string_view path,
                                                       std::span<const std::string_view> names) {
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid(std::string(path) + ": expected an object, found " +
                           std::string(type_name(value)));
  }
  std::vector<std::optional<Element>> out(names.size());
  for (simdjson::dom::key_value_pair field : object) {
    auto it = std::find(names.begin(), names.end(), field.key);
    if (it == names.end()) {
      return Status::invalid(member_path(path, field.key) + ": unknown member");
    }
    auto& slot = out[static_cast<size_t>(it - names.begin())];
    if (slot) return Status::invalid(member_path(path, field.key) + ": duplicate member");
    slot = field.value;
  }
  return out;
}

Result<std::string_view> string_of(Element value, std::string_view path) {
  std::string_view text;
  if (value.get_string().get(text) != simdjson::SUCCESS) {
    return Status::invalid(std::string(path) + ": expected a string, found " +
                           std::string(type_name(value)));
  }
  return text;
}

Result<Target> parse_target(Element value, std::string_view path) {
  static constexpr std::array<std::string_view, 3> kForms = {"role", "selector", "literal"};
  static constexpr std::array<Target::Kind, 3> kKinds = {
      Target::Kind::kRole, Target::Kind::kSelector, Target::Kind::kLiteral};
  simdjson::dom::object object;
  if (value.get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid(std::string(path) +
                           ": expected a target ({\"role\"|\"selector\"|\"literal\": name}), "
                           "found " +
                           std::string(type_name(value)));
  }
  auto members = members_of(value, path, kForms);
  if (!members.ok()) return members.status();
  std::string one_member =
      std::string(path) + ": a target has exactly one member: role, selector or literal";
  std::optional<Target> target;
  for (size_t i = 0; i < kForms.size(); ++i) {
    if (!(*members)[i]) continue;
    if (target) return Status::invalid(one_member);
    auto name = string_of(*(*members)[i], member_path(path, kForms[i]));
    if (!name.ok()) return name.status();
    target = Target{kKinds[i], std::string(*name)};
  }
  if (!target) return Status::invalid(one_member);
  return *std::move(target);
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

}  // namespace json

namespace {

using json::Element;

// A call's JSON is {"call", "params"} holding scalars and target objects: depth 3. The limit
// leaves room for a clear "wrong type" message on a nested value and bounds everything else.
constexpr size_t kMaxCallDepth = 8;
constexpr size_t kMaxCallNameBytes = 64;

bool is_name_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

// [a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+, at most 64 bytes.
bool is_call_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxCallNameBytes) return false;
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

Status invalid_at(std::string_view path, std::string_view what) {
  return Status::invalid(std::string(path) + ": " + std::string(what));
}

Status check_bytes(std::string_view value, uint32_t min_bytes, uint32_t max_bytes,
                   std::string_view path) {
  if (value.size() < min_bytes) {
    return invalid_at(path, std::to_string(value.size()) + " bytes, fewer than the minimum " +
                                std::to_string(min_bytes));
  }
  if (value.size() > max_bytes) {
    return invalid_at(path, std::to_string(value.size()) + " bytes, more than the maximum " +
                                std::to_string(max_bytes));
  }
  return Status::ok();
}

Status check_text(std::string_view value, std::string_view path) {
  if (!simdjson::validate_utf8(value.data(), value.size())) {
    return invalid_at(path, "not valid UTF-8");
  }
  if (json::has_control(value)) return invalid_at(path, "contains a control character");
  return Status::ok();
}

Status check_string(const ParamSchema& schema, std::string_view value, std::string_view path) {
  AURA_RETURN_IF_ERROR(check_bytes(value, schema.min_bytes, schema.max_bytes, path));
  AURA_RETURN_IF_ERROR(check_text(value, path));
  if (schema.enum_values.empty() || std::find(schema.enum_values.begin(), schema.enum_values.end(),
                                              value) != schema.enum_values.end()) {
    return Status::ok();
  }
  std::string allowed;
  for (const std::string& option : schema.enum_values) {
    if (!allowed.empty()) allowed += ", ";
    allowed += option;
  }
  return invalid_at(path, json::quoted(value) + " is not one of: " + allowed);
}

Status check_path(const ParamSchema& schema, std::string_view value, std::string_view path) {
  if (!is_normalised_absolute_path(value)) {
    return invalid_at(path, json::quoted(value) + " is not a normalised absolute path");
  }
  AURA_RETURN_IF_ERROR(check_bytes(value, schema.min_bytes, schema.max_bytes, path));
  // An excluded prefix wins over every allowed one: the folder itself and all beneath it.
  for (const std::string& ex : schema.path_excludes) {
    if (path_has_prefix(value, ex) || value == std::string_view(ex).substr(0, ex.size() - 1)) {
      return invalid_at(
          path, json::quoted(value) + " is under " + ex + ", which this call may not change");
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
  return invalid_at(path, json::quoted(value) + " is not under " +
                              (prefixes.empty() ? std::string("any allowed prefix") : prefixes));
}

Status check_mode(const ParamSchema& schema, std::string_view value, std::string_view path) {
  bool digits = value.size() == 3 || value.size() == 4;
  uint32_t bits = 0;
  for (char c : value) {
    if (c < '0' || c > '7') digits = false;
    bits = bits * 8 + static_cast<uint32_t>(c - '0');
  }
  if (!digits) {
    return invalid_at(path, json::quoted(value) + " is not a mode of 3 or 4 octal digits");
  }
  if (uint32_t outside = bits & ~schema.mode_mask; outside != 0) {
    return invalid_at(path, "mode " + json::quoted(value) + " sets bits " + octal(outside) +
                                " outside the allowed mask " + octal(schema.mode_mask));
  }
  return Status::ok();
}

Status check_target(const ParamSchema& schema, const Target& target, const Manifest& manifest,
                    std::string_view path) {
  if (target.kind == Target::Kind::kLiteral) {
    if (!schema.allow_literal) {
      return invalid_at(path,
                        "a literal target is not allowed here (name a role or selector of kind " +
                            schema.target_kind + ")");
    }
    AURA_RETURN_IF_ERROR(check_bytes(target.name, 1, schema.max_literal_bytes, path));
    return check_text(target.name, path);
  }
  const TargetTerm* term = manifest.find_target(target.name);
  if (term == nullptr) {
    return invalid_at(path, "no target term named " + json::quoted(target.name));
  }
  bool want_selector = target.kind == Target::Kind::kSelector;
  if (term->selector != want_selector) {
    return invalid_at(path, json::quoted(target.name) + " is a " +
                                (term->selector ? "selector" : "role") + ", not a " +
                                target_form(target.kind));
  }
  if (term->kind != schema.target_kind) {
    return invalid_at(path, json::quoted(target.name) + " names a " + term->kind +
                                " target; this parameter takes a " + schema.target_kind);
  }
  return Status::ok();
}

Result<ParamValue> parse_value(const ParamSchema& schema, Element value, std::string_view path) {
  auto wrong = [&](std::string_view expected) {
    return invalid_at(path, "expected " + std::string(expected) + ", found " +
                                std::string(json::type_name(value)));
  };
  switch (schema.type) {
    case ParamType::kString:
    case ParamType::kPath:
    case ParamType::kMode: {
      auto text = json::string_of(value, path);
      if (!text.ok()) return text.status();
      return ParamValue(std::string(*text));
    }
    case ParamType::kInteger: {
      // Only a JSON integer: 1.0, 1e3 and "1" are refused, as is anything beyond int64.
      int64_t number = 0;
      if (value.type() == simdjson::dom::element_type::UINT64) {
        return invalid_at(path, "integer out of range [" + std::to_string(schema.min) + ", " +
                                    std::to_string(schema.max) + "]");
      }
      if (value.type() != simdjson::dom::element_type::INT64 ||
          value.get_int64().get(number) != simdjson::SUCCESS) {
        return wrong("an integer");
      }
      return ParamValue(number);
    }
    case ParamType::kBoolean: {
      bool flag = false;
      if (value.get_bool().get(flag) != simdjson::SUCCESS) return wrong("a boolean");
      return ParamValue(flag);
    }
    case ParamType::kTarget: {
      auto target = json::parse_target(value, path);
      if (!target.ok()) return target.status();
      return ParamValue(std::move(target).value());
    }
  }
  return wrong("a known parameter type");
}

}  // namespace

namespace json {

Result<Call> parse_call_value(Element value, const std::vector<CallSpec>& catalog,
                              const Manifest& manifest, std::string_view json_path) {
  static constexpr std::array<std::string_view, 2> kMembers = {"call", "params"};
  auto members = members_of(value, json_path, kMembers);
  if (!members.ok()) return members.status();
  std::string call_path = member_path(json_path, "call");
  if (!(*members)[0]) return invalid_at(call_path, "missing");
  auto name = string_of(*(*members)[0], call_path);
  if (!name.ok()) return name.status();
  if (!is_call_name(*name)) {
    return invalid_at(call_path, quoted(*name) + " is not a call name");
  }
  auto spec = std::find_if(catalog.begin(), catalog.end(),
                           [&](const CallSpec& s) { return s.name == *name; });
  if (spec == catalog.end()) {
    return invalid_at(call_path, quoted(*name) + " is not offered by this scenario");
  }

  std::string params_path = member_path(json_path, "params");
  std::vector<std::optional<Element>> given(spec->params.size());
  if (const auto& params = (*members)[1]) {
    simdjson::dom::object object;
    if (params->get_object().get(object) != simdjson::SUCCESS) {
      return invalid_at(params_path,
                        "expected an object, found " + std::string(type_name(*params)));
    }
    for (simdjson::dom::key_value_pair field : object) {
      auto it = std::find_if(spec->params.begin(), spec->params.end(),
                             [&](const ParamSchema& p) { return p.name == field.key; });
      if (it == spec->params.end()) {
        return invalid_at(member_path(params_path, field.key),
                          "unknown parameter of " + spec->name);
      }
      auto& slot = given[static_cast<size_t>(it - spec->params.begin())];
      if (slot) return invalid_at(member_path(params_path, field.key), "duplicate member");
      slot = field.value;
    }
  }

  Call call;
  call.name = spec->name;
  for (size_t i = 0; i < spec->params.size(); ++i) {
    const ParamSchema& schema = spec->params[i];
    std::string path = member_path(params_path, schema.name);
    if (!given[i]) {
      if (schema.required) return invalid_at(path, "missing (required)");
      continue;
    }
    auto parsed = parse_value(schema, *given[i], path);
    if (!parsed.ok()) return parsed.status();
    AURA_RETURN_IF_ERROR(check_param(schema, *parsed, manifest, path));
    call.params.emplace_back(schema.name, std::move(parsed).value());
  }
  std::sort(call.params.begin(), call.params.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return call;
}

}  // namespace json

const ParamValue* Call::find(std::string_view param) const {
  for (const auto& [name, value] : params) {
    if (name == param) return &value;
  }
  return nullptr;
}

Result<Call> parse_call(std::string_view json, const std::vector<CallSpec>& catalog,
                        const Manifest& manifest, std::string_view json_path) {
  if (json.size() > kMaxCallJsonBytes) {
    return invalid_at(json_path, "call of " + std::to_string(json.size()) +
                                     " bytes exceeds the limit of " +
                                     std::to_string(kMaxCallJsonBytes) + " bytes");
  }
  simdjson::dom::parser parser;
  auto root = json::parse_strict(parser, json, kMaxCallDepth, json_path);
  if (!root.ok()) return root.status();
  return json::parse_call_value(*root, catalog, manifest, json_path);
}

Status check_param(const ParamSchema& schema, const ParamValue& value, const Manifest& manifest,
                   std::string_view json_path) {
  auto wrong = [&] {
    std::string_view type = param_type_name(schema.type);
    return invalid_at(json_path, std::string(type == "integer" ? "expected an " : "expected a ") +
                                     std::string(type) + " value");
  };
  switch (schema.type) {
    case ParamType::kString:
    case ParamType::kPath:
    case ParamType::kMode: {
      const auto* text = std::get_if<std::string>(&value);
      if (text == nullptr) return wrong();
      if (schema.type == ParamType::kString) return check_string(schema, *text, json_path);
      if (schema.type == ParamType::kPath) return check_path(schema, *text, json_path);
      return check_mode(schema, *text, json_path);
    }
    case ParamType::kInteger: {
      const auto* number = std::get_if<int64_t>(&value);
      if (number == nullptr) return wrong();
      if (*number < schema.min || *number > schema.max) {
        return invalid_at(json_path, std::to_string(*number) + " is outside [" +
                                         std::to_string(schema.min) + ", " +
                                         std::to_string(schema.max) + "]");
      }
      return Status::ok();
    }
    case ParamType::kBoolean:
      return std::holds_alternative<bool>(value) ? Status::ok() : wrong();
    case ParamType::kTarget: {
      const auto* target = std::get_if<Target>(&value);
      if (target == nullptr) return wrong();
      return check_target(schema, *target, manifest, json_path);
    }
  }
  return wrong();
}

bool is_normalised_absolute_path(std::string_view path) {
  if (path.empty() || path[0] != '/') return false;
  if (path == "/") return true;
  if (path.back() == '/') return false;
  if (json::has_control(path)) return false;  // NUL included
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
