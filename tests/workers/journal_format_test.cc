// The undo journal's entry format (docs/formats/journal.md): the test vector against the real
// encoder and decoder, and one refusal per way an entry can be malformed.
#include "workers/journal/journal_format.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace aura;
using namespace aura::journal;

namespace {

// docs/formats/journal.md, "Test vector".
constexpr std::string_view kEntry1 =
    R"({"v":1,"path":"/etc/app.conf","existed":true,"mode":"0640","uid":1000,"gid":33,"type":"file","bytes":7})";
constexpr std::string_view kEntry2 =
    R"({"v":1,"path":"/srv/new.html","existed":false,"mode":"0000","uid":0,"gid":0,"type":"file"})";
constexpr std::string_view kEntry3 =
    R"({"v":1,"path":"/srv/www","existed":true,"mode":"0755","uid":0,"gid":0,"type":"dir"})";

std::string hex(std::string_view bytes) {
  static const char* kDigits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += kDigits[c >> 4];
    out += kDigits[c & 15];
  }
  return out;
}

// kEntry1 with `from` replaced by `to` (once).
std::string with(std::string_view from, std::string_view to) {
  std::string s(kEntry1);
  const size_t at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("journal format: the test vector is what the encoder writes and the decoder reads") {
  Entry e1;
  e1.path = "/etc/app.conf";
  e1.existed = true;
  e1.type = "file";
  e1.mode = 0640;
  e1.uid = 1000;
  e1.gid = 33;
  e1.bytes = "before\n";
  const std::string json = encode_entry(e1);
  CHECK(json == kEntry1);
  CHECK(json.size() == 103);
  CHECK(hex(json) ==
        "7b2276223a312c2270617468223a222f6574632f6170702e636f6e66222c2265"
        "786973746564223a747275652c226d6f6465223a2230363430222c2275696422"
        "3a313030302c22676964223a33332c2274797065223a2266696c65222c226279"
        "746573223a377d");
  CHECK(hex(*e1.bytes) == "6265666f72650a");  // 000001.data

  auto d1 = decode_entry(kEntry1);
  REQUIRE(d1.ok());
  CHECK(d1->entry.path == "/etc/app.conf");
  CHECK(d1->entry.existed);
  CHECK(d1->entry.type == "file");
  CHECK(d1->entry.mode == 0640);
  CHECK(d1->entry.uid == 1000);
  CHECK(d1->entry.gid == 33);
  CHECK_FALSE(d1->entry.bytes.has_value());  // the caller reads 000001.data
  CHECK(d1->data_bytes == uint64_t(7));

  Entry e2;
  e2.path = "/srv/new.html";
  CHECK(encode_entry(e2) == kEntry2);
  auto d2 = decode_entry(kEntry2);
  REQUIRE(d2.ok());
  CHECK_FALSE(d2->entry.existed);
  CHECK_FALSE(d2->data_bytes.has_value());

  Entry e3;
  e3.path = "/srv/www";
  e3.existed = true;
  e3.type = "dir";
  e3.mode = 0755;
  CHECK(encode_entry(e3) == kEntry3);
  auto d3 = decode_entry(kEntry3);
  REQUIRE(d3.ok());
  CHECK(d3->entry.type == "dir");
  CHECK(d3->entry.mode == 0755);
  CHECK(encode_entry(d3->entry) == kEntry3);
}

TEST_CASE("journal format: entry names are six digits and an extension") {
  CHECK(entry_name(1, kEntryExt) == "000001.json");
  CHECK(entry_name(999999, kDataExt) == "999999.data");
  auto p = parse_entry_name("000042.data");
  REQUIRE(p.has_value());
  CHECK(p->first == 42);
  CHECK(p->second == "data");
  for (const char* bad : {"00000001", "000001.txt", "00001.json", "0000001.json", "00000a.json",
                          "000001json", "-00001.json", ".000001.json"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_entry_name(bad).has_value());
  }
}

TEST_CASE("journal format: an unknown version is refused before anything else") {
  struct Case {
    std::string json, message;
  };
  const std::vector<Case> cases = {
      {with(R"("v":1)", R"("v":2)"), "version 2 is not one this reader knows (1)"},
      {with(R"("v":1)", R"("v":0)"), "version 0 is not one this reader knows (1)"},
      // Whatever else a later version changed, the version is what is named.
      {R"({"v":2,"path":"relative","colour":"red"})", "version 2 is not one this reader knows (1)"},
      {with(R"("v":1)", R"("v":"1")"), "v: not an integer version"},
      {with(R"("v":1,)", ""), "no version (\"v\" first)"},
      {R"({"path":"/etc/app.conf","v":1,"existed":true,"mode":"0640","uid":1000,"gid":33,"type":"file","bytes":7})",
       "no version (\"v\" first)"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json);
    auto d = decode_entry(c.json);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == ErrorCode::kCorruption);
    CHECK(d.status().message() == c.message);
  }
}

TEST_CASE("journal format: a malformed entry is refused, naming what is wrong") {
  struct Case {
    std::string json, needle;
  };
  const std::vector<Case> cases = {
      {"", "JSON"},
      {"[1]", "not a JSON object"},
      {std::string(kEntry1.substr(0, 50)), "JSON"},
      {std::string(kEntry1) + "x", "JSON"},
      {with(R"("gid":33)", R"("gid":33,"gid":33)"), "duplicate"},
      {with(R"("gid":33)", R"("gid":33,"colour":"red")"), "colour: unknown member"},
      {with(R"("uid":1000,)", ""), "uid: required"},
      {with(R"("/etc/app.conf")", R"("etc/app.conf")"), "path: not a normalised absolute path"},
      {with(R"("/etc/app.conf")", R"("/etc/../shadow")"), "path: not a normalised absolute path"},
      {with(R"("/etc/app.conf")", R"("/etc//app.conf")"), "path: not a normalised absolute path"},
      {with(R"("/etc/app.conf")", R"("/etc/app\nconf")"), "path: not a normalised absolute path"},
      {with(R"("/etc/app.conf")", "\"/" + std::string(5000, 'a') + "\""),
       "path: not a normalised absolute path"},
      {with(R"("/etc/app.conf")", "7"), "path: not a string"},
      {with("true", "1"), "existed: not a boolean"},
      {with(R"("0640")", R"("640")"), "mode: not 4 octal digits"},
      {with(R"("0640")", R"("0648")"), "mode: not 4 octal digits"},
      {with(R"("0640")", "420"), "mode: not 4 octal digits"},
      {with("1000", "4294967296"), "uid: not an id"},
      {with("1000", "-1"), "uid: not an id"},
      {with(R"("gid":33)", R"("gid":"33")"), "gid: not an id"},
      {with(R"("file")", R"("fifo")"), "type: not file, dir or symlink"},
      {with(R"("bytes":7)", R"("bytes":16777217)"), "bytes: not a size up to"},
      {with(R"(,"bytes":7)", ""), "bytes: required for a regular file that existed"},
      {with(R"("file")", R"("dir")"), "bytes: only a regular file that existed"},
      {with("true", "false"), "bytes: only a regular file that existed"},
      {std::string(20000, ' '), "larger than"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.json.substr(0, 200));
    auto d = decode_entry(c.json);
    REQUIRE_FALSE(d.ok());
    CHECK(d.status().code() == ErrorCode::kCorruption);
    CAPTURE(d.status().message());
    CHECK(d.status().message().find(c.needle) != std::string::npos);
  }
}
