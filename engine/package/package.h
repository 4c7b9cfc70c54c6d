// Signed scenario packages: a folder of manifest.json and shipped files, their SHA256SUMS,
// and a DSSE signature (package.sig.json) by a publisher key. load_package() fails closed:
// it returns a package only when a trusted key's signature covers exactly the bytes it
// hands out, and otherwise says which check failed. See docs/formats/package.md.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"
#include "engine/crypto/sha256.h"
#include "engine/package/trust_store.h"
#include "engine/sign/signed_note.h"

namespace aura {

// One file covered by SHA256SUMS; `path` is relative, '/'-separated.
struct PackageFile {
  std::string path;
  Digest sha256{};
  uint64_t bytes = 0;

  bool operator==(const PackageFile&) const = default;
};

// The four manifest fields named in package errors and the signed payload (load_package and
// sign_package also validate the whole manifest with scenario::parse_manifest).
struct ManifestHeader {
  std::string id;
  std::string version;
  std::string family;
  std::string title;
};

// What sign_package() wrote.
struct SignedPackage {
  std::string id;
  std::string version;
  Digest manifest_sha256{};
  Digest package_digest{};         // SHA-256 of the SHA256SUMS bytes
  std::vector<PackageFile> files;  // sorted by path, manifest.json included
  std::string publisher;           // the signing key's name
};

// A package that verified. Every field comes from bytes a trusted signature covers.
struct LoadedPackage {
  std::string id;
  std::string version;
  std::string family;
  std::string title;
  std::string manifest_bytes;      // exactly the bytes hashed and parsed
  std::vector<PackageFile> files;  // sorted by path, manifest.json included
  Digest package_digest{};         // SHA-256 of the SHA256SUMS bytes: what receipts bind
  std::string publisher;           // name of the trusted key that verified the signature
  NoteVerifierKey publisher_key;
};

// A check of manifest.json's bytes beyond the package layer's own fields (id, version,
// family, title): the scenario layer's full schema (engine/scenario/scenario_package.h). It
// runs on the very bytes signed or verified, never on a second read.
using ManifestCheck = std::function<Status(std::string_view manifest_bytes)>;

struct SignOptions {
  // Sign only a tree that matches DIR/SHA256SUMS as it stands (the sums committed with a
  // bundled package): exactly the listed files, each with its listed digest. Otherwise refuse
  // (kCorruption, or kNotFound without a SHA256SUMS), naming the first differing file as
  // load_package does ("changed file", "missing file", "extra file"), and write nothing.
  bool only_if_sums_match = false;
  // Run on manifest.json before anything is written; its refusal is the signing's.
  ManifestCheck check_manifest;
};

// Writes DIR/SHA256SUMS and DIR/package.sig.json (each atomically and durably, replacing
// any earlier ones) for the tree under `dir`. Refuses (kInvalidArgument, naming the path)
// a symlink, a special file, an unsafe name, a tree over the limits, and a manifest.json
// that is missing or invalid (its package fields, and options.check_manifest if given).
// REQUIRES: nobody else writes to `dir` meanwhile.
Result<SignedPackage> sign_package(const std::filesystem::path& dir, const NoteSigner& publisher,
                                   const SignOptions& options = {});

// Verifies and loads the package in `dir`: first the signature (by a key in `trust`, over
// the package payload type), then SHA256SUMS against the signed digest, then the tree
// (exactly the listed files, regular files only) and every file's digest, and only then
// parses manifest.json, checks its fields against the signed payload, then runs
// `check_manifest` if given. Any failure is kCorruption, kInvalidArgument or kNotFound with a
// message naming the check and the file. Thread-safe; reads only.
Result<LoadedPackage> load_package(const std::filesystem::path& dir, const TrustStore& trust,
                                   const ManifestCheck& check_manifest = {});

// ---- The pieces, exposed for tests and tools. ----

// [a-z0-9][a-z0-9._-]{0,63}
bool is_valid_package_id(std::string_view id);
// 1..32 of [0-9A-Za-z.+-]
bool is_valid_package_version(std::string_view version);
// A relative '/'-separated path whose components are 1..255 bytes of [A-Za-z0-9._+@=,-],
// none "." or "..", at most 1024 bytes in all.
bool is_safe_package_path(std::string_view path);

// Parses manifest.json's bytes: a JSON object with no duplicate top-level member and valid
// id, version, family and title. Errors name the field ("manifest.json: field \"id\" ...").
Result<ManifestHeader> parse_manifest_header(std::string_view manifest_bytes);

// "<64 lowercase hex>  <path>\n" per file. REQUIRES: files sorted by path.
std::string format_sha256sums(const std::vector<PackageFile>& files);
// Parses SHA256SUMS strictly (format, safe paths, strictly increasing bytewise order, at
// most kMaxFiles lines). PackageFile::bytes is left 0.
Result<std::vector<PackageFile>> parse_sha256sums(std::string_view text);

// The signed payload, compact JSON with members in this order:
// {"version":1,"id":…,"package_version":…,"manifest_sha256":…,"sums_sha256":…}
std::string package_payload_json(std::string_view id, std::string_view version,
                                 const Digest& manifest_sha256, const Digest& sums_sha256);

}  // namespace aura
