#include "engine/sign/signed_note.h"

#include <sodium.h>
#include <string.h>

#include <optional>
#include <utility>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/sign/note_text.h"
#include "engine/sign/signed_note_format.h"

namespace aura {
namespace {

namespace nf = note_format;

std::string hex_id(uint32_t id) {
  const uint8_t be[4] = {static_cast<uint8_t>(id >> 24), static_cast<uint8_t>(id >> 16),
                         static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id)};
  return to_hex(be);
}

// Exactly 8 lowercase hex digits.
std::optional<uint32_t> parse_hex_id(std::string_view s) {
  if (s.size() != nf::kKeyIdHexChars) return std::nullopt;
  uint32_t id = 0;
  for (char c : s) {
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else {
      return std::nullopt;
    }
    id = id << 4 | static_cast<uint32_t>(v);
  }
  return id;
}

uint32_t load_be32(std::string_view b) {
  return static_cast<uint32_t>(static_cast<uint8_t>(b[0])) << 24 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[1])) << 16 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[2])) << 8 |
         static_cast<uint32_t>(static_cast<uint8_t>(b[3]));
}

// Zeroes a string that held secret bytes before it is freed.
void wipe(std::string& s) {
  explicit_bzero(s.data(), s.size());
  s.clear();
}

std::string_view trim_one_newline(std::string_view text) {
  if (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  return text;
}

// The three '+'-separated fields "<name>+<hex id>+<base64>"; the name cannot hold '+' but
// the base64 can, so split at the first two.
struct KeyFields {
  std::string_view name;
  uint32_t key_id;
  std::string key_bytes;  // decoded: type byte || 32 key bytes
};

Result<KeyFields> split_key_fields(std::string_view text, std::string_view what) {
  const size_t p1 = text.find('+');
  if (p1 == std::string_view::npos) return Status::invalid(std::string(what) + ": missing '+'");
  const size_t p2 = text.find('+', p1 + 1);
  if (p2 == std::string_view::npos) {
    return Status::invalid(std::string(what) + ": missing second '+'");
  }
  KeyFields f;
  f.name = text.substr(0, p1);
  if (!is_valid_key_name(f.name)) return Status::invalid(std::string(what) + ": bad key name");
  const auto id = parse_hex_id(text.substr(p1 + 1, p2 - p1 - 1));
  if (!id) return Status::invalid(std::string(what) + ": key id is not 8 lowercase hex digits");
  f.key_id = *id;
  auto bytes = base64_decode(text.substr(p2 + 1));
  if (!bytes) return Status::invalid(std::string(what) + ": key is not canonical base64");
  f.key_bytes = std::move(*bytes);
  if (f.key_bytes.size() != 1 + nf::kEd25519KeyBytes) {
    wipe(f.key_bytes);
    return Status::invalid(std::string(what) + ": key is not 33 bytes");
  }
  if (static_cast<uint8_t>(f.key_bytes[0]) != nf::kSigTypeEd25519) {
    wipe(f.key_bytes);
    return Status::invalid(std::string(what) + ": key type is not Ed25519 (0x01)");
  }
  return f;
}

// Text that may be signed: non-empty lines of note-safe UTF-8, each ending in '\n'.
Status check_signable_text(std::string_view text) {
  if (text.empty()) return Status::invalid("signed note: text is empty");
  if (text.back() != '\n') return Status::invalid("signed note: text does not end in newline");
  if (text.front() == '\n' || text.find("\n\n") != std::string_view::npos) {
    return Status::invalid("signed note: text contains an empty line");
  }
  if (!is_note_safe_utf8(text, /*allow_newline=*/true)) {
    return Status::invalid("signed note: text is not valid UTF-8 or has a control character");
  }
  return Status::ok();
}

struct SigLine {
  std::string_view name;
  uint32_t key_id;
  std::string blob;  // key id || signature
};

Result<SigLine> parse_sig_line(std::string_view line, size_t index) {
  const std::string where = "signed note: signature line " + std::to_string(index + 1);
  if (!line.starts_with(nf::kSigLinePrefix)) {
    return Status::invalid(where + ": does not start with \"\xE2\x80\x94 \"");
  }
  line.remove_prefix(nf::kSigLinePrefix.size());
  const size_t sp = line.find(' ');
  if (sp == std::string_view::npos) return Status::invalid(where + ": no space after key name");
  SigLine s;
  s.name = line.substr(0, sp);
  if (!is_valid_key_name(s.name)) return Status::invalid(where + ": bad key name");
  auto blob = base64_decode(line.substr(sp + 1));
  if (!blob) return Status::invalid(where + ": signature is not canonical base64");
  if (blob->size() < nf::kKeyIdBytes + 1) {
    return Status::invalid(where + ": signature is shorter than 5 bytes");
  }
  s.key_id = load_be32(*blob);
  s.blob = std::move(*blob);
  return s;
}

}  // namespace

bool is_valid_key_name(std::string_view name) {
  return !name.empty() && name.size() <= nf::kMaxKeyNameBytes &&
         name.find('+') == std::string_view::npos &&
         is_note_safe_utf8(name, /*allow_newline=*/false) && !has_unicode_space(name);
}

uint32_t note_key_id(std::string_view name, const Ed25519PublicKey& key) {
  Sha256 h;
  const uint8_t sep[2] = {'\n', nf::kSigTypeEd25519};
  const Digest d = h.update(name).update(sep).update(key).finish();
  return load_be32(as_chars(std::span(d).first(4)));
}

std::string format_verifier_key(const NoteVerifierKey& key) {
  std::string bytes(1, static_cast<char>(nf::kSigTypeEd25519));
  bytes.append(as_chars(key.key));
  return key.name + "+" + hex_id(key.key_id) + "+" + base64_encode(bytes);
}

Result<NoteVerifierKey> parse_verifier_key(std::string_view text) {
  if (text.size() > nf::kMaxKeyStringBytes) return Status::invalid("verifier key: too long");
  auto fields = split_key_fields(trim_one_newline(text), "verifier key");
  if (!fields.ok()) return fields.status();
  NoteVerifierKey key;
  key.name = std::string(fields->name);
  key.key_id = fields->key_id;
  std::copy(fields->key_bytes.begin() + 1, fields->key_bytes.end(), key.key.begin());
  crypto_init();
  if (crypto_core_ed25519_is_valid_point(key.key.data()) != 1) {
    return Status::invalid("verifier key: public key is not a valid Ed25519 point");
  }
  if (note_key_id(key.name, key.key) != key.key_id) {
    return Status::invalid("verifier key: key id " + hex_id(key.key_id) +
                           " does not match name and key (want " +
                           hex_id(note_key_id(key.name, key.key)) + ")");
  }
  return key;
}

NoteSigner::NoteSigner(std::string name, Ed25519KeyPair key)
    : name_(std::move(name)), key_id_(note_key_id(name_, key.public_key())), key_(key) {}

Result<NoteSigner> NoteSigner::create(std::string name, Ed25519KeyPair key) {
  if (!is_valid_key_name(name)) {
    return Status::invalid("note signer: key name must be 1.." +
                           std::to_string(nf::kMaxKeyNameBytes) +
                           " bytes of UTF-8 with no space, control character or '+'");
  }
  return NoteSigner(std::move(name), std::move(key));
}

std::string format_signer_key(const NoteSigner& signer) {
  std::string bytes(1, static_cast<char>(nf::kSigTypeEd25519));
  Ed25519Seed seed = signer.key_pair().seed();
  bytes.append(as_chars(seed));
  explicit_bzero(seed.data(), seed.size());
  std::string out = std::string(nf::kPrivateKeyPrefix) + signer.name() + "+" +
                    hex_id(signer.key_id()) + "+" + base64_encode(bytes);
  wipe(bytes);
  return out;
}

Result<NoteSigner> parse_signer_key(std::string_view text) {
  if (text.size() > nf::kMaxKeyStringBytes) return Status::invalid("signer key: too long");
  text = trim_one_newline(text);
  if (!text.starts_with(nf::kPrivateKeyPrefix)) {
    return Status::invalid("signer key: does not start with PRIVATE+KEY+");
  }
  auto fields = split_key_fields(text.substr(nf::kPrivateKeyPrefix.size()), "signer key");
  if (!fields.ok()) return fields.status();
  Ed25519Seed seed;
  std::copy(fields->key_bytes.begin() + 1, fields->key_bytes.end(), seed.begin());
  wipe(fields->key_bytes);
  NoteSigner signer(std::string(fields->name), Ed25519KeyPair::from_seed(seed));
  explicit_bzero(seed.data(), seed.size());
  if (signer.key_id() != fields->key_id) {
    return Status::invalid("signer key: key id " + hex_id(fields->key_id) +
                           " does not match name and key");
  }
  return signer;
}

Result<std::string> sign_note(std::string_view text, const NoteSigner& signer) {
  if (!is_valid_key_name(signer.name())) return Status::invalid("signed note: bad key name");
  AURA_RETURN_IF_ERROR(check_signable_text(text));
  const size_t line_bytes = nf::kSigLinePrefix.size() + signer.name().size() + 1 +
                            (nf::kSignatureBlobBytes + 2) / 3 * 4 + 1;
  if (text.size() + 1 + line_bytes > nf::kMaxNoteBytes) {
    return Status::invalid("signed note: text of " + std::to_string(text.size()) +
                           " bytes is too large to sign");
  }
  const Ed25519Signature sig = signer.sign(text);
  std::string blob;
  blob.reserve(nf::kSignatureBlobBytes);
  const uint32_t id = signer.key_id();
  for (int shift = 24; shift >= 0; shift -= 8) blob.push_back(static_cast<char>(id >> shift));
  blob.append(as_chars(sig));
  std::string out;
  out.reserve(text.size() + 1 + line_bytes);
  out.append(text).append("\n").append(nf::kSigLinePrefix).append(signer.name());
  out.append(" ").append(base64_encode(blob)).append("\n");
  return out;
}

Result<std::string> open_note(std::string_view note, std::span<const NoteVerifierKey> known) {
  if (note.size() > nf::kMaxNoteBytes) {
    return Status::invalid("signed note: " + std::to_string(note.size()) +
                           " bytes exceeds the limit of " + std::to_string(nf::kMaxNoteBytes));
  }
  if (!is_note_safe_utf8(note, /*allow_newline=*/true)) {
    return Status::invalid("signed note: not valid UTF-8 or has a control character");
  }
  if (note.empty() || note.back() != '\n') {
    return Status::invalid("signed note: does not end in newline");
  }
  // The text ends at the last empty line; signature lines are never empty.
  const size_t split = note.rfind("\n\n");
  if (split == std::string_view::npos) {
    return Status::invalid("signed note: no empty line before the signatures");
  }
  const std::string_view text = note.substr(0, split + 1);
  std::string_view sig_block = note.substr(split + 2);
  if (sig_block.empty()) return Status::invalid("signed note: no signature lines");

  // Parse every line before verifying any, so a malformed line is refused wherever it is.
  std::vector<SigLine> lines;
  while (!sig_block.empty()) {
    if (lines.size() == nf::kMaxSignatureLines) {
      return Status::invalid("signed note: more than " + std::to_string(nf::kMaxSignatureLines) +
                             " signature lines");
    }
    const size_t nl = sig_block.find('\n');  // found: the note ends in '\n'
    auto line = parse_sig_line(sig_block.substr(0, nl), lines.size());
    if (!line.ok()) return line.status();
    lines.push_back(std::move(*line));
    sig_block.remove_prefix(nl + 1);
  }

  bool verified = false;
  for (const SigLine& line : lines) {
    const NoteVerifierKey* match = nullptr;
    for (const NoteVerifierKey& k : known) {
      if (k.name != line.name || k.key_id != line.key_id) continue;
      if (match != nullptr && match->key != k.key) {
        return Status::failed_precondition("signed note: ambiguous known key " + k.name + "+" +
                                           hex_id(k.key_id));
      }
      match = &k;
    }
    if (match == nullptr) continue;  // unknown keys are ignored (C2SP signed-note)
    const std::string_view sig = std::string_view(line.blob).substr(nf::kKeyIdBytes);
    if (sig.size() != nf::kEd25519SigBytes ||
        !ed25519_verify(match->key, as_bytes(text), as_bytes(sig))) {
      return Status::corruption("signed note: invalid signature for key " + match->name + "+" +
                                hex_id(match->key_id));
    }
    verified = true;
  }
  if (!verified) return Status::corruption("signed note: no verifiable signature by a known key");
  return std::string(text);
}

}  // namespace aura
