// `aura scenario sign|verify|load`, `aura keys init-publisher` and `aura setup`: signed
// scenario packages, the operator's publisher key (engine/package/), and the scenario registry
// events (stream lab/scenarios, docs/SCENARIOS.md). Nothing is signed behind the operator's
// back: set-up signs a bundled package only as committed, and every signing is recorded.
#include <algorithm>
#include <functional>
#include <iostream>
#include <optional>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/front_user.h"
#include "app/lab/scenario_registry.h"
#include "engine/common/json_writer.h"
#include "engine/events/event_types.h"
#include "engine/log/data_dir.h"
#include "engine/package/package.h"
#include "engine/package/package_format.h"
#include "engine/package/publisher_key.h"
#include "engine/package/trust_store.h"
#include "engine/scenario/scenario_package.h"

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

using app::kMaxPackagesPerRun;
using app::kMaxReasonBytes;
using app::kRegistryStream;
using app::Outcome;
constexpr std::string_view kSignedType = events::kScenarioSigned;

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
  if (Status s = app::check_key_outside(key_file, dir); !s.is_ok()) return inv.fail(s);
  // A running daemon holds the data folder: it signs and records.
  if (auto forwarded = forward_scenario_sign(inv, dir, key_file)) return *forwarded;
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
  auto r = app::sign_and_record(dir, *signer, lab ? &*lab : nullptr);
  if (!r.ok()) return inv.fail(r.status());
  std::cout << app::signed_lines(r->pkg);
  if (lab) {
    std::cout << "  recorded:  " << kSignedType << " in " << kRegistryStream << " at seq " << r->seq
              << " (" << inv.data_dir.string() << ")\n";
  } else {
    std::cout << "  not recorded: no data folder at " << inv.data_dir.string()
              << " (--data records the signing in a lab's log)\n";
  }
  inv.emit_json(app::signed_json(*r, lab.has_value()));
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
  auto pkg = scenario::load_scenario_package(dir, *trust);
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

// The package folders: the positionals, else every subfolder of --scenarios (default: the
// bundled packages) that holds a manifest.json, sorted by name. For set-up, the installed bundled
// packages are staged into the data folder first (app::setup_package_dirs).
Result<std::vector<fs::path>> package_dirs(const Invocation& inv, bool for_setup = false) {
  std::vector<fs::path> dirs;
  for (const std::string& p : inv.positional) dirs.emplace_back(p);
  if (!dirs.empty()) {
    AURA_RETURN_IF_ERROR(app::check_package_count(dirs.size()));
    return dirs;
  }
  const fs::path root =
      inv.has("scenarios") ? fs::path(inv.get("scenarios")) : app::default_scenarios_dir();
  if (for_setup) return app::setup_package_dirs(folders_of(inv), root);
  return app::package_dirs_under(root);
}

// One line per package, a summary, and with --json one object; exit 0 only if all loaded.
int report(const Invocation& inv, const std::vector<Outcome>& outcomes,
           const std::function<void(JsonWriter&)>& more_json = {}) {
  const app::OutcomeReport r = app::report_outcomes(outcomes);
  std::cout << r.lines;
  JsonWriter json;
  json.boolean("ok", r.rejected == 0)
      .num("loaded", uint64_t(r.loaded))
      .num("rejected", uint64_t(r.rejected))
      .raw("packages", r.packages_json);
  if (more_json) more_json(json);
  inv.emit_json(json.done());
  return r.rejected == 0 ? 0 : 1;
}

int scenario_load(Invocation& inv) {
  if (empty_path_flag(inv, "scenarios")) return 2;
  auto dirs = package_dirs(inv);
  if (!dirs.ok()) return inv.fail(dirs.status());
  // A running daemon holds the data folder: it loads and records them.
  if (auto forwarded = forward_scenario_load(inv, *dirs)) return *forwarded;
  auto trust = publisher_trust(inv);
  if (!trust.ok()) return inv.fail(trust.status());
  auto w = open_writer(inv);
  if (!w.ok()) return inv.fail(w.status());
  std::vector<Outcome> outcomes;
  for (const fs::path& dir : *dirs) outcomes.push_back(app::load_one(dir, *trust));
  if (Status s = app::record(*w, outcomes); !s.is_ok()) return inv.fail(s);
  return report(inv, outcomes);
}

int setup(Invocation& inv) {
  if (empty_path_flag(inv, "scenarios")) return 2;
  if (Status s = check_folders(inv); !s.is_ok()) return inv.fail(s);
  auto dirs = package_dirs(inv, /*for_setup=*/true);
  if (!dirs.ok()) return inv.fail(dirs.status());
  // The HTTP front's user (aura serve drops to it).
  auto front_user = [] {
    bool user_created = false;
    const std::string name = app::default_front_user();
    if (Status s = app::ensure_front_user(name, &user_created); !s.is_ok()) {
      return s.with_context("the front's user");
    }
    if (user_created) std::cout << "created system user " << name << " for aura serve\n";
    return Status::ok();
  };
  // A running daemon holds the data folder: it does the lab's part.
  if (auto forwarded = forward_setup(inv, *dirs, front_user)) return *forwarded;
  auto r = app::setup(folders_of(inv), *dirs,
                      [](const std::string& line) { std::cout << line << "\n"; });
  if (!r.ok()) return inv.fail(r.status());
  if (Status s = front_user(); !s.is_ok()) return inv.fail(s);
  return report(inv, r->outcomes, [&](JsonWriter& json) {
    json.num("capabilities_seq", r->capabilities.seq);
    json.boolean("lab_key_created", r->lab_key_created)
        .str("lab_key", r->lab_key)
        .boolean("publisher_key_created", r->publisher_key_created)
        .str("publisher", r->publisher)
        .num("signed", uint64_t(r->signed_count))
        .num("kept", uint64_t(r->kept_count));
  });
}

}  // namespace

int setup_if_new(const Invocation& inv) {
  if (!app::is_first_use(folders_of(inv))) return 0;
  std::cout << "first use: setting up the lab in " << inv.data_dir.string() << " (keys in "
            << inv.keys_dir.string() << ") as 'aura setup' does\n";
  Invocation quiet = inv;  // setup's own JSON line would not be this command's
  quiet.json = false;
  quiet.positional.clear();
  quiet.flags.clear();
  if (inv.has("scenarios")) quiet.flags["scenarios"] = inv.get("scenarios");
  const int code = setup(quiet);
  // A bundled package that did not load is reported above; the command goes on with the rest.
  return app::is_first_use(folders_of(inv)) ? (code != 0 ? code : 1) : 0;
}

void register_scenario_commands(CommandTable& r) {
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
       "loaded.\nWhen the lab's daemon holds --data, it loads and records them (new attempts use\n"
       "them at once). See docs/SCENARIOS.md.",
       {{"scenarios", "DIR", "folder of package folders (default: the bundled packages)"}},
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
         "load' does. Safe to run again. Exit status 0 only if every package loaded. When the\n"
         "lab's daemon holds --data, it does all of this with its own writer; the front's user\n"
         "is created here.",
         {{"scenarios", "DIR",
           "folder of package folders (default: the bundled ones; installed, they are copied "
           "into DATA/packages and signed there)"}},
         0,
         0,
         setup});
}

}  // namespace aura::cli
