// The simdjson DOM helpers of call_dom.h, kept for the parsers that have not moved onto the
// strict reader (engine/json) yet. The call and InterventionIR validators no longer use them.
#include "engine/scenario/call_dom.h"

#include <algorithm>
#include <unordered_set>

#include "engine/json/value_type.h"

namespace aura::scenario::call_reader {

std::string_view type_name(Element value) {
  return ::aura::json::type_name(::aura::json::Value(nullptr, value, ""));
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

}  // namespace aura::scenario::call_reader
