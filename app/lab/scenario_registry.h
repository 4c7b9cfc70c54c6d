// The scenario registry's write side (stream lab/scenarios, docs/SCENARIOS.md): which package
// folders a run loads, each folder's outcome (loaded once its signature, files and manifest
// verify and its world driver accepts the manifest; rejected with the reason otherwise), and
// the events that record them. Set-up (first use of a lab) lives here too: the lab key, the
// publisher key, the bundled packages signed only as committed, every signing recorded, and
// the capability panel measured. The read side is the attempt engine's (scenario_named).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/lab/capabilities.h"
#include "app/lab/folders.h"
#include "engine/events/payload_reader.h"
#include "engine/log/event.h"
#include "engine/package/package.h"
#include "engine/package/trust_store.h"
#include "engine/scenario/manifest.h"
#include "engine/sign/signed_note.h"

namespace aura::app {

inline constexpr std::string_view kRegistryStream = events::kScenarioStream;
inline constexpr size_t kMaxPackagesPerRun = 256;  // folders one load or setup may record
inline constexpr size_t kMaxReasonBytes = 2048;    // a rejection reason, cut beyond this
// The actor of what the operator does at the command line (`log append`, `scenario sign`).
inline constexpr std::string_view kOperatorActor = "operator";

// Text safe to put in an event: valid UTF-8 (other bytes become '?'), at most `max_bytes`,
// never cut inside a character.
std::string event_text(std::string_view s, size_t max_bytes);

// How a folder is named in events: absolute and normalised, so loading the same folder again
// (from anywhere) names it the same way.
std::string registry_dir(const std::filesystem::path& dir);

// The scenario.signed event of a signature the lab made (`command` names who made it). `sums`:
// true when the files matched the SHA256SUMS the package came with (kept), false when it was
// written from the files as found.
EventDraft signed_event(const std::filesystem::path& dir, const SignedPackage& p,
                        const NoteSigner& signer, std::string_view command, bool sums_matched);

// A publisher key inside the package it signs would ship with it: kInvalidArgument naming
// both; ok otherwise.
Status check_key_outside(const std::filesystem::path& key_file, const std::filesystem::path& dir);

// `aura scenario sign`: `dir` signed with `signer` and, with `lab`, the signing recorded
// (scenario.signed, by "scenario sign"); `seq` is that event's, 0 when not recorded.
struct SignedRecord {
  SignedPackage pkg;
  uint64_t seq = 0;
};
Result<SignedRecord> sign_and_record(const std::filesystem::path& dir, const NoteSigner& signer,
                                     Writer* lab);
// What `aura scenario sign` prints of it (the package, its digest, its publisher), and its
// --json object (`recorded`: whether a lab's log holds the signing).
std::string signed_lines(const SignedPackage& p);
std::string signed_json(const SignedRecord& r, bool recorded);

// What happened to one package folder.
struct Outcome {
  std::filesystem::path dir;
  bool loaded = false;
  std::string reason;  // when rejected
  LoadedPackage pkg;   // when loaded
  // When loaded: what its manifest requires of the machine ("requires"; none when absent).
  std::optional<scenario::Requirements> requirements;
  std::optional<EventDraft> signing;  // its scenario.signed, when this run signed it
  uint64_t first_seq = 0;             // of its first registry event (its signing, if any)
  uint64_t seq = 0;                   // of its scenario.loaded or scenario.rejected
};

// Every subfolder of `root` that holds a manifest.json (real folders, not links), sorted;
// at most kMaxPackagesPerRun.
Result<std::vector<std::filesystem::path>> package_dirs_under(const std::filesystem::path& root);
// Refuses more than kMaxPackagesPerRun folders.
Status check_package_count(size_t n);

// Where set-up takes the bundled packages from when no folder is named: the installed ones
// (PREFIX/share/aura/scenarios) or the source tree's scenarios/ (engine/common/install_layout.h);
// ./scenarios when neither exists.
std::filesystem::path default_scenarios_dir();

// The folders set-up signs and loads from `root` (package_dirs_under). The installed bundled
// folder is never written (a package install owns it; the daemon's unit keeps /usr read-only):
// each of its packages is first copied into DATA/packages/<name>, once (a copy already there is
// kept as it is), and the copies are what set-up signs, loads and records. Any other folder is
// signed where it is.
Result<std::vector<std::filesystem::path>> setup_package_dirs(const LabFolders& f,
                                                              const std::filesystem::path& root);

// Loads one folder against `trust` (never a trust store inside the package) and has its world
// driver check the manifest.
Outcome load_one(const std::filesystem::path& dir, const TrustStore& trust);

// Stores each loaded manifest as a blob, then appends every outcome's registry events (its
// signing first, if any) in one atomic append; fills in each outcome's seqs.
Status record(Writer& w, std::vector<Outcome>& outcomes);

// What a load did, as `aura scenario load` prints it (one line per package, then a summary)
// and as its JSON carries it: the same from the CLI and from the daemon that holds the lab.
struct OutcomeReport {
  std::string lines;
  std::string
      packages_json;  // [{dir, status, id, version, package_digest, publisher | reason, seq}]
  size_t loaded = 0, rejected = 0;
};
OutcomeReport report_outcomes(const std::vector<Outcome>& outcomes);

// One progress line (what set-up did, as it does it).
using ProgressLine = std::function<void(const std::string& line)>;

struct SetupReport {
  std::vector<Outcome> outcomes;
  bool lab_key_created = false;
  std::string lab_key;  // its name
  bool publisher_key_created = false;
  std::string publisher;  // its name
  size_t signed_count = 0, kept_count = 0;
  RecordedMeasurement capabilities;
  size_t loaded() const;
};

// Sets the lab up (or again: keys and already signed packages are kept) with the package
// folders `dirs`. Fails only when the lab itself cannot be set up; a package that does not
// load is an outcome.
// `held`: the writer of the process that holds the data folder (the daemon); null: set-up opens
// its own.
Result<SetupReport> setup(const LabFolders& f, const std::vector<std::filesystem::path>& dirs,
                          const ProgressLine& progress = {}, Writer* held = nullptr);

}  // namespace aura::app
