#include "engine/sign/note_text.h"

#include <cstdint>

namespace aura {
namespace {

// Decodes the code point at text[*pos] and advances *pos; returns -1 on invalid UTF-8.
int32_t next_code_point(std::string_view text, size_t* pos) {
  const auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  const uint8_t b0 = byte(*pos);
  if (b0 < 0x80) {
    ++*pos;
    return b0;
  }
  size_t len;
  int32_t cp;
  int32_t min;
  if ((b0 & 0xE0) == 0xC0) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return -1;  // a continuation byte or 0xF8..0xFF
  }
  if (text.size() - *pos < len) return -1;
  for (size_t i = 1; i < len; ++i) {
    const uint8_t b = byte(*pos + i);
    if ((b & 0xC0) != 0x80) return -1;
    cp = cp << 6 | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return -1;
  *pos += len;
  return cp;
}

bool is_space(int32_t cp) {
  switch (cp) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

}  // namespace

bool is_note_safe_utf8(std::string_view text, bool allow_newline) {
  size_t pos = 0;
  while (pos < text.size()) {
    const int32_t cp = next_code_point(text, &pos);
    if (cp < 0) return false;
    if (cp < 0x20 && !(allow_newline && cp == '\n')) return false;
  }
  return true;
}

bool has_unicode_space(std::string_view text) {
  size_t pos = 0;
  while (pos < text.size()) {
    const int32_t cp = next_code_point(text, &pos);
    if (cp < 0 || is_space(cp)) return true;  // invalid input counts as "has a space"
  }
  return false;
}

}  // namespace aura
