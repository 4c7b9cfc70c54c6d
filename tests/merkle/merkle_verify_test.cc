// Adversarial tests for verify_inclusion and verify_consistency: each way a proof or its claim
// can be altered must be refused. Leaves are numbered, so every node hash in a tree is distinct.
//
// A claim whose roots are the true roots for its sizes must be accepted exactly when the proof is
// the honest one for that claim (anything else would need a SHA-256 collision); the tests use that
// as their oracle when they alter sizes or indices.

#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/merkle/merkle.h"
#include "tests/merkle/merkle_test_support.h"

namespace aura::merkle {
namespace {

using testing::must;
using testing::numbered_leaves;

// A tree of numbered leaves with its roots for every size up to the number of leaves.
struct Tree {
  explicit Tree(uint64_t n) : leaves(numbered_leaves(n)), reader(leaves) {
    roots.push_back(empty_root());
    for (uint64_t size = 1; size <= n; ++size) roots.push_back(must(root_at(size, reader)));
  }
  std::vector<Hash> inclusion(uint64_t index, uint64_t size) {
    return must(inclusion_proof(index, size, reader));
  }
  std::vector<Hash> consistency(uint64_t size1, uint64_t size2) {
    return must(consistency_proof(size1, size2, reader));
  }

  std::vector<Hash> leaves;
  VectorNodeReader reader;
  std::vector<Hash> roots;  // roots[size]
};

// An arbitrary hash (the "some hash" of transparency-dev/merkle's verify tests).
const Hash kSomeHash =
    *digest_from_hex("abacaba000000000000000000000000000000000000000000060061e00123456");

Hash flip_bit(Hash h, int bit) {
  h[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
  return h;
}

// For each hash of RFC 6962 PATH(m, D[n]), whether it sits left of the running hash. Two claims
// with the same sides fold a proof identically, so a verifier cannot tell them apart by the proof.
std::vector<bool> path_sides(uint64_t m, uint64_t n) {
  if (n <= 1) return {};
  const uint64_t k = testing::naive_split(n);
  std::vector<bool> sides = m < k ? path_sides(m, k) : path_sides(m - k, n - k);
  sides.push_back(m >= k);
  return sides;
}

bool inclusion_ok(const Hash& leaf, uint64_t index, uint64_t size, const std::vector<Hash>& proof,
                  const Hash& root) {
  return verify_inclusion(leaf, index, size, proof, root).is_ok();
}

bool consistency_ok(uint64_t size1, uint64_t size2, const std::vector<Hash>& proof,
                    const Hash& root1, const Hash& root2) {
  return verify_consistency(size1, size2, proof, root1, root2).is_ok();
}

// ---------------------------------------------------------------------------------------------
// Inclusion

TEST_CASE("merkle: an inclusion proof is refused when the index is not below the size") {
  Tree t(8);
  const Status s = verify_inclusion(t.leaves[7], 7, 7, t.inclusion(6, 7), t.roots[7]);
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == "inclusion proof: index 7 is not below size 7");
  CHECK_FALSE(verify_inclusion(t.leaves[0], 0, 0, {}, empty_root()).is_ok());
  CHECK_FALSE(verify_inclusion(t.leaves[0], 1, 0, {}, t.leaves[0]).is_ok());
  CHECK_FALSE(verify_inclusion(t.leaves[0], 2, 1, {}, t.leaves[0]).is_ok());
  CHECK_FALSE(verify_inclusion(t.leaves[0], UINT64_MAX, 8, t.inclusion(0, 8), t.roots[8]).is_ok());
}

TEST_CASE("merkle: an inclusion proof is refused when it claims a wrong tree size") {
  Tree t(80);
  for (uint64_t size = 1; size <= 40; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = t.inclusion(index, size);
      for (uint64_t wrong : {size - 1, size + 1, size + 2, 2 * size, size / 2}) {
        if (index >= wrong || wrong == size) continue;
        CAPTURE(size);
        CAPTURE(index);
        CAPTURE(wrong);
        // Against the wrong size's true root: refused unless the proof is that claim's proof.
        CHECK(inclusion_ok(t.leaves[index], index, wrong, proof, t.roots[wrong]) ==
              (proof == t.inclusion(index, wrong)));
        // Against the proof's own root: refused unless both sizes fold the path the same way.
        CHECK(inclusion_ok(t.leaves[index], index, wrong, proof, t.roots[size]) ==
              (path_sides(index, wrong) == path_sides(index, size)));
      }
    }
  }
  // Sizes 3 and 4 fold leaf 0's two-hash path alike, so only the root tells them apart: callers
  // must take the root and the size from the same checkpoint.
  CHECK(inclusion_ok(t.leaves[0], 0, 4, t.inclusion(0, 3), t.roots[3]));
  CHECK_FALSE(inclusion_ok(t.leaves[0], 0, 4, t.inclusion(0, 3), t.roots[4]));
}

TEST_CASE("merkle: an inclusion proof for another leaf is refused") {
  Tree t(33);
  for (uint64_t size = 1; size <= 33; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = t.inclusion(index, size);
      for (uint64_t other = 0; other < size; ++other) {
        if (other == index) continue;
        CAPTURE(size);
        CAPTURE(index);
        CAPTURE(other);
        // Right leaf and proof, wrong index.
        CHECK_FALSE(inclusion_ok(t.leaves[index], other, size, proof, t.roots[size]));
        // Another leaf passed off with this leaf's index and proof.
        CHECK_FALSE(inclusion_ok(t.leaves[other], index, size, proof, t.roots[size]));
        // This leaf with another leaf's proof.
        CHECK_FALSE(
            inclusion_ok(t.leaves[index], index, size, t.inclusion(other, size), t.roots[size]));
      }
    }
  }
}

TEST_CASE("merkle: a truncated inclusion proof is refused") {
  Tree t(70);
  const std::vector<Hash> proof = t.inclusion(3, 7);
  const Status s = verify_inclusion(t.leaves[3], 3, 7, std::span(proof).first(2), t.roots[7]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "inclusion proof: 2 hashes, expected 3 for index 3 in size 7");
  for (uint64_t size = 2; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> full = t.inclusion(index, size);
      CAPTURE(size);
      CAPTURE(index);
      for (size_t keep = 0; keep < full.size(); ++keep) {
        const std::vector<Hash> front(full.begin(), full.begin() + keep);
        const std::vector<Hash> back(full.end() - keep, full.end());
        CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, front, t.roots[size]));
        CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, back, t.roots[size]));
      }
    }
  }
}

TEST_CASE("merkle: an inclusion proof with an extra hash is refused") {
  Tree t(70);
  std::vector<Hash> padded = t.inclusion(3, 7);
  padded.push_back(t.roots[7]);
  const Status s = verify_inclusion(t.leaves[3], 3, 7, padded, t.roots[7]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "inclusion proof: 4 hashes, expected 3 for index 3 in size 7");
  for (uint64_t size = 1; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = t.inclusion(index, size);
      CAPTURE(size);
      CAPTURE(index);
      for (const Hash& extra : {t.roots[size], t.leaves[index], kSomeHash, Hash{}}) {
        for (size_t at = 0; at <= proof.size(); ++at) {
          std::vector<Hash> longer = proof;
          longer.insert(longer.begin() + at, extra);
          CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, longer, t.roots[size]));
        }
      }
    }
  }
}

TEST_CASE("merkle: an inclusion proof with a flipped bit in any hash is refused") {
  Tree t(20);
  for (uint64_t size = 1; size <= 20; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = t.inclusion(index, size);
      const Hash& leaf = t.leaves[index];
      const Hash& root = t.roots[size];
      REQUIRE(inclusion_ok(leaf, index, size, proof, root));
      CAPTURE(size);
      CAPTURE(index);
      for (int bit = 0; bit < 256; ++bit) {
        for (size_t i = 0; i < proof.size(); ++i) {
          std::vector<Hash> bad = proof;
          bad[i] = flip_bit(bad[i], bit);
          CHECK_FALSE(inclusion_ok(leaf, index, size, bad, root));
        }
        CHECK_FALSE(inclusion_ok(flip_bit(leaf, bit), index, size, proof, root));
        CHECK_FALSE(inclusion_ok(leaf, index, size, proof, flip_bit(root, bit)));
      }
    }
  }
}

TEST_CASE("merkle: an inclusion proof with two hashes swapped is refused") {
  Tree t(70);
  for (uint64_t size = 3; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> proof = t.inclusion(index, size);
      CAPTURE(size);
      CAPTURE(index);
      for (size_t a = 0; a < proof.size(); ++a) {
        for (size_t b = a + 1; b < proof.size(); ++b) {
          std::vector<Hash> swapped = proof;
          std::swap(swapped[a], swapped[b]);
          CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, swapped, t.roots[size]));
        }
      }
    }
  }
}

TEST_CASE("merkle: an empty inclusion proof is refused where one is needed") {
  Tree t(70);
  // Size 1 needs none: the root is the leaf hash.
  CHECK(inclusion_ok(t.leaves[0], 0, 1, {}, t.leaves[0]));
  CHECK_FALSE(inclusion_ok(t.leaves[0], 0, 1, {}, t.leaves[1]));
  for (uint64_t size = 2; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      CAPTURE(size);
      CAPTURE(index);
      CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, {}, t.roots[size]));
      CHECK_FALSE(inclusion_ok(t.roots[size], index, size, {}, t.roots[size]));
    }
  }
}

TEST_CASE("merkle: an inclusion proof against a wrong root is refused and names both roots") {
  Tree t(70);
  const std::vector<Hash> proof = t.inclusion(3, 7);
  const Status s = verify_inclusion(t.leaves[3], 3, 7, proof, t.roots[6]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "inclusion proof for index 3 in size 7: computed root " +
                           to_hex(t.roots[7]) + " != expected root " + to_hex(t.roots[6]));
  for (uint64_t size = 1; size <= 70; ++size) {
    for (uint64_t index = 0; index < size; ++index) {
      const std::vector<Hash> p = t.inclusion(index, size);
      CAPTURE(size);
      CAPTURE(index);
      for (const Hash& root : {t.roots[size - 1], empty_root(), kSomeHash}) {
        CHECK_FALSE(inclusion_ok(t.leaves[index], index, size, p, root));
      }
    }
  }
}

TEST_CASE("merkle: the reference verifier's corruptions of inclusion proofs are all refused") {
  // The probe set of transparency-dev/merkle's corruptInclusionProof (proof/verify_test.go), on
  // the (index, size) pairs of its known proofs.
  Tree t(16);
  struct Probe {
    uint64_t index, size;
    Hash leaf;
    std::vector<Hash> proof;
    Hash root;
    const char* what;
  };
  const std::vector<std::pair<uint64_t, uint64_t>> known = {{0, 1}, {0, 8}, {5, 8}, {2, 3}, {1, 5}};
  for (auto [index, size] : known) {
    const std::vector<Hash> p = t.inclusion(index, size);
    const Hash leaf = t.leaves[index];
    const Hash root = t.roots[size];
    REQUIRE(inclusion_ok(leaf, index, size, p, root));
    auto with = [&](std::vector<Hash> front, std::vector<Hash> back) {
      front.insert(front.end(), p.begin(), p.end());
      front.insert(front.end(), back.begin(), back.end());
      return front;
    };
    std::vector<Probe> probes = {
        {index - 1, size, leaf, p, root, "index - 1"},
        {index + 1, size, leaf, p, root, "index + 1"},
        {index ^ 2, size, leaf, p, root, "index ^ 2"},
        {index, size * 2, leaf, p, root, "size * 2"},
        {index, size / 2, leaf, p, root, "size / 2"},
        {index, size, leaf_hash(as_bytes("WrongLeaf")), p, root, "wrong leaf"},
        {index, size, leaf, p, empty_root(), "empty root"},
        {index, size, leaf, p, kSomeHash, "random root"},
        {index, size, leaf, with({}, {Hash{}}), root, "trailing garbage"},
        {index, size, leaf, with({}, {root}), root, "trailing root"},
        {index, size, leaf, with({Hash{}}, {}), root, "preceding garbage"},
        {index, size, leaf, with({root}, {}), root, "preceding root"},
    };
    for (size_t i = 0; i < p.size(); ++i) {
      std::vector<Hash> bad = p;
      bad[i][0] ^= 8;
      probes.push_back({index, size, leaf, bad, root, "modified proof[i] bit 3"});
    }
    if (!p.empty()) {
      probes.push_back({index, size, leaf, std::vector<Hash>(p.begin(), p.end() - 1), root,
                        "removed component"});
    }
    if (p.size() > 1) {
      std::vector<Hash> bad = p;
      bad.insert(bad.begin() + 1, kSomeHash);
      probes.push_back({index, size, leaf, bad, root, "inserted component"});
    }
    for (const Probe& probe : probes) {
      CAPTURE(index);
      CAPTURE(size);
      CAPTURE(probe.what);
      CHECK_FALSE(inclusion_ok(probe.leaf, probe.index, probe.size, probe.proof, probe.root));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Consistency

TEST_CASE("merkle: a consistency proof with size1 and size2 swapped is refused") {
  Tree t(40);
  const Status s = verify_consistency(8, 6, t.consistency(6, 8), t.roots[8], t.roots[6]);
  CHECK(s.code() == ErrorCode::kInvalidArgument);
  CHECK(s.message() == "consistency proof: size1 8 is greater than size2 6");
  for (uint64_t size2 = 2; size2 <= 40; ++size2) {
    for (uint64_t size1 = 1; size1 < size2; ++size1) {
      const std::vector<Hash> proof = t.consistency(size1, size2);
      CAPTURE(size1);
      CAPTURE(size2);
      CHECK_FALSE(consistency_ok(size2, size1, proof, t.roots[size2], t.roots[size1]));
      CHECK_FALSE(consistency_ok(size2, size1, proof, t.roots[size1], t.roots[size2]));
      CHECK_FALSE(consistency_ok(size1, size2, proof, t.roots[size2], t.roots[size1]));
    }
  }
}

TEST_CASE("merkle: a consistency proof with a size off by one is refused") {
  Tree t(41);
  for (uint64_t size2 = 1; size2 <= 40; ++size2) {
    for (uint64_t size1 = 1; size1 <= size2; ++size1) {
      const std::vector<Hash> proof = t.consistency(size1, size2);
      struct Claim {
        uint64_t size1, size2;
      };
      for (Claim c :
           {Claim{size1 - 1, size2}, Claim{size1 + 1, size2}, Claim{size1, size2 - 1},
            Claim{size1, size2 + 1}, Claim{size1 - 1, size2 - 1}, Claim{size1 + 1, size2 + 1}}) {
        if (c.size1 == 0 || c.size1 > c.size2) continue;
        CAPTURE(size1);
        CAPTURE(size2);
        CAPTURE(c.size1);
        CAPTURE(c.size2);
        // With the altered sizes' true roots: refused unless the proof is that claim's proof.
        CHECK(consistency_ok(c.size1, c.size2, proof, t.roots[c.size1], t.roots[c.size2]) ==
              (proof == t.consistency(c.size1, c.size2)));
      }
      // A size of 0 only pairs with an empty proof and the empty root.
      CHECK(consistency_ok(0, size2, proof, t.roots[size1], t.roots[size2]) == false);
    }
  }
}

TEST_CASE("merkle: a truncated consistency proof is refused") {
  Tree t(40);
  const std::vector<Hash> proof = t.consistency(6, 8);
  const Status s = verify_consistency(6, 8, std::span(proof).first(2), t.roots[6], t.roots[8]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "consistency proof: 2 hashes, expected 3 for size1 6 and size2 8");
  for (uint64_t size2 = 2; size2 <= 40; ++size2) {
    for (uint64_t size1 = 1; size1 < size2; ++size1) {
      const std::vector<Hash> full = t.consistency(size1, size2);
      CAPTURE(size1);
      CAPTURE(size2);
      for (size_t keep = 0; keep < full.size(); ++keep) {
        const std::vector<Hash> front(full.begin(), full.begin() + keep);
        const std::vector<Hash> back(full.end() - keep, full.end());
        CHECK_FALSE(consistency_ok(size1, size2, front, t.roots[size1], t.roots[size2]));
        CHECK_FALSE(consistency_ok(size1, size2, back, t.roots[size1], t.roots[size2]));
      }
    }
  }
}

TEST_CASE("merkle: a consistency proof with an extra hash is refused") {
  Tree t(40);
  std::vector<Hash> padded = t.consistency(6, 8);
  padded.insert(padded.begin(), t.roots[6]);
  const Status s = verify_consistency(6, 8, padded, t.roots[6], t.roots[8]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "consistency proof: 4 hashes, expected 3 for size1 6 and size2 8");
  for (uint64_t size2 = 1; size2 <= 40; ++size2) {
    for (uint64_t size1 = 1; size1 <= size2; ++size1) {
      const std::vector<Hash> proof = t.consistency(size1, size2);
      CAPTURE(size1);
      CAPTURE(size2);
      for (const Hash& extra : {t.roots[size1], t.roots[size2], kSomeHash, Hash{}}) {
        for (size_t at = 0; at <= proof.size(); ++at) {
          std::vector<Hash> longer = proof;
          longer.insert(longer.begin() + at, extra);
          CHECK_FALSE(consistency_ok(size1, size2, longer, t.roots[size1], t.roots[size2]));
        }
      }
    }
  }
}

TEST_CASE("merkle: a consistency proof with a flipped bit in any hash or root is refused") {
  Tree t(20);
  for (uint64_t size2 = 1; size2 <= 20; ++size2) {
    for (uint64_t size1 = 1; size1 <= size2; ++size1) {
      const std::vector<Hash> proof = t.consistency(size1, size2);
      const Hash& root1 = t.roots[size1];
      const Hash& root2 = t.roots[size2];
      REQUIRE(consistency_ok(size1, size2, proof, root1, root2));
      CAPTURE(size1);
      CAPTURE(size2);
      for (int bit = 0; bit < 256; ++bit) {
        for (size_t i = 0; i < proof.size(); ++i) {
          std::vector<Hash> bad = proof;
          bad[i] = flip_bit(bad[i], bit);
          CHECK_FALSE(consistency_ok(size1, size2, bad, root1, root2));
        }
        CHECK_FALSE(consistency_ok(size1, size2, proof, flip_bit(root1, bit), root2));
        CHECK_FALSE(consistency_ok(size1, size2, proof, root1, flip_bit(root2, bit)));
      }
    }
  }
  // The message names the root that did not match.
  const std::vector<Hash> proof = t.consistency(6, 8);
  const Status s = verify_consistency(6, 8, proof, t.roots[6], t.roots[7]);
  CHECK(s.message() == "consistency proof for size1 6 and size2 8: computed root2 " +
                           to_hex(t.roots[8]) + " != expected root2 " + to_hex(t.roots[7]));
}

TEST_CASE("merkle: a consistency proof with two hashes swapped is refused") {
  Tree t(70);
  for (uint64_t size2 = 2; size2 <= 70; ++size2) {
    for (uint64_t size1 = 1; size1 < size2; ++size1) {
      const std::vector<Hash> proof = t.consistency(size1, size2);
      CAPTURE(size1);
      CAPTURE(size2);
      for (size_t a = 0; a < proof.size(); ++a) {
        for (size_t b = a + 1; b < proof.size(); ++b) {
          std::vector<Hash> swapped = proof;
          std::swap(swapped[a], swapped[b]);
          CHECK_FALSE(consistency_ok(size1, size2, swapped, t.roots[size1], t.roots[size2]));
        }
      }
    }
  }
}

TEST_CASE("merkle: an empty consistency proof is refused where one is needed") {
  Tree t(40);
  for (uint64_t size2 = 2; size2 <= 40; ++size2) {
    for (uint64_t size1 = 1; size1 < size2; ++size1) {
      CAPTURE(size1);
      CAPTURE(size2);
      CHECK_FALSE(consistency_ok(size1, size2, {}, t.roots[size1], t.roots[size2]));
    }
  }
  const Status s = verify_consistency(1, 2, {}, t.roots[1], t.roots[2]);
  CHECK(s.message() == "consistency proof: 0 hashes, expected 1 for size1 1 and size2 2");
}

TEST_CASE("merkle: a consistency proof from size 0 must be empty and start at the empty root") {
  Tree t(10);
  for (uint64_t size2 = 0; size2 <= 10; ++size2) {
    CAPTURE(size2);
    CHECK(consistency_ok(0, size2, {}, empty_root(), t.roots[size2]));
    CHECK_FALSE(consistency_ok(0, size2, {empty_root()}, empty_root(), t.roots[size2]));
    CHECK_FALSE(consistency_ok(0, size2, {t.roots[size2]}, empty_root(), t.roots[size2]));
    CHECK_FALSE(consistency_ok(0, size2, {}, kSomeHash, t.roots[size2]));
  }
  CHECK_FALSE(consistency_ok(0, 0, {}, empty_root(), kSomeHash));
  const Status s =
      verify_consistency(0, 5, std::vector<Hash>{t.roots[5]}, empty_root(), t.roots[5]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "consistency proof: 1 hashes, expected 0 for size1 0 and size2 5");
}

TEST_CASE("merkle: a consistency proof between equal sizes must be empty with equal roots") {
  Tree t(10);
  for (uint64_t size = 1; size <= 10; ++size) {
    CAPTURE(size);
    CHECK(consistency_ok(size, size, {}, t.roots[size], t.roots[size]));
    CHECK_FALSE(consistency_ok(size, size, {t.roots[size]}, t.roots[size], t.roots[size]));
    CHECK_FALSE(consistency_ok(size, size, {}, t.roots[size], t.roots[size - 1]));
    CHECK_FALSE(consistency_ok(size, size, {}, kSomeHash, t.roots[size]));
  }
  const Status s = verify_consistency(5, 5, {}, t.roots[5], t.roots[4]);
  CHECK(s.code() == ErrorCode::kCorruption);
  CHECK(s.message() == "consistency proof: equal sizes 5 but root1 " + to_hex(t.roots[5]) +
                           " != root2 " + to_hex(t.roots[4]));
}

TEST_CASE("merkle: the reference verifier's corruptions of consistency proofs are all refused") {
  // The probe set of transparency-dev/merkle's corruptConsistencyProof (proof/verify_test.go), on
  // the size pairs of its known non-empty proofs.
  Tree t(16);
  struct Probe {
    uint64_t size1, size2;
    Hash root1, root2;
    std::vector<Hash> proof;
    const char* what;
  };
  const std::vector<std::pair<uint64_t, uint64_t>> known = {{1, 8}, {6, 8}, {2, 5}, {6, 7}};
  for (auto [size1, size2] : known) {
    const std::vector<Hash> p = t.consistency(size1, size2);
    const Hash r1 = t.roots[size1];
    const Hash r2 = t.roots[size2];
    REQUIRE(consistency_ok(size1, size2, p, r1, r2));
    auto with = [&](std::vector<Hash> front, std::vector<Hash> back) {
      front.insert(front.end(), p.begin(), p.end());
      front.insert(front.end(), back.begin(), back.end());
      return front;
    };
    std::vector<Probe> probes = {
        {size1 - 1, size2, r1, r2, p, "size1 - 1"},
        {size1 + 1, size2, r1, r2, p, "size1 + 1"},
        {size1 ^ 2, size2, r1, r2, p, "size1 ^ 2"},
        {size1, size2 * 2, r1, r2, p, "size2 * 2"},
        {size1, size2 / 2, r1, r2, p, "size2 / 2"},
        {size1, size2, kSomeHash, r2, p, "wrong root1"},
        {size1, size2, r1, kSomeHash, p, "wrong root2"},
        {size1, size2, r2, r1, p, "swapped roots"},
        {size1, size2, r1, r2, {}, "empty proof"},
        {size1, size2, r1, r2, with({}, {Hash{}}), "trailing garbage"},
        {size1, size2, r1, r2, with({}, {r1}), "trailing root1"},
        {size1, size2, r1, r2, with({}, {r2}), "trailing root2"},
        {size1, size2, r1, r2, with({Hash{}}, {}), "preceding garbage"},
        {size1, size2, r1, r2, with({r1}, {}), "preceding root1"},
        {size1, size2, r1, r2, with({r2}, {}), "preceding root2"},
        {size1, size2, r1, r2, with({p[0]}, {}), "preceding proof[0]"},
        {size1, size2, r1, r2, std::vector<Hash>(p.begin(), p.end() - 1), "truncated proof"},
    };
    for (size_t i = 0; i < p.size(); ++i) {
      std::vector<Hash> bad = p;
      bad[i][0] ^= 16;
      probes.push_back({size1, size2, r1, r2, bad, "modified proof[i] bit 4"});
    }
    for (const Probe& probe : probes) {
      CAPTURE(size1);
      CAPTURE(size2);
      CAPTURE(probe.what);
      CHECK_FALSE(consistency_ok(probe.size1, probe.size2, probe.proof, probe.root1, probe.root2));
    }
  }
}

}  // namespace
}  // namespace aura::merkle
