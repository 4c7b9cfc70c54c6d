// The writer frame's test vectors (docs/formats/writer-frame.md): the encoder produces exactly
// the documented bytes, and the writer accepts exactly those bytes, sent raw on a real
// SOCK_SEQPACKET socket to a real log and blob store, recording the documented event.
#include <doctest/doctest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <string>
#include <string_view>

#include "engine/crypto/sha256.h"
#include "engine/events/event_types.h"
#include "engine/writer/evidence_writer.h"
#include "engine/writer/frame.h"
#include "tests/support/log_lab.h"
#include "tests/support/wait_until.h"

using namespace aura;
using namespace aura::writer;

namespace {

// The vectors exactly as docs/formats/writer-frame.md prints them (hex, spaces and line breaks
// ignored).
constexpr std::string_view kHelloHex = R"(
7b 22 74 22 3a 22 68 65 6c 6c 6f 22 2c 22 74 6f
6b 65 6e 22 3a 22 30 30 31 31 32 32 33 33 34 34
35 35 36 36 37 37 38 38 39 39 61 61 62 62 63 63
64 64 65 65 66 66 30 30 31 31 32 32 33 33 34 34
35 35 36 36 37 37 38 38 39 39 61 61 62 62 63 63
64 64 65 65 66 66 22 7d 0a)";

constexpr std::string_view kEvidenceHex = R"(
7b 22 74 22 3a 22 65 76 69 64 65 6e 63 65 22 2c
22 6b 69 6e 64 22 3a 22 70 72 6f 62 65 2e 6f 75
74 70 75 74 22 2c 22 66 69 65 6c 64 73 22 3a 7b
22 73 74 72 65 61 6d 22 3a 22 73 74 64 6f 75 74
22 2c 22 74 72 75 6e 63 61 74 65 64 22 3a 66 61
6c 73 65 7d 7d 0a 6f 6b 0a)";

constexpr std::string_view kMemfdHex = R"(
7b 22 74 22 3a 22 65 76 69 64 65 6e 63 65 22 2c
22 6b 69 6e 64 22 3a 22 70 72 6f 62 65 2e 6f 75
74 70 75 74 22 2c 22 66 69 65 6c 64 73 22 3a 7b
22 73 74 72 65 61 6d 22 3a 22 73 74 64 6f 75 74
22 2c 22 74 72 75 6e 63 61 74 65 64 22 3a 66 61
6c 73 65 7d 2c 22 6d 65 6d 66 64 22 3a 74 72 75
65 7d 0a)";

constexpr std::string_view kToken =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";
constexpr std::string_view kFields = R"({"stream":"stdout","truncated":false})";

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
  CHECK(hello.size() == 89);
  CHECK(evidence.size() == 89);
  CHECK(memfd.size() == 99);
  CHECK(hello_frame(kToken) == hello);
  CHECK(evidence_frame("probe.output", kFields, "ok\n") == evidence);
  CHECK(evidence_memfd_frame("probe.output", kFields) == memfd);
}

TEST_CASE("writer frame: the writer accepts the documented evidence vector and records it") {
  aura::testing::LogLab lab;
  TokenRegistry tokens;
  RunBinding binding;
  binding.run_id = "00000000000000a1";
  binding.attempt = "0123456789abcdef";
  binding.world = "primary";
  binding.kinds = {"probe.output"};
  // Tokens are random, so the hello is the vector's layout with the issued token in it.
  auto token = tokens.issue(binding.run_id);
  REQUIRE(token.ok());
  std::string hello = bytes_of(kHelloHex);
  hello.replace(hello.find(kToken), kToken.size(), *token);

  const std::string evidence = bytes_of(kEvidenceHex);

  int sv[2];
  REQUIRE(::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(sv[0]);
    // Raw sends: the vector's bytes, not the encoder's.
    const bool ok =
        ::send(sv[1], hello.data(), hello.size(), MSG_NOSIGNAL) == ssize_t(hello.size()) &&
        ::send(sv[1], evidence.data(), evidence.size(), MSG_NOSIGNAL) == ssize_t(evidence.size());
    ::_exit(ok ? 0 : 1);
  }
  ::close(sv[1]);
  auto r = serve_connection(sv[0], binding, tokens, *lab.log, *lab.blobs,
                            std::chrono::steady_clock::now() + aura::testing::kHangGuard);
  ::close(sv[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK_MESSAGE(!r->rejected, r->reason);
  CHECK(r->frames == 2);
  CHECK(r->accepted == 1);
  REQUIRE(r->seqs.size() == 1);

  std::string type, actor, stream, payload;
  REQUIRE(lab.log
              ->read_stream(binding.stream(), 1,
                            [&](const EventView& e) {
                              type = e.type;
                              actor = e.actor;
                              stream = e.stream;
                              payload = e.payload;
                              return false;
                            })
              .is_ok());
  CHECK(type == events::kRunnerEvidence);
  CHECK(actor == "runner:00000000000000a1");
  CHECK(stream == "attempt/0123456789abcdef");
  // SHA-256 of the three inline bytes "ok\n".
  CHECK(payload ==
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
