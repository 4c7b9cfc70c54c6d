// C2SP signed notes with Ed25519 keys (c2sp.org/signed-note): signing, verifying, and the
// text encodings of verifier and signer keys. open_note() returns text only after a known
// key's signature over exactly those bytes has verified.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/crypto/ed25519.h"

namespace aura {

// True if `name` is a usable key name: 1..note_format::kMaxKeyNameBytes bytes of valid
// UTF-8 with no control character, no Unicode space and no '+'.
bool is_valid_key_name(std::string_view name);

// The first 4 bytes, big-endian, of SHA-256(name || 0x0A || 0x01 || key).
uint32_t note_key_id(std::string_view name, const Ed25519PublicKey& key);

// A public key that verifies notes. Two keys are the same only if all three fields match.
struct NoteVerifierKey {
  std::string name;
  uint32_t key_id = 0;
  Ed25519PublicKey key{};

  bool operator==(const NoteVerifierKey&) const = default;
};

// "<name>+<8 lowercase hex key id>+<base64(0x01 || key)>", no newline.
std::string format_verifier_key(const NoteVerifierKey& key);

// Parses the format above. Strict: the name must be valid, the id 8 lowercase hex digits
// that match note_key_id(name, key), the base64 canonical and 33 bytes starting 0x01, and
// the key a valid Ed25519 point. One trailing "\n" is accepted (a key file's line end).
Result<NoteVerifierKey> parse_verifier_key(std::string_view text);

// A named Ed25519 signing key. Thread-safe for concurrent const use.
class NoteSigner {
 public:
  // REQUIRES: is_valid_key_name(name); sign_note() refuses to sign with an invalid name.
  // Use create() to validate.
  NoteSigner(std::string name, Ed25519KeyPair key);
  static Result<NoteSigner> create(std::string name, Ed25519KeyPair key);

  const std::string& name() const { return name_; }
  uint32_t key_id() const { return key_id_; }
  NoteVerifierKey verifier() const { return {name_, key_id_, key_.public_key()}; }
  // A raw Ed25519 signature over `msg`; callers include the context in `msg`.
  Ed25519Signature sign(std::string_view msg) const { return key_.sign(msg); }
  const Ed25519KeyPair& key_pair() const { return key_; }

 private:
  std::string name_;
  uint32_t key_id_;
  Ed25519KeyPair key_;
};

// "PRIVATE+KEY+<name>+<8 hex id>+<base64(0x01 || 32-byte seed)>", no newline. The result
// holds the secret seed: callers wipe it when done.
std::string format_signer_key(const NoteSigner& signer);

// Parses the format above with the same strictness as parse_verifier_key(); the id must
// match the public key derived from the seed. One trailing "\n" is accepted.
Result<NoteSigner> parse_signer_key(std::string_view text);

// Signs `text` and returns the signed note: text + "\n" + "— <name> <base64(id || sig)>\n".
// `text` must be non-empty, valid UTF-8 without control characters other than newline, end
// with "\n" and contain no empty line (C2SP allows empty lines; AURA never signs one).
Result<std::string> sign_note(std::string_view text, const NoteSigner& signer);

// Verifies a signed note and returns its text (with its final newline). The text is split
// from the signatures at the last empty line. Signature lines whose (name, key id) is not
// in `known` are ignored. Fails with kInvalidArgument on malformed input (more than
// kMaxNoteBytes, more than kMaxSignatureLines signature lines, bad UTF-8, control
// characters, no empty line, a malformed signature line), and with kCorruption if a
// signature by a known key fails or no signature by a known key is present.
Result<std::string> open_note(std::string_view signed_note, std::span<const NoteVerifierKey> known);

}  // namespace aura
