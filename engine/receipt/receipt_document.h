// A receipt document read strictly from its signed payload: the exact bytes of every section
// (for hashing and byte-for-byte comparison) and the typed claims the verifier checks. Parsing
// stops at the first member that is missing, unknown, out of order, of the wrong type or over
// its bound, and names it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/receipt/raw_json.h"
#include "engine/receipt/receipt.h"

namespace aura::receipt {

struct ReceiptDocument {
  struct Leaf {
    uint64_t seq = 0;
    Digest hash{};
  };
  struct Proof {
    uint64_t seq = 0;
    std::vector<Digest> hashes;
  };
  struct PropertyClaim {
    std::string property, status, reason;
    std::vector<uint64_t> cited;
  };

  // Views into the payload given to parse_receipt_document(), which must outlive this.
  std::vector<RawMember> members;  // the top-level members, in order
  std::string_view actions;        // intervention.actions

  std::string attempt;
  std::string scenario_id;
  bool recovered = false;
  std::string verdict;
  std::vector<PropertyClaim> properties;
  std::vector<uint64_t> fact_seqs;      // facts.before then facts.after
  std::vector<uint64_t> rollback_seqs;  // rollback.facts
  std::vector<uint64_t> evidence_seqs;  // evidence[].seq
  std::vector<uint64_t> world_seqs;     // environment.worlds
  std::string lab_build_digest;         // environment.lab_build_digest
  std::string stream;
  uint64_t first_seq = 0, last_seq = 0, count = 0;
  std::vector<Leaf> leaves;
  uint64_t checkpoint_size = 0;
  std::string checkpoint_note;
  std::vector<Proof> proofs;
  std::vector<std::pair<std::string, std::string>> hashes;  // section name, 64 hex

  // The exact bytes of a hashed section (receipt_format::kHashedSections); empty otherwise.
  std::string_view section(std::string_view name) const;
};

// Parses the signed payload. On failure returns the field that failed and why.
std::variant<ReceiptDocument, ReceiptFailure> parse_receipt_document(std::string_view payload);

}  // namespace aura::receipt
