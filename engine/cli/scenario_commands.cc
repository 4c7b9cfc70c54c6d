// `aura scenario sign`, `aura scenario verify` and `aura keys init-publisher`: signed
// scenario packages and the operator's publisher key (engine/package/).
#include <iostream>

#include "engine/cli/cli.h"
#include "engine/common/json_writer.h"
#include "engine/log/data_dir.h"
#include "engine/package/package.h"
#include "engine/package/publisher_key.h"
#include "engine/package/trust_store.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

// An empty --key or --trust is a usage error, as empty --data or --keys are.
bool empty_path_flag(const Invocation& inv, const char* name) {
  if (inv.has(name) && inv.get(name).empty()) {
    std::cerr << "aura " << inv.command->path << ": --" << name << ": empty path\n";
    return true;
  }
  return false;
}

std::string files_json(const std::vector<PackageFile>& files) {
  JsonArray a;
  for (const PackageFile& f : files) {
    a.raw(JsonWriter()
              .str("path", f.path)
              .str("sha256", to_hex(f.sha256))
              .num("bytes", f.bytes)
              .done());
  }
  return a.done();
}

int keys_init_publisher(Invocation& inv) {
  if (path_is_within(inv.keys_dir, inv.data_dir) || path_is_within(inv.data_dir, inv.keys_dir)) {
    return inv.fail(Status::invalid("--keys " + inv.keys_dir.string() + " and --data " +
                                    inv.data_dir.string() +
                                    " overlap; keep the keys folder outside the data folder"));
  }
  auto pk = ensure_publisher_key(inv.keys_dir);
  if (!pk.ok()) return inv.fail(pk.status().with_context("keys init-publisher"));
  const std::string vkey = format_verifier_key(pk->signer.verifier());
  std::cout << (pk->created ? "created" : "kept the existing") << " publisher key "
            << pk->signer.name() << "\n  private: " << pk->key_file.string()
            << " (0600)\n  trusted: " << pk->pub_file.string() << "\n  " << vkey << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .boolean("created", pk->created)
                    .str("name", pk->signer.name())
                    .str("key_file", pk->key_file.string())
                    .str("pub_file", pk->pub_file.string())
                    .str("public_key", vkey)
                    .done());
  return 0;
}

int scenario_sign(Invocation& inv) {
  if (empty_path_flag(inv, "key")) return 2;
  const fs::path dir = inv.positional[0];
  const bool default_key = !inv.has("key");
  const fs::path key_file =
      default_key ? inv.keys_dir / std::string(kPublisherKeyFile) : fs::path(inv.get("key"));
  // A key inside the package would ship with it.
  if (path_is_within(key_file, dir)) {
    return inv.fail(Status::invalid("publisher key " + key_file.string() +
                                    " lies inside the package " + dir.string() +
                                    "; keep keys outside what they sign"));
  }
  auto signer = load_publisher_key(key_file);
  if (!signer.ok()) {
    Status s = signer.status();
    if (s.code() == ErrorCode::kNotFound) {
      s = Status::not_found(s.message() +
                            (default_key ? "; create one with 'aura keys init-publisher --keys " +
                                               inv.keys_dir.string() + "'"
                                         : std::string()));
    }
    return inv.fail(s);
  }
  auto signed_pkg = sign_package(dir, *signer);
  if (!signed_pkg.ok()) return inv.fail(signed_pkg.status());
  const std::string digest = to_hex(signed_pkg->package_digest);
  std::cout << "signed " << signed_pkg->id << " " << signed_pkg->version << " ("
            << signed_pkg->files.size() << " files)\n  digest:    sha256:" << digest
            << "\n  publisher: " << signed_pkg->publisher << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("id", signed_pkg->id)
                    .str("version", signed_pkg->version)
                    .str("package_digest", digest)
                    .str("manifest_sha256", to_hex(signed_pkg->manifest_sha256))
                    .str("publisher", signed_pkg->publisher)
                    .num("files", uint64_t(signed_pkg->files.size()))
                    .done());
  return 0;
}

int scenario_verify(Invocation& inv) {
  if (empty_path_flag(inv, "trust")) return 2;
  const fs::path dir = inv.positional[0];
  const fs::path trust_dir =
      inv.has("trust") ? fs::path(inv.get("trust")) : inv.keys_dir / std::string(kPublishersDir);
  // Never trust a key found next to what it verifies.
  if (path_is_within(trust_dir, dir)) {
    return inv.fail(Status::invalid("trust store " + trust_dir.string() +
                                    " lies inside the package " + dir.string() +
                                    "; pin keys kept elsewhere"));
  }
  auto trust = TrustStore::load(trust_dir);
  if (!trust.ok()) return inv.fail(trust.status());
  auto pkg = load_package(dir, *trust);
  if (!pkg.ok()) return inv.fail(pkg.status());
  const std::string digest = to_hex(pkg->package_digest);
  std::cout << "ok: " << pkg->id << " " << pkg->version << " (" << pkg->family << ": " << pkg->title
            << ")\n  digest:    sha256:" << digest << "\n  publisher: " << pkg->publisher
            << "\n  files:     " << pkg->files.size() << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("id", pkg->id)
                    .str("version", pkg->version)
                    .str("family", pkg->family)
                    .str("title", pkg->title)
                    .str("package_digest", digest)
                    .str("publisher", pkg->publisher)
                    .str("publisher_key", format_verifier_key(pkg->publisher_key))
                    .raw("files", files_json(pkg->files))
                    .done());
  return 0;
}

}  // namespace

void register_scenario_commands(Registry& r) {
  r.add({"keys init-publisher",
         "",
         "create the operator's package publisher key and trust it (never replaces a key)",
         "Writes KEYS/publisher.key (0600) and KEYS/publishers/<name>.pub, the trust store that\n"
         "'scenario verify' reads. Run again, it keeps the existing key and restores a missing "
         ".pub.",
         {},
         0,
         0,
         keys_init_publisher});
  r.add({"scenario sign",
         "DIR",
         "write SHA256SUMS and package.sig.json for the scenario package in DIR",
         "DIR holds manifest.json (with id, version, family and title) and the files it ships:\n"
         "regular files under safe names only. See docs/formats/package.md.",
         {{"key", "FILE", "publisher signer key (default KEYS/publisher.key)"}},
         1,
         1,
         scenario_sign});
  r.add({"scenario verify",
         "DIR",
         "verify the scenario package in DIR against the publisher trust store",
         "Exit status 0 only when the package loads: a trusted signature, SHA256SUMS, exactly the\n"
         "listed files with their digests, and a valid manifest. On failure says which check "
         "failed.",
         {{"trust", "DIR", "folder of trusted publisher *.pub keys (default KEYS/publishers)"}},
         1,
         1,
         scenario_verify});
}

}  // namespace aura::cli
