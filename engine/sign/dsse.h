// DSSE envelopes signed with note keys: the signature covers PAE(payloadType, payload), so
// the payload type is the signature's context, and dsse_open() returns exactly the bytes
// that were verified.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/common/status.h"
#include "engine/sign/signed_note.h"

namespace aura {

// "DSSEv1 <len(type)> <type> <len(body)> <body>", lengths in decimal bytes.
std::string dsse_pae(std::string_view payload_type, std::string_view body);

// Returns the envelope as compact JSON:
// {"payloadType":T,"payload":base64(payload),"signatures":[{"keyid":"<name>+<8hex>","sig":S}]}
// where S = base64(Ed25519(PAE(T, payload))).
std::string dsse_sign(std::string_view payload_type, std::string_view payload,
                      const NoteSigner& signer);

// Parses `envelope_json` strictly (an object with exactly payloadType, payload and 1..16
// signatures of {keyid?, sig}; no duplicate or unknown members; canonical base64), checks
// payloadType == expected_payload_type, and verifies the signatures over PAE. A signature
// whose keyid names no key in `known` is ignored; one with no keyid is tried against every
// known key. Fails with kInvalidArgument on malformed input or the wrong type, kCorruption
// if a signature by a known key fails or none by a known key verifies. On success returns
// the decoded payload: exactly the bytes that were verified.
Result<std::string> dsse_open(std::string_view envelope_json,
                              std::string_view expected_payload_type,
                              std::span<const NoteVerifierKey> known);

}  // namespace aura
