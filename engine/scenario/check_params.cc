#include "engine/scenario/check_params.h"

#include <simdjson.h>

#include <vector>

#include "engine/scenario/call_dom.h"

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

Result<CheckParams> parse_check_params(std::string_view params_json,
                                       std::span<const CheckParamSpec> spec,
                                       std::string_view path) {
  simdjson::dom::parser parser;
  auto root = json::parse_strict(parser, params_json.empty() ? "{}" : params_json, 4, path);
  if (!root.ok()) return root.status();
  std::vector<std::string_view> names;
  for (const CheckParamSpec& p : spec) names.push_back(p.name);
  auto members = json::members_of(*root, path, names);
  if (!members.ok()) return members.status();
  CheckParams out;
  for (size_t i = 0; i < spec.size(); ++i) {
    const CheckParamSpec& p = spec[i];
    const std::string where = json::member_path(path, p.name);
    const std::optional<json::Element>& value = (*members)[i];
    if (!value) {
      if (p.required) return Status::invalid(where + ": required");
      continue;
    }
    if (p.type == CheckParamSpec::Type::kInteger) {
      int64_t v = 0;
      if (value->get_int64().get(v) != simdjson::SUCCESS || v < 0 || v > kMaxCheckInteger)
        return Status::invalid(where + ": an integer 0.." + std::to_string(kMaxCheckInteger));
      out.integer_[std::string(p.name)] = v;
    } else {
      std::string_view v;
      if (value->get_string().get(v) != simdjson::SUCCESS || v.empty() ||
          v.size() > kMaxCheckTextBytes)
        return Status::invalid(where + ": a string of 1.." + std::to_string(kMaxCheckTextBytes) +
                               " bytes");
      out.text_[std::string(p.name)] = std::string(v);
    }
  }
  return out;
}

}  // namespace aura::scenario
