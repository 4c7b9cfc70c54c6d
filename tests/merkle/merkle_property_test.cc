// Properties of proof generation and the compact range, checked against naive RFC 6962 recursions
// over many tree sizes, and the O(log n) read bound on a tree of 2^20 leaves.

#include <doctest/doctest.h>

#include <bit>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "engine/merkle/merkle.h"
#include "tests/merkle/merkle_test_support.h"

namespace aura::merkle {
namespace {

using testing::CountingNodeReader;
using testing::must;
using testing::numbered_leaves;

// Sizes 1..70 plus a few large ones that cross power-of-two boundaries.
std::vector<uint64_t> sizes_to_check() {
  std::vector<uint64_t> sizes;
  for (uint64_t n = 1; n <= 70; ++n) sizes.push_back(n);
  for (uint64_t n : {127, 128, 129, 1000, 4097}) sizes.push_back(n);
  return sizes;
}

TEST_CASE("merkle: CompactRange::root, root_at and a naive recursive MTH agree on every size") {
  const std::vector<Hash> leaves = numbered_leaves(4097);
  VectorNodeReader reader(leaves);
  CompactRange range;
  CHECK(range.root() == empty_root());
  CHECK(must(root_at(0, reader)) == empty_root());
  std::set<uint64_t> naive_sizes;
  for (uint64_t n = 1; n <= 70; ++n) naive_sizes.insert(n);
  naive_sizes.insert({1000, 4097});
  for (uint64_t size = 1; size <= leaves.size(); ++size) {
    range.append(leaves[size - 1]);
    const Hash root = must(root_at(size, reader));
    CAPTURE(size);
    REQUIRE(range.root() == root);
    if (naive_sizes.count(size) != 0) {
      CHECK(testing::naive_mth(std::span(leaves).first(size)) == root);
    }
  }
}

TEST_CASE("merkle: every inclusion proof equals RFC 6962 PATH and verifies against root_at") {
  const std::vector<Hash> leaves = numbered_leaves(4097);
  VectorNodeReader reader(leaves);
  for (uint64_t size : sizes_to_check()) {
    const Hash root = must(root_at(size, reader));
    // The naive PATH is O(n) per proof; compare it on the small sizes only.
    const bool compare_naive = size <= 70;
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = must(inclusion_proof(index, size, reader));
      if (compare_naive) {
        CAPTURE(size);
        CAPTURE(index);
        REQUIRE(proof == testing::naive_path(index, std::span(leaves).first(size)));
      }
      const Status s = verify_inclusion(leaves[index], index, size, proof, root);
      if (!s.is_ok()) {
        CAPTURE(size);
        CAPTURE(index);
        FAIL(s.message());
      }
    }
  }
}

TEST_CASE("merkle: every consistency proof for sizes up to 70 equals RFC 6962 PROOF and verifies") {
  const std::vector<Hash> leaves = numbered_leaves(70);
  VectorNodeReader reader(leaves);
  std::vector<Hash> roots = {empty_root()};
  for (uint64_t n = 1; n <= 70; ++n) roots.push_back(must(root_at(n, reader)));
  for (uint64_t size2 = 1; size2 <= 70; ++size2) {
    for (uint64_t size1 = 1; size1 <= size2; ++size1) {
      CAPTURE(size1);
      CAPTURE(size2);
      const std::vector<Hash> proof = must(consistency_proof(size1, size2, reader));
      REQUIRE(proof == testing::naive_proof(size1, std::span(leaves).first(size2)));
      const Status s = verify_consistency(size1, size2, proof, roots[size1], roots[size2]);
      INFO(s.message());
      REQUIRE(s.is_ok());
    }
    // Every tree extends the empty tree, with an empty proof.
    CHECK(verify_consistency(0, size2, {}, empty_root(), roots[size2]).is_ok());
  }
  // Larger trees: a spread of pairs.
  const std::vector<Hash> big = numbered_leaves(4097);
  VectorNodeReader big_reader(big);
  for (uint64_t size2 : {1000, 1024, 1025, 4096, 4097}) {
    const Hash root2 = must(root_at(size2, big_reader));
    for (uint64_t size1 : {1, 2, 3, 511, 512, 513, 999, 1000}) {
      if (size1 > size2) continue;
      CAPTURE(size1);
      CAPTURE(size2);
      const std::vector<Hash> proof = must(consistency_proof(size1, size2, big_reader));
      const Status s =
          verify_consistency(size1, size2, proof, must(root_at(size1, big_reader)), root2);
      INFO(s.message());
      CHECK(s.is_ok());
    }
  }
}

TEST_CASE("merkle: CompactRange::append reports each perfect node exactly once, levels rising") {
  const uint64_t kLeaves = 300;
  const std::vector<Hash> leaves = numbered_leaves(kLeaves);
  VectorNodeReader reader(leaves);
  CompactRange range;
  std::map<std::pair<int, uint64_t>, Hash> reported;
  for (uint64_t i = 0; i < kLeaves; ++i) {
    int last_level = 0;
    range.append(leaves[i], [&](const PerfectNode& n) {
      CAPTURE(i);
      CHECK(n.level == last_level + 1);  // rising one level at a time, starting at 1
      last_level = n.level;
      // The node this append completes ends at the new leaf.
      CHECK(((n.index + 1) << n.level) == i + 1);
      const bool fresh = reported.emplace(std::make_pair(int{n.level}, n.index), n.hash).second;
      CHECK(fresh);
    });
    CHECK(last_level == std::countr_one(i));
  }
  // Exactly the perfect nodes of level >= 1 in a tree of kLeaves leaves, with the right hashes.
  size_t want_count = 0;
  for (int level = 1; (kLeaves >> level) > 0; ++level) {
    for (uint64_t index = 0; index < (kLeaves >> level); ++index) {
      ++want_count;
      auto it = reported.find({level, index});
      CAPTURE(level);
      CAPTURE(index);
      REQUIRE(it != reported.end());
      CHECK(it->second == must(reader.perfect_node(static_cast<uint8_t>(level), index)));
    }
  }
  CHECK(reported.size() == want_count);
}

TEST_CASE("merkle: CompactRange::restore round-trips and continues like the original") {
  const std::vector<Hash> leaves = numbered_leaves(80);
  CompactRange original;
  for (uint64_t size = 0; size < 70; ++size) {
    CAPTURE(size);
    auto restored = must(CompactRange::restore(original.size(), original.peaks()));
    CHECK(restored.size() == original.size());
    CHECK(restored.peaks() == original.peaks());
    CHECK(restored.root() == original.root());
    // Appending the same leaves to both keeps them equal.
    CompactRange ahead = original;
    for (uint64_t i = size; i < size + 10; ++i) {
      ahead.append(leaves[i]);
      restored.append(leaves[i]);
    }
    CHECK(restored.peaks() == ahead.peaks());
    CHECK(restored.root() == ahead.root());
    original.append(leaves[size]);
  }
}

TEST_CASE("merkle: CompactRange::restore refuses a peak count that does not match the size") {
  const Hash h = numbered_leaves(1)[0];
  CHECK(CompactRange::restore(0, {}).ok());
  CHECK(CompactRange::restore(6, {h, h}).ok());
  const Result<CompactRange> too_many = CompactRange::restore(0, {h});
  REQUIRE_FALSE(too_many.ok());
  CHECK(too_many.status().message() == "compact range restore: 1 peaks, expected 0 for size 0");
  CHECK_FALSE(CompactRange::restore(6, {h}).ok());
  CHECK_FALSE(CompactRange::restore(6, {h, h, h}).ok());
  CHECK_FALSE(CompactRange::restore(UINT64_MAX, {h}).ok());
  CHECK(CompactRange::restore(UINT64_MAX, std::vector<Hash>(64, h)).ok());
}

// Every range RFC 6962's MTH recursion visits in a tree of size n, as [begin, end).
void collect_recursion_ranges(uint64_t begin, uint64_t end,
                              std::set<std::pair<uint64_t, uint64_t>>& out) {
  out.insert({begin, end});
  if (end - begin < 2) return;
  const uint64_t k = testing::naive_split(end - begin);
  collect_recursion_ranges(begin, begin + k, out);
  collect_recursion_ranges(begin + k, end, out);
}

TEST_CASE("merkle: subtree_root accepts exactly the ranges RFC 6962's recursion produces") {
  const uint64_t kMax = 40;
  const std::vector<Hash> leaves = numbered_leaves(kMax);
  VectorNodeReader reader(leaves);
  std::set<std::pair<uint64_t, uint64_t>> produced;
  for (uint64_t n = 1; n <= kMax; ++n) collect_recursion_ranges(0, n, produced);
  for (uint64_t begin = 0; begin <= kMax; ++begin) {
    for (uint64_t end = 0; end <= kMax; ++end) {
      CAPTURE(begin);
      CAPTURE(end);
      const Result<Hash> root = subtree_root(begin, end, reader);
      const bool want = produced.count({begin, end}) != 0;
      REQUIRE(root.ok() == want);
      if (want) {
        CHECK(*root == testing::naive_mth(std::span(leaves).subspan(begin, end - begin)));
      } else {
        CHECK(root.status().code() == ErrorCode::kInvalidArgument);
      }
    }
  }
  // Huge ranges are judged without overflow.
  CHECK_FALSE(subtree_root(1, UINT64_MAX, reader).ok());
  CHECK_FALSE(subtree_root(uint64_t{1} << 62, UINT64_MAX, reader).ok());
  CHECK(subtree_root(UINT64_MAX - 1, UINT64_MAX, reader).status().code() ==
        ErrorCode::kNotFound);  // a valid single-leaf range; the reader has no such leaf
}

TEST_CASE("merkle: generation refuses bad sizes and reports nodes the reader lacks") {
  const std::vector<Hash> leaves = numbered_leaves(10);
  VectorNodeReader reader(leaves);
  CHECK(inclusion_proof(0, 0, reader).status().code() == ErrorCode::kInvalidArgument);
  CHECK(inclusion_proof(10, 10, reader).status().message() ==
        "inclusion proof: index 10 is not below size 10");
  CHECK(consistency_proof(0, 5, reader).status().code() == ErrorCode::kInvalidArgument);
  CHECK(consistency_proof(6, 5, reader).status().code() == ErrorCode::kInvalidArgument);
  CHECK(must(consistency_proof(5, 5, reader)).empty());
  // A tree larger than the reader holds: the reader's not_found comes back with context.
  const Result<std::vector<Hash>> beyond = inclusion_proof(0, 11, reader);
  REQUIRE_FALSE(beyond.ok());
  CHECK(beyond.status().code() == ErrorCode::kNotFound);
  CHECK(beyond.status().message() ==
        "inclusion proof for index 0 in size 11: perfect node (level 0, index 10) is beyond the "
        "10 leaves held");
  CHECK_FALSE(consistency_proof(3, 12, reader).ok());
  CHECK_FALSE(root_at(11, reader).ok());
  CHECK(reader.perfect_node(4, 0).status().code() == ErrorCode::kNotFound);
  CHECK(reader.perfect_node(64, 0).status().code() == ErrorCode::kNotFound);
  CHECK(reader.perfect_node(255, 0).status().code() == ErrorCode::kNotFound);
  CHECK(must(reader.perfect_node(3, 0)) == must(subtree_root(0, 8, reader)));
}

TEST_CASE("merkle: proofs on a tree of 2^20 leaves read O(log n) perfect nodes") {
  const uint64_t kLeaves = uint64_t{1} << 20;
  const int kLog2 = 20;
  const uint64_t kMaxReads = 2 * kLog2 + 2;
  VectorNodeReader inner(numbered_leaves(kLeaves));
  CountingNodeReader reader(inner);
  const std::vector<uint64_t> sizes = {kLeaves, kLeaves - 1, kLeaves / 2 + 1, 699051, 1000003 - 1};
  for (uint64_t size : sizes) {
    reader.calls = 0;
    const Hash root = must(root_at(size, reader));
    CHECK(reader.calls == static_cast<uint64_t>(std::popcount(size)));
    for (uint64_t index : {uint64_t{0}, uint64_t{1}, size / 3, size / 2, size - 2, size - 1}) {
      CAPTURE(size);
      CAPTURE(index);
      reader.calls = 0;
      const std::vector<Hash> proof = must(inclusion_proof(index, size, reader));
      CHECK(reader.calls <= kMaxReads);
      CHECK(verify_inclusion(must(inner.perfect_node(0, index)), index, size, proof, root).is_ok());
    }
    for (uint64_t size1 : {uint64_t{1}, uint64_t{3}, size / 3, size / 2 + 1, size - 1, size}) {
      CAPTURE(size);
      CAPTURE(size1);
      const Hash root1 = must(root_at(size1, reader));
      reader.calls = 0;
      const std::vector<Hash> proof = must(consistency_proof(size1, size, reader));
      CHECK(reader.calls <= kMaxReads);
      CHECK(verify_consistency(size1, size, proof, root1, root).is_ok());
    }
  }
}

}  // namespace
}  // namespace aura::merkle
