#include "engine/json/json_reader.h"

#include <algorithm>
#include <unordered_set>

#include "engine/json/json_syntax.h"

namespace aura::json {

namespace {

// A name as it may appear in a message: printable ASCII kept, the rest as '?', cut at 64 bytes.
std::string printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f && c != '"') ? static_cast<char>(c) : '?';
  }
  if (s.size() > 64) out += "...";
  return out;
}

std::string index_path(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// Walks the whole document once, so no getter ever sees a duplicate or an unbounded value.
class Walker {
 public:
  explicit Walker(const Context& ctx) : ctx_(ctx) {}

  Status walk(simdjson::dom::element e, const std::string& path, size_t depth) {
    const Limits& l = ctx_.limits;
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: {
        if (depth > l.max_depth)
          return ctx_.error(path, "nested deeper than " + std::to_string(l.max_depth));
        simdjson::dom::object o = e.get_object().value_unsafe();
        if (o.size() > l.max_members)
          return ctx_.error(path, "more than " + std::to_string(l.max_members) + " members");
        std::unordered_set<std::string_view> seen;
        for (simdjson::dom::key_value_pair field : o) {
          const std::string child =
              path.empty() ? printable(field.key) : path + "." + printable(field.key);
          if (field.key.size() > l.max_string_bytes)
            return ctx_.error(
                child, "member name longer than " + std::to_string(l.max_string_bytes) + " bytes");
          if (!seen.insert(field.key).second) return ctx_.error(child, "duplicate member");
          AURA_RETURN_IF_ERROR(walk(field.value, child, depth + 1));
        }
        return Status::ok();
      }
      case simdjson::dom::element_type::ARRAY: {
        if (depth > l.max_depth)
          return ctx_.error(path, "nested deeper than " + std::to_string(l.max_depth));
        simdjson::dom::array a = e.get_array().value_unsafe();
        if (a.size() > l.max_elements)
          return ctx_.error(path, "more than " + std::to_string(l.max_elements) + " elements");
        size_t i = 0;
        for (simdjson::dom::element item : a)
          AURA_RETURN_IF_ERROR(walk(item, index_path(path, i++), depth + 1));
        return Status::ok();
      }
      case simdjson::dom::element_type::STRING: {
        if (e.get_string().value_unsafe().size() > l.max_string_bytes)
          return ctx_.error(path, "longer than " + std::to_string(l.max_string_bytes) + " bytes");
        return Status::ok();
      }
      default:
        return Status::ok();
    }
  }

 private:
  const Context& ctx_;
};

}  // namespace

Status Context::error(std::string_view path, std::string_view what) const {
  std::string m = limits.prefix;
  if (limits.style == PathStyle::kJsonPath) {
    m += "$";
    if (!path.empty() && path[0] != '[') m += ".";
    m += path;
  } else if (limits.style == PathStyle::kRelative) {
    if (path.empty()) return Status::invalid(m + std::string(what));
    m += path;
  } else if (path.empty()) {
    m += "payload";
  } else {
    m += "member \"" + std::string(path) + "\"";
  }
  m += ": ";
  m += what;
  return Status::invalid(std::move(m));
}

// ---- Value ----

Result<std::string_view> Value::as_string(size_t max_bytes) const {
  std::string_view v;
  if (e_.get_string().get(v) != simdjson::SUCCESS) return error("not a string");
  if (v.size() > max_bytes) return error("longer than " + std::to_string(max_bytes) + " bytes");
  return v;
}

Result<uint64_t> Value::as_u64() const {
  uint64_t v = 0;
  if (e_.get_uint64().get(v) != simdjson::SUCCESS) return error("not a non-negative integer");
  return v;
}

Result<int64_t> Value::as_i64() const {
  int64_t v = 0;
  if (e_.get_int64().get(v) != simdjson::SUCCESS) return error("not an integer");
  return v;
}

Result<bool> Value::as_bool() const {
  bool v = false;
  if (e_.get_bool().get(v) != simdjson::SUCCESS) return error("not true or false");
  return v;
}

Result<Object> Value::as_object() const {
  simdjson::dom::object o;
  if (e_.get_object().get(o) != simdjson::SUCCESS) return error("not an object");
  return Object(ctx_, o, path_);
}

Result<Array> Value::as_array(size_t max_elements) const {
  simdjson::dom::array a;
  if (e_.get_array().get(a) != simdjson::SUCCESS) return error("not an array");
  if (a.size() > max_elements)
    return error("more than " + std::to_string(max_elements) + " elements");
  return Array(ctx_, a, path_);
}

std::string Value::minified() const { return simdjson::minify(e_); }

// ---- Array ----

std::vector<Value> Array::elements() const {
  std::vector<Value> out;
  out.reserve(a_.size());
  size_t i = 0;
  for (simdjson::dom::element e : a_) out.emplace_back(ctx_, e, index_path(path_, i++));
  return out;
}

Result<std::vector<uint64_t>> Array::u64s() const {
  std::vector<uint64_t> out;
  size_t i = 0;
  for (simdjson::dom::element e : a_) {
    uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS)
      return error("element " + std::to_string(i) + " is not a non-negative integer");
    out.push_back(v);
    ++i;
  }
  return out;
}

Result<std::vector<std::string_view>> Array::strings(size_t max_bytes) const {
  std::vector<std::string_view> out;
  for (const Value& v : elements()) {
    std::string_view s;
    AURA_ASSIGN_OR_RETURN(s, v.as_string(max_bytes));
    out.push_back(s);
  }
  return out;
}

// ---- Object ----

Object::Object(const Context* ctx, simdjson::dom::object o, std::string path)
    : ctx_(ctx), path_(std::move(path)) {
  members_.reserve(o.size());
  for (simdjson::dom::key_value_pair field : o) members_.push_back({field.key, field.value});
}

std::vector<std::string_view> Object::names() const {
  std::vector<std::string_view> out;
  for (const Member& m : members_) out.push_back(m.name);
  return out;
}

const Object::Member* Object::find(std::string_view name) const {
  for (const Member& m : members_)
    if (m.name == name) return &m;
  return nullptr;
}

std::string Object::child_path(std::string_view name) const {
  return path_.empty() ? printable(name) : path_ + "." + printable(name);
}

Status Object::error(std::string_view name, std::string_view what) const {
  return ctx_->error(name.empty() ? path_ : child_path(name), what);
}

Result<Value> Object::need(std::string_view name) const {
  const Member* m = find(name);
  if (m == nullptr) return error(name, "missing");
  m->read = true;
  return Value(ctx_, m->value, child_path(name));
}

std::optional<Value> Object::optional_value(std::string_view name) const {
  const Member* m = find(name);
  if (m == nullptr) return std::nullopt;
  m->read = true;
  return Value(ctx_, m->value, child_path(name));
}

Result<Value> Object::value(std::string_view name) const { return need(name); }

namespace {

// `read` applied to a required member's value, or the member's error.
template <class F>
auto then(Result<Value> v, F read) -> decltype(read(*v)) {
  if (!v.ok()) return v.status();
  return read(*v);
}

// `read` applied to an optional member's value: nullopt when absent.
template <class F>
auto maybe(std::optional<Value> v, F read)
    -> Result<std::optional<std::decay_t<decltype(read(*v).value())>>> {
  using T = std::decay_t<decltype(read(*v).value())>;
  if (!v) return std::optional<T>();
  auto r = read(*v);
  if (!r.ok()) return r.status();
  return std::optional<T>(std::move(r).value());
}

}  // namespace

Result<std::string_view> Object::required_string(std::string_view name, size_t max_bytes) const {
  return then(need(name), [&](const Value& v) { return v.as_string(max_bytes); });
}

Result<std::optional<std::string_view>> Object::optional_string(std::string_view name,
                                                                size_t max_bytes) const {
  return maybe(optional_value(name), [&](const Value& v) { return v.as_string(max_bytes); });
}

Result<std::optional<std::string_view>> Object::string_or_null(std::string_view name,
                                                               size_t max_bytes) const {
  Value v;
  AURA_ASSIGN_OR_RETURN(v, need(name));
  if (v.is_null()) return std::optional<std::string_view>();
  std::string_view s;
  if (v.element().get_string().get(s) != simdjson::SUCCESS) return v.error("not a string or null");
  if (s.size() > max_bytes) return v.error("longer than " + std::to_string(max_bytes) + " bytes");
  return std::optional<std::string_view>(s);
}

Result<std::string_view> Object::required_enum(std::string_view name,
                                               std::span<const std::string_view> allowed) const {
  std::string_view s;
  AURA_ASSIGN_OR_RETURN(s, required_string(name));
  if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) return s;
  std::string list;
  for (std::string_view a : allowed) list += (list.empty() ? "" : "|") + std::string(a);
  return error(name, "\"" + printable(s) + "\" is not one of " + list);
}

Result<uint64_t> Object::required_u64(std::string_view name) const {
  return then(need(name), [](const Value& v) { return v.as_u64(); });
}

Result<std::optional<uint64_t>> Object::optional_u64(std::string_view name) const {
  return maybe(optional_value(name), [](const Value& v) { return v.as_u64(); });
}

Result<int64_t> Object::required_i64(std::string_view name) const {
  return then(need(name), [](const Value& v) { return v.as_i64(); });
}

Result<bool> Object::required_bool(std::string_view name) const {
  return then(need(name), [](const Value& v) { return v.as_bool(); });
}

Result<std::optional<bool>> Object::optional_bool(std::string_view name) const {
  return maybe(optional_value(name), [](const Value& v) { return v.as_bool(); });
}

Result<Object> Object::object(std::string_view name) const {
  return then(need(name), [](const Value& v) { return v.as_object(); });
}

Result<std::optional<Object>> Object::optional_object(std::string_view name) const {
  return maybe(optional_value(name), [](const Value& v) { return v.as_object(); });
}

Result<Array> Object::array(std::string_view name, size_t max_elements) const {
  return then(need(name), [&](const Value& v) { return v.as_array(max_elements); });
}

Result<std::optional<Array>> Object::optional_array(std::string_view name,
                                                    size_t max_elements) const {
  return maybe(optional_value(name), [&](const Value& v) { return v.as_array(max_elements); });
}

Status Object::done() const {
  for (const Member& m : members_)
    if (!m.read) return error(m.name, "unknown member");
  return Status::ok();
}

// ---- Reader ----

Reader::Reader(Limits limits) : ctx_{std::move(limits)} {}

Result<Value> Reader::parse(std::string_view text) {
  const Limits& l = ctx_.limits;
  if (text.size() > l.max_bytes) {
    return ctx_.error(
        "", std::to_string(text.size()) + " bytes, more than " + std::to_string(l.max_bytes));
  }
  simdjson::dom::element root;
  if (auto err = parser_.parse(text.data(), text.size()).get(root); err) {
    if (err == simdjson::UTF8_ERROR) return ctx_.error("", "not valid UTF-8");
    if (err == simdjson::DEPTH_ERROR)
      return ctx_.error("", "nested deeper than " + std::to_string(l.max_depth));
    std::string where;
    if (auto at = first_syntax_error(text)) {
      where = " at line " + std::to_string(at->line) + ", column " + std::to_string(at->column);
    }
    return ctx_.error("", std::string("not JSON (") + simdjson::error_message(err) + ")" + where);
  }
  AURA_RETURN_IF_ERROR(Walker(ctx_).walk(root, "", 1));
  return Value(&ctx_, root, "");
}

Result<Object> Reader::parse_object(std::string_view text) {
  Value root;
  AURA_ASSIGN_OR_RETURN(root, parse(text));
  return root.as_object();
}

}  // namespace aura::json
