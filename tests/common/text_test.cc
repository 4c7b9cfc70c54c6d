// engine/common/text.h: UTF-8 validation, making untrusted text safe for payloads, and the
// learner-text check.
#include "engine/common/text.h"

#include <doctest/doctest.h>

using namespace aura;

TEST_CASE("text: well-formed UTF-8 only") {
  CHECK(is_valid_utf8(""));
  CHECK(is_valid_utf8("plain ascii"));
  CHECK(is_valid_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));  // é € 😀
  CHECK_FALSE(is_valid_utf8("\xc3"));                                 // truncated
  CHECK_FALSE(is_valid_utf8("\xc0\xaf"));                             // overlong '/'
  CHECK_FALSE(is_valid_utf8("\xe0\x80\xaf"));                         // overlong, 3 bytes
  CHECK_FALSE(is_valid_utf8("\xed\xa0\x80"));                         // a surrogate
  CHECK_FALSE(is_valid_utf8("\xf4\x90\x80\x80"));                     // above U+10FFFF
  CHECK_FALSE(is_valid_utf8("\xff"));
  CHECK_FALSE(is_valid_utf8("ok\x80"));  // a stray continuation byte
}

TEST_CASE("text: safe_text replaces what is unsafe and cuts on a character boundary") {
  CHECK(safe_text("fine\ttext\n", 100) == "fine\ttext\n");
  CHECK(safe_text("bell\x07 and \x1b[31m", 100) == "bell? and ?[31m");
  CHECK(safe_text("bad \xff byte", 100) == "bad ? byte");
  CHECK(safe_text(std::string("nul\0x", 5), 100) == "nul?x");
  CHECK(safe_text("\x7f", 10) == "?");
  // "é" is two bytes: a cut at 5 must not split it.
  CHECK(safe_text("abcd\xc3\xa9", 5) == "abcd");
  CHECK(safe_text("abcd\xc3\xa9", 6) == "abcd\xc3\xa9");
  CHECK(safe_text(std::string(5000, 'x'), 1024).size() == 1024);
  CHECK(is_valid_utf8(safe_text("\xe2\x82", 10)));  // a truncated sequence becomes "??"
}

TEST_CASE("text: learner text is 1..max bytes of UTF-8 without control characters") {
  CHECK(check_learner_text("a fine note\nwith two lines", 100).empty());
  CHECK(check_learner_text("", 100) == "is empty");
  CHECK(check_learner_text("toolong", 3).find("at most 3") != std::string::npos);
  CHECK(check_learner_text("\xff", 10) == "is not valid UTF-8");
  CHECK(check_learner_text("esc\x1b", 10) == "holds a control character");
}
