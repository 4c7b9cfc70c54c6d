#include "engine/blob/evidence_ref.h"

#include <simdjson.h>

#include <algorithm>
#include <array>
#include <utility>

#include "engine/blob/blob_format.h"

namespace aura {
namespace {

namespace fmt = blob_format;

constexpr std::array<std::string_view, 4> kMembers = {"id", "sha256", "kind", "bytes"};
enum Member : size_t { kId = 0, kSha256 = 1, kKind = 2, kBytes = 3 };

// A key as it may appear in a message: printable ASCII kept, the rest as \xHH, cut at 64 bytes.
std::string printable(std::string_view key) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < key.size() && i < 64; ++i) {
    auto c = static_cast<unsigned char>(key[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    }
  }
  if (key.size() > 64) out += "...";
  return out;
}

// Returns an empty string if `value` is a valid id or kind, else what is wrong with it.
std::string token_problem(std::string_view value, size_t max_bytes) {
  if (value.empty()) return "empty";
  if (value.size() > max_bytes) {
    return "longer than " + std::to_string(max_bytes) + " bytes (" + std::to_string(value.size()) +
           ")";
  }
  for (char c : value) {
    if (!fmt::is_ref_char(c)) {
      return "character '" + printable(std::string_view(&c, 1)) + "' outside [A-Za-z0-9._:-]";
    }
  }
  return {};
}

bool is_lower_hex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A refs key can only be spelled without the quoted bytes "refs" by escaping a letter (\u0072).
bool might_have_refs(std::string_view payload) {
  return payload.find(fmt::kRefsKeyQuoted) != std::string_view::npos ||
         payload.find("\\u") != std::string_view::npos;
}

void append_json_string(std::string& out, std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out += '"';
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      out += "\\u00";
      out += kDigits[c >> 4];
      out += kDigits[c & 0xf];
    } else {
      out += ch;
    }
  }
  out += '"';
}

Result<EvidenceRef> parse_ref(simdjson::dom::element element, const std::string& path) {
  using simdjson::dom::element_type;
  simdjson::dom::object object;
  if (element.get_object().get(object) != simdjson::SUCCESS) {
    return Status::invalid(path + ": not an object");
  }
  std::array<simdjson::dom::element, kMembers.size()> values;
  std::array<bool, kMembers.size()> seen{};
  for (simdjson::dom::key_value_pair field : object) {
    auto it = std::find(kMembers.begin(), kMembers.end(), field.key);
    if (it == kMembers.end()) {
      return Status::invalid(path + "." + printable(field.key) + ": unknown member");
    }
    size_t m = static_cast<size_t>(it - kMembers.begin());
    if (seen[m]) return Status::invalid(path + "." + std::string(*it) + ": duplicate member");
    seen[m] = true;
    values[m] = field.value;
  }
  for (size_t m = 0; m < kMembers.size(); ++m) {
    if (!seen[m]) return Status::invalid(path + "." + std::string(kMembers[m]) + ": missing");
  }

  EvidenceRef ref;
  auto string_member = [&](Member m, size_t max_bytes, std::string* out) -> Status {
    std::string_view v;
    if (values[m].get_string().get(v) != simdjson::SUCCESS) {
      return Status::invalid(path + "." + std::string(kMembers[m]) + ": not a string");
    }
    if (std::string problem = token_problem(v, max_bytes); !problem.empty()) {
      return Status::invalid(path + "." + std::string(kMembers[m]) + ": " + problem);
    }
    out->assign(v);
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(string_member(kId, fmt::kMaxIdBytes, &ref.id));
  AURA_RETURN_IF_ERROR(string_member(kKind, fmt::kMaxKindBytes, &ref.kind));

  std::string_view hex;
  if (values[kSha256].get_string().get(hex) != simdjson::SUCCESS) {
    return Status::invalid(path + ".sha256: not a string");
  }
  std::optional<Digest> digest;
  if (hex.size() == fmt::kDigestHexDigits && is_lower_hex(hex)) digest = digest_from_hex(hex);
  if (!digest) return Status::invalid(path + ".sha256: not 64 hex digits (lowercase)");
  ref.sha256 = *digest;

  // get_uint64 refuses negative integers and any number written as a double (1.0, 1e3).
  if (values[kBytes].get_uint64().get(ref.bytes) != simdjson::SUCCESS) {
    return Status::invalid(path + ".bytes: not a non-negative integer");
  }
  return ref;
}

Status check_unique_ids(const std::vector<EvidenceRef>& refs) {
  if (refs.size() < 2) return Status::ok();
  std::vector<std::pair<std::string_view, size_t>> ids;
  ids.reserve(refs.size());
  for (size_t i = 0; i < refs.size(); ++i) ids.emplace_back(refs[i].id, i);
  std::sort(ids.begin(), ids.end());
  for (size_t i = 1; i < ids.size(); ++i) {
    if (ids[i].first == ids[i - 1].first) {
      // Sorted by (id, index): report the later ref, citing the earlier.
      return Status::invalid("refs[" + std::to_string(ids[i].second) + "].id: duplicate id \"" +
                             std::string(ids[i].first) + "\" (also refs[" +
                             std::to_string(ids[i - 1].second) + "])");
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::vector<EvidenceRef>> extract_refs(std::string_view payload_json) {
  if (!might_have_refs(payload_json)) return std::vector<EvidenceRef>{};

  // Reused per thread: after warm-up neither the parser nor the padded copy allocates.
  thread_local simdjson::dom::parser parser;
  thread_local std::string padded;
  padded.assign(payload_json);
  padded.resize(payload_json.size() + simdjson::SIMDJSON_PADDING);

  simdjson::dom::element doc;
  if (auto err = parser.parse(padded.data(), payload_json.size(), false).get(doc);
      err != simdjson::SUCCESS) {
    return Status::invalid(std::string("payload: invalid JSON (") + simdjson::error_message(err) +
                           ")");
  }
  simdjson::dom::object top;
  if (doc.get_object().get(top) != simdjson::SUCCESS) return std::vector<EvidenceRef>{};

  // Keys are compared after unescaping. A second "refs" would let parsers disagree (first or
  // last wins), so it is refused.
  simdjson::dom::element refs_value;
  bool found = false;
  for (simdjson::dom::key_value_pair field : top) {
    if (field.key != fmt::kRefsKey) continue;
    if (found) return Status::invalid("refs: duplicate member");
    found = true;
    refs_value = field.value;
  }
  if (!found) return std::vector<EvidenceRef>{};

  simdjson::dom::array array;
  if (refs_value.get_array().get(array) != simdjson::SUCCESS) {
    return Status::invalid("refs: not an array");
  }
  size_t count = array.size();  // saturates at 0xFFFFFF, far above the limit
  if (count > fmt::kMaxRefs) {
    return Status::invalid("refs: more than " + std::to_string(fmt::kMaxRefs) + " refs");
  }
  std::vector<EvidenceRef> refs;
  refs.reserve(count);
  size_t index = 0;
  for (simdjson::dom::element element : array) {
    auto ref = parse_ref(element, "refs[" + std::to_string(index) + "]");
    if (!ref.ok()) return ref.status();
    refs.push_back(std::move(ref).value());
    ++index;
  }
  AURA_RETURN_IF_ERROR(check_unique_ids(refs));
  return refs;
}

Status validate_evidence_ref(const EvidenceRef& ref) {
  if (std::string p = token_problem(ref.id, fmt::kMaxIdBytes); !p.empty()) {
    return Status::invalid("id: " + p);
  }
  if (std::string p = token_problem(ref.kind, fmt::kMaxKindBytes); !p.empty()) {
    return Status::invalid("kind: " + p);
  }
  return Status::ok();
}

std::string evidence_ref_json(const EvidenceRef& ref) {
  std::string out;
  out.reserve(32 + ref.id.size() + fmt::kDigestHexDigits + ref.kind.size() + 20 + 16);
  out += "{\"id\":";
  append_json_string(out, ref.id);
  out += ",\"sha256\":\"";
  out += to_hex(ref.sha256);
  out += "\",\"kind\":";
  append_json_string(out, ref.kind);
  out += ",\"bytes\":";
  out += std::to_string(ref.bytes);
  out += '}';
  return out;
}

}  // namespace aura
