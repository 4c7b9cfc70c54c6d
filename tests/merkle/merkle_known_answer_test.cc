// Known answers for the RFC 6962 tree. The values (not the code) come from transparency-dev/merkle
// (Go, Apache-2.0), https://github.com/transparency-dev/merkle:
//   - leaf inputs, every perfect node hash, roots for sizes 0..8 and compact ranges:
//     testonly/constants.go @ 582a6ad190b6848f1d26f8bf08ddef29955d9db1
//     (LeafInputs, NodeHashes, RootHashes, CompactTrees);
//   - inclusion and consistency proofs as hashes: proof/verify_test.go
//     @ 02194e9afb6c1d95b5381350007963aa70fff472 (inclusionProofs, whose leaf numbers are 1-based,
//     and consistencyProofs), plus the size-2 inclusion proofs of testonly/reference_test.go
//     @ 141d627eab770a7e9a2514f46a8b6338e6d90874 (TestRefInclusionProof);
//   - which nodes each proof in trees of size <= 8 consists of: proof/proof_test.go
//     @ 02a3e2029520f515596d5238c54fb0ac9e19bff4 (TestInclusion, TestConsistency), read against
//     NodeHashes above.
// The same 8 leaves and values appear in google/certificate-transparency's merkle tree tests.

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/merkle/merkle.h"
#include "tests/merkle/merkle_test_support.h"

namespace aura::merkle {
namespace {

using testing::hex_hash;
using testing::must;

// LeafInputs: the data of the 8 leaves.
std::vector<std::string> leaf_inputs() {
  using namespace std::string_literals;
  return {""s,
          "\x00"s,
          "\x10"s,
          "\x20\x21"s,
          "\x30\x31"s,
          "\x40\x41\x42\x43"s,
          "\x50\x51\x52\x53\x54\x55\x56\x57"s,
          "\x60\x61\x62\x63\x64\x65\x66\x67\x68\x69\x6a\x6b\x6c\x6d\x6e\x6f"s};
}

std::vector<Hash> kat_leaf_hashes() {
  std::vector<Hash> out;
  for (const std::string& data : leaf_inputs()) out.push_back(leaf_hash(as_bytes(data)));
  return out;
}

// NodeHashes: node(level, index) of the 8-leaf tree.
Hash node(int level, int index) {
  static const std::vector<std::vector<const char*>> kNodes = {
      {
          "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
          "96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
          "0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7",
          "07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7",
          "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
          "4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658",
          "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
          "46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1",
      },
      {
          "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
          "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
          "0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
          "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
      },
      {
          "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
          "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4",
      },
      {
          "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
      },
  };
  return hex_hash(kNodes.at(level).at(index));
}

// RootHashes: roots for sizes 1..8 (index 0 is size 1).
const std::vector<const char*> kRoots = {
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
};

Hash root_of(uint64_t size) { return hex_hash(kRoots.at(size - 1)); }

struct InclusionCase {
  uint64_t index;  // 0-based
  uint64_t size;
  std::vector<const char*> proof;
};

struct ConsistencyCase {
  uint64_t size1;
  uint64_t size2;
  std::vector<const char*> proof;
};

std::vector<Hash> parse_all(const std::vector<const char*>& hexes) {
  std::vector<Hash> out;
  for (const char* h : hexes) out.push_back(hex_hash(h));
  return out;
}

TEST_CASE("merkle: leaf, node and empty-tree hashes follow RFC 6962's domain separation") {
  CHECK(to_hex(empty_root()) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(leaf_hash({}) == node(0, 0));
  CHECK(leaf_hash(as_bytes(leaf_inputs()[7])) == node(0, 7));
  CHECK(node_hash(node(0, 0), node(0, 1)) == node(1, 0));
  CHECK(node_hash(node(2, 0), node(2, 1)) == node(3, 0));
  // The prefixes keep a leaf from passing as a node: hashing the same 64 bytes as a leaf differs.
  std::vector<uint8_t> both(node(0, 0).begin(), node(0, 0).end());
  both.insert(both.end(), node(0, 1).begin(), node(0, 1).end());
  CHECK(leaf_hash(both) != node(1, 0));
}

TEST_CASE("merkle: roots of the reference tree match the known answers for every size 1..8") {
  const std::vector<Hash> leaves = kat_leaf_hashes();
  VectorNodeReader reader(leaves);
  CompactRange range;
  CHECK(range.root() == empty_root());
  CHECK(must(root_at(0, reader)) == empty_root());
  for (uint64_t size = 1; size <= 8; ++size) {
    CAPTURE(size);
    range.append(leaves[size - 1]);
    CHECK(range.root() == root_of(size));
    CHECK(must(root_at(size, reader)) == root_of(size));
    CHECK(must(subtree_root(0, size, reader)) == root_of(size));
    VectorNodeReader exact(std::vector<Hash>(leaves.begin(), leaves.begin() + size));
    CHECK(must(root_at(size, exact)) == root_of(size));
    CHECK(testing::naive_mth(std::span(leaves).first(size)) == root_of(size));
  }
}

TEST_CASE("merkle: every perfect node of the reference tree matches the known answers") {
  const std::vector<Hash> leaves = kat_leaf_hashes();
  VectorNodeReader reader(leaves);
  for (int level = 0; level <= 3; ++level) {
    for (int index = 0; index < (8 >> level); ++index) {
      CAPTURE(level);
      CAPTURE(index);
      CHECK(must(reader.perfect_node(static_cast<uint8_t>(level), index)) == node(level, index));
      CHECK(must(subtree_root(index << level, (index + 1) << level, reader)) == node(level, index));
    }
  }
  // CompactRange::append reports the same nodes as it completes them.
  CompactRange range;
  int reported = 0;
  for (const Hash& leaf : leaves) {
    range.append(leaf, [&](const PerfectNode& n) {
      ++reported;
      CHECK(n.hash == node(n.level, static_cast<int>(n.index)));
    });
  }
  CHECK(reported == 4 + 2 + 1);
}

TEST_CASE("merkle: compact range peaks of the reference tree match the known answers") {
  // CompactTrees: the peaks for each size.
  const std::vector<std::vector<Hash>> want = {
      {},
      {node(0, 0)},
      {node(1, 0)},
      {node(1, 0), node(0, 2)},
      {node(2, 0)},
      {node(2, 0), node(0, 4)},
      {node(2, 0), node(1, 2)},
      {node(2, 0), node(1, 2), node(0, 6)},
      {node(3, 0)},
  };
  const std::vector<Hash> leaves = kat_leaf_hashes();
  CompactRange range;
  CHECK(range.peaks() == want[0]);
  for (uint64_t size = 1; size <= 8; ++size) {
    range.append(leaves[size - 1]);
    CAPTURE(size);
    CHECK(range.size() == size);
    CHECK(range.peaks() == want[size]);
  }
}

TEST_CASE("merkle: the known inclusion proofs are generated and verify") {
  const std::vector<InclusionCase> cases = {
      {0, 1, {}},
      {0, 2, {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7"}},
      {1, 2, {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d"}},
      {0,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {5,
       8,
       {"bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2, 3, {"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125"}},
      {1,
       5,
       {"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
  };
  const std::vector<Hash> leaves = kat_leaf_hashes();
  VectorNodeReader reader(leaves);
  for (const InclusionCase& c : cases) {
    CAPTURE(c.index);
    CAPTURE(c.size);
    const std::vector<Hash> want = parse_all(c.proof);
    CHECK(must(inclusion_proof(c.index, c.size, reader)) == want);
    const Status s = verify_inclusion(leaves[c.index], c.index, c.size, want, root_of(c.size));
    INFO(s.message());
    CHECK(s.is_ok());
  }
}

TEST_CASE("merkle: the known consistency proofs are generated and verify") {
  const std::vector<ConsistencyCase> cases = {
      {1, 1, {}},
      {1,
       8,
       {"96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7",
        "5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4"}},
      {6,
       8,
       {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
      {2,
       5,
       {"5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e",
        "bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b"}},
      {6,
       7,
       {"0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a",
        "b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f",
        "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7"}},
  };
  const std::vector<Hash> leaves = kat_leaf_hashes();
  VectorNodeReader reader(leaves);
  for (const ConsistencyCase& c : cases) {
    CAPTURE(c.size1);
    CAPTURE(c.size2);
    const std::vector<Hash> want = parse_all(c.proof);
    CHECK(must(consistency_proof(c.size1, c.size2, reader)) == want);
    const Status s = verify_consistency(c.size1, c.size2, want, root_of(c.size1), root_of(c.size2));
    INFO(s.message());
    CHECK(s.is_ok());
  }
}

TEST_CASE("merkle: proofs in trees of up to 8 leaves consist of the nodes the reference picks") {
  // proof_test.go names nodes of the 7-leaf tree a..l; "l" (leaves 4..6) is not a perfect node
  // and is rehashed from i = node(1, 2) and j = node(0, 6).
  const Hash a = node(0, 0), b = node(0, 1), c = node(0, 2), d = node(0, 3), e = node(0, 4),
             f = node(0, 5), j = node(0, 6), g = node(1, 0), h = node(1, 1), i = node(1, 2),
             k = node(2, 0);
  const Hash l = node_hash(i, j);
  REQUIRE(node_hash(k, l) == root_of(7));

  const std::vector<Hash> leaves = kat_leaf_hashes();
  VectorNodeReader reader(leaves);

  struct Inclusion {
    uint64_t index, size;
    std::vector<Hash> want;
  };
  const std::vector<Inclusion> inclusions = {
      {0, 1, {}},        {1, 3, {a, c}},    {0, 7, {b, h, l}}, {1, 7, {a, h, l}}, {2, 7, {d, g, l}},
      {3, 7, {c, g, l}}, {4, 7, {f, j, k}}, {5, 7, {e, j, k}}, {6, 7, {i, k}},    {2, 4, {d, g}},
      {3, 5, {c, g, e}}, {3, 6, {c, g, i}}, {4, 6, {f, k}},
  };
  for (const Inclusion& t : inclusions) {
    CAPTURE(t.index);
    CAPTURE(t.size);
    CHECK(must(inclusion_proof(t.index, t.size, reader)) == t.want);
    CHECK(verify_inclusion(leaves[t.index], t.index, t.size, t.want, root_of(t.size)).is_ok());
  }

  struct Consistency {
    uint64_t size1, size2;
    std::vector<Hash> want;
  };
  const std::vector<Consistency> consistencies = {
      {1, 2, {b}},
      {1, 4, {b, h}},
      {1, 6, {b, h, i}},
      {2, 3, {c}},
      {2, 8, {h, node(2, 1)}},
      {3, 7, {c, d, g, l}},
      {4, 7, {l}},
      {5, 7, {e, f, j, k}},
      {6, 7, {i, j, k}},
      {7, 8, {j, node(0, 7), i, k}},
      {2, 4, {h}},
      {3, 5, {c, d, g, e}},
      {3, 6, {c, d, g, i}},
      {4, 6, {i}},
      {1, 7, {b, h, l}},
      {1, 1, {}},
      {2, 2, {}},
      {3, 3, {}},
      {4, 4, {}},
      {5, 5, {}},
      {7, 7, {}},
      {8, 8, {}},
  };
  for (const Consistency& t : consistencies) {
    CAPTURE(t.size1);
    CAPTURE(t.size2);
    CHECK(must(consistency_proof(t.size1, t.size2, reader)) == t.want);
    CHECK(verify_consistency(t.size1, t.size2, t.want, root_of(t.size1), root_of(t.size2)).is_ok());
  }
}

}  // namespace
}  // namespace aura::merkle
