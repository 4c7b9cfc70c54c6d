#include "engine/checkpoint/checkpoint.h"

#include <algorithm>
#include <optional>

#include "engine/checkpoint/checkpoint_format.h"
#include "engine/crypto/ed25519.h"
#include "engine/sign/note_text.h"

namespace aura {
namespace {

namespace cf = checkpoint_format;

bool is_zero(const Digest& d) {
  return std::all_of(d.begin(), d.end(), [](uint8_t b) { return b == 0; });
}

// Decimal without sign or leading zeros ("0" alone is zero), within uint64.
std::optional<uint64_t> parse_size(std::string_view s) {
  if (s.empty() || s.size() > cf::kMaxSizeDigits) return std::nullopt;
  if (s.size() > 1 && s[0] == '0') return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

// Splits the next '\n'-terminated line off `text`.
std::optional<std::string_view> next_line(std::string_view& text) {
  const size_t nl = text.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl + 1);
  return line;
}

}  // namespace

Status validate_checkpoint(const Checkpoint& c) {
  if (c.origin.empty() || c.origin.size() > cf::kMaxOriginBytes) {
    return Status::invalid("checkpoint: origin must be 1.." + std::to_string(cf::kMaxOriginBytes) +
                           " bytes");
  }
  if (!is_note_safe_utf8(c.origin, /*allow_newline=*/false) || has_unicode_space(c.origin) ||
      c.origin.find('+') != std::string::npos) {
    return Status::invalid("checkpoint: origin has a space, control character, '+' or bad UTF-8");
  }
  if (c.size == 0) {
    if (!is_zero(c.chain_head)) {
      return Status::invalid("checkpoint: size 0 with a non-zero chain head");
    }
    if (c.root != sha256(std::string_view())) {
      return Status::invalid("checkpoint: size 0 with a root other than SHA-256(\"\")");
    }
  } else if (is_zero(c.chain_head)) {
    return Status::invalid("checkpoint: size " + std::to_string(c.size) +
                           " with an all-zero chain head");
  }
  return Status::ok();
}

std::string checkpoint_body(const Checkpoint& c) {
  std::string out = c.origin;
  out.append("\n").append(std::to_string(c.size)).append("\n");
  out.append(base64_encode(c.root)).append("\n");
  out.append(cf::kChainHeadPrefix).append(to_hex(c.chain_head)).append("\n");
  return out;
}

Result<Checkpoint> parse_checkpoint_body(std::string_view text) {
  if (text.size() > cf::kMaxBodyBytes) {
    return Status::invalid("checkpoint: body of " + std::to_string(text.size()) +
                           " bytes exceeds the limit of " + std::to_string(cf::kMaxBodyBytes));
  }
  if (text.empty() || text.back() != '\n') {
    return Status::invalid("checkpoint: body does not end in newline");
  }
  const size_t line_count = static_cast<size_t>(std::count(text.begin(), text.end(), '\n'));
  if (line_count != cf::kLines) {
    return Status::invalid(
        "checkpoint: body has " + std::to_string(line_count) +
        " lines; want 4: origin, size, root, chain-head (no other extension lines)");
  }
  std::string_view rest = text;
  std::string_view lines[cf::kLines];
  for (std::string_view& line : lines) line = *next_line(rest);

  Checkpoint c;
  if (lines[0].empty()) return Status::invalid("checkpoint: origin line is empty");
  c.origin = std::string(lines[0]);

  const auto size = parse_size(lines[1]);
  if (!size) {
    return Status::invalid("checkpoint: size line is not a decimal uint64 without leading zeros");
  }
  c.size = *size;

  const auto root =
      lines[2].size() == cf::kRootBase64Chars ? base64_decode(lines[2]) : std::nullopt;
  if (!root || root->size() != c.root.size()) {
    return Status::invalid("checkpoint: root line is not canonical base64 of 32 bytes");
  }
  std::copy(root->begin(), root->end(), c.root.begin());

  std::string_view ext = lines[3];
  if (!ext.starts_with(cf::kChainHeadPrefix)) {
    return Status::invalid("checkpoint: extension line is not \"chain-head <hex>\"");
  }
  ext.remove_prefix(cf::kChainHeadPrefix.size());
  const bool lower_hex =
      ext.size() == cf::kChainHeadHexChars && std::all_of(ext.begin(), ext.end(), [](char ch) {
        return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f');
      });
  const auto head = lower_hex ? digest_from_hex(ext) : std::nullopt;
  if (!head) return Status::invalid("checkpoint: chain head is not 64 lowercase hex digits");
  c.chain_head = *head;

  AURA_RETURN_IF_ERROR(validate_checkpoint(c));
  return c;
}

Result<std::string> sign_checkpoint(const Checkpoint& c, const NoteSigner& signer) {
  AURA_RETURN_IF_ERROR(validate_checkpoint(c));
  auto note = sign_note(checkpoint_body(c), signer);
  if (!note.ok()) return note.status().with_context("sign checkpoint");
  return note;
}

Result<Checkpoint> open_checkpoint(std::string_view signed_note,
                                   std::span<const NoteVerifierKey> known) {
  auto text = open_note(signed_note, known);
  if (!text.ok()) return text.status().with_context("open checkpoint");
  return parse_checkpoint_body(*text);
}

}  // namespace aura
