#include "engine/checkpoint/checkpoint.h"

#include <doctest/doctest.h>

#include <cctype>
#include <string>
#include <vector>

#include "engine/crypto/ed25519.h"

using namespace aura;

namespace {

// The vectors documented in docs/formats/checkpoint.md (key from docs/formats/keys.md).
constexpr std::string_view kAuraSkey =
    "PRIVATE+KEY+aura.lab/example+7797854e+AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";
constexpr std::string_view kAuraVkey =
    "aura.lab/example+7797854e+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4";
constexpr std::string_view kBody1 =
    "aura.lab/example\n"
    "1\n"
    "cz/87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Ds=\n"
    "chain-head 8855d3978dd94f682c1d284885b07a701232cd2aefad024601c3f08b2ea49f1f\n";
constexpr std::string_view kNote1 =
    "aura.lab/example\n"
    "1\n"
    "cz/87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Ds=\n"
    "chain-head 8855d3978dd94f682c1d284885b07a701232cd2aefad024601c3f08b2ea49f1f\n"
    "\n"
    "\xE2\x80\x94 aura.lab/example "
    "d5eFTs6U70NFJlybZPCuuEUEuZZWyPSsny6c6UElUgz9dGLdg/yA7Rrx4HLAJ8Jt8pshhrO7xB1avgxp0hF128H/"
    "4AU=\n";
constexpr std::string_view kBody0 =
    "aura.lab/example\n"
    "0\n"
    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
    "chain-head 0000000000000000000000000000000000000000000000000000000000000000\n";
constexpr std::string_view kNote0 =
    "aura.lab/example\n"
    "0\n"
    "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n"
    "chain-head 0000000000000000000000000000000000000000000000000000000000000000\n"
    "\n"
    "\xE2\x80\x94 aura.lab/example "
    "d5eFTilhcemUjIhfDCuNQEMXlP3mxoE0jZBU6Ds6YIs026/aKP4DwY1X0PjhsDP5KA0HP/"
    "uTV7fmcPS5OUNCjad04Ak=\n";

// Checkpoint 1 of the vector: one event whose hash is SHA-256("aura example event"); the
// root is the RFC 6962 leaf hash SHA-256(0x00 || that hash).
Checkpoint vector1() {
  Checkpoint c;
  c.origin = "aura.lab/example";
  c.size = 1;
  c.chain_head = sha256(std::string_view("aura example event"));
  std::string leaf(1, '\0');
  leaf.append(as_chars(c.chain_head));
  c.root = sha256(leaf);
  return c;
}

Checkpoint vector0() {
  Checkpoint c;
  c.origin = "aura.lab/example";
  c.root = sha256(std::string_view());
  return c;
}

NoteSigner aura_signer() {
  auto s = parse_signer_key(kAuraSkey);
  REQUIRE(s.ok());
  return *s;
}

std::vector<NoteVerifierKey> aura_known() {
  auto k = parse_verifier_key(kAuraVkey);
  REQUIRE(k.ok());
  return {*k};
}

// kBody1 with line `index` (0-based) replaced by `line` (no newline).
std::string with_line(size_t index, std::string_view line) {
  std::string out;
  std::string_view rest = kBody1;
  for (size_t i = 0; !rest.empty(); ++i) {
    const size_t nl = rest.find('\n');
    out.append(i == index ? line : rest.substr(0, nl)).append("\n");
    rest.remove_prefix(nl + 1);
  }
  return out;
}

void check_refused(std::string_view body, std::string_view why) {
  auto r = parse_checkpoint_body(body);
  CHECK_MESSAGE(!r.ok(), why, ": ", body);
  if (!r.ok()) CHECK(r.status().code() == ErrorCode::kInvalidArgument);
}

}  // namespace

TEST_CASE("checkpoint body: the documented vectors format and parse back") {
  CHECK(to_hex(vector1().root) ==
        "733ffceeb12b5d8cf8b15dc5c29605f4f7b25334a0d91933cc73155674b4ec3b");
  CHECK(checkpoint_body(vector1()) == kBody1);
  CHECK(checkpoint_body(vector0()) == kBody0);
  auto c1 = parse_checkpoint_body(kBody1);
  REQUIRE_MESSAGE(c1.ok(), c1.status().message());
  CHECK(*c1 == vector1());
  auto c0 = parse_checkpoint_body(kBody0);
  REQUIRE_MESSAGE(c0.ok(), c0.status().message());
  CHECK(*c0 == vector0());
}

TEST_CASE("checkpoint: signing the documented vectors gives the documented notes") {
  auto n1 = sign_checkpoint(vector1(), aura_signer());
  REQUIRE(n1.ok());
  CHECK(*n1 == kNote1);
  auto n0 = sign_checkpoint(vector0(), aura_signer());
  REQUIRE(n0.ok());
  CHECK(*n0 == kNote0);
}

TEST_CASE("checkpoint: the documented notes open with the documented vkey") {
  const auto known = aura_known();
  auto c1 = open_checkpoint(kNote1, known);
  REQUIRE_MESSAGE(c1.ok(), c1.status().message());
  CHECK(*c1 == vector1());
  auto c0 = open_checkpoint(kNote0, known);
  REQUIRE_MESSAGE(c0.ok(), c0.status().message());
  CHECK(*c0 == vector0());
}

TEST_CASE("checkpoint: sign then open round-trips a large size") {
  const NoteSigner s("aura.lab/0123456789abcdef", Ed25519KeyPair::generate());
  Checkpoint c = vector1();
  c.origin = "aura.lab/instance-7";
  c.size = UINT64_MAX;
  auto note = sign_checkpoint(c, s);
  REQUIRE(note.ok());
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  auto back = open_checkpoint(*note, known);
  REQUIRE_MESSAGE(back.ok(), back.status().message());
  CHECK(*back == c);
}

TEST_CASE("open checkpoint: a changed size, root or chain head byte is refused") {
  const auto known = aura_known();
  for (auto [from, to] : {std::pair<std::string_view, std::string_view>{"\n1\n", "\n2\n"},
                          {"cz/87", "cz/88"},
                          {"chain-head 8855", "chain-head 8856"}}) {
    std::string note(kNote1);
    note.replace(note.find(from), from.size(), to);
    auto r = open_checkpoint(note, known);
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kCorruption);
    CHECK(r.status().message().find("open checkpoint: signed note: invalid signature") == 0);
  }
}

TEST_CASE("open checkpoint: a checkpoint signed only by an unknown key is refused") {
  const NoteSigner other("aura.lab/other", Ed25519KeyPair::generate());
  const std::vector<NoteVerifierKey> known = {other.verifier()};
  auto r = open_checkpoint(kNote1, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("no verifiable signature by a known key") != std::string::npos);
}

TEST_CASE("open checkpoint: a validly signed but malformed body is refused") {
  // The note layer verifies; the checkpoint parser must still refuse the text.
  const NoteSigner s = aura_signer();
  auto note = sign_note("aura.lab/example\n01\nAAAA\n", s);
  REQUIRE(note.ok());
  auto r = open_checkpoint(*note, aura_known());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
}

TEST_CASE("checkpoint body: a malformed origin line is refused") {
  check_refused(with_line(0, ""), "empty origin");
  check_refused(with_line(0, "aura.lab/ex ample"), "space");
  check_refused(with_line(0, "aura.lab/ex\tample"), "tab");
  check_refused(with_line(0,
                          "aura.lab/ex\xC2\xA0"
                          "ample"),
                "no-break space");
  check_refused(with_line(0, "aura.lab/ex+ample"), "plus");
  check_refused(with_line(0, "aura.lab/\xff"), "invalid UTF-8");
  check_refused(with_line(0, "aura.lab/\x01"), "control character");
  check_refused(with_line(0, std::string(257, 'o')), "too long");
  CHECK(parse_checkpoint_body(with_line(0, std::string(256, 'o'))).ok());
}

TEST_CASE("checkpoint body: a malformed size line is refused") {
  for (std::string_view s :
       {"", "01", "00", "+1", "-1", " 1", "1 ", "0x1", "1.0", "１", "18446744073709551616",
        "99999999999999999999", "000000000000000000001"}) {
    check_refused(with_line(1, s), s);
  }
  CHECK(parse_checkpoint_body(with_line(1, "18446744073709551615")).ok());
  CHECK(parse_checkpoint_body(with_line(1, "10")).ok());
}

TEST_CASE("checkpoint body: a malformed root line is refused") {
  const std::string root(kBody1.substr(kBody1.find('\n', 18) + 1, 44));
  REQUIRE(root == "cz/87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Ds=");
  check_refused(with_line(2, ""), "empty");
  check_refused(with_line(2, root.substr(0, 43)), "missing padding");
  check_refused(with_line(2, root.substr(0, 43) + "t"), "unpadded");
  check_refused(with_line(2, "cz/87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Dt="), "non-canonical");
  check_refused(with_line(2, "cz_87rErXYz4sV3FwpYF9PeyUzSg2RkzzHMVVnS07Ds="), "URL alphabet");
  check_refused(with_line(2, base64_encode(std::string(31, 'a'))), "31 bytes");
  check_refused(with_line(2, base64_encode(std::string(33, 'a'))), "33 bytes");
  check_refused(with_line(2, root + " "), "trailing space");
  check_refused(with_line(2, to_hex(vector1().root)), "hex instead of base64");
}

TEST_CASE("checkpoint body: a malformed or missing chain-head line is refused") {
  const std::string hex = "8855d3978dd94f682c1d284885b07a701232cd2aefad024601c3f08b2ea49f1f";
  std::string upper = hex;
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  check_refused(with_line(3, "chain-head " + upper), "uppercase hex");
  check_refused(with_line(3, "chain-head " + hex.substr(1)), "63 digits");
  check_refused(with_line(3, "chain-head " + hex + "0"), "65 digits");
  check_refused(with_line(3, "chain-head  " + hex), "two spaces");
  check_refused(with_line(3, "chain-head" + hex), "no space");
  check_refused(with_line(3, "Chain-head " + hex), "capitalised keyword");
  check_refused(with_line(3, hex), "no keyword");
  check_refused(with_line(3, "chain-head " + hex.substr(0, 63) + "g"), "non-hex digit");
  check_refused(with_line(3, ""), "empty extension line");
  const std::string_view three = kBody1.substr(0, kBody1.find("chain-head"));
  check_refused(three, "no extension line");
  check_refused(std::string(kBody1) + "chain-head " + hex + "\n", "two chain heads");
  check_refused(std::string(kBody1) + "other extension\n", "unknown extension line");
}

TEST_CASE("checkpoint body: framing errors are refused") {
  check_refused("", "empty");
  check_refused(kBody1.substr(0, kBody1.size() - 1), "no final newline");
  check_refused(std::string(kBody1) + "\n", "trailing empty line");
  check_refused("\n" + std::string(kBody1), "leading empty line");
  std::string crlf(kBody1);
  crlf.replace(crlf.find("\n1\n"), 3, "\r\n1\n");
  check_refused(crlf, "CRLF");
  check_refused(std::string(1 << 20, 'a') + "\n" + std::string(kBody1), "1 MiB origin");
  auto r = parse_checkpoint_body(std::string(kBody1) + "extra\n");
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message() ==
        "checkpoint: body has 5 lines; want 4: origin, size, root, chain-head (no other "
        "extension lines)");
}

TEST_CASE("checkpoint: size 0 requires the empty-tree root and a zero chain head") {
  Checkpoint c = vector0();
  CHECK(validate_checkpoint(c).is_ok());
  c.chain_head[31] = 1;
  CHECK_FALSE(validate_checkpoint(c).is_ok());
  CHECK_FALSE(parse_checkpoint_body(checkpoint_body(c)).ok());
  CHECK_FALSE(sign_checkpoint(c, aura_signer()).ok());
  c = vector0();
  c.root[0] ^= 1;
  CHECK_FALSE(validate_checkpoint(c).is_ok());
  CHECK_FALSE(parse_checkpoint_body(checkpoint_body(c)).ok());
  // A non-empty log never has an all-zero chain head.
  c = vector1();
  c.chain_head = Digest{};
  CHECK_FALSE(validate_checkpoint(c).is_ok());
  CHECK_FALSE(parse_checkpoint_body(checkpoint_body(c)).ok());
}

TEST_CASE("sign checkpoint: an invalid origin is refused before signing") {
  Checkpoint c = vector1();
  c.origin = "has space";
  auto r = sign_checkpoint(c, aura_signer());
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  c.origin = "two\nlines";
  CHECK_FALSE(sign_checkpoint(c, aura_signer()).ok());
}
