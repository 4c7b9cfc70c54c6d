#include "projections/lab/payload.h"

#include <algorithm>

namespace aura::lab {

namespace {

bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A name as it may appear in a message: printable ASCII kept, the rest as '?', cut at 64 bytes.
std::string printable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size() && i < 64; ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (s.size() > 64) out += "...";
  return out;
}

}  // namespace

std::string_view attempt_id_of_stream(std::string_view stream) {
  if (stream.size() != kAttemptStreamPrefix.size() + kAttemptIdHexDigits ||
      stream.substr(0, kAttemptStreamPrefix.size()) != kAttemptStreamPrefix) {
    return {};
  }
  std::string_view id = stream.substr(kAttemptStreamPrefix.size());
  return is_lower_hex(id) ? id : std::string_view();
}

int64_t attempt_key(std::string_view id) {
  uint64_t v = 0;
  for (char c : id) v = (v << 4) | uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
  return static_cast<int64_t>(v);
}

// ---------------------------------------------------------------------------------------------
// Members

Status Members::load(simdjson::dom::object object, std::string_view type, std::string prefix) {
  type_ = type;
  prefix_ = std::move(prefix);
  members_.clear();
  for (simdjson::dom::key_value_pair field : object) {
    if (members_.size() == kMaxMembers) {
      return Status::invalid(std::string(type_) + ": " +
                             (prefix_.empty() ? "payload" : "member \"" + prefix_ + "\"") +
                             ": more than " + std::to_string(kMaxMembers) + " members");
    }
    if (find(field.key) != nullptr) return error(field.key, "duplicate member");
    members_.emplace_back(field.key, field.value);
  }
  return Status::ok();
}

Status Members::error(std::string_view name, std::string_view what) const {
  return Status::invalid(std::string(type_) + ": member \"" + prefix_ + printable(name) +
                         "\": " + std::string(what));
}

const simdjson::dom::element* Members::find(std::string_view name) const {
  for (const auto& [key, value] : members_) {
    if (key == name) return &value;
  }
  return nullptr;
}

Result<simdjson::dom::element> Members::need(std::string_view name) const {
  const simdjson::dom::element* e = find(name);
  if (e == nullptr) return error(name, "missing");
  return *e;
}

Result<std::string_view> Members::str(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  std::string_view v;
  if (e->get_string().get(v) != simdjson::SUCCESS) return error(name, "not a string");
  return v;
}

Result<uint64_t> Members::u64(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  uint64_t v = 0;
  // get_uint64 refuses negatives and numbers written as doubles (1.0, 1e3).
  if (e->get_uint64().get(v) != simdjson::SUCCESS) {
    return error(name, "not a non-negative integer");
  }
  return v;
}

Result<int64_t> Members::count(std::string_view name) const {
  auto v = u64(name);
  if (!v.ok()) return v.status();
  if (*v > uint64_t(INT64_MAX)) return error(name, "larger than 2^63-1");
  return static_cast<int64_t>(*v);
}

Result<int64_t> Members::i64(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  int64_t v = 0;
  if (e->get_int64().get(v) != simdjson::SUCCESS) return error(name, "not an integer");
  return v;
}

Result<std::optional<std::string_view>> Members::str_or_null(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  if (e->is_null()) return std::optional<std::string_view>();
  std::string_view v;
  if (e->get_string().get(v) != simdjson::SUCCESS) return error(name, "not a string or null");
  return std::optional<std::string_view>(v);
}

Result<bool> Members::boolean(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  bool v = false;
  if (e->get_bool().get(v) != simdjson::SUCCESS) return error(name, "not true or false");
  return v;
}

Result<std::string_view> Members::sha256_hex(std::string_view name) const {
  auto v = str(name);
  if (!v.ok()) return v.status();
  if (v->size() != 64 || !is_lower_hex(*v)) return error(name, "not 64 lowercase hex digits");
  return *v;
}

Result<std::string_view> Members::one_of(std::string_view name,
                                         std::span<const std::string_view> allowed) const {
  auto v = str(name);
  if (!v.ok()) return v.status();
  if (std::find(allowed.begin(), allowed.end(), *v) == allowed.end()) {
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : "|") + std::string(a);
    return error(name, "\"" + printable(*v) + "\" is not one of " + list);
  }
  return *v;
}

Result<std::string> Members::json(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  return simdjson::minify(*e);
}

Result<simdjson::dom::array> Members::array(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  simdjson::dom::array a;
  if (e->get_array().get(a) != simdjson::SUCCESS) return error(name, "not an array");
  return a;
}

Result<std::string> Members::u64_array_json(std::string_view name) const {
  auto a = array(name);
  if (!a.ok()) return a.status();
  std::string out = "[";
  size_t i = 0;
  for (simdjson::dom::element e : *a) {
    uint64_t v = 0;
    if (e.get_uint64().get(v) != simdjson::SUCCESS) {
      return error(name, "element " + std::to_string(i) + " is not a non-negative integer");
    }
    if (i++ > 0) out += ',';
    out += std::to_string(v);
  }
  return out + "]";
}

Result<Members> Members::object(std::string_view name) const {
  auto e = need(name);
  if (!e.ok()) return e.status();
  simdjson::dom::object o;
  if (e->get_object().get(o) != simdjson::SUCCESS) return error(name, "not an object");
  Members m;
  AURA_RETURN_IF_ERROR(m.load(o, type_, prefix_ + std::string(name) + "."));
  return m;
}

// ---------------------------------------------------------------------------------------------
// Payload

Status Payload::parse(const EventView& event) {
  type_ = event.type;
  payload_ = event.payload;
  const std::string type(event.type);
  simdjson::dom::element root;
  if (auto err = parser_.parse(event.payload.data(), event.payload.size()).get(root); err) {
    return Status::invalid(type + ": payload is not JSON (" + simdjson::error_message(err) + ")");
  }
  simdjson::dom::object object;
  if (root.get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid(type + ": payload is not a JSON object");
  }
  AURA_RETURN_IF_ERROR(members_.load(object, event.type, ""));
  if (members_.first_name() != "v") return members_.error("v", "not the first member");
  auto v = members_.u64("v");
  if (!v.ok()) return v.status();
  if (*v != 1) return members_.error("v", "version " + std::to_string(*v) + " is not supported");
  if (std::string_view id = attempt_id_of_stream(event.stream); !id.empty()) {
    auto attempt = members_.str("attempt");
    if (!attempt.ok()) return attempt.status();
    if (*attempt != id) {
      return members_.error(
          "attempt", "\"" + printable(*attempt) + "\" is not the stream's " + std::string(id));
    }
  }
  return Status::ok();
}

Result<std::vector<EvidenceRef>> Payload::refs() const {
  auto refs = extract_refs(payload_);
  if (!refs.ok()) return refs.status().with_context(std::string(type_));
  return refs;
}

Result<std::optional<EvidenceRef>> Payload::ref(std::string_view id) const {
  LAB_TRY(all, refs());
  for (EvidenceRef& r : all) {
    if (r.id == id) return std::optional<EvidenceRef>(std::move(r));
  }
  return std::optional<EvidenceRef>();
}

}  // namespace aura::lab
