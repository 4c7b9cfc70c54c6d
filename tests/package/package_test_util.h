// Helpers for the package tests: write a small package tree, sign with fixed or fresh keys,
// and forge signatures over arbitrary payloads (to reach the checks after the signature).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/crypto/ed25519.h"
#include "engine/package/package.h"
#include "engine/package/package_format.h"
#include "engine/package/trust_store.h"
#include "engine/sign/dsse.h"
#include "engine/sign/signed_note.h"
#include "tests/scenario/sample_manifest.h"

namespace aura::testing {

// The documented test vector (docs/formats/package.md): a complete manifest (819 bytes).
inline constexpr std::string_view kVectorManifest =
    R"({"schema":1,"id":"example.hello","version":"1.0.0","family":"example","title":"Hello package",)"
    "\n"
    R"("briefing":"Read files/hello.txt.","driver":"filetree",)"
    "\n"
    R"("hypotheses":[{"id":"hello","text":"it says hello"},{"id":"bye","text":"it says bye"}],)"
    "\n"
    R"("worlds":[{"id":"primary","role":"primary","build":{"layers":["files"]}},{"id":"twin","role":"twin","build":{"layers":["files"]}},{"id":"control","role":"control","build":{"layers":["files"]}}],)"
    "\n"
    R"("probes":[{"call":"file.read","summary":"read a file","params":{"path":{"type":"path","prefixes":["/"]}}}],)"
    "\n"
    R"("actions":[{"call":"journal.undo","summary":"undo the last change"}],)"
    "\n"
    R"("checks":[{"id":"healthy","kind":"postcondition","call":"fleet.healthy","params":{"expect_text":"hello"}}],)"
    "\n"
    R"("judge":{"gold":{"expect":"VERIFIED","ir":{"v":1}},"bad":{"expect":"NOT_RECOVERED","ir":{"v":1}}}})"
    "\n";
inline constexpr std::string_view kVectorHello = "hello\n";

inline void write_file(const std::filesystem::path& p, std::string_view bytes) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << bytes;
  REQUIRE(out.good());
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The vector's tree: manifest.json and files/hello.txt.
inline void write_vector_tree(const std::filesystem::path& dir) {
  write_file(dir / "manifest.json", kVectorManifest);
  write_file(dir / "files" / "hello.txt", kVectorHello);
}

// A package with a few more files, a subfolder and a complete manifest.
inline void write_sample_tree(const std::filesystem::path& dir) {
  write_file(dir / "manifest.json", sample_manifest("net.dns-outage", "2.1.0-rc.1", "network",
                                                    "DNS outage on the primary"));
  write_file(dir / "files" / "hello.txt", kVectorHello);
  write_file(dir / "files" / "deep" / "probe.sh", "#!/bin/sh\necho probe\n");
  write_file(dir / "README.md", "# DNS outage\n");
}

// The vector's publisher key: seed 00 01 .. 1f, name aura.publisher/example.
inline NoteSigner vector_signer() {
  Ed25519Seed seed;
  for (size_t i = 0; i < seed.size(); ++i) seed[i] = static_cast<uint8_t>(i);
  return NoteSigner("aura.publisher/example", Ed25519KeyPair::from_seed(seed));
}

inline NoteSigner fresh_signer(const std::string& name) {
  return NoteSigner(name, Ed25519KeyPair::generate());
}

inline TrustStore trust_of(const std::vector<NoteVerifierKey>& keys) {
  TrustStore t;
  for (const auto& k : keys) REQUIRE(t.add(k, k.name + ".pub").is_ok());
  return t;
}

// Writes SHA256SUMS over every file listed in `files` (paths relative to `dir`) and a
// package.sig.json over a payload naming `id` and `version`, of `payload_type`, without
// validating anything: lets a test reach the checks that follow the signature.
inline void forge(const std::filesystem::path& dir, const std::vector<std::string>& files,
                  const NoteSigner& signer, std::string_view id, std::string_view version,
                  std::string_view payload_type = package_format::kPayloadType) {
  std::vector<PackageFile> listed;
  for (const auto& f : files) listed.push_back({f, sha256(read_file(dir / f)), 0});
  std::sort(listed.begin(), listed.end(),
            [](const PackageFile& a, const PackageFile& b) { return a.path < b.path; });
  const std::string sums = format_sha256sums(listed);
  write_file(dir / "SHA256SUMS", sums);
  const std::string payload =
      package_payload_json(id, version, sha256(read_file(dir / "manifest.json")), sha256(sums));
  write_file(dir / "package.sig.json", dsse_sign(payload_type, payload, signer));
}

// REQUIREs that loading fails and returns the message.
inline std::string load_error(const std::filesystem::path& dir, const TrustStore& trust) {
  auto r = load_package(dir, trust);
  REQUIRE_FALSE(r.ok());
  return r.status().message();
}

inline bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

}  // namespace aura::testing
