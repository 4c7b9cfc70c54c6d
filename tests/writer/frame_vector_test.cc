// The writer frame's test vectors (docs/formats/writer-frame.md): the page prints exactly these
// bytes, the encoder produces them, and the writer, sent them raw on a real SOCK_SEQPACKET socket
// with a real log and blob store, records the documented event: the evidence accepted, the
// version 2 frame refused.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/writer/evidence_writer.h"
#include "engine/writer/frame.h"
#include "tests/writer/writer_lab.h"

using namespace aura;
using namespace aura::writer;

namespace {

// The vectors exactly as docs/formats/writer-frame.md prints them (hex, spaces and line breaks
// ignored); a test checks that the page prints exactly these.
constexpr std::string_view kHelloHex = R"(
01 7b 22 74 22 3a 22 68 65 6c 6c 6f 22 2c 22 74
6f 6b 65 6e 22 3a 22 30 30 31 31 32 32 33 33 34
34 35 35 36 36 37 37 38 38 39 39 61 61 62 62 63
63 64 64 65 65 66 66 30 30 31 31 32 32 33 33 34
34 35 35 36 36 37 37 38 38 39 39 61 61 62 62 63
63 64 64 65 65 66 66 22 7d 0a)";

constexpr std::string_view kEvidenceHex = R"(
01 7b 22 74 22 3a 22 65 76 69 64 65 6e 63 65 22
2c 22 6b 69 6e 64 22 3a 22 70 72 6f 62 65 2e 6f
75 74 70 75 74 22 2c 22 66 69 65 6c 64 73 22 3a
7b 22 73 74 72 65 61 6d 22 3a 22 73 74 64 6f 75
74 22 2c 22 74 72 75 6e 63 61 74 65 64 22 3a 66
61 6c 73 65 7d 7d 0a 6f 6b 0a)";

constexpr std::string_view kMemfdHex = R"(
01 7b 22 74 22 3a 22 65 76 69 64 65 6e 63 65 22
2c 22 6b 69 6e 64 22 3a 22 70 72 6f 62 65 2e 6f
75 74 70 75 74 22 2c 22 66 69 65 6c 64 73 22 3a
7b 22 73 74 72 65 61 6d 22 3a 22 73 74 64 6f 75
74 22 2c 22 74 72 75 6e 63 61 74 65 64 22 3a 66
61 6c 73 65 7d 2c 22 6d 65 6d 66 64 22 3a 74 72
75 65 7d 0a)";

// The hello vector under version 2: refused.
constexpr std::string_view kVersion2HelloHex = R"(
02 7b 22 74 22 3a 22 68 65 6c 6c 6f 22 2c 22 74
6f 6b 65 6e 22 3a 22 30 30 31 31 32 32 33 33 34
34 35 35 36 36 37 37 38 38 39 39 61 61 62 62 63
63 64 64 65 65 66 66 30 30 31 31 32 32 33 33 34
34 35 35 36 36 37 37 38 38 39 39 61 61 62 62 63
63 64 64 65 65 66 66 22 7d 0a)";

constexpr std::string_view kToken =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
constexpr std::string_view kFields = R"({"stream":"stdout","truncated":false})";

// Sends each of `frames` raw (one message each, the vector's bytes, not the encoder's) from the
// lab's runner process and serves the connection.
ConnectionReport serve_raw(aura::testing::WriterLab& lab, const std::vector<std::string>& frames) {
  return lab.run([&](int fd) {
    for (const std::string& f : frames)
      if (::send(fd, f.data(), f.size(), MSG_NOSIGNAL) != ssize_t(f.size())) ::_exit(1);
  });
}

// The lab of the vectors: run 00000000000000a1 of attempt 0123456789abcdef in world primary,
// granted probe.output.
struct VectorLab : aura::testing::WriterLab {
  VectorLab() { binding.kinds = {"probe.output"}; }

  // The one event recorded (in the binding's stream, attempt/0123456789abcdef).
  aura::testing::Recorded only_event() const {
    const auto evs = events();
    REQUIRE(evs.size() == 1);
    CHECK(binding.stream() == "attempt/0123456789abcdef");
    return evs[0];
  }
};

// Every fenced block of the page that holds only hex byte pairs, in the page's order.
std::vector<std::string> hex_blocks_of_page() {
  std::ifstream in(AURA_WRITER_FRAME_DOC);
  REQUIRE_MESSAGE(in.good(), "cannot read " AURA_WRITER_FRAME_DOC);
  std::vector<std::string> blocks;
  std::string line, block;
  bool fenced = false, hex_only = true;
  while (std::getline(in, line)) {
    if (line.starts_with("```")) {
      if (fenced && hex_only && !block.empty()) blocks.push_back(block);
      fenced = !fenced;
      block.clear();
      hex_only = true;
      continue;
    }
    if (!fenced) continue;
    for (size_t i = 0; i < line.size(); i += 3) {
      const bool pair = i + 1 < line.size() && std::isxdigit(static_cast<unsigned char>(line[i])) &&
                        std::isxdigit(static_cast<unsigned char>(line[i + 1])) &&
                        (i + 2 == line.size() || line[i + 2] == ' ');
      if (!pair) hex_only = false;
    }
    block += line + "\n";
  }
  return blocks;
}

std::string bytes_of(std::string_view hex) {
  std::string digits;
  for (char c : hex)
    if (std::isxdigit(static_cast<unsigned char>(c))) digits.push_back(c);
  REQUIRE(digits.size() % 2 == 0);
  std::string out;
  for (size_t i = 0; i < digits.size(); i += 2) {
    out.push_back(char(std::stoi(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

}  // namespace

TEST_CASE("writer frame: the encoder produces the documented vectors byte for byte") {
  const std::string hello = bytes_of(kHelloHex);
  const std::string evidence = bytes_of(kEvidenceHex);
  const std::string memfd = bytes_of(kMemfdHex);
  CHECK(hello.size() == 90);
  CHECK(evidence.size() == 90);
  CHECK(memfd.size() == 100);
  // The version byte comes first.
  CHECK(uint8_t(hello[0]) == kFrameVersion);
  CHECK(kFrameVersion == 1);
  CHECK(hello_frame(kToken) == hello);
  CHECK(evidence_frame("probe.output", kFields, "ok\n") == evidence);
  CHECK(evidence_memfd_frame("probe.output", kFields) == memfd);
}

TEST_CASE("writer frame: the page prints exactly these vectors, in this order") {
  const std::vector<std::string> blocks = hex_blocks_of_page();
  const std::vector<std::string_view> vectors = {kHelloHex, kEvidenceHex, kMemfdHex,
                                                 kVersion2HelloHex};
  REQUIRE(blocks.size() == vectors.size());
  for (size_t i = 0; i < vectors.size(); ++i) {
    CAPTURE(i);
    CHECK(bytes_of(blocks[i]) == bytes_of(vectors[i]));
  }
}

TEST_CASE("writer frame: the writer accepts the documented evidence vector and records it") {
  VectorLab lab;
  // Tokens are random, so the hello is the vector's layout with the issued token in it.
  std::string hello = bytes_of(kHelloHex);
  hello.replace(hello.find(kToken), kToken.size(), lab.token);

  const ConnectionReport r = serve_raw(lab, {hello, bytes_of(kEvidenceHex)});
  CHECK_MESSAGE(!r.rejected, r.reason);
  CHECK(r.frames == 2);
  CHECK(r.accepted == 1);
  CHECK(r.seqs.size() == 1);

  const auto e = lab.only_event();
  CHECK(e.type == events::kRunnerEvidence);
  CHECK(e.actor == "runner:00000000000000a1");
  // SHA-256 of the three inline bytes "ok\n".
  CHECK(e.payload ==
        R"({"v":1,"attempt":"0123456789abcdef","run":"00000000000000a1","world":"primary",)"
        R"("kind":"probe.output","frame":2,"fields":{"stream":"stdout","truncated":false},)"
        R"("refs":[{"id":"frame-2","sha256":)"
        R"("dc51b8c96c2d745df3bd5590d990230a482fd247123599548e0632fdbf97fc22",)"
        R"("kind":"probe.output","bytes":3}]})");
  const auto digest =
      digest_from_hex("dc51b8c96c2d745df3bd5590d990230a482fd247123599548e0632fdbf97fc22");
  REQUIRE(digest.has_value());
  auto stored = lab.blobs->get(*digest);
  REQUIRE(stored.ok());
  CHECK(*stored == "ok\n");
}

TEST_CASE("writer frame: the documented version 2 hello is refused and recorded as the page says") {
  VectorLab lab;
  // Sent exactly as printed: the version is read before the token, so the vector's token does.
  const std::string v2 = bytes_of(kVersion2HelloHex);
  REQUIRE(v2.size() == 90);
  const ConnectionReport r = serve_raw(lab, {v2, bytes_of(kEvidenceHex)});
  CHECK(r.rejected);
  CHECK(r.reason == "unknown frame version 2; this writer reads version 1 only");
  CHECK(r.frames == 1);
  CHECK(r.accepted == 0);
  CHECK(r.seqs.size() == 1);

  const auto e = lab.only_event();
  CHECK(e.type == events::kEvidenceRejected);
  CHECK(e.actor == "supervisor");
  CHECK(to_hex(sha256(v2)) == "e3a8bbfa01df6d53508c299591b7c7ae94ce81d6c5fc814f82d50ddb5587c976");
  CHECK(e.payload ==
        R"({"v":1,"attempt":"0123456789abcdef","run":"00000000000000a1","world":"primary",)"
        R"("frame":1,"reason":"unknown frame version 2; this writer reads version 1 only",)"
        R"("size":90,"sha256":"e3a8bbfa01df6d53508c299591b7c7ae94ce81d6c5fc814f82d50ddb5587c976",)"
        R"("fds":0})");
}

TEST_CASE(
    "writer frame: a frame of the unversioned layout is refused, naming the missing version") {
  VectorLab lab;
  // What a runner built before the version byte sends: the same hello without its first byte.
  std::string hello = bytes_of(kHelloHex).substr(1);
  hello.replace(hello.find(kToken), kToken.size(), lab.token);
  const ConnectionReport r = serve_raw(lab, {hello});
  CHECK(r.rejected);
  CHECK(r.reason ==
        "no frame version: the frame starts with '{'; this writer reads version 1 only");
  CHECK(lab.only_event().type == events::kEvidenceRejected);
  // Refused before the token was looked at: it is still unused.
  CHECK(lab.tokens.claim(lab.token, lab.binding.run_id).is_ok());
}
