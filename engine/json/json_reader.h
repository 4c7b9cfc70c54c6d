// A strict JSON reader on simdjson's DOM for untrusted documents: valid UTF-8 and JSON only, no
// duplicate member at any depth, bounded size, nesting, member counts, array lengths and string
// lengths, typed getters, and an object view that refuses the members nobody read. Every error
// names the JSON path of what failed ("$.steps[2].mode: not a string").
#pragma once

#include <simdjson.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/common/status.h"

namespace aura::json {

// How an error names its place. kJsonPath: "$.a.b[2]: what". kMember: "member \"a.b[2]\": what"
// (the lab projections' wording, docs/PROJECTIONS.md); the root is "payload" there. kRelative:
// "a.b[2]: what", relative to the document, and the root unnamed ("what"): the manifest's
// wording (docs/formats/manifest.md, "Errors").
enum class PathStyle { kJsonPath, kMember, kRelative };

// Bounds checked on the whole document while it is read, before any getter runs. A getter may
// set a tighter bound for one member.
struct Limits {
  size_t max_bytes = size_t(1) << 20;  // the document's total size
  size_t max_depth = 32;               // nesting of objects and arrays (the root is depth 1)
  size_t max_members = 256;            // members of any one object
  size_t max_elements = 65536;         // elements of any one array
  size_t max_string_bytes = 1u << 20;  // any one string, member names included
  PathStyle style = PathStyle::kJsonPath;
  std::string prefix;  // prepended to every message ("manifest.json: "), may be empty
};

inline constexpr size_t kUnbounded = SIZE_MAX;

class Object;
class Array;

// How a reader reports: the limits and wording shared by every view of one document.
struct Context {
  Limits limits;
  Status error(std::string_view path, std::string_view what) const;
};

// One value at a path. Views into the parser's document: valid until its Reader parses again.
class Value {
 public:
  Value() = default;
  Value(const Context* ctx, simdjson::dom::element e, std::string path)
      : ctx_(ctx), e_(e), path_(std::move(path)) {}

  const std::string& path() const { return path_; }
  simdjson::dom::element element() const { return e_; }
  bool is_null() const { return e_.is_null(); }

  Result<std::string_view> as_string(size_t max_bytes = kUnbounded) const;
  Result<uint64_t> as_u64() const;  // refuses negatives, fractions and exponents (1.0, 1e3)
  Result<int64_t> as_i64() const;
  Result<bool> as_bool() const;
  Result<Object> as_object() const;
  Result<Array> as_array(size_t max_elements = kUnbounded) const;
  // The value as compact JSON text (any type).
  std::string minified() const;

  Status error(std::string_view what) const { return ctx_->error(path_, what); }

 private:
  const Context* ctx_ = nullptr;
  simdjson::dom::element e_;
  std::string path_;
};

class Array {
 public:
  Array() = default;
  Array(const Context* ctx, simdjson::dom::array a, std::string path)
      : ctx_(ctx), a_(a), path_(std::move(path)) {}

  size_t size() const { return a_.size(); }
  const std::string& path() const { return path_; }
  // Each element, in order, with its path ("$.steps[2]").
  std::vector<Value> elements() const;
  // An array of non-negative integers; an error names the array and the element's index.
  Result<std::vector<uint64_t>> u64s() const;
  Result<std::vector<std::string_view>> strings(size_t max_bytes = kUnbounded) const;
  Status error(std::string_view what) const { return ctx_->error(path_, what); }

 private:
  const Context* ctx_ = nullptr;
  simdjson::dom::array a_;
  std::string path_;
};

// An object's members by name. Getters record what was read; done() refuses the rest.
class Object {
 public:
  Object() = default;
  Object(const Context* ctx, simdjson::dom::object o, std::string path);

  const std::string& path() const { return path_; }
  size_t size() const { return members_.size(); }
  bool has(std::string_view name) const { return find(name) != nullptr; }
  // The first member's name ("" when empty): formats that put their version first check it.
  std::string_view first_name() const { return members_.empty() ? "" : members_[0].name; }
  // Member names in document order.
  std::vector<std::string_view> names() const;

  Result<std::string_view> required_string(std::string_view name,
                                           size_t max_bytes = kUnbounded) const;
  Result<std::optional<std::string_view>> optional_string(std::string_view name,
                                                          size_t max_bytes = kUnbounded) const;
  // A string or null (nullopt); absent is refused.
  Result<std::optional<std::string_view>> string_or_null(std::string_view name,
                                                         size_t max_bytes = kUnbounded) const;
  // A string that is one of `allowed`.
  Result<std::string_view> required_enum(std::string_view name,
                                         std::span<const std::string_view> allowed) const;
  Result<std::string_view> required_enum(std::string_view name,
                                         std::initializer_list<std::string_view> allowed) const {
    return required_enum(name, std::span<const std::string_view>(allowed.begin(), allowed.size()));
  }
  Result<uint64_t> required_u64(std::string_view name) const;
  Result<std::optional<uint64_t>> optional_u64(std::string_view name) const;
  Result<int64_t> required_i64(std::string_view name) const;
  Result<bool> required_bool(std::string_view name) const;
  Result<std::optional<bool>> optional_bool(std::string_view name) const;
  Result<Object> object(std::string_view name) const;
  Result<std::optional<Object>> optional_object(std::string_view name) const;
  Result<Array> array(std::string_view name, size_t max_elements = kUnbounded) const;
  Result<std::optional<Array>> optional_array(std::string_view name,
                                              size_t max_elements = kUnbounded) const;
  // Any value (read: done() will not refuse it).
  Result<Value> value(std::string_view name) const;
  std::optional<Value> optional_value(std::string_view name) const;

  // Refuses the first member no getter read: "$.x.foo: unknown member".
  Status done() const;

  // An error at this object's member `name` ("$.x.name: what"); "" names the object itself.
  Status error(std::string_view name, std::string_view what) const;

 private:
  struct Member {
    std::string_view name;
    simdjson::dom::element value;
    mutable bool read = false;
  };
  const Member* find(std::string_view name) const;
  Result<Value> need(std::string_view name) const;
  std::string child_path(std::string_view name) const;

  const Context* ctx_ = nullptr;
  std::string path_;
  std::vector<Member> members_;
};

// Parses documents. Keep one and reuse it: the parser keeps its buffers. Every view it returns
// is valid until the next parse() and while the Reader lives.
class Reader {
 public:
  explicit Reader(Limits limits = {});
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Parses `text` and checks it whole: size, UTF-8, JSON, depth, duplicates, counts, lengths.
  Result<Value> parse(std::string_view text);
  // As parse(), and the root must be an object.
  Result<Object> parse_object(std::string_view text);

  const Limits& limits() const { return ctx_.limits; }
  // Changes what every message starts with, from the next message on (views included).
  void set_prefix(std::string prefix) { ctx_.limits.prefix = std::move(prefix); }

 private:
  Context ctx_;
  simdjson::dom::parser parser_;
};

}  // namespace aura::json
