#include "engine/common/text.h"

#include <cstdint>

namespace aura {
namespace {

// The length of the well-formed UTF-8 sequence at s[i], or 0 if there is none.
size_t sequence_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const uint8_t c = b(0);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint32_t cp = 0;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool is_control(uint8_t c) { return (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f; }

}  // namespace

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string safe_text(std::string_view s, size_t max_bytes) {
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  for (size_t i = 0; i < s.size();) {
    const size_t n = sequence_length(s, i);
    const size_t take = n == 0 ? 1 : n;
    if (out.size() + (n == 0 ? 1 : n) > max_bytes) break;
    if (n == 0 || (n == 1 && is_control(static_cast<uint8_t>(s[i])))) {
      out.push_back('?');
    } else {
      out.append(s.substr(i, n));
    }
    i += take;
  }
  return out;
}

std::string check_learner_text(std::string_view s, size_t max_bytes) {
  if (s.empty()) return "is empty";
  if (s.size() > max_bytes) {
    return "is " + std::to_string(s.size()) + " bytes; at most " + std::to_string(max_bytes) +
           " are accepted";
  }
  if (!is_valid_utf8(s)) return "is not valid UTF-8";
  for (char c : s)
    if (is_control(static_cast<uint8_t>(c))) return "holds a control character";
  return {};
}

}  // namespace aura
