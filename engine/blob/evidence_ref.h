// EvidenceRef: a reference from an event to a blob in the BlobStore, and the "refs" convention
// that lists every blob an event references (docs/formats/blobs.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"

namespace aura {

// {id, sha256, kind, bytes}. id and kind are 1..128 and 1..64 bytes of [A-Za-z0-9._:-].
struct EvidenceRef {
  std::string id;
  Digest sha256{};
  std::string kind;
  uint64_t bytes = 0;

  bool operator==(const EvidenceRef&) const = default;
};

// Every blob an event references is listed in its payload's top-level "refs" array:
//   {"refs":[{"id":"ev-1","sha256":"<64 lowercase hex>","kind":"probe.output","bytes":123}, ...]}
// Returns the refs in payload order; absent "refs" (or a payload that is not an object) -> empty.
// Anything malformed -> kInvalidArgument naming the JSON path ("refs[2].sha256: not 64 hex
// digits (lowercase)"): refs not an array, more than 1024 refs, a ref not an object, a member
// missing, duplicated, unknown or of the wrong type, bad hex, a bad id or kind, two refs with the
// same id, or a duplicated top-level "refs" key.
// Fast path: a payload containing neither the bytes "refs" (with quotes) nor a \u escape cannot
// have a refs key and is not parsed (nor validated as JSON). Otherwise it is parsed with a
// thread_local simdjson parser. Thread-safe.
Result<std::vector<EvidenceRef>> extract_refs(std::string_view payload_json);

// The checks extract_refs applies to one ref (except id uniqueness); messages name the member
// ("id: empty").
Status validate_evidence_ref(const EvidenceRef& ref);

// The object form above: compact, members in the order id, sha256, kind, bytes.
std::string evidence_ref_json(const EvidenceRef& ref);

}  // namespace aura
