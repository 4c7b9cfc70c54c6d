// The event log's Merkle tree (RFC 6962 / RFC 9162 §2.1): hashing, the compact range kept while
// appending, and inclusion and consistency proofs. Proofs are generated from perfect-subtree
// hashes only (O(log n) reads) and verified bit by bit from the sizes, as RFC 9162 specifies.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"

namespace aura::merkle {

using Hash = aura::Digest;

// SHA-256(0x00 || leaf_data): the hash of one leaf (in the event log, leaf_data is the event hash).
Hash leaf_hash(std::span<const uint8_t> leaf_data);
// SHA-256(0x01 || left || right): the hash of an interior node.
Hash node_hash(const Hash& left, const Hash& right);
// SHA-256(""): the root of the tree with no leaves.
Hash empty_root();

// A perfect subtree at (level, index) covers leaves [index << level, (index + 1) << level).
// Level 0 nodes are leaf hashes.
struct PerfectNode {
  uint8_t level;
  uint64_t index;
  Hash hash;
};

// The right edge of a tree of `size` leaves: roots of its perfect subtrees, largest (leftmost)
// first; peak i covers the i-th highest set bit of `size`. Invariant: peaks().size() ==
// popcount(size()). Not thread-safe.
class CompactRange {
 public:
  CompactRange();  // empty tree

  // REQUIRES nothing; returns an error unless peaks.size() == popcount(size). The peaks are
  // trusted: a wrong hash only shows later as a root that does not match a checkpoint.
  static Result<CompactRange> restore(uint64_t size, std::vector<Hash> peaks);

  uint64_t size() const { return size_; }
  const std::vector<Hash>& peaks() const { return peaks_; }

  // Appends one leaf given as its leaf hash (leaf_hash(data), not the data). Calls on_node, if
  // set, for every perfect node of level >= 1 that this append completes, in increasing level;
  // each perfect node of the tree is reported exactly once over the appends that build it.
  // REQUIRES: size() < UINT64_MAX.
  void append(const Hash& leaf, const std::function<void(const PerfectNode&)>& on_node = {});

  // MTH of all leaves so far; empty_root() for size 0. Costs popcount(size) - 1 node hashes.
  Hash root() const;

 private:
  CompactRange(uint64_t size, std::vector<Hash> peaks);

  uint64_t size_ = 0;
  std::vector<Hash> peaks_;
};

// Source of perfect-subtree hashes; the event log implements it over its stored nodes (level 0 =
// leaf hashes). Returns an error (not_found) for a node that does not exist (yet).
class NodeReader {
 public:
  virtual ~NodeReader() = default;
  virtual Result<Hash> perfect_node(uint8_t level, uint64_t index) = 0;
};

// In-memory reader over leaf hashes (tests and small trees). Builds each level in full the first
// time a node of that level is asked for, then answers from the cache. Not thread-safe.
class VectorNodeReader : public NodeReader {
 public:
  explicit VectorNodeReader(std::vector<Hash> leaf_hashes);
  Result<Hash> perfect_node(uint8_t level, uint64_t index) override;

 private:
  std::vector<std::vector<Hash>> levels_;  // levels_[0] = leaf hashes; levels_[l] = level l
};

// The functions below read only perfect nodes: each subtree [begin, end) they need is split into
// the perfect subtrees of its right edge (one per set bit of end - begin), so generating a proof
// costs O(log n) perfect_node calls. Errors from `nodes` are returned with context added.

// MTH(D[begin:end]).
// REQUIRES: begin < end, and begin is a multiple of the smallest power of two >= end - begin.
// These are exactly the ranges RFC 6962's recursion produces in trees of size >= end: perfect
// subtrees, and the right edges [begin, end) of trees of size end. Other ranges are refused
// (invalid_argument), since their MTH is not a node of any tree.
Result<Hash> subtree_root(uint64_t begin, uint64_t end, NodeReader& nodes);

// MTH(D[0:size]); empty_root() for size 0 (without reading any node).
Result<Hash> root_at(uint64_t size, NodeReader& nodes);

// RFC 6962 PATH(index, D[size]): the audit path, sibling nearest the leaf first.
// REQUIRES: index < size (otherwise invalid_argument).
Result<std::vector<Hash>> inclusion_proof(uint64_t index, uint64_t size, NodeReader& nodes);

// RFC 6962 PROOF(size1, D[size2]); empty when size1 == size2.
// REQUIRES: 0 < size1 <= size2 (otherwise invalid_argument).
Result<std::vector<Hash>> consistency_proof(uint64_t size1, uint64_t size2, NodeReader& nodes);

// Verifiers (RFC 9162 §2.1.3.2 and §2.1.4.2). They return ok only if the proof proves the claim.
// A malformed claim (index >= size, size1 > size2) is invalid_argument; a proof of the wrong
// length or one that does not hash to the given root(s) is corruption. Messages name the sizes.

// Checks that `leaf` (a leaf hash, not leaf data) is leaf `index` of the tree of `size` leaves
// whose root is `root`. The proof length must be exactly the one (index, size) implies.
Status verify_inclusion(const Hash& leaf, uint64_t index, uint64_t size,
                        std::span<const Hash> proof, const Hash& root);

// Checks that the tree of size2 leaves with root2 extends the tree of size1 leaves with root1.
// size1 == size2 needs an empty proof and root1 == root2. size1 == 0 needs an empty proof and
// root1 == empty_root() (every tree extends the empty tree). Otherwise the proof length must be
// exactly the one (size1, size2) implies.
Status verify_consistency(uint64_t size1, uint64_t size2, std::span<const Hash> proof,
                          const Hash& root1, const Hash& root2);

}  // namespace aura::merkle
