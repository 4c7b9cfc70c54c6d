// Text that crosses into event payloads from places the engine does not control (a world's
// output, a check's observation, a learner's note): validated or made safe, and bounded.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace aura {

// Well-formed UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
bool is_valid_utf8(std::string_view s);

// `s` cut to at most `max_bytes` on a character boundary, with every byte that is not part of
// a well-formed UTF-8 sequence and every control character but \n and \t replaced by '?'.
std::string safe_text(std::string_view s, size_t max_bytes);

// Learner-written text: 1..max_bytes of well-formed UTF-8 without control characters other than
// \n and \t. Returns an empty string when it holds, else what is wrong.
std::string check_learner_text(std::string_view s, size_t max_bytes);

}  // namespace aura
