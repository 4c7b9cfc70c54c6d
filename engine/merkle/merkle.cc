#include "engine/merkle/merkle.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <string>
#include <utility>

namespace aura::merkle {
namespace {

constexpr uint8_t kLeafPrefix = 0x00;
constexpr uint8_t kNodePrefix = 0x01;

// A range of leaves [begin, end).
struct Range {
  uint64_t begin;
  uint64_t end;
};

std::string range_name(uint64_t begin, uint64_t end) {
  return "[" + std::to_string(begin) + ", " + std::to_string(end) + ")";
}

// RFC 6962's split point: the largest power of two strictly less than n. REQUIRES: n >= 2.
uint64_t split_point(uint64_t n) {
  assert(n >= 2);
  return uint64_t{1} << (std::bit_width(n - 1) - 1);
}

// Accepts exactly the ranges whose MTH is a node of some RFC 6962 tree (see subtree_root).
Status check_recursive_range(uint64_t begin, uint64_t end) {
  if (begin >= end) {
    return Status::invalid("subtree " + range_name(begin, end) + ": range is empty");
  }
  const uint64_t length = end - begin;
  constexpr uint64_t kTopBit = uint64_t{1} << 63;
  // For length > 2^63 the smallest power of two >= length is 2^64; only begin 0 is a multiple.
  const bool aligned = length > kTopBit ? begin == 0 : begin % std::bit_ceil(length) == 0;
  if (!aligned) {
    return Status::invalid(
        "subtree " + range_name(begin, end) + ": begin " + std::to_string(begin) +
        " is not a multiple of the smallest power of two >= its " + std::to_string(length) +
        " leaves, so no RFC 6962 tree has it as a node");
  }
  return Status::ok();
}

// MTH(D[begin:end]) from the perfect subtrees of the range's right edge, one per set bit of its
// length, largest first. REQUIRES: check_recursive_range(begin, end) is ok, which makes every
// such subtree aligned to its own size.
Result<Hash> hash_range(Range r, NodeReader& nodes) {
  const uint64_t length = r.end - r.begin;
  std::array<Hash, 64> peaks;
  size_t count = 0;
  uint64_t position = r.begin;
  for (int level = 63; level >= 0; --level) {
    const uint64_t width = uint64_t{1} << level;
    if ((length & width) == 0) continue;
    Result<Hash> peak = nodes.perfect_node(static_cast<uint8_t>(level), position >> level);
    if (!peak.ok()) return peak.status();
    peaks[count++] = *peak;
    position += width;
  }
  // RFC 6962 splits off the largest power of two first, so the right edge folds from the right.
  Hash root = peaks[count - 1];
  for (size_t i = count - 1; i-- > 0;) root = node_hash(peaks[i], root);
  return root;
}

// Hashes every range, in order.
Result<std::vector<Hash>> hash_ranges(const std::vector<Range>& ranges, NodeReader& nodes) {
  std::vector<Hash> hashes;
  hashes.reserve(ranges.size());
  for (const Range& r : ranges) {
    Result<Hash> h = hash_range(r, nodes);
    if (!h.ok()) return h.status();
    hashes.push_back(*h);
  }
  return hashes;
}

// Shared by both verifiers (RFC 9162 §2.1.3.2 step 4 and §2.1.4.2 step 6): after a hash on the
// left at a node that is the last one of its level (fn == sn, fn even), the levels where that
// node has no sibling are skipped.
void skip_levels_without_sibling(uint64_t& fn, uint64_t& sn) {
  while ((fn & 1) == 0 && fn != 0) {
    fn >>= 1;
    sn >>= 1;
  }
}

// The number of proof hashes the RFC 9162 loop consumes from (fn, sn) until sn reaches 0.
uint64_t loop_steps(uint64_t fn, uint64_t sn) {
  uint64_t steps = 0;
  while (sn != 0) {
    if ((fn & 1) != 0 || fn == sn) skip_levels_without_sibling(fn, sn);
    fn >>= 1;
    sn >>= 1;
    ++steps;
  }
  return steps;
}

// The exact inclusion proof length for (index, size). REQUIRES: index < size.
uint64_t inclusion_proof_length(uint64_t index, uint64_t size) {
  return loop_steps(index, size - 1);
}

// The exact consistency proof length for (size1, size2). REQUIRES: 0 < size1 < size2.
uint64_t consistency_proof_length(uint64_t size1, uint64_t size2) {
  uint64_t fn = size1 - 1;
  uint64_t sn = size2 - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  // The loop consumes every hash after the first; when size1 is a power of two the first is
  // root1 itself and is not sent.
  return loop_steps(fn, sn) + (std::has_single_bit(size1) ? 0 : 1);
}

std::string inclusion_claim(uint64_t index, uint64_t size) {
  return "index " + std::to_string(index) + " in size " + std::to_string(size);
}

std::string consistency_claim(uint64_t size1, uint64_t size2) {
  return "size1 " + std::to_string(size1) + " and size2 " + std::to_string(size2);
}

}  // namespace

Hash leaf_hash(std::span<const uint8_t> leaf_data) {
  Sha256 h;
  const uint8_t prefix = kLeafPrefix;
  h.update(std::span<const uint8_t>(&prefix, 1));
  h.update(leaf_data);
  return h.finish();
}

Hash node_hash(const Hash& left, const Hash& right) {
  std::array<uint8_t, 1 + 2 * sizeof(Hash)> buffer;
  buffer[0] = kNodePrefix;
  std::copy(left.begin(), left.end(), buffer.begin() + 1);
  std::copy(right.begin(), right.end(), buffer.begin() + 1 + left.size());
  return sha256(buffer);
}

Hash empty_root() { return sha256(std::span<const uint8_t>()); }

// --- CompactRange ---

CompactRange::CompactRange() = default;

CompactRange::CompactRange(uint64_t size, std::vector<Hash> peaks)
    : size_(size), peaks_(std::move(peaks)) {}

Result<CompactRange> CompactRange::restore(uint64_t size, std::vector<Hash> peaks) {
  const auto want = static_cast<size_t>(std::popcount(size));
  if (peaks.size() != want) {
    return Status::invalid("compact range restore: " + std::to_string(peaks.size()) +
                           " peaks, expected " + std::to_string(want) + " for size " +
                           std::to_string(size));
  }
  return CompactRange(size, std::move(peaks));
}

void CompactRange::append(const Hash& leaf,
                          const std::function<void(const PerfectNode&)>& on_node) {
  assert(size_ != UINT64_MAX);
  // The new leaf has index size_; each trailing one bit of size_ is a peak of the same level on
  // its left that it now completes a perfect node with.
  Hash hash = leaf;
  uint8_t level = 0;
  while (((size_ >> level) & 1) != 0) {
    hash = node_hash(peaks_.back(), hash);
    peaks_.pop_back();
    ++level;
    if (on_node) on_node(PerfectNode{level, size_ >> level, hash});
  }
  peaks_.push_back(hash);
  ++size_;
}

Hash CompactRange::root() const {
  if (peaks_.empty()) return empty_root();
  Hash root = peaks_.back();
  for (size_t i = peaks_.size() - 1; i-- > 0;) root = node_hash(peaks_[i], root);
  return root;
}

// --- VectorNodeReader ---

VectorNodeReader::VectorNodeReader(std::vector<Hash> leaf_hashes) {
  levels_.push_back(std::move(leaf_hashes));
}

Result<Hash> VectorNodeReader::perfect_node(uint8_t level, uint64_t index) {
  const uint64_t leaves = levels_[0].size();
  if (level >= 64 || index >= (leaves >> level)) {
    return Status::not_found("perfect node (level " + std::to_string(level) + ", index " +
                             std::to_string(index) + ") is beyond the " + std::to_string(leaves) +
                             " leaves held");
  }
  while (levels_.size() <= level) {
    const std::vector<Hash>& below = levels_.back();
    std::vector<Hash> next(below.size() / 2);
    for (size_t i = 0; i < next.size(); ++i) next[i] = node_hash(below[2 * i], below[2 * i + 1]);
    levels_.push_back(std::move(next));
  }
  return levels_[level][index];
}

// --- Proof generation ---

Result<Hash> subtree_root(uint64_t begin, uint64_t end, NodeReader& nodes) {
  AURA_RETURN_IF_ERROR(check_recursive_range(begin, end));
  Result<Hash> root = hash_range({begin, end}, nodes);
  if (!root.ok()) return root.status().with_context("subtree " + range_name(begin, end));
  return root;
}

Result<Hash> root_at(uint64_t size, NodeReader& nodes) {
  if (size == 0) return empty_root();
  Result<Hash> root = hash_range({0, size}, nodes);
  if (!root.ok()) return root.status().with_context("root at size " + std::to_string(size));
  return root;
}

Result<std::vector<Hash>> inclusion_proof(uint64_t index, uint64_t size, NodeReader& nodes) {
  if (index >= size) {
    return Status::invalid("inclusion proof: index " + std::to_string(index) +
                           " is not below size " + std::to_string(size));
  }
  // Walk RFC 6962's PATH recursion from the root down to the leaf, noting each sibling subtree.
  std::vector<Range> siblings;
  Range r{0, size};
  while (r.end - r.begin > 1) {
    const uint64_t mid = r.begin + split_point(r.end - r.begin);
    if (index < mid) {
      siblings.push_back({mid, r.end});
      r.end = mid;
    } else {
      siblings.push_back({r.begin, mid});
      r.begin = mid;
    }
  }
  std::reverse(siblings.begin(), siblings.end());  // the path lists the leaf's sibling first
  Result<std::vector<Hash>> proof = hash_ranges(siblings, nodes);
  if (!proof.ok()) {
    return proof.status().with_context("inclusion proof for " + inclusion_claim(index, size));
  }
  return proof;
}

Result<std::vector<Hash>> consistency_proof(uint64_t size1, uint64_t size2, NodeReader& nodes) {
  if (size1 == 0 || size1 > size2) {
    return Status::invalid("consistency proof: needs 0 < size1 <= size2, got " +
                           consistency_claim(size1, size2));
  }
  // Walk RFC 6962's SUBPROOF(m, D[n], b) recursion; `r` is D[n], `have_root1` is b.
  std::vector<Range> ranges;
  Range r{0, size2};
  bool have_root1 = true;
  while (r.end != size1) {  // r.begin < size1 < r.end
    const uint64_t mid = r.begin + split_point(r.end - r.begin);
    if (size1 <= mid) {
      ranges.push_back({mid, r.end});
      r.end = mid;
    } else {
      ranges.push_back({r.begin, mid});
      r.begin = mid;
      have_root1 = false;
    }
  }
  if (!have_root1) ranges.push_back(r);
  std::reverse(ranges.begin(), ranges.end());  // the innermost subproof comes first
  Result<std::vector<Hash>> proof = hash_ranges(ranges, nodes);
  if (!proof.ok()) {
    return proof.status().with_context("consistency proof for " + consistency_claim(size1, size2));
  }
  return proof;
}

// --- Verification ---

Status verify_inclusion(const Hash& leaf, uint64_t index, uint64_t size,
                        std::span<const Hash> proof, const Hash& root) {
  if (index >= size) {
    return Status::invalid("inclusion proof: index " + std::to_string(index) +
                           " is not below size " + std::to_string(size));
  }
  const uint64_t want = inclusion_proof_length(index, size);
  if (proof.size() != want) {
    return Status::corruption("inclusion proof: " + std::to_string(proof.size()) +
                              " hashes, expected " + std::to_string(want) + " for " +
                              inclusion_claim(index, size));
  }
  // RFC 9162 §2.1.3.2. The length check above makes the "sn == 0" guards unreachable; they stay
  // so the loop is correct on its own.
  uint64_t fn = index;
  uint64_t sn = size - 1;
  Hash r = leaf;
  for (const Hash& p : proof) {
    if (sn == 0)
      return Status::corruption("inclusion proof: too long for " + inclusion_claim(index, size));
    if ((fn & 1) != 0 || fn == sn) {
      r = node_hash(p, r);
      skip_levels_without_sibling(fn, sn);
    } else {
      r = node_hash(r, p);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) {
    return Status::corruption("inclusion proof: too short for " + inclusion_claim(index, size));
  }
  if (r != root) {
    return Status::corruption("inclusion proof for " + inclusion_claim(index, size) +
                              ": computed root " + to_hex(r) + " != expected root " + to_hex(root));
  }
  return Status::ok();
}

Status verify_consistency(uint64_t size1, uint64_t size2, std::span<const Hash> proof,
                          const Hash& root1, const Hash& root2) {
  if (size1 > size2) {
    return Status::invalid("consistency proof: size1 " + std::to_string(size1) +
                           " is greater than size2 " + std::to_string(size2));
  }
  if (size1 == 0 || size1 == size2) {
    if (!proof.empty()) {
      return Status::corruption("consistency proof: " + std::to_string(proof.size()) +
                                " hashes, expected 0 for " + consistency_claim(size1, size2));
    }
    if (size1 == 0 && root1 != empty_root()) {
      return Status::corruption("consistency proof: root1 " + to_hex(root1) +
                                " of size 0 is not the empty tree's root");
    }
    if (size1 == size2 && root1 != root2) {
      return Status::corruption("consistency proof: equal sizes " + std::to_string(size1) +
                                " but root1 " + to_hex(root1) + " != root2 " + to_hex(root2));
    }
    return Status::ok();
  }
  const uint64_t want = consistency_proof_length(size1, size2);
  if (proof.size() != want) {
    return Status::corruption("consistency proof: " + std::to_string(proof.size()) +
                              " hashes, expected " + std::to_string(want) + " for " +
                              consistency_claim(size1, size2));
  }
  // RFC 9162 §2.1.4.2. When size1 is a power of two, root1 is the (unsent) first path element.
  size_t next = 0;
  const Hash seed = std::has_single_bit(size1) ? root1 : proof[next++];
  uint64_t fn = size1 - 1;
  uint64_t sn = size2 - 1;
  while ((fn & 1) != 0) {
    fn >>= 1;
    sn >>= 1;
  }
  Hash fr = seed;
  Hash sr = seed;
  for (; next < proof.size(); ++next) {
    const Hash& c = proof[next];
    if (sn == 0) {
      return Status::corruption("consistency proof: too long for " +
                                consistency_claim(size1, size2));
    }
    if ((fn & 1) != 0 || fn == sn) {
      fr = node_hash(c, fr);
      sr = node_hash(c, sr);
      skip_levels_without_sibling(fn, sn);
    } else {
      sr = node_hash(sr, c);
    }
    fn >>= 1;
    sn >>= 1;
  }
  if (sn != 0) {
    return Status::corruption("consistency proof: too short for " +
                              consistency_claim(size1, size2));
  }
  if (fr != root1) {
    return Status::corruption("consistency proof for " + consistency_claim(size1, size2) +
                              ": computed root1 " + to_hex(fr) + " != expected root1 " +
                              to_hex(root1));
  }
  if (sr != root2) {
    return Status::corruption("consistency proof for " + consistency_claim(size1, size2) +
                              ": computed root2 " + to_hex(sr) + " != expected root2 " +
                              to_hex(root2));
  }
  return Status::ok();
}

}  // namespace aura::merkle
