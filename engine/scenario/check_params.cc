#include "engine/scenario/check_params.h"

#include <vector>

#include "engine/json/json_reader.h"
#include "engine/scenario/manifest_format.h"

namespace aura::scenario {

std::string CheckParams::get(std::string_view name) const {
  auto it = text_.find(name);
  return it == text_.end() ? std::string() : it->second;
}

std::optional<int64_t> CheckParams::get_int(std::string_view name) const {
  auto it = integer_.find(name);
  if (it == integer_.end()) return std::nullopt;
  return it->second;
}

bool CheckParams::has(std::string_view name) const {
  return text_.contains(name) || integer_.contains(name);
}

namespace {

namespace strict = ::aura::json;

// A check's params: a flat object of a few strings and integers, cut from the manifest
// (mf::kMaxCheckParamsBytes minified). `where` names it before the member ("checks[0].params:
// port: ...").
strict::Limits check_params_limits(std::string_view where) {
  strict::Limits limits;
  limits.max_bytes = manifest_format::kMaxCheckParamsBytes;
  limits.max_depth = 4;
  limits.max_members = manifest_format::kMaxParams;
  // No value is an array: one is refused by its member's type, and this keeps it small.
  limits.max_elements = 16;
  limits.max_string_bytes = kMaxCheckTextBytes;
  limits.style = strict::PathStyle::kRelative;
  limits.prefix = where.empty() ? std::string() : std::string(where) + ": ";
  return limits;
}

}  // namespace

Result<CheckParams> parse_check_params(std::string_view params_json,
                                       std::span<const CheckParamSpec> spec,
                                       std::string_view path) {
  strict::Reader reader(check_params_limits(path));
  strict::Value root_value;
  AURA_ASSIGN_OR_RETURN(root_value, reader.parse(params_json.empty() ? "{}" : params_json));
  strict::Object root;
  AURA_ASSIGN_OR_RETURN(root, root_value.as_object());
  // Every declared member is looked up first, so an undeclared one is refused before any value.
  std::vector<std::optional<strict::Value>> values;
  for (const CheckParamSpec& p : spec) values.push_back(root.optional_value(p.name));
  AURA_RETURN_IF_ERROR(root.done());
  CheckParams out;
  for (size_t i = 0; i < spec.size(); ++i) {
    const CheckParamSpec& p = spec[i];
    const std::optional<strict::Value>& value = values[i];
    if (!value) {
      if (p.required) return root.error(p.name, "required");
      continue;
    }
    if (p.type == CheckParamSpec::Type::kInteger) {
      auto v = value->as_i64();
      if (!v.ok() || *v < 0 || *v > kMaxCheckInteger)
        return value->error("an integer 0.." + std::to_string(kMaxCheckInteger));
      out.integer_[std::string(p.name)] = *v;
    } else {
      auto v = value->as_string();
      if (!v.ok() || v->empty() || v->size() > kMaxCheckTextBytes)
        return value->error("a string of 1.." + std::to_string(kMaxCheckTextBytes) + " bytes");
      out.text_[std::string(p.name)] = std::string(*v);
    }
  }
  return out;
}

}  // namespace aura::scenario
