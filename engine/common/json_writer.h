// A small writer for compact JSON objects. Callers give keys in the order they
// should appear; values are escaped per RFC 8259. Input must be UTF-8.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace aura {

// Appends `s` as a JSON string literal (quotes included).
inline void json_append_string(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  out.push_back('"');
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += "\\u00";
          out.push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xf]);
        } else {
          out.push_back(char(c));
        }
    }
  }
  out.push_back('"');
}

class JsonWriter {
 public:
  JsonWriter() { out_.push_back('{'); }

  JsonWriter& str(std::string_view key, std::string_view v) {
    this->key(key);
    json_append_string(out_, v);
    return *this;
  }
  JsonWriter& num(std::string_view key, uint64_t v) {
    this->key(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& num(std::string_view key, int64_t v) {
    this->key(key);
    out_ += std::to_string(v);
    return *this;
  }
  JsonWriter& num(std::string_view key, int v) { return num(key, int64_t(v)); }
  JsonWriter& num(std::string_view key, unsigned v) { return num(key, uint64_t(v)); }
  JsonWriter& real(std::string_view key, double v) {
    this->key(key);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6g", v);
    out_ += buf;
    return *this;
  }
  JsonWriter& boolean(std::string_view key, bool v) {
    this->key(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  JsonWriter& null(std::string_view key) {
    this->key(key);
    out_ += "null";
    return *this;
  }
  // `json` must already be a valid JSON value.
  JsonWriter& raw(std::string_view key, std::string_view json) {
    this->key(key);
    out_ += json;
    return *this;
  }
  std::string done() {
    out_.push_back('}');
    return std::move(out_);
  }

 private:
  void key(std::string_view k) {
    if (out_.size() > 1) out_.push_back(',');
    json_append_string(out_, k);
    out_.push_back(':');
  }
  std::string out_;
};

// Builds a JSON array from already-encoded values.
class JsonArray {
 public:
  JsonArray& raw(std::string_view json) {
    if (!out_.empty()) out_.push_back(',');
    out_ += json;
    return *this;
  }
  JsonArray& str(std::string_view s) {
    if (!out_.empty()) out_.push_back(',');
    json_append_string(out_, s);
    return *this;
  }
  std::string done() const { return "[" + out_ + "]"; }

 private:
  std::string out_;
};

}  // namespace aura
