// Character rules shared by signed notes and the texts inside them (checkpoints, key names):
// C2SP notes are valid UTF-8 with no ASCII control character other than newline.
#pragma once

#include <string_view>

namespace aura {

// True if `text` is valid UTF-8 (no overlong forms, surrogates or code points past
// U+10FFFF) and has no code point below U+0020 other than '\n' (when allow_newline).
bool is_note_safe_utf8(std::string_view text, bool allow_newline);

// True if valid UTF-8 `text` contains a Unicode space (White_Space property: ASCII
// whitespace, U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F,
// U+3000). REQUIRES: is_note_safe_utf8(text, ...).
bool has_unicode_space(std::string_view text);

}  // namespace aura
