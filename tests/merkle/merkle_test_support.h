// Test helpers for engine/merkle: leaves with distinct hashes, a counting NodeReader, and naive
// reference versions of MTH, PATH and PROOF written straight from RFC 6962 §2.1's recursions
// (over a full leaf list, no shortcuts) to cross-check the O(log n) implementation.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/crypto/sha256.h"
#include "engine/merkle/merkle.h"

namespace aura::merkle::testing {

// Parses 64 hex digits; fails the test on malformed input.
inline Hash hex_hash(std::string_view hex) {
  auto d = digest_from_hex(hex);
  REQUIRE(d.has_value());
  return *d;
}

// Leaf hashes of the 8-byte little-endian encodings of 0..n-1: all distinct, so every node of
// the tree is distinct and a proof that hashes a value in the wrong place cannot verify.
inline std::vector<Hash> numbered_leaves(uint64_t n) {
  std::vector<Hash> leaves;
  leaves.reserve(n);
  for (uint64_t i = 0; i < n; ++i) {
    uint8_t bytes[8];
    for (int b = 0; b < 8; ++b) bytes[b] = static_cast<uint8_t>(i >> (8 * b));
    leaves.push_back(leaf_hash(bytes));
  }
  return leaves;
}

// RFC 6962's k for n >= 2: the largest power of two strictly less than n, found by doubling.
inline size_t naive_split(size_t n) {
  size_t k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

// MTH(D[n]) by RFC 6962's recursion.
inline Hash naive_mth(std::span<const Hash> d) {
  if (d.empty()) return empty_root();
  if (d.size() == 1) return d[0];
  const size_t k = naive_split(d.size());
  return node_hash(naive_mth(d.first(k)), naive_mth(d.subspan(k)));
}

// PATH(m, D[n]) by RFC 6962's recursion.
inline std::vector<Hash> naive_path(size_t m, std::span<const Hash> d) {
  if (d.size() <= 1) return {};
  const size_t k = naive_split(d.size());
  std::vector<Hash> path;
  if (m < k) {
    path = naive_path(m, d.first(k));
    path.push_back(naive_mth(d.subspan(k)));
  } else {
    path = naive_path(m - k, d.subspan(k));
    path.push_back(naive_mth(d.first(k)));
  }
  return path;
}

// SUBPROOF(m, D[n], b) by RFC 6962's recursion.
inline std::vector<Hash> naive_subproof(size_t m, std::span<const Hash> d, bool b) {
  if (m == d.size()) {
    if (b) return {};
    return {naive_mth(d)};
  }
  const size_t k = naive_split(d.size());
  std::vector<Hash> proof;
  if (m <= k) {
    proof = naive_subproof(m, d.first(k), b);
    proof.push_back(naive_mth(d.subspan(k)));
  } else {
    proof = naive_subproof(m - k, d.subspan(k), false);
    proof.push_back(naive_mth(d.first(k)));
  }
  return proof;
}

// PROOF(m, D[n]) = SUBPROOF(m, D[n], true).
inline std::vector<Hash> naive_proof(size_t m, std::span<const Hash> d) {
  return naive_subproof(m, d, true);
}

// Forwards to another reader and counts the calls.
class CountingNodeReader : public NodeReader {
 public:
  explicit CountingNodeReader(NodeReader& inner) : inner_(inner) {}
  Result<Hash> perfect_node(uint8_t level, uint64_t index) override {
    ++calls;
    return inner_.perfect_node(level, index);
  }
  uint64_t calls = 0;

 private:
  NodeReader& inner_;
};

// Unwraps a Result, failing the test with its message.
template <class T>
T must(Result<T> r) {
  INFO(r.status().message());
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace aura::merkle::testing
