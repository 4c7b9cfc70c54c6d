#include "engine/sign/signed_note.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/sign/note_text.h"
#include "engine/sign/signed_note_format.h"

using namespace aura;

namespace {

// Reference values from golang.org/x/mod/sumdb/note's tests (the PeterNeumann and EnochRoot
// keys); Ed25519 is deterministic, so signing the text must reproduce the note exactly.
constexpr std::string_view kPeterVkey =
    "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW";
constexpr std::string_view kPeterSkey =
    "PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz";
constexpr std::string_view kEnochVkey =
    "EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop";
constexpr std::string_view kText =
    "If you think cryptography is the answer to your problem,\n"
    "then you don't know what your problem is.\n";
const std::string kPeterSig =
    "\xE2\x80\x94 PeterNeumann "
    "x08go/ZJkuBS9UG/"
    "SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n";
const std::string kEnochSig =
    "\xE2\x80\x94 EnochRoot "
    "rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/"
    "5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n";

// The AURA vector documented in docs/formats/keys.md (seed 00 01 .. 1f).
constexpr std::string_view kAuraVkey =
    "aura.lab/example+7797854e+AQOhB7/zzhC+HXDdGOdLwJln5NYwm6UNXx3chmQSVTG4";
constexpr std::string_view kAuraSkey =
    "PRIVATE+KEY+aura.lab/example+7797854e+AQABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f";

NoteVerifierKey vkey(std::string_view text) {
  auto k = parse_verifier_key(text);
  REQUIRE_MESSAGE(k.ok(), k.status().message());
  return *k;
}

NoteSigner skey(std::string_view text) {
  auto s = parse_signer_key(text);
  REQUIRE_MESSAGE(s.ok(), s.status().message());
  return *s;
}

NoteSigner fresh_signer(std::string name) {
  return NoteSigner(std::move(name), Ed25519KeyPair::generate());
}

std::string peter_note() { return std::string(kText) + "\n" + kPeterSig; }

}  // namespace

TEST_CASE("note key id: the Go reference PeterNeumann key hashes to c74f20a3") {
  const NoteVerifierKey k = vkey(kPeterVkey);
  CHECK(note_key_id("PeterNeumann", k.key) == 0xc74f20a3);
  CHECK(note_key_id("EnochRoot", vkey(kEnochVkey).key) == 0xaf0cfe78);
}

TEST_CASE("note key id: is the first 4 bytes of SHA-256(name || 0x0A || 0x01 || key)") {
  Ed25519Seed seed;
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i);
  const auto kp = Ed25519KeyPair::from_seed(seed);
  CHECK(to_hex(kp.public_key()) ==
        "03a107bff3ce10be1d70dd18e74bc09967e4d6309ba50d5f1ddc8664125531b8");
  std::string preimage = "aura.lab/example\n\x01";
  preimage.append(as_chars(kp.public_key()));
  const Digest d = sha256(preimage);
  CHECK(to_hex(std::span(d).first(4)) == "7797854e");
  CHECK(note_key_id("aura.lab/example", kp.public_key()) == 0x7797854e);
  CHECK(note_key_id("aura.lab/exampl3", kp.public_key()) != 0x7797854e);
}

TEST_CASE("verifier key: the Go reference and AURA vkeys parse and format back byte for byte") {
  const NoteVerifierKey peter = vkey(kPeterVkey);
  CHECK(peter.name == "PeterNeumann");
  CHECK(peter.key_id == 0xc74f20a3);
  CHECK(format_verifier_key(peter) == kPeterVkey);
  const NoteVerifierKey aura = vkey(kAuraVkey);
  CHECK(aura.name == "aura.lab/example");
  CHECK(aura.key_id == 0x7797854e);
  CHECK(format_verifier_key(aura) == kAuraVkey);
}

TEST_CASE("verifier key: one trailing newline is accepted, nothing else around it") {
  CHECK(parse_verifier_key(std::string(kPeterVkey) + "\n").ok());
  CHECK_FALSE(parse_verifier_key(std::string(kPeterVkey) + "\n\n").ok());
  CHECK_FALSE(parse_verifier_key(std::string(kPeterVkey) + "\r\n").ok());
  CHECK_FALSE(parse_verifier_key(std::string(kPeterVkey) + " ").ok());
  CHECK_FALSE(parse_verifier_key(" " + std::string(kPeterVkey)).ok());
  CHECK_FALSE(parse_verifier_key("\n" + std::string(kPeterVkey)).ok());
}

TEST_CASE("verifier key: every proper substring and every single-byte change is refused") {
  const std::string k(kPeterVkey);
  for (size_t i = 0; i <= k.size(); ++i) {
    for (size_t j = i + 1; j <= k.size(); ++j) {
      if (i == 0 && j == k.size()) continue;
      CHECK_MESSAGE(!parse_verifier_key(k.substr(i, j - i)).ok(), k.substr(i, j - i));
    }
  }
  for (size_t i = 0; i < k.size(); ++i) {
    std::string m = k;
    ++m[i];
    CHECK_MESSAGE(!parse_verifier_key(m).ok(), m);
  }
}

TEST_CASE("verifier key: malformed forms are refused") {
  const NoteVerifierKey peter = vkey(kPeterVkey);
  // Builds "<name>+<id of name and key>+<base64(bytes)>" so only the intended field is bad.
  const auto with_bytes = [](std::string name, std::string bytes) {
    Sha256 h;
    h.update(name).update(std::string_view("\n")).update(bytes);
    const Digest d = h.finish();
    return name + "+" + to_hex(std::span(d).first(4)) + "+" + base64_encode(bytes);
  };
  std::string good_bytes = "\x01";
  good_bytes.append(as_chars(peter.key));
  REQUIRE(parse_verifier_key(with_bytes("PeterNeumann", good_bytes)).ok());

  std::string wrong_type = good_bytes;
  wrong_type[0] = 0x02;
  std::string small_order(33, '\0');  // the identity point, order 1
  small_order[0] = 0x01;
  small_order[1] = 0x01;

  const std::vector<std::string> bad = {
      "",
      "PeterNeumann",
      "PeterNeumann+c74f20a3",
      "PeterNeumann+c74f20a3+",
      "+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",               // empty name
      "PeterNeumann+C74F20A3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",   // upper hex
      "PeterNeumann+c74f20a+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",    // 7 hex
      "PeterNeumann+0c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",  // 9 hex
      "PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",   // wrong id
      "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW=",  // bad padding
      "PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq_LDE4izWy10TW",   // URL alphabet
      "Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW",
      with_bytes("Peter Neumann", good_bytes),         // space in name, id adjusted
      with_bytes("Peter\tNeumann", good_bytes),        // control character in name
      with_bytes("Peter\xC2\xA0Neumann", good_bytes),  // U+00A0 no-break space
      with_bytes("Peter\xFFNeumann", good_bytes),      // invalid UTF-8
      with_bytes(std::string(note_format::kMaxKeyNameBytes + 1, 'a'), good_bytes),
      with_bytes("PeterNeumann", wrong_type),                // not Ed25519
      with_bytes("PeterNeumann", good_bytes.substr(0, 32)),  // 31-byte key
      with_bytes("PeterNeumann", good_bytes + "x"),          // 33-byte key
      with_bytes("PeterNeumann", small_order),               // not a usable key
  };
  for (const std::string& s : bad) {
    auto r = parse_verifier_key(s);
    CHECK_MESSAGE(!r.ok(), s);
    if (!r.ok()) CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  }
  CHECK(parse_verifier_key(with_bytes(std::string(note_format::kMaxKeyNameBytes, 'a'), good_bytes))
            .ok());
  CHECK(parse_verifier_key(with_bytes("\xC3\xA9t\xC3\xA9.example/log", good_bytes)).ok());
}

TEST_CASE("key name: empty, space, '+', control characters and over-long names are refused") {
  CHECK(is_valid_key_name("aura.lab/0123456789abcdef"));
  CHECK(is_valid_key_name("\xC3\xA9t\xC3\xA9"));  // UTF-8 is fine
  CHECK_FALSE(is_valid_key_name(""));
  CHECK_FALSE(is_valid_key_name("a b"));
  CHECK_FALSE(is_valid_key_name("a+b"));
  CHECK_FALSE(is_valid_key_name("a\nb"));
  CHECK_FALSE(
      is_valid_key_name("a\xE3\x80\x80"
                        "b"));  // U+3000 ideographic space
  CHECK_FALSE(
      is_valid_key_name("a\xE2\x80\x8A"
                        "b"));                      // U+200A hair space
  CHECK_FALSE(is_valid_key_name("a\xC0\xAF"));      // overlong '/'
  CHECK_FALSE(is_valid_key_name("a\xED\xA0\x80"));  // UTF-16 surrogate
  CHECK_FALSE(is_valid_key_name(std::string(257, 'n')));
  CHECK_FALSE(NoteSigner::create("bad name", Ed25519KeyPair::generate()).ok());
  CHECK(NoteSigner::create("good.name", Ed25519KeyPair::generate()).ok());
}

TEST_CASE("signer key: the Go reference skey parses, matches its vkey and formats back") {
  const NoteSigner peter = skey(kPeterSkey);
  CHECK(peter.name() == "PeterNeumann");
  CHECK(peter.key_id() == 0xc74f20a3);
  CHECK(peter.verifier() == vkey(kPeterVkey));
  CHECK(format_signer_key(peter) == kPeterSkey);
  CHECK(parse_signer_key(std::string(kPeterSkey) + "\n").ok());
  CHECK_FALSE(parse_signer_key(std::string(kPeterSkey) + "\n\n").ok());

  const NoteSigner aura = skey(kAuraSkey);
  CHECK(format_verifier_key(aura.verifier()) == kAuraVkey);
  CHECK(format_signer_key(aura) == kAuraSkey);
}

TEST_CASE("signer key: every proper substring and every single-byte change is refused") {
  const std::string k(kPeterSkey);
  for (size_t i = 0; i <= k.size(); ++i) {
    for (size_t j = i + 1; j <= k.size(); ++j) {
      if (i == 0 && j == k.size()) continue;
      CHECK_MESSAGE(!parse_signer_key(k.substr(i, j - i)).ok(), k.substr(i, j - i));
    }
  }
  for (size_t i = 0; i < k.size(); ++i) {
    std::string m = k;
    ++m[i];
    CHECK_MESSAGE(!parse_signer_key(m).ok(), m);
  }
}

TEST_CASE("signer key: a vkey or a key id that does not match the seed is refused") {
  CHECK_FALSE(parse_signer_key(kPeterVkey).ok());
  CHECK_FALSE(parse_signer_key("PRIVATE+KEY+PeterNeumann+c74f20a4+"
                               "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
                  .ok());
  CHECK_FALSE(parse_signer_key("PRIVATE+KEY+EnochRoot+c74f20a3+"
                               "AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz")
                  .ok());
}

TEST_CASE("signed note: signing the Go reference text reproduces the Go reference note") {
  auto note = sign_note(kText, skey(kPeterSkey));
  REQUIRE(note.ok());
  CHECK(*note == peter_note());
}

TEST_CASE("signed note: the Go reference note opens with its vkey") {
  const std::vector<NoteVerifierKey> known = {vkey(kPeterVkey)};
  auto text = open_note(peter_note(), known);
  REQUIRE_MESSAGE(text.ok(), text.status().message());
  CHECK(*text == kText);
}

TEST_CASE("signed note: sign then open returns the exact text") {
  const NoteSigner s = fresh_signer("aura.lab/test");
  const std::string text = "line one\nline \xC3\xA9 two\n3\n";
  auto note = sign_note(text, s);
  REQUIRE(note.ok());
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  auto opened = open_note(*note, known);
  REQUIRE_MESSAGE(opened.ok(), opened.status().message());
  CHECK(*opened == text);
}

TEST_CASE("signed note: a changed text byte is refused as an invalid signature") {
  const std::vector<NoteVerifierKey> known = {vkey(kPeterVkey)};
  std::string note = peter_note();
  note[note.find("cryptography")] = 'C';
  auto r = open_note(note, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kCorruption);
  CHECK(r.status().message().find("invalid signature for key PeterNeumann+c74f20a3") !=
        std::string::npos);
}

TEST_CASE("signed note: a changed signature byte is refused") {
  const std::vector<NoteVerifierKey> known = {vkey(kPeterVkey)};
  const std::string note = peter_note();
  const size_t sig_at = note.rfind(' ') + 1;
  // Flip each byte of the 64-byte Ed25519 signature (after the 4-byte id).
  const std::string blob = *base64_decode(note.substr(sig_at, note.size() - sig_at - 1));
  for (size_t i = note_format::kKeyIdBytes; i < blob.size(); ++i) {
    std::string b = blob;
    b[i] ^= 0x01;
    const std::string bad = note.substr(0, sig_at) + base64_encode(b) + "\n";
    auto r = open_note(bad, known);
    CHECK_FALSE(r.ok());
  }
  // A known id with a signature of the wrong length fails verification too.
  const std::string short_sig = note.substr(0, sig_at) + base64_encode(blob.substr(0, 67)) + "\n";
  CHECK(open_note(short_sig, known).status().code() == ErrorCode::kCorruption);
}

TEST_CASE("signed note: a signature from an unknown key alone is refused") {
  const std::vector<NoteVerifierKey> enoch = {vkey(kEnochVkey)};
  auto r = open_note(peter_note(), enoch);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kCorruption);
  CHECK(r.status().message().find("no verifiable signature by a known key") != std::string::npos);
  CHECK_FALSE(open_note(peter_note(), std::span<const NoteVerifierKey>()).ok());
}

TEST_CASE("signed note: the wrong key with the same name is an unknown key, not a match") {
  // Same name, different key: the key id differs, so the signature is ignored and the note
  // has no signature by a known key.
  const NoteSigner impostor = fresh_signer("PeterNeumann");
  const std::vector<NoteVerifierKey> known = {impostor.verifier()};
  CHECK(open_note(peter_note(), known).status().code() == ErrorCode::kCorruption);
  // Same name and id but a different key: the signature must verify under the known key.
  NoteVerifierKey forged = impostor.verifier();
  forged.key_id = 0xc74f20a3;
  const std::vector<NoteVerifierKey> forged_known = {forged};
  auto r = open_note(peter_note(), forged_known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("invalid signature") != std::string::npos);
}

TEST_CASE("signed note: an unknown key's signature is ignored when another known key verifies") {
  const std::vector<NoteVerifierKey> peter = {vkey(kPeterVkey)};
  const std::string two = std::string(kText) + "\n" + kPeterSig + kEnochSig;
  auto r = open_note(two, peter);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(*r == kText);
  const std::vector<NoteVerifierKey> enoch = {vkey(kEnochVkey)};
  CHECK(open_note(two, enoch).ok());
  const std::vector<NoteVerifierKey> both = {vkey(kEnochVkey), vkey(kPeterVkey)};
  CHECK(open_note(two, both).ok());
  // An unknown signature that is garbage (but well-formed) is still ignored.
  const std::string junk = "\xE2\x80\x94 someone.else " + base64_encode(std::string(9, 'x')) + "\n";
  CHECK(open_note(std::string(kText) + "\n" + junk + kPeterSig, peter).ok());
}

TEST_CASE(
    "signed note: a known key whose signature fails rejects the note even if another "
    "verifies") {
  const std::vector<NoteVerifierKey> both = {vkey(kEnochVkey), vkey(kPeterVkey)};
  std::string bad_enoch = kEnochSig;
  bad_enoch.insert(60, "ABCD");
  auto r = open_note(std::string(kText) + "\n" + kPeterSig + bad_enoch, both);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("EnochRoot+af0cfe78") != std::string::npos);
  // The same line from a key we do not know is ignored.
  const std::vector<NoteVerifierKey> peter = {vkey(kPeterVkey)};
  CHECK(open_note(std::string(kText) + "\n" + kPeterSig + bad_enoch, peter).ok());
}

TEST_CASE("signed note: malformed notes are refused") {
  const std::vector<NoteVerifierKey> known = {vkey(kPeterVkey)};
  const std::string text(kText);
  const std::vector<std::string> bad = {
      "",
      text,                                                     // no signatures
      text + "\n",                                              // empty signature block
      text + "\n" + kPeterSig.substr(0, kPeterSig.size() - 1),  // no final newline
      "\x01" + text + "\n" + kPeterSig,                         // control character
      "\xff" + text + "\n" + kPeterSig,                         // invalid UTF-8
      text + "\n" + kPeterSig + "Unexpected line.\n",           // not a signature line
      text + "\n" + kPeterSig + "\n",                           // trailing empty line
      text + kPeterSig,                                         // no empty line before it
      text + "\n" + "\xE2\x80\x94 Bad Name " + kPeterSig.substr(kPeterSig.rfind(' ') + 1),
      text + "\n" + "- PeterNeumann " + kPeterSig.substr(kPeterSig.rfind(' ') + 1),  // hyphen
      text + "\n" + "\xE2\x80\x94  PeterNeumann " + kPeterSig.substr(kPeterSig.rfind(' ') + 1),
      text + "\n" + "\xE2\x80\x94 PeterNeumann\n",       // no signature
      text + "\n" + "\xE2\x80\x94 PeterNeumann x08g\n",  // base64 of < 5 bytes
      text + "\n" + "\xE2\x80\x94 PeterNeumann not-base64!\n",
      text + "\n" + "\xE2\x80\x94 Peter+Neumann " + kPeterSig.substr(kPeterSig.rfind(' ') + 1),
      text + "\n" + kPeterSig + "\r\n",
      text.substr(0, text.size() - 1) + "\r\n\n" + kPeterSig,  // CR is a control character
  };
  for (const std::string& n : bad) {
    auto r = open_note(n, known);
    CHECK_MESSAGE(!r.ok(), n);
    if (!r.ok()) CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  }
}

TEST_CASE("signed note: more than 100 signature lines are refused, 100 are accepted") {
  const std::vector<NoteVerifierKey> known = {vkey(kPeterVkey)};
  std::string ok_note = std::string(kText) + "\n";
  for (int i = 0; i < 100; ++i) ok_note += kPeterSig;
  CHECK(open_note(ok_note, known).ok());
  auto r = open_note(ok_note + kPeterSig, known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInvalidArgument);
  CHECK(r.status().message().find("more than 100 signature lines") != std::string::npos);
  CHECK_FALSE(open_note(ok_note + kPeterSig, std::span<const NoteVerifierKey>()).ok());
}

TEST_CASE("signed note: a note over 1 MiB is refused before parsing, and cannot be signed") {
  const NoteSigner s = fresh_signer("aura.lab/big");
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  std::string line(1000, 'x');
  line += "\n";
  std::string text;
  while (text.size() + line.size() < note_format::kMaxNoteBytes - 200) text += line;
  auto note = sign_note(text, s);
  REQUIRE(note.ok());
  CHECK(open_note(*note, known).ok());
  auto r = sign_note(text + line, s);
  CHECK_FALSE(r.ok());
  const std::string huge = std::string(note_format::kMaxNoteBytes, 'a') + *note;
  auto o = open_note(huge, known);
  REQUIRE_FALSE(o.ok());
  CHECK(o.status().message().find("exceeds the limit") != std::string::npos);
}

TEST_CASE("signed note: text that must not be signed is refused") {
  const NoteSigner s = fresh_signer("aura.lab/test");
  for (std::string_view t : {std::string_view(""), std::string_view("no newline"),
                             std::string_view("\n"), std::string_view("a\n\nb\n"),
                             std::string_view("\nstarts empty\n"), std::string_view("tab\there\n"),
                             std::string_view("bad \xff utf8\n"), std::string_view("cr\r\n")}) {
    auto r = sign_note(t, s);
    CHECK_MESSAGE(!r.ok(), t);
  }
  const NoteSigner bad_name("bad name", Ed25519KeyPair::generate());
  CHECK_FALSE(sign_note("fine\n", bad_name).ok());
}

TEST_CASE("signed note: text with an empty line opens, split at the last empty line (C2SP)") {
  const NoteSigner s = fresh_signer("aura.lab/test");
  const std::string text = "first\n\nsecond\n";
  std::string blob;
  for (int shift = 24; shift >= 0; shift -= 8) blob.push_back(char(s.key_id() >> shift));
  blob.append(as_chars(s.sign(text)));
  const std::string note = text + "\n\xE2\x80\x94 aura.lab/test " + base64_encode(blob) + "\n";
  const std::vector<NoteVerifierKey> known = {s.verifier()};
  auto r = open_note(note, known);
  REQUIRE_MESSAGE(r.ok(), r.status().message());
  CHECK(*r == text);
}

TEST_CASE(
    "signed note: two known keys with the same name and id but different keys are "
    "refused as ambiguous") {
  NoteVerifierKey peter = vkey(kPeterVkey);
  NoteVerifierKey twin = fresh_signer("PeterNeumann").verifier();
  twin.key_id = peter.key_id;
  const std::vector<NoteVerifierKey> known = {peter, twin};
  auto r = open_note(peter_note(), known);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().message().find("ambiguous") != std::string::npos);
}
