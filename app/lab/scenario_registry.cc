#include "app/lab/scenario_registry.h"

#include <simdjson.h>

#include <algorithm>
#include <sstream>

#include "engine/blob/evidence_ref.h"
#include "engine/common/install_layout.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/events/registry_events.h"
#include "engine/log/data_dir.h"
#include "engine/package/package_format.h"
#include "engine/package/publisher_key.h"
#include "engine/scenario/manifest.h"
#include "engine/scenario/scenario_package.h"
#include "workers/drivers.h"

namespace aura::app {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kManifestRefId = "manifest";
constexpr std::string_view kManifestRefKind = "scenario.manifest";

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
  return scenario::load_scenario_package(dir, trust);
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
  o.requirements = manifest->requirements;
  return o;
}

std::string loaded_payload(const Outcome& o, const EvidenceRef& manifest_ref) {
  const LoadedPackage& p = o.pkg;
  events::ScenarioLoaded e;
  e.dir = registry_dir(o.dir);
  e.id = p.id;
  e.version = p.version;
  e.family = p.family;
  e.title = p.title;
  e.package_digest = to_hex(p.package_digest);
  e.manifest_sha256 = to_hex(manifest_ref.sha256);
  e.publisher = p.publisher;
  e.refs = {manifest_ref};
  using Requirements = events::ScenarioLoaded::Requirements;
  e.requirements = o.requirements ? Requirements::kDeclared : Requirements::kNotDeclared;
  if (o.requirements) {
    e.required_capabilities = o.requirements->capabilities;
    e.optional_capabilities = o.requirements->optional;
  }
  return e.encode();
}

std::string rejected_payload(const Outcome& o) {
  events::ScenarioRejected e;
  e.dir = registry_dir(o.dir);
  e.reason = event_text(o.reason, kMaxReasonBytes);
  return e.encode();
}

}  // namespace

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

std::string registry_dir(const fs::path& dir) {
  std::error_code ec;
  fs::path p = fs::absolute(dir, ec);
  if (ec) p = dir;
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return event_text(p.string(), 4096);
}

EventDraft signed_event(const fs::path& dir, const SignedPackage& p, const NoteSigner& signer,
                        std::string_view command, bool sums_matched) {
  return {std::string(kRegistryStream), std::string(events::kScenarioSigned),
          std::string(kOperatorActor),
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

Status check_package_count(size_t n) {
  if (n > kMaxPackagesPerRun) {
    return Status::invalid(std::to_string(n) + " package folders; at most " +
                           std::to_string(kMaxPackagesPerRun) + " per run");
  }
  return Status::ok();
}

Result<std::vector<fs::path>> package_dirs_under(const fs::path& root) {
  std::vector<fs::path> dirs;
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
  AURA_RETURN_IF_ERROR(check_package_count(dirs.size()));
  return dirs;
}

fs::path default_scenarios_dir() {
  fs::path bundled = bundled_scenarios_dir();
  return bundled.empty() ? fs::path("scenarios") : bundled;
}

Result<std::vector<fs::path>> setup_package_dirs(const LabFolders& f, const fs::path& root) {
  std::vector<fs::path> dirs;
  AURA_ASSIGN_OR_RETURN(dirs, package_dirs_under(root));
  const InstallLayout& layout = install_layout();
  std::error_code ec;
  if (!layout.installed || !fs::equivalent(root, layout.share / "scenarios", ec)) return dirs;
  const fs::path staged = f.data / "packages";
  fs::create_directories(staged, ec);
  if (ec) return Status::io("create " + staged.string() + ": " + ec.message());
  std::vector<fs::path> copies;
  for (const fs::path& dir : dirs) {
    const fs::path to = staged / dir.filename();
    if (!fs::exists(to, ec)) {
      // Copied beside, then renamed: a copy cut short is never taken for a package.
      const fs::path part = staged / (dir.filename().string() + ".part");
      fs::remove_all(part, ec);
      fs::copy(dir, part, fs::copy_options::recursive, ec);
      if (ec)
        return Status::io("copy " + dir.string() + " to " + part.string() + ": " + ec.message());
      fs::rename(part, to, ec);
      if (ec) return Status::io("rename " + part.string() + ": " + ec.message());
    }
    copies.push_back(to);
  }
  return copies;
}

Outcome load_one(const fs::path& dir, const TrustStore& trust) {
  return admit(dir, load_verified(dir, trust));
}

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
      d.type = events::kScenarioLoaded;
      d.payload = loaded_payload(o, ref);
    } else {
      d.type = events::kScenarioRejected;
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

size_t SetupReport::loaded() const {
  return size_t(
      std::count_if(outcomes.begin(), outcomes.end(), [](const Outcome& o) { return o.loaded; }));
}

Result<SetupReport> setup(const LabFolders& f, const std::vector<fs::path>& dirs,
                          const ProgressLine& progress, Writer* held) {
  AURA_RETURN_IF_ERROR(check_folders(f));
  AURA_RETURN_IF_ERROR(check_package_count(dirs.size()));
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  SetupReport report;

  // 1. The lab key, as `aura keys init` makes it; an existing one is kept.
  auto lab = KeyStore::open(f.keys);
  if (!lab.ok() && lab.status().code() == ErrorCode::kNotFound) {
    lab = KeyStore::init(f.keys);
    report.lab_key_created = lab.ok();
  }
  if (!lab.ok()) return lab.status().with_context("lab key");
  report.lab_key = lab->lab_signer().name();
  say(std::string(report.lab_key_created ? "created" : "kept the existing") + " lab signing key " +
      report.lab_key + " in " + f.keys.string());

  // 2. The operator's publisher key, trusted in KEYS/publishers.
  auto publisher = ensure_publisher_key(f.keys);
  if (!publisher.ok()) return publisher.status().with_context("publisher key");
  report.publisher_key_created = publisher->created;
  report.publisher = publisher->signer.name();
  say(std::string(publisher->created ? "created" : "kept the existing") + " publisher key " +
      report.publisher);
  auto trust = publisher_trust(f.keys);
  if (!trust.ok()) return trust.status();

  // 3. Each bundled package: one that already verifies against the trust store is left as it
  //    is. Otherwise it is signed only if its files match the SHA256SUMS it came with
  //    (committed with it), and refused, untouched, naming the first differing file if not:
  //    signing a change is the operator's explicit 'aura scenario sign'. So is signing a
  //    package that came without a SHA256SUMS: nothing says it is as published, and it is
  //    refused, untouched. Every signing is recorded (scenario.signed) before the package is
  //    loaded as `aura scenario load` does.
  std::optional<Writer> own;
  if (held == nullptr) {
    auto opened = open_writer(f);
    if (!opened.ok()) return opened.status();
    own.emplace(std::move(opened).value());
  }
  Writer* w = held != nullptr ? held : &*own;
  for (const fs::path& dir : dirs) {
    if (path_is_within(publisher->key_file, dir) || path_is_within(trust->dir(), dir)) {
      report.outcomes.push_back(rejected(dir, "the publisher key " + publisher->key_file.string() +
                                                  " or its trust store lies inside the package; "
                                                  "keep keys outside"));
      continue;
    }
    if (auto existing = scenario::load_scenario_package(dir, *trust); existing.ok()) {
      ++report.kept_count;
      say("kept     " + existing->id + " " + existing->version + " (" + dir.string() +
          "): already signed by " + existing->publisher);
      report.outcomes.push_back(admit(dir, std::move(existing)));
      continue;
    }
    std::error_code ec;
    if (fs::symlink_status(dir / std::string(package_format::kSumsFile), ec).type() ==
        fs::file_type::not_found) {
      report.outcomes.push_back(rejected(
          dir,
          "it has no SHA256SUMS, so nothing says its files are as published; not signed (to "
          "sign it as it is, on purpose: aura scenario sign " +
              dir.string() + ")"));
      continue;
    }
    auto s = scenario::sign_scenario_package(dir, publisher->signer, {.only_if_sums_match = true});
    if (!s.ok()) {
      std::string reason = s.status().message();
      if (s.status().code() == ErrorCode::kCorruption) {
        reason +=
            "; not signed: its files differ from the SHA256SUMS it came with (to sign a "
            "change on purpose: aura scenario sign " +
            dir.string() + ")";
      }
      report.outcomes.push_back(rejected(dir, std::move(reason)));
      continue;
    }
    ++report.signed_count;
    say("signed   " + s->id + " " + s->version + " (" + dir.string() +
        "): its files match its SHA256SUMS");
    Outcome o = load_one(dir, *trust);
    o.signing = signed_event(dir, *s, publisher->signer, "setup", true);
    report.outcomes.push_back(std::move(o));
  }
  AURA_RETURN_IF_ERROR(record(*w, report.outcomes));

  // 4. The capability panel, measured on this machine at set-up and recorded
  //    (docs/CAPABILITIES.md): what is unavailable is said, with the reason, before anyone
  //    starts a lab that needs it.
  auto caps = measure_and_record(*w->log);
  if (!caps.ok()) return caps.status();
  report.capabilities = std::move(caps).value();
  const auto& measured = report.capabilities.measurement;
  say("measured " + std::to_string(measured.capabilities.size()) + " capabilities, " +
      std::to_string(report.capabilities.available()) + " available (recorded at seq " +
      std::to_string(report.capabilities.seq) + "; 'aura caps show')");
  for (const auto& c : measured.capabilities) {
    if (!c.available) say("  unavailable: " + c.name + ": " + c.reason);
  }
  return report;
}

OutcomeReport report_outcomes(const std::vector<Outcome>& outcomes) {
  OutcomeReport r;
  std::ostringstream out;
  JsonArray packages;
  for (const Outcome& o : outcomes) {
    JsonWriter p;
    p.str("dir", registry_dir(o.dir)).str("status", o.loaded ? "loaded" : "rejected");
    if (o.loaded) {
      ++r.loaded;
      out << "loaded   " << o.pkg.id << " " << o.pkg.version << " (" << o.dir.string()
          << ") sha256:" << to_hex(o.pkg.package_digest) << " publisher " << o.pkg.publisher
          << "\n";
      p.str("id", o.pkg.id)
          .str("version", o.pkg.version)
          .str("package_digest", to_hex(o.pkg.package_digest))
          .str("publisher", o.pkg.publisher);
    } else {
      out << "rejected " << o.dir.string() << ": " << o.reason << "\n";
      p.str("reason", event_text(o.reason, kMaxReasonBytes));
    }
    packages.raw(p.num("seq", o.seq).done());
  }
  r.rejected = outcomes.size() - r.loaded;
  out << r.loaded << " loaded, " << r.rejected << " rejected";
  if (!outcomes.empty()) {
    out << "; recorded in " << kRegistryStream << " at seq " << outcomes.front().first_seq << ".."
        << outcomes.back().seq;
  }
  out << "\n";
  r.lines = out.str();
  r.packages_json = packages.done();
  return r;
}

Status check_key_outside(const fs::path& key_file, const fs::path& dir) {
  if (!path_is_within(key_file, dir)) return Status::ok();
  return Status::invalid("publisher key " + key_file.string() + " lies inside the package " +
                         dir.string() + "; keep keys outside what they sign");
}

Result<SignedRecord> sign_and_record(const fs::path& dir, const NoteSigner& signer, Writer* lab) {
  SignedRecord r;
  AURA_ASSIGN_OR_RETURN(r.pkg, scenario::sign_scenario_package(dir, signer));
  if (lab == nullptr) return r;
  auto a = lab->log->append(signed_event(dir, r.pkg, signer, "scenario sign", false));
  if (!a.ok()) {
    return a.status().with_context("signed " + dir.string() + " but could not record it in " +
                                   std::string(kRegistryStream));
  }
  r.seq = a->seq;
  return r;
}

std::string signed_lines(const SignedPackage& p) {
  return "signed " + p.id + " " + p.version + " (" + std::to_string(p.files.size()) +
         " files)\n  digest:    sha256:" + to_hex(p.package_digest) +
         "\n  publisher: " + p.publisher + "\n";
}

std::string signed_json(const SignedRecord& r, bool recorded) {
  return JsonWriter()
      .boolean("ok", true)
      .str("id", r.pkg.id)
      .str("version", r.pkg.version)
      .str("package_digest", to_hex(r.pkg.package_digest))
      .str("manifest_sha256", to_hex(r.pkg.manifest_sha256))
      .str("publisher", r.pkg.publisher)
      .num("files", uint64_t(r.pkg.files.size()))
      .boolean("recorded", recorded)
      .num("seq", r.seq)
      .done();
}

}  // namespace aura::app
