#include "engine/json/json_syntax.h"

#include <vector>

namespace aura::json {
namespace {

// A scanner over the grammar with an explicit stack (a hostile document may nest deeply).
class Scanner {
 public:
  explicit Scanner(std::string_view t) : t_(t) {}

  // The offset of the first byte that breaks the grammar, or t_.size() + 1 when none does.
  size_t run() {
    skip_ws();
    if (!value()) return at_;
    skip_ws();
    return at_ == t_.size() ? t_.size() + 1 : at_;
  }

 private:
  // In a container: what may come next.
  enum class Expect { kValueOrClose, kValue, kCommaOrClose, kKeyOrClose, kKey, kColon };
  struct Frame {
    char close;
    Expect expect;
  };

  bool at_end() const { return at_ >= t_.size(); }
  char peek() const { return at_end() ? '\0' : t_[at_]; }
  void skip_ws() {
    while (!at_end() && (t_[at_] == ' ' || t_[at_] == '\t' || t_[at_] == '\n' || t_[at_] == '\r'))
      ++at_;
  }

  bool literal(std::string_view word) {
    for (char c : word) {
      if (peek() != c) return false;
      ++at_;
    }
    return true;
  }

  bool string() {
    ++at_;  // the opening quote
    while (!at_end()) {
      const unsigned char c = static_cast<unsigned char>(t_[at_]);
      if (c == '"') {
        ++at_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++at_;
        const char e = peek();
        if (e == 'u') {
          ++at_;
          for (int i = 0; i < 4; ++i, ++at_) {
            const char h = peek();
            if (!((h >= '0' && h <= '9') || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F')))
              return false;
          }
          continue;
        }
        if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos || e == '\0')
          return false;
      }
      ++at_;
    }
    return false;
  }

  bool digits() {
    if (!(peek() >= '0' && peek() <= '9')) return false;
    while (peek() >= '0' && peek() <= '9') ++at_;
    return true;
  }

  bool number() {
    if (peek() == '-') ++at_;
    if (peek() == '0') {
      ++at_;
    } else if (!digits()) {
      return false;
    }
    if (peek() == '.') {
      ++at_;
      if (!digits()) return false;
    }
    if (peek() == 'e' || peek() == 'E') {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      if (!digits()) return false;
    }
    return true;
  }

  // One scalar, or the opening of a container (pushed); false at a byte no value starts with.
  bool start_value(std::vector<Frame>& stack) {
    switch (peek()) {
      case '{':
        ++at_;
        stack.push_back({'}', Expect::kKeyOrClose});
        return true;
      case '[':
        ++at_;
        stack.push_back({']', Expect::kValueOrClose});
        return true;
      case '"':
        return string();
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return (peek() == '-' || (peek() >= '0' && peek() <= '9')) && number();
    }
  }

  bool value() {
    std::vector<Frame> stack;
    if (!start_value(stack)) return false;
    while (!stack.empty()) {
      skip_ws();
      Frame& f = stack.back();
      const char c = peek();
      switch (f.expect) {
        case Expect::kValueOrClose:
        case Expect::kKeyOrClose:
          if (c == f.close) {
            ++at_;
            stack.pop_back();
            break;
          }
          [[fallthrough]];
        case Expect::kValue:
        case Expect::kKey:
          if (f.expect == Expect::kKey || f.expect == Expect::kKeyOrClose) {
            if (c != '"' || !string()) return false;
            f.expect = Expect::kColon;
          } else {
            f.expect = Expect::kCommaOrClose;
            if (!start_value(stack)) return false;
          }
          break;
        case Expect::kColon:
          if (c != ':') return false;
          ++at_;
          skip_ws();
          f.expect = Expect::kCommaOrClose;
          if (!start_value(stack)) return false;
          break;
        case Expect::kCommaOrClose:
          if (c == f.close) {
            ++at_;
            stack.pop_back();
          } else if (c == ',') {
            ++at_;
            f.expect = f.close == '}' ? Expect::kKey : Expect::kValue;
          } else {
            return false;
          }
          break;
      }
    }
    return true;
  }

  std::string_view t_;
  size_t at_ = 0;
};

}  // namespace

std::optional<TextPosition> first_syntax_error(std::string_view text) {
  const size_t at = Scanner(text).run();
  if (at > text.size()) return std::nullopt;
  TextPosition p;
  for (size_t i = 0; i < at; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      p.column = 1;
    } else {
      ++p.column;
    }
  }
  return p;
}

}  // namespace aura::json
