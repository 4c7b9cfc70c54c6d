// `aura scenario sign|verify|load`, `aura keys init-publisher` and `aura setup`: signed
// scenario packages, the operator's publisher key (engine/package/), and the scenario registry
// events (stream lab/scenarios, docs/SCENARIOS.md). Nothing is signed behind the operator's
// back: set-up signs a bundled package only as committed, and every signing is recorded.
#include <simdjson.h>

#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/log/data_dir.h"
#include "engine/package/package.h"
#include "engine/package/package_format.h"
#include "engine/package/publisher_key.h"
#include "engine/package/trust_store.h"
#include "engine/scenario/manifest.h"
#include "workers/caps/capability.h"
#include "workers/drivers.h"

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

// ---- The scenario registry (stream lab/scenarios): what `scenario sign`, `scenario load` and
// `setup` record ----

constexpr std::string_view kRegistryStream = "lab/scenarios";
constexpr std::string_view kSignedType = "scenario.signed";
constexpr std::string_view kManifestRefId = "manifest";
constexpr std::string_view kManifestRefKind = "scenario.manifest";
constexpr size_t kMaxPackagesPerRun = 256;  // folders one load or setup may record
constexpr size_t kMaxReasonBytes = 2048;    // a rejection reason, cut beyond this

// Text safe to put in an event: valid UTF-8 (other bytes become '?'), at most `max_bytes`,
// never cut inside a character.
std::string event_text(std::string_view s, size_t max_bytes) {
  std::string out(s);
  if (!simdjson::validate_utf8(out.data(), out.size())) {
    for (char& c : out) {
      if (static_cast<unsigned char>(c) >= 0x80) c = '?';
    }
  }
  if (out.size() > max_bytes) {
    size_t cut = max_bytes - 3;
    while (cut > 0 && (static_cast<unsigned char>(out[cut]) & 0xc0) == 0x80) --cut;
    out.resize(cut);
    out += "...";
  }
  return out;
}

// How a folder is named in events: absolute and normalised, so loading the same folder again
// (from anywhere) names it the same way.
std::string registry_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) p = dir;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return event_text(p.string(), 4096);
}

// Every signature the lab makes with a data folder at hand is recorded, so no package is
// signed behind the operator's back. `sums` says where SHA256SUMS came from: "matched" (the
// files matched the SHA256SUMS the package came with, which was kept) or "written" (written
// from the files as found).
EventDraft signed_event(const fs::path& dir, const SignedPackage& p, const NoteSigner& signer,
                        std::string_view command, bool sums_matched) {
  return {std::string(kRegistryStream), std::string(kSignedType), std::string(kOperatorActor),
          JsonWriter()
              .num("v", 1)
              .str("dir", registry_dir(dir))
              .str("id", p.id)
              .str("version", p.version)
              .str("manifest_sha256", to_hex(p.manifest_sha256))
              .str("package_digest", to_hex(p.package_digest))
              .str("publisher", p.publisher)
              .str("publisher_key", format_verifier_key(signer.verifier()))
              .str("command", command)
              .str("sums", sums_matched ? "matched" : "written")
              .done()};
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
  // Recorded in the lab's log when there is one: --data, else the default folder if it exists.
  // The log is opened first: a lab whose log cannot take the record gets no signature.
  std::optional<Writer> lab;
  if (inv.has("data") || fs::exists(inv.data_dir)) {
    auto w = open_writer(inv);
    if (!w.ok()) {
      return inv.fail(w.status().with_context("record the signing in " + inv.data_dir.string() +
                                              " (nothing signed)"));
    }
    lab.emplace(std::move(w).value());
  }
  auto signed_pkg = sign_package(dir, *signer);
  if (!signed_pkg.ok()) return inv.fail(signed_pkg.status());
  uint64_t seq = 0;
  if (lab) {
    auto a = lab->log->append(signed_event(dir, *signed_pkg, *signer, "scenario sign", false));
    if (!a.ok()) {
      return inv.fail(a.status().with_context("signed " + dir.string() +
                                              " but could not record it in " +
                                              std::string(kRegistryStream)));
    }
    seq = a->seq;
  }
  const std::string digest = to_hex(signed_pkg->package_digest);
  std::cout << "signed " << signed_pkg->id << " " << signed_pkg->version << " ("
            << signed_pkg->files.size() << " files)\n  digest:    sha256:" << digest
            << "\n  publisher: " << signed_pkg->publisher << "\n";
  if (lab) {
    std::cout << "  recorded:  " << kSignedType << " in " << kRegistryStream << " at seq " << seq
              << " (" << inv.data_dir.string() << ")\n";
  } else {
    std::cout << "  not recorded: no data folder at " << inv.data_dir.string()
              << " (--data records the signing in a lab's log)\n";
  }
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("id", signed_pkg->id)
                    .str("version", signed_pkg->version)
                    .str("package_digest", digest)
                    .str("manifest_sha256", to_hex(signed_pkg->manifest_sha256))
                    .str("publisher", signed_pkg->publisher)
                    .num("files", uint64_t(signed_pkg->files.size()))
                    .boolean("recorded", lab.has_value())
                    .num("seq", seq)
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

// What happened to one package folder.
struct Outcome {
  fs::path dir;
  bool loaded = false;
  std::string reason;                 // when rejected
  LoadedPackage pkg;                  // when loaded
  std::optional<EventDraft> signing;  // its scenario.signed, when this run signed it
  uint64_t first_seq = 0;             // of its first registry event (its signing, if any)
  uint64_t seq = 0;                   // of its scenario.loaded or scenario.rejected
};

Outcome rejected(const fs::path& dir, std::string reason) {
  Outcome o;
  o.dir = dir;
  o.reason = std::move(reason);
  return o;
}

// load_package, refusing a trust store inside the package: never trust a key found next to
// what it verifies.
Result<LoadedPackage> load_verified(const fs::path& dir, const TrustStore& trust) {
  if (path_is_within(trust.dir(), dir)) {
    return Status::invalid("the trust store " + trust.dir().string() + " lies inside the package");
  }
  return load_package(dir, trust);
}

// A package as loaded, once its world driver has checked the manifest too.
Outcome admit(const fs::path& dir, Result<LoadedPackage> pkg) {
  if (!pkg.ok()) return rejected(dir, pkg.status().message());
  auto manifest = scenario::parse_manifest(pkg->manifest_bytes);
  if (!manifest.ok()) return rejected(dir, manifest.status().message());
  auto driver = workers::make_driver(manifest->driver);
  if (driver == nullptr) {
    std::string name;
    json_append_string(name, manifest->driver);
    return rejected(dir, "unknown world driver " + name);
  }
  if (Status s = driver->check_manifest(*manifest); !s.is_ok()) {
    return rejected(dir, "world driver " + manifest->driver + ": " + s.message());
  }
  Outcome o;
  o.dir = dir;
  o.loaded = true;
  o.pkg = std::move(pkg).value();
  return o;
}

Outcome load_one(const fs::path& dir, const TrustStore& trust) {
  return admit(dir, load_verified(dir, trust));
}

// The package folders: the positionals, else every subfolder of --scenarios (default
// ./scenarios) that holds a manifest.json, sorted by name.
Result<std::vector<fs::path>> package_dirs(const Invocation& inv) {
  std::vector<fs::path> dirs;
  for (const std::string& p : inv.positional) dirs.emplace_back(p);
  if (dirs.empty()) {
    const fs::path root = inv.get("scenarios", "scenarios");
    std::error_code ec;
    if (!fs::is_directory(root, ec)) {
      return Status::not_found("scenarios folder " + root.string() + " not found");
    }
    for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
      // Real folders only: a symlink could make one package appear under two names.
      if (it->symlink_status(ec).type() != fs::file_type::directory) continue;
      if (fs::exists(it->path() / std::string(package_format::kManifestFile), ec)) {
        dirs.push_back(it->path());
      }
    }
    if (ec) return Status::io("list " + root.string() + ": " + ec.message());
    std::sort(dirs.begin(), dirs.end());
  }
  if (dirs.size() > kMaxPackagesPerRun) {
    return Status::invalid(std::to_string(dirs.size()) + " package folders; at most " +
                           std::to_string(kMaxPackagesPerRun) + " per run");
  }
  return dirs;
}

std::string loaded_payload(const Outcome& o, const EvidenceRef& manifest_ref) {
  const LoadedPackage& p = o.pkg;
  return JsonWriter()
      .num("v", 1)
      .str("dir", registry_dir(o.dir))
      .str("id", p.id)
      .str("version", p.version)
      .str("family", p.family)
      .str("title", p.title)
      .str("package_digest", to_hex(p.package_digest))
      .str("manifest_sha256", to_hex(manifest_ref.sha256))
      .str("publisher", p.publisher)
      .raw("refs", JsonArray().raw(evidence_ref_json(manifest_ref)).done())
      .done();
}

std::string rejected_payload(const Outcome& o) {
  return JsonWriter()
      .num("v", 1)
      .str("dir", registry_dir(o.dir))
      .str("reason", event_text(o.reason, kMaxReasonBytes))
      .done();
}

// Stores each loaded manifest as a blob, then appends every outcome's registry events (its
// signing first, if any) in one atomic append; fills in each outcome's seqs.
Status record(Writer& w, std::vector<Outcome>& outcomes) {
  std::vector<EventDraft> drafts;
  for (const Outcome& o : outcomes) {
    if (o.signing) drafts.push_back(*o.signing);
    EventDraft d{std::string(kRegistryStream), "", "engine", ""};
    if (o.loaded) {
      auto blob = w.blobs->put(as_bytes(o.pkg.manifest_bytes));
      if (!blob.ok()) return blob.status().with_context("store the manifest of " + o.dir.string());
      const EvidenceRef ref{std::string(kManifestRefId), blob->sha256,
                            std::string(kManifestRefKind), blob->bytes};
      d.type = "scenario.loaded";
      d.payload = loaded_payload(o, ref);
    } else {
      d.type = "scenario.rejected";
      d.payload = rejected_payload(o);
    }
    drafts.push_back(std::move(d));
  }
  if (drafts.empty()) return Status::ok();
  auto appended = w.log->append_all(drafts);
  if (!appended.ok()) return appended.status();
  size_t next = 0;
  for (Outcome& o : outcomes) {
    o.first_seq = (*appended)[next].seq;
    next += o.signing ? 2 : 1;
    o.seq = (*appended)[next - 1].seq;
  }
  return Status::ok();
}

// One line per package, a summary, and with --json one object; exit 0 only if all loaded.
int report(const Invocation& inv, const std::vector<Outcome>& outcomes,
           const std::function<void(JsonWriter&)>& more_json = {}) {
  JsonArray packages;
  size_t loaded = 0;
  for (const Outcome& o : outcomes) {
    JsonWriter p;
    p.str("dir", registry_dir(o.dir)).str("status", o.loaded ? "loaded" : "rejected");
    if (o.loaded) {
      ++loaded;
      std::cout << "loaded   " << o.pkg.id << " " << o.pkg.version << " (" << o.dir.string()
                << ") sha256:" << to_hex(o.pkg.package_digest) << " publisher " << o.pkg.publisher
                << "\n";
      p.str("id", o.pkg.id)
          .str("version", o.pkg.version)
          .str("package_digest", to_hex(o.pkg.package_digest))
          .str("publisher", o.pkg.publisher);
    } else {
      std::cout << "rejected " << o.dir.string() << ": " << o.reason << "\n";
      p.str("reason", event_text(o.reason, kMaxReasonBytes));
    }
    packages.raw(p.num("seq", o.seq).done());
  }
  const size_t refused = outcomes.size() - loaded;
  std::cout << loaded << " loaded, " << refused << " rejected";
  if (!outcomes.empty()) {
    std::cout << "; recorded in " << kRegistryStream << " at seq " << outcomes.front().first_seq
              << ".." << outcomes.back().seq;
  }
  std::cout << "\n";
  JsonWriter json;
  json.boolean("ok", refused == 0)
      .num("loaded", uint64_t(loaded))
      .num("rejected", uint64_t(refused))
      .raw("packages", packages.done());
  if (more_json) more_json(json);
  inv.emit_json(json.done());
  return refused == 0 ? 0 : 1;
}

int scenario_load(Invocation& inv) {
  if (empty_path_flag(inv, "scenarios")) return 2;
  auto dirs = package_dirs(inv);
  if (!dirs.ok()) return inv.fail(dirs.status());
  auto trust = publisher_trust(inv);
  if (!trust.ok()) return inv.fail(trust.status());
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  std::vector<Outcome> outcomes;
  for (const fs::path& dir : *dirs) outcomes.push_back(load_one(dir, *trust));
  if (Status s = record(*w, outcomes); !s.is_ok()) return inv.fail(s);
  return report(inv, outcomes);
}

int setup(Invocation& inv) {
  if (empty_path_flag(inv, "scenarios")) return 2;
  if (Status s = check_folders(inv); !s.is_ok()) return inv.fail(s);
  auto dirs = package_dirs(inv);
  if (!dirs.ok()) return inv.fail(dirs.status());

  // 1. The lab key, as `aura keys init` makes it; an existing one is kept.
  bool lab_created = false;
  auto lab = KeyStore::open(inv.keys_dir);
  if (!lab.ok() && lab.status().code() == ErrorCode::kNotFound) {
    lab = KeyStore::init(inv.keys_dir);
    lab_created = lab.ok();
  }
  if (!lab.ok()) return inv.fail(lab.status().with_context("lab key"));
  std::cout << (lab_created ? "created" : "kept the existing") << " lab signing key "
            << lab->lab_signer().name() << " in " << inv.keys_dir.string() << "\n";

  // 2. The operator's publisher key, trusted in KEYS/publishers.
  auto publisher = ensure_publisher_key(inv.keys_dir);
  if (!publisher.ok()) return inv.fail(publisher.status().with_context("publisher key"));
  std::cout << (publisher->created ? "created" : "kept the existing") << " publisher key "
            << publisher->signer.name() << "\n";
  auto trust = publisher_trust(inv);
  if (!trust.ok()) return inv.fail(trust.status());

  // 3. Each bundled package: one that already verifies against the trust store is left as it
  //    is. Otherwise it is signed only if its files match the SHA256SUMS it came with
  //    (committed with it), and refused, untouched, naming the first differing file if not:
  //    signing a change is the operator's explicit 'aura scenario sign'. So is signing a
  //    package that came without a SHA256SUMS: nothing says it is as published, and it is
  //    refused, untouched. Every signing is recorded (scenario.signed) before the package is
  //    loaded as `aura scenario load` does.
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  std::vector<Outcome> outcomes;
  size_t signed_count = 0, kept_count = 0;
  for (const fs::path& dir : *dirs) {
    if (path_is_within(publisher->key_file, dir) || path_is_within(trust->dir(), dir)) {
      outcomes.push_back(rejected(dir, "the publisher key " + publisher->key_file.string() +
                                           " or its trust store lies inside the package; keep "
                                           "keys outside"));
      continue;
    }
    if (auto existing = load_package(dir, *trust); existing.ok()) {
      ++kept_count;
      std::cout << "kept     " << existing->id << " " << existing->version << " (" << dir.string()
                << "): already signed by " << existing->publisher << "\n";
      outcomes.push_back(admit(dir, std::move(existing)));
      continue;
    }
    std::error_code ec;
    if (fs::symlink_status(dir / std::string(package_format::kSumsFile), ec).type() ==
        fs::file_type::not_found) {
      outcomes.push_back(rejected(
          dir,
          "it has no SHA256SUMS, so nothing says its files are as published; not signed (to "
          "sign it as it is, on purpose: aura scenario sign " +
              dir.string() + ")"));
      continue;
    }
    auto s = sign_package(dir, publisher->signer, {.only_if_sums_match = true});
    if (!s.ok()) {
      std::string reason = s.status().message();
      if (s.status().code() == ErrorCode::kCorruption) {
        reason +=
            "; not signed: its files differ from the SHA256SUMS it came with (to sign a "
            "change on purpose: aura scenario sign " +
            dir.string() + ")";
      }
      outcomes.push_back(rejected(dir, std::move(reason)));
      continue;
    }
    ++signed_count;
    std::cout << "signed   " << s->id << " " << s->version << " (" << dir.string()
              << "): its files match its SHA256SUMS\n";
    Outcome o = load_one(dir, *trust);
    o.signing = signed_event(dir, *s, publisher->signer, "setup", true);
    outcomes.push_back(std::move(o));
  }
  if (Status s = record(*w, outcomes); !s.is_ok()) return inv.fail(s);

  // 4. The capability panel, measured on this machine at set-up and recorded
  // (docs/CAPABILITIES.md):
  //    what is unavailable is said, with the reason, before anyone starts a lab that needs it.
  const caps::Measurement measured = caps::measure_capabilities();
  auto caps_seq = w->log->append({caps::kCapabilityStream, caps::kCapabilityEventType,
                                  caps::kCapabilityActor, caps::measurement_payload(measured)});
  if (!caps_seq.ok()) return inv.fail(caps_seq.status().with_context("record the capabilities"));
  size_t available = 0;
  for (const auto& c : measured.capabilities) available += c.available ? 1 : 0;
  std::cout << "measured " << measured.capabilities.size() << " capabilities, " << available
            << " available (recorded at seq " << caps_seq->seq << "; 'aura caps show')\n";
  for (const auto& c : measured.capabilities) {
    if (!c.available) std::cout << "  unavailable: " << c.name << ": " << c.reason << "\n";
  }

  return report(inv, outcomes, [&](JsonWriter& json) {
    json.num("capabilities_seq", caps_seq->seq);
    json.boolean("lab_key_created", lab_created)
        .str("lab_key", lab->lab_signer().name())
        .boolean("publisher_key_created", publisher->created)
        .str("publisher", publisher->signer.name())
        .num("signed", uint64_t(signed_count))
        .num("kept", uint64_t(kept_count));
  });
}

}  // namespace

int setup_if_new(const Invocation& inv) {
  auto lab = KeyStore::open(inv.keys_dir);
  if (lab.ok()) return 0;
  if (lab.status().code() != ErrorCode::kNotFound) return inv.fail(lab.status());
  std::cout << "first use: setting up the lab in " << inv.data_dir.string() << " (keys in "
            << inv.keys_dir.string() << ") as 'aura setup' does\n";
  Invocation quiet = inv;  // setup's own JSON line would not be this command's
  quiet.json = false;
  quiet.positional.clear();
  quiet.flags.clear();
  if (inv.has("scenarios")) quiet.flags["scenarios"] = inv.get("scenarios");
  const int code = setup(quiet);
  // A bundled package that did not load is reported above; the command goes on with the rest.
  return KeyStore::open(inv.keys_dir).ok() ? 0 : (code != 0 ? code : 1);
}

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
         "regular files under safe names only. This is how a changed package gets signed ('aura\n"
         "setup' refuses a bundled package whose files differ from its SHA256SUMS). With --data,\n"
         "or when the default data folder exists, the signing is recorded in that lab's log\n"
         "(scenario.signed in lab/scenarios, actor operator, with the signer's key) and nothing\n"
         "is signed if it cannot be; without a data folder it is only signed. See\n"
         "docs/formats/package.md.",
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
  r.add(
      {"scenario load",
       "[DIR ...]",
       "load scenario packages and record each as scenario.loaded or scenario.rejected",
       "Loads each DIR (default: every subfolder of --scenarios holding a manifest.json) against\n"
       "the trust store KEYS/publishers, then has its world driver check the manifest. Every\n"
       "folder tried is recorded in the stream lab/scenarios of the log in --data; a loaded\n"
       "package's manifest.json is stored as a blob. Exit status 0 only if every package "
       "loaded.\nSee docs/SCENARIOS.md.",
       {{"scenarios", "DIR", "folder of package folders (default ./scenarios)"}},
       0,
       kMaxPackagesPerRun,
       scenario_load});
  r.add({"setup",
         "",
         "set up this machine: lab key, publisher key, then sign and load the bundled scenarios",
         "Creates KEYS/lab.key (as 'aura keys init') and KEYS/publisher.key (as 'aura keys\n"
         "init-publisher') unless they exist. Then, for each package under --scenarios: one that\n"
         "already verifies is kept as it is; otherwise it is signed with the publisher key only\n"
         "if its files match the SHA256SUMS committed with it, and refused otherwise, naming the\n"
         "first changed, missing or unlisted file and left untouched (sign a change on purpose\n"
         "with 'aura scenario sign DIR'). A package without a SHA256SUMS is refused the same way.\n"
         "Each signing is recorded (scenario.signed), then the packages are loaded as 'aura "
         "scenario\n"
         "load' does. Safe to run again. Exit status 0 only if every package loaded.",
         {{"scenarios", "DIR", "folder of bundled package folders (default ./scenarios)"}},
         0,
         0,
         setup});
}

}  // namespace aura::cli
