// The log's checkpoints: a C2SP tlog-checkpoint note text (origin, tree size, RFC 6962 root)
// plus one extension line with the hash-chain head, signed as a C2SP signed note. A
// Checkpoint read back is parsed from exactly the text that verified.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/sign/signed_note.h"

namespace aura {

struct Checkpoint {
  std::string origin;   // e.g. "aura.lab/<instance>"; non-empty, no space, no '+'
  uint64_t size = 0;    // number of events (Merkle leaves)
  Digest root{};        // RFC 6962 root of the first `size` event hashes
  Digest chain_head{};  // hash of event `size`; 32 zero bytes when size == 0

  bool operator==(const Checkpoint&) const = default;
};

// Checks the fields: origin 1..256 bytes of UTF-8 with no control character, Unicode space
// or '+'; when size == 0, chain_head is all zero and root is SHA-256("") (the RFC 6962
// empty tree); when size > 0, chain_head is not all zero.
Status validate_checkpoint(const Checkpoint& c);

// "<origin>\n<size decimal>\n<base64 root>\nchain-head <64 lowercase hex>\n".
// Formats any value; sign_checkpoint() validates first.
std::string checkpoint_body(const Checkpoint& c);

// Strict inverse of checkpoint_body(): exactly four lines, size in decimal without leading
// zeros ("0" for an empty tree) and within uint64, root canonical base64 of 32 bytes,
// exactly one extension line which is the chain head, then validate_checkpoint().
Result<Checkpoint> parse_checkpoint_body(std::string_view text);

// The signed note of checkpoint_body(c); fails if validate_checkpoint(c) fails.
Result<std::string> sign_checkpoint(const Checkpoint& c, const NoteSigner& signer);

// open_note() then parse_checkpoint_body() of exactly the verified text.
Result<Checkpoint> open_checkpoint(std::string_view signed_note,
                                   std::span<const NoteVerifierKey> known);

}  // namespace aura
