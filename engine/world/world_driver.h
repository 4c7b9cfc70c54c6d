// The interface between the attempt engine and whatever builds worlds: create a fresh world of a
// scenario, run probes, actions and checks in it, fingerprint it, destroy it. Drivers are named
// by the manifest's "driver" field. The engine never trusts a driver's output as a verdict: it
// records what the driver returns as evidence and facts, and the grader decides.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/blob/blob_store.h"
#include "engine/common/status.h"
#include "engine/log/event_log.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"

namespace aura::writer {
class RunTokens;
}

namespace aura::world {

// What a driver whose worlds run processes needs from the engine (WorldDriver::configure): the
// log and blob store its supervised runs append to, the writer tokens, the supervisor's state
// folder (leak registry, stage folders) and the folders no world may ever see.
struct WorldHost {
  EventLog* log = nullptr;
  BlobStore* blobs = nullptr;
  writer::RunTokens* tokens = nullptr;
  std::filesystem::path state_dir;
  std::vector<std::filesystem::path> forbidden;
};

// What a probe or action returned. `output` is capped by the caller's max_output_bytes;
// `truncated` says bytes were cut (recorded, never hidden).
struct CallOutput {
  int exit_code = 0;   // 0: the call did what it was asked
  std::string output;  // evidence bytes (stored as a blob)
  bool truncated = false;
  std::string error;                  // why the call could not run (a selector matched nothing ...)
  std::vector<std::string> resolved;  // what the target resolved to in this world, if any
  // The driver's own checks (never the world's word) refused the call's target before anything
  // was read or changed: a folder where a file is read, a missing path, a symlink out of bounds.
  // Nothing was done; `error` says why. A probe so refused costs nothing (docs/ATTEMPTS.md).
  bool refused = false;
};

// The result of one check: ok or not, and a bounded human-readable observation.
struct CheckOutput {
  bool ok = false;
  std::string observed;  // at most 1024 bytes
};

// What a world was built from and runs under: the supervisor records it as `world.built` when
// the world is built (docs/ATTEMPTS.md), and receipts bind it (docs/formats/receipt.md).
struct BuildRecord {
  // The confinement the world's processes run under, as canonical text derived from the policy
  // objects the driver applies (seccomp program, mount plan, capability sets, limits): the
  // sandbox profile digest is its SHA-256, so a policy change changes it.
  std::string profile;
  // SHA-256 (64 lowercase hex) of each program the world runs, by its path inside the world; a
  // path ending in '/' is a program tree (docs/formats/receipt.md, "tree digest").
  std::map<std::string, std::string> binaries;
  // The package folders the world's files come from (relative to the package root, sorted,
  // unique): the world image digest covers the package's SHA256SUMS lines under them.
  std::vector<std::string> layers;
  // SHA-256 (64 lowercase hex) of the SHA256SUMS bytes the driver checked the world's files
  // against while it built it; empty for a driver that reads none. It must be the package
  // digest the engine verified: otherwise the package changed between the two reads.
  std::string package_sums_sha256;
};

// What the apply recorded of one action that ran: what its targets resolved to
// (CallOutput::resolved) and its output.
struct AppliedCall {
  std::vector<std::string> resolved;
  std::string output;
};

// One action's effect, read back by the lab's own code after apply (the ACK phase).
struct Readback {
  // False: the call has no effect that can be compared with a request (a script, an undo);
  // `observed` says what was read, and nothing is compared.
  bool typed = true;
  std::string observed;                  // what the targets hold now, one line each, bounded
  std::vector<std::string> differences;  // what differs from the request; empty: as requested
};

class World {
 public:
  virtual ~World() = default;
  virtual const std::string& id() const = 0;  // the manifest world id it was built from

  // The attempt whose stream the evidence of this world's runs goes to. Drivers that run no
  // process ignore it.
  virtual void bind_attempt(std::string_view attempt) { (void)attempt; }
  // This world outlives the process that made it (the learner's live world, reopened by later
  // commands). Without it, a world whose process dies is reaped by the next supervisor.
  virtual Status persist() { return Status::ok(); }

  // A probe from the catalog (already validated against its CallSpec). Read-only.
  virtual Result<CallOutput> probe(const scenario::Call& call, uint64_t max_output_bytes) = 0;
  // An action (already validated). Targets are resolved here, in this world.
  virtual Result<CallOutput> act(const scenario::Call& call) = 0;
  // From now on the actions are the fix's rollback: a target the fix's actions resolved in this
  // world names what it named then (a rollback reverses the fix, on the fix's targets; resolved
  // anew, a selector that named what was broken names nothing once it is fixed).
  virtual void begin_rollback() {}
  // A gray-path script, only ever called after its digest was authorised.
  virtual Result<CallOutput> run_script(const scenario::Target& target,
                                        std::string_view script) = 0;
  // A check of the manifest. Runs with the lab's own code, after the learner's work stopped.
  virtual Result<CheckOutput> check(const scenario::CheckSpec& check) = 0;
  // A digest of everything the fix may change (files, modes, owners, service config ...):
  // equal fingerprints mean equal observable state for the scenario.
  virtual Result<std::string> fingerprint() = 0;  // 64 lowercase hex
  // Every path of the world whose state differs from the world as built, read from the host
  // (gate/change_set.h: the canonical text of gate::Change lines). Only asked of worlds whose
  // manifest declares a change surface.
  virtual Result<std::string> changes() {
    return Status::unavailable("world " + id() + ": its driver records no change set");
  }
  // What this world was built from (called right after create()).
  virtual Result<BuildRecord> build_record() {
    return Status::unavailable("world " + id() + ": its driver records no build");
  }
  // Reads back what `action` (already run, as `applied` recorded) left in the world, and
  // compares it with what it requested. Uses the lab's own code only; changes nothing.
  virtual Result<Readback> read_back(const scenario::Call& action, const AppliedCall& applied) {
    (void)applied;
    Readback r;
    r.typed = false;
    r.observed = action.name + ": this driver reads no action back";
    return r;
  }
};

class WorldDriver {
 public:
  virtual ~WorldDriver() = default;
  virtual std::string_view name() const = 0;
  // Gives the driver what it needs from the engine; called once, before any create or open.
  virtual void configure(const WorldHost& host) { (void)host; }
  // Validates the driver-specific parts of a manifest (each world's build, each check's
  // params, every probe/action call name is one this driver implements). Called at load.
  virtual Status check_manifest(const scenario::Manifest& manifest) const = 0;
  // Builds a fresh world `world_id` from the verified package in `package_dir` for `seed` under
  // `work_dir` (which must not exist; the driver owns it until destroy). Deterministic for a
  // given (package, world, seed).
  virtual Result<std::unique_ptr<World>> create(const std::filesystem::path& package_dir,
                                                const scenario::Manifest& manifest,
                                                std::string_view world_id, uint64_t seed,
                                                const std::filesystem::path& work_dir) = 0;
  // Re-attaches to a world an earlier create() built in `work_dir` (the learner's live world
  // persists across commands).
  virtual Result<std::unique_ptr<World>> open(const scenario::Manifest& manifest,
                                              std::string_view world_id,
                                              const std::filesystem::path& work_dir) = 0;
  // Removes everything the world made. Idempotent.
  virtual Status destroy(std::unique_ptr<World> world) = 0;
  // Removes what a world in `work_dir` left when it can no longer be opened (a crash killed its
  // processes, its state file is damaged): everything it recorded is released, then the folder
  // goes. Idempotent; nothing to do is ok.
  virtual Status discard(const std::filesystem::path& work_dir) {
    std::error_code ec;
    std::filesystem::remove_all(work_dir, ec);
    if (ec) return Status::io("remove " + work_dir.string() + ": " + ec.message());
    return Status::ok();
  }
  // Whether distinct worlds may be created, used and destroyed from distinct threads at once
  // (the gate then runs its properties in parallel). One world is only ever used by one thread.
  virtual bool concurrent_worlds() const { return false; }
  // Digest of the isolation profile the driver runs calls under, and a JSON object describing
  // the capabilities it really has (both bound into receipts).
  virtual std::string profile_digest() const = 0;
  virtual std::string capabilities_json() const = 0;
};

}  // namespace aura::world
