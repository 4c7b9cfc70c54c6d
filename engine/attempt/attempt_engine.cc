#include "engine/attempt/attempt_engine.h"

#include <simdjson.h>
#include <sodium.h>
#include <sys/utsname.h>

#include <algorithm>
#include <set>
#include <span>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "engine/common/json_writer.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "engine/events/attempt_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/registry_events.h"
#include "engine/events/world_events.h"
#include "engine/gate/gate_runner.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/package/package.h"
#include "engine/scenario/call.h"
#include "engine/scenario/manifest.h"
#include "engine/scenario/names.h"
#include "engine/scenario/scenario_package.h"
#include "engine/world/world_built.h"

namespace aura::attempt {
namespace fs = std::filesystem;
namespace ev = aura::events;
namespace {

std::string learner_actor(std::string_view learner) { return "learner:" + std::string(learner); }

EventDraft phase_event(const AttemptState& s, Phase from, Phase to) {
  return ev::attempt_draft(
      ev::AttemptPhase{s.id, std::string(phase_name(from)), std::string(phase_name(to))}, "engine");
}

Status wrong_phase(const AttemptState& s, std::string_view command, std::string_view expected) {
  return Status::failed_precondition(
      "attempt " + s.id + " is in phase " + std::string(phase_name(s.phase)) + "; '" +
      std::string(command) + "' needs phase " + std::string(expected));
}

Status need_phase(const AttemptState& s, std::string_view command, Phase phase) {
  if (s.phase == phase) return Status::ok();
  return wrong_phase(s, command, phase_name(phase));
}

Status learner_text(std::string_view what, std::string_view text, bool may_be_empty) {
  if (may_be_empty && text.empty()) return Status::ok();
  const std::string wrong = check_learner_text(text, kMaxLearnerTextBytes);
  if (wrong.empty()) return Status::ok();
  return Status::invalid(std::string(what) + " " + wrong);
}

Result<BlobInfo> put_blob(BlobStore& blobs, std::string_view bytes) {
  return blobs.put(std::span(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

std::vector<EvidenceRef> one_ref(std::string id, const BlobInfo& blob, std::string kind) {
  return {EvidenceRef{std::move(id), blob.sha256, std::move(kind), blob.bytes}};
}

// The supervisor's record of the live world it just built (docs/ATTEMPTS.md, world.built).
Result<EventDraft> live_world_built(const AttemptState& s, world::World& w, std::string_view sums,
                                    BlobStore& blobs) {
  world::BuildRecord record;
  AURA_ASSIGN_OR_RETURN(record, w.build_record());
  ev::WorldBuilt built;
  AURA_ASSIGN_OR_RETURN(built, world::world_built_event(s.id, w.id(), record, sums, blobs));
  return ev::attempt_draft(built, "supervisor");
}

// Every scenario.loaded of the registry stream, in log order (a malformed one is corruption).
Result<std::vector<ev::ScenarioLoaded>> loaded_scenarios(const EventLog& log) {
  std::vector<ev::ScenarioLoaded> out;
  ev::PayloadReader reader;
  Status bad = Status::ok();
  AURA_RETURN_IF_ERROR(log.read_stream(ev::kScenarioStream, 1, [&](const EventView& e) {
    if (e.type != ev::kScenarioLoaded) return true;
    auto loaded = ev::ScenarioLoaded::decode(reader, e);
    if (!loaded.ok()) {
      bad = Status::corruption(std::string(ev::kScenarioStream) + " seq " + std::to_string(e.seq) +
                               ": " + loaded.status().message());
      return false;
    }
    out.push_back(std::move(loaded).value());
    return true;
  }));
  AURA_RETURN_IF_ERROR(bad);
  return out;
}

// Why no scenario `name` is loaded, naming the loaded ids (and the nearest one).
std::string no_such_scenario(std::string_view name, const std::vector<ev::ScenarioLoaded>& all) {
  std::vector<std::string> ids;
  for (const auto& l : all)
    if (std::find(ids.begin(), ids.end(), l.id) == ids.end()) ids.push_back(l.id);
  std::sort(ids.begin(), ids.end());
  const std::string quoted = "no scenario \"" + safe_text(name, 128) + "\"";
  if (ids.empty()) return quoted + " is loaded; none is ('aura setup' loads the bundled ones)";
  return scenario::unknown_name(quoted, name, "is loaded", "loaded", ids);
}

// The latest scenario.loaded for `id` in the registry stream.
Result<ev::ScenarioLoaded> find_loaded(const EventLog& log, std::string_view id) {
  std::vector<ev::ScenarioLoaded> all;
  AURA_ASSIGN_OR_RETURN(all, loaded_scenarios(log));
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (it->id == id) return std::move(*it);
  return Status::not_found(no_such_scenario(id, all));
}

Result<intervention::Intervention> current_ir(const BlobStore& blobs, const AttemptState& s,
                                              const scenario::Manifest& manifest) {
  if (s.revision == 0) return Status::failed_precondition("no InterventionIR was submitted");
  auto bytes = blobs.get(s.ir.sha256);
  if (!bytes.ok()) return bytes.status().with_context("the IR blob");
  intervention::IrContext ctx{&manifest, s.unlocked};
  auto ir = intervention::parse_intervention(*bytes, ctx);
  if (!ir.ok()) return ir.status().with_context("the submitted IR no longer validates");
  return ir;
}

std::vector<std::string> promised_of(const intervention::Intervention& ir) {
  std::vector<std::string> p = ir.postconditions;
  p.insert(p.end(), ir.invariants.begin(), ir.invariants.end());
  return p;
}

std::string kernel_release() {
  struct utsname u {};
  if (uname(&u) != 0) return "unknown";
  return safe_text(u.release, 128);
}

std::string random_hex(size_t bytes) {
  std::vector<uint8_t> buf(bytes);
  randombytes_buf(buf.data(), buf.size());
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (uint8_t b : buf) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

Status check_learner(std::string_view learner);

}  // namespace

bool is_valid_learner(std::string_view name) {
  if (name.empty() || name.size() > 32 || !(name[0] >= 'a' && name[0] <= 'z')) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  });
}

namespace {
Status check_learner(std::string_view learner) {
  if (is_valid_learner(learner)) return Status::ok();
  return Status::invalid("learner \"" + safe_text(learner, 64) +
                         "\" is not a learner name ([a-z][a-z0-9_-]{0,31})");
}
}  // namespace

struct AttemptEngine::Bound {
  scenario::Manifest manifest;
  std::unique_ptr<world::WorldDriver> driver;
  fs::path package_dir;
  std::string manifest_bytes;
  std::string publisher;
  std::string sums;  // the package's SHA256SUMS bytes (SHA-256: the package digest)
};

AttemptEngine::AttemptEngine(EngineContext context) : ctx_(std::move(context)) {
  if (sodium_init() < 0) std::abort();
}

fs::path AttemptEngine::live_dir(std::string_view id) const {
  return ctx_.worlds_dir / std::string(id) / "live";
}

Result<AttemptState> AttemptEngine::state(std::string_view id) const {
  return replay_attempt(*ctx_.log, id);
}

Result<AttemptState> AttemptEngine::load(std::string_view id, std::string_view learner) const {
  AURA_RETURN_IF_ERROR(check_learner(learner));
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, replay_attempt(*ctx_.log, id));
  if (s.learner != learner) {
    return Status::failed_precondition("attempt " + s.id + " belongs to learner " + s.learner +
                                       ", not " + std::string(learner));
  }
  return s;
}

// Re-verifies the attempt's package (a package changed since the attempt started is refused)
// and gets the world driver it names.
Result<AttemptEngine::Bound> AttemptEngine::bind(const AttemptState& s) const {
  auto pkg = scenario::load_scenario_package(s.package_dir, *ctx_.trust);
  if (!pkg.ok()) return pkg.status().with_context("scenario package " + s.package_dir);
  if (to_hex(pkg->package_digest) != s.package_digest ||
      to_hex(sha256(pkg->manifest_bytes)) != s.manifest_sha256) {
    return Status::failed_precondition("scenario package " + s.package_dir +
                                       " changed since attempt " + s.id +
                                       " started (its digest differs); start a new attempt");
  }
  Bound b;
  AURA_ASSIGN_OR_RETURN(b.manifest, scenario::parse_manifest(pkg->manifest_bytes));
  b.driver = ctx_.drivers ? ctx_.drivers(b.manifest.driver) : nullptr;
  if (!b.driver) {
    return Status::unavailable("this build has no world driver \"" + b.manifest.driver +
                               "\" (scenario " + b.manifest.id + ")");
  }
  AURA_RETURN_IF_ERROR(b.driver->check_manifest(b.manifest));
  b.package_dir = s.package_dir;
  b.manifest_bytes = std::move(pkg->manifest_bytes);
  b.publisher = pkg->publisher;
  b.sums = format_sha256sums(pkg->files);
  if (sha256(b.sums) != pkg->package_digest) {
    return Status::corruption("scenario package " + s.package_dir +
                              ": its files do not reproduce the SHA256SUMS it was verified by");
  }
  return b;
}

Result<AttemptState> AttemptEngine::load(std::string_view id, std::string_view learner,
                                         std::string_view command, Phase phase) const {
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  AURA_RETURN_IF_ERROR(need_phase(s, command, phase));
  return s;
}

Status AttemptEngine::append(std::vector<EventDraft> drafts) {
  auto r = ctx_.log->append_all(drafts);
  return r.ok() ? Status::ok() : r.status();
}

void AttemptEngine::destroy_live(const AttemptState& s) {
  const fs::path dir = live_dir(s.id);
  std::error_code ec;
  if (!fs::exists(dir, ec)) return;
  auto bound = bind(s);
  if (!bound.ok() || !end_world(*bound, dir).ok()) {
    // This build or the package can no longer open the world (the package changed since, or
    // this build reads its manifest differently): the driver named by the manifest the attempt
    // recorded still discards what it left, so no world outlives its attempt.
    auto m = attempt_manifest(*ctx_.blobs, s);
    auto driver = m.ok() && ctx_.drivers ? ctx_.drivers(m->driver) : nullptr;
    if (driver != nullptr) (void)driver->discard(dir);
  }
  fs::remove_all(ctx_.worlds_dir / s.id, ec);
}

// The attempt's live world, bound to it; a world that cannot be opened is named as such, with
// the way out.
namespace {

// A world the engine holds, lent to one command: every call goes to it, dropping this leaves it.
class LentWorld final : public world::World {
 public:
  explicit LentWorld(world::World& w) : w_(w) {}
  const std::string& id() const override { return w_.id(); }
  void bind_attempt(std::string_view attempt) override { w_.bind_attempt(attempt); }
  Status persist() override { return w_.persist(); }
  Result<world::CallOutput> probe(const scenario::Call& call, uint64_t max_bytes) override {
    return w_.probe(call, max_bytes);
  }
  Result<world::CallOutput> act(const scenario::Call& call) override { return w_.act(call); }
  Result<world::CallOutput> run_script(const scenario::Target& target,
                                       std::string_view script) override {
    return w_.run_script(target, script);
  }
  Result<world::CheckOutput> check(const scenario::CheckSpec& check) override {
    return w_.check(check);
  }
  Result<std::string> fingerprint() override { return w_.fingerprint(); }
  Result<world::BuildRecord> build_record() override { return w_.build_record(); }
  Result<world::Readback> read_back(const scenario::Call& action,
                                    const world::AppliedCall& applied) override {
    return w_.read_back(action, applied);
  }

 private:
  world::World& w_;
};

}  // namespace

AttemptEngine::AttemptLock AttemptEngine::lock_attempt(std::string_view id) {
  std::shared_ptr<std::mutex> mu;
  {
    std::lock_guard guard(locks_mu_);
    // Locks no command holds any more go, so the map stays as large as the commands running.
    std::erase_if(locks_, [](const auto& entry) { return entry.second.expired(); });
    auto& slot = locks_[std::string(id)];
    mu = slot.lock();
    if (!mu) {
      mu = std::make_shared<std::mutex>();
      slot = mu;
    }
  }
  return AttemptLock(std::move(mu));
}

Result<std::unique_ptr<world::World>> AttemptEngine::open_live(Bound& b,
                                                               const AttemptState& s) const {
  {
    std::lock_guard held(held_mu_);
    if (auto it = held_.find(live_dir(s.id).string()); it != held_.end()) {
      it->second.world->bind_attempt(s.id);
      return std::unique_ptr<world::World>(new LentWorld(*it->second.world));
    }
  }
  auto w = b.driver->open(b.manifest, b.manifest.primary()->id, live_dir(s.id));
  if (!w.ok()) {
    return Status(w.status().code(), "the live world of attempt " + s.id + " cannot be opened (" +
                                         w.status().message() + "); 'aura attempt reset " + s.id +
                                         "' rebuilds it from the package");
  }
  (*w)->bind_attempt(s.id);
  return std::move(w).value();
}

// The live world in `dir` removed: destroyed when it opens, else discarded. What became of it.
Result<std::string> AttemptEngine::end_world(Bound& b, const fs::path& dir) const {
  std::error_code ec;
  std::optional<Held> held;
  {
    std::lock_guard guard(held_mu_);
    if (auto it = held_.find(dir.string()); it != held_.end()) {
      held = std::move(it->second);
      held_.erase(it);
    }
  }
  if (held) {
    AURA_RETURN_IF_ERROR(held->driver->destroy(std::move(held->world)));
    return std::string("destroyed");
  }
  if (!fs::exists(dir, ec)) return std::string("there was none");
  auto w = b.driver->open(b.manifest, b.manifest.primary()->id, dir);
  if (w.ok()) {
    AURA_RETURN_IF_ERROR(b.driver->destroy(std::move(w).value()));
    return std::string("destroyed");
  }
  const std::string why = w.status().message();
  AURA_RETURN_IF_ERROR(b.driver->discard(dir));
  return "it could not be opened (" + why + "); what it left was discarded";
}

Result<std::string> AttemptEngine::reset(std::string_view id, std::string_view learner,
                                         std::string_view reason) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  if (s.phase < Phase::kInspect || s.phase > Phase::kTransferGate)
    return wrong_phase(s, "reset", "from inspect to transfer_gate (before a verdict)");
  AURA_RETURN_IF_ERROR(learner_text("the reason", reason, true));
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  const fs::path live = live_dir(s.id);
  std::string old;
  AURA_ASSIGN_OR_RETURN(old, end_world(b, live));
  auto world = b.driver->create(b.package_dir, b.manifest, b.manifest.primary()->id, s.seed, live);
  if (!world.ok()) return world.status().with_context("building the live world afresh");
  std::vector<EventDraft> drafts = {ev::attempt_draft(
      ev::WorldReset{s.id, std::string(reason), "live", old}, learner_actor(learner))};
  auto built = live_world_built(s, **world, b.sums, *ctx_.blobs);
  if (!built.ok()) {
    (void)b.driver->destroy(std::move(world).value());
    return built.status();
  }
  drafts.push_back(std::move(built).value());
  if (s.phase != Phase::kInspect) drafts.push_back(phase_event(s, s.phase, Phase::kInspect));
  Status st = ctx_.persist_live_worlds ? (*world)->persist() : Status::ok();
  if (st.is_ok()) st = append(std::move(drafts));
  if (!st.is_ok()) {
    (void)b.driver->destroy(std::move(world).value());
    return st;
  }
  if (!ctx_.persist_live_worlds) {
    std::lock_guard held(held_mu_);
    held_[live.string()] = Held{std::move(b.driver), std::move(world).value()};
  }
  return old;
}

Result<std::string> AttemptEngine::scenario_named(std::string_view name) const {
  std::set<std::string> ids;
  std::vector<ev::ScenarioLoaded> loaded;
  AURA_ASSIGN_OR_RETURN(loaded, loaded_scenarios(*ctx_.log));
  for (const auto& l : loaded) ids.insert(l.id);
  if (ids.count(std::string(name)) > 0) return std::string(name);
  std::string prefix;
  for (char c : name) prefix += char(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  prefix += '-';
  std::vector<std::string> matches;
  for (const auto& id : ids)
    if (id.starts_with(prefix)) matches.push_back(id);
  if (matches.size() == 1) return matches[0];
  if (matches.size() > 1) {
    return Status::not_found("no scenario \"" + safe_text(name, 128) + "\" is loaded (\"" +
                             safe_text(name, 128) +
                             "\" names several); loaded: " + scenario::name_list(matches));
  }
  return Status::not_found(no_such_scenario(name, loaded));
}

Result<scenario::Manifest> AttemptEngine::scenario_manifest(std::string_view scenario_id) const {
  ev::ScenarioLoaded entry;
  AURA_ASSIGN_OR_RETURN(entry, find_loaded(*ctx_.log, scenario_id));
  AttemptState s;
  s.id = "(none)";
  s.package_dir = entry.dir;
  s.package_digest = entry.package_digest;
  s.manifest_sha256 = entry.manifest_sha256;
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  return std::move(b.manifest);
}

// ---- start ----

Result<std::string> AttemptEngine::start(const StartRequest& req) {
  AURA_RETURN_IF_ERROR(check_learner(req.learner));
  if (req.mode != "learn" && req.mode != "judge") {
    return Status::invalid("mode \"" + req.mode + "\" is neither learn nor judge");
  }
  // A loaded id, or its short name (O1); an unknown one is refused naming the loaded ids.
  std::string scenario_id;
  AURA_ASSIGN_OR_RETURN(scenario_id, scenario_named(req.scenario_id));
  ev::ScenarioLoaded entry;
  AURA_ASSIGN_OR_RETURN(entry, find_loaded(*ctx_.log, scenario_id));

  AttemptState s;
  s.id = random_hex(8);
  const AttemptLock lock = lock_attempt(s.id);
  s.learner = req.learner;
  s.package_dir = entry.dir;
  s.package_digest = entry.package_digest;
  s.manifest_sha256 = entry.manifest_sha256;
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  const uint64_t seed = req.seed ? *req.seed : [] {
    uint64_t v = 0;
    randombytes_buf(&v, sizeof v);
    return v >> 1;  // JSON readers keep it exact below 2^63
  }();

  // The manifest's exact bytes, as the verified package holds them, go into the blob store.
  BlobInfo manifest_blob;
  AURA_ASSIGN_OR_RETURN(manifest_blob, put_blob(*ctx_.blobs, b.manifest_bytes));

  const fs::path live = live_dir(s.id);
  std::error_code ec;
  fs::create_directories(live.parent_path(), ec);
  if (ec) return Status::io("creating " + live.parent_path().string() + ": " + ec.message());
  auto world = b.driver->create(b.package_dir, b.manifest, b.manifest.primary()->id, seed, live);
  if (!world.ok()) {
    fs::remove_all(live.parent_path(), ec);
    return world.status().with_context("building the live world");
  }

  ev::AttemptStarted started{s.id,
                             req.learner,
                             req.mode,
                             seed,
                             {b.manifest.id, b.manifest.version, entry.package_digest,
                              entry.manifest_sha256, b.publisher, entry.dir},
                             uint64_t(b.manifest.probe_budget),
                             one_ref("manifest", manifest_blob, "scenario.manifest")};
  // The live world outlives this command: later commands reopen it, or this engine holds it.
  auto built = live_world_built(s, **world, b.sums, *ctx_.blobs);
  Status st = built.ok() ? Status::ok() : built.status();
  if (st.is_ok() && ctx_.persist_live_worlds) st = (*world)->persist();
  if (st.is_ok()) {
    st = append({ev::attempt_draft(started, learner_actor(req.learner)), std::move(built).value()});
  }
  if (!st.is_ok()) {
    (void)b.driver->destroy(std::move(world).value());
    fs::remove_all(live.parent_path(), ec);
    return st;
  }
  if (!ctx_.persist_live_worlds) {
    std::lock_guard held(held_mu_);
    held_[live.string()] = Held{std::move(b.driver), std::move(world).value()};
  }
  return s.id;
}

// ---- predict, probe ----

Status AttemptEngine::predict(std::string_view id, std::string_view learner,
                              std::string_view hypothesis, std::string_view expect,
                              uint32_t confidence) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "predict", Phase::kObserve));
  scenario::Manifest m;
  AURA_ASSIGN_OR_RETURN(m, attempt_manifest(*ctx_.blobs, s));
  const bool known = std::any_of(m.hypotheses.begin(), m.hypotheses.end(),
                                 [&](const auto& h) { return h.id == hypothesis; });
  if (!known) {
    return Status::invalid(
               scenario::unknown_name("hypothesis \"" + safe_text(hypothesis, 64) + "\"",
                                      hypothesis, "is not one of the scenario's", "its hypotheses",
                                      scenario::hypothesis_ids(m)))
        .with_expected(scenario::hypothesis_ids(m));
  }
  AURA_RETURN_IF_ERROR(learner_text("the expectation", expect, false));
  if (confidence > 100) return Status::invalid("confidence must be 0..100");
  return append({phase_event(s, Phase::kObserve, Phase::kPredict),
                 ev::attempt_draft(ev::AttemptPredicted{s.id, std::string(hypothesis),
                                                        std::string(expect), confidence},
                                   learner_actor(learner)),
                 phase_event(s, Phase::kPredict, Phase::kInspect)});
}

Result<ProbeResult> AttemptEngine::probe(std::string_view id, std::string_view learner,
                                         std::string_view call_text) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  if (s.phase == Phase::kObserve) {
    return Status::failed_precondition("attempt " + s.id +
                                       " has no prediction yet; record one with 'predict' before "
                                       "any probe runs");
  }
  AURA_RETURN_IF_ERROR(need_phase(s, "probe", Phase::kInspect));
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  scenario::Call call;
  AURA_ASSIGN_OR_RETURN(call,
                        scenario::parse_call(call_text, b.manifest.probes, b.manifest, "probe"));
  const scenario::CallSpec* spec = b.manifest.find_probe(call.name);
  if (s.probes_refused >= kMaxRefusedProbes) {
    return Status::failed_precondition(
        "attempt " + s.id + " has had " + std::to_string(s.probes_refused) +
        " probes refused before reading anything, the most an attempt may have (they cost "
        "nothing, so their number is bounded); the catalog lists each probe's allowed prefixes");
  }
  if (s.spent + spec->cost > s.probe_budget) {
    return Status::failed_precondition(
        "probe " + call.name + " costs " + std::to_string(spec->cost) + " but only " +
        std::to_string(s.probe_budget - s.spent) + " of the budget of " +
        std::to_string(s.probe_budget) + " is left");
  }
  std::unique_ptr<world::World> world;
  AURA_ASSIGN_OR_RETURN(world, open_live(b, s));
  world::CallOutput out;
  AURA_ASSIGN_OR_RETURN(out, world->probe(call, spec->max_output_bytes));
  if (out.output.size() > spec->max_output_bytes) {  // never trust a driver with the cap
    out.output.resize(spec->max_output_bytes);
    out.truncated = true;
  }
  BlobInfo blob;
  AURA_ASSIGN_OR_RETURN(blob, put_blob(*ctx_.blobs, out.output));

  ProbeResult r;
  r.probe = s.probes + 1;
  r.evidence = "ev-" + std::to_string(r.probe);
  r.exit_code = out.exit_code;
  r.truncated = out.truncated;
  r.error = safe_text(out.error, 1024);
  // The charge is decided here, after the run, from the driver's own refusal, and recorded in
  // probe.requested beside the probe.completed that says why (one append): replay reads it and
  // never decides it again. A refusal always carries its reason and a failing exit.
  r.refused = out.refused;
  if (r.refused && r.exit_code == 0) r.exit_code = 1;
  if (r.refused && r.error.empty()) r.error = "the target was refused; nothing was read";
  r.cost = r.refused ? 0 : spec->cost;
  r.spent = s.spent + r.cost;
  r.budget = s.probe_budget;
  ev::ProbeCompleted completed{s.id,        r.probe, r.evidence, r.exit_code,
                               r.truncated, r.error, {},         {}};
  for (size_t i = 0; i < out.resolved.size() && i < 64; ++i)
    completed.resolved.push_back(safe_text(out.resolved[i], 256));
  completed.refs = one_ref(r.evidence, blob, "probe.output");
  completed.refused = r.refused;
  AURA_RETURN_IF_ERROR(
      append({ev::attempt_draft(
                  ev::ProbeRequested{s.id, r.probe, scenario::call_json(call), r.cost, r.spent},
                  learner_actor(learner)),
              ev::attempt_draft(completed, "supervisor")}));
  r.output = std::move(out.output);
  return r;
}

// ---- the contract ----

Result<uint32_t> AttemptEngine::submit(std::string_view id, std::string_view learner,
                                       std::string_view ir_json) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  if (s.phase != Phase::kInspect && s.phase != Phase::kContract) {
    return wrong_phase(s, "submit", "inspect or contract");
  }
  scenario::Manifest m;
  AURA_ASSIGN_OR_RETURN(m, attempt_manifest(*ctx_.blobs, s));
  intervention::IrContext ctx{&m, s.unlocked};
  intervention::Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir, intervention::parse_intervention(ir_json, ctx));
  BlobInfo blob;
  AURA_ASSIGN_OR_RETURN(blob, put_blob(*ctx_.blobs, ir_json));
  const uint32_t revision = s.revision + 1;
  ev::InterventionSubmitted submitted{
      s.id,
      revision,
      to_hex(blob.sha256),
      {},
      one_ref("ir-" + std::to_string(revision), blob, "intervention.ir")};
  std::vector<std::string> seen;
  for (const auto* a : intervention::scripts_of(ir)) {
    const std::string sha = to_hex(a->script_sha256);
    if (std::find(seen.begin(), seen.end(), sha) != seen.end()) continue;
    seen.push_back(sha);
    submitted.scripts.push_back(
        {sha, std::string(script_status_name(ScriptStatus::kPendingFeedback))});
  }
  std::vector<EventDraft> drafts;
  drafts.push_back(ev::attempt_draft(submitted, learner_actor(learner)));
  if (s.phase == Phase::kInspect)
    drafts.push_back(phase_event(s, Phase::kInspect, Phase::kContract));
  AURA_RETURN_IF_ERROR(append(std::move(drafts)));
  return revision;
}

Status AttemptEngine::authorize(std::string_view id, std::string_view learner,
                                std::string_view sha256_hex) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "authorize", Phase::kContract));
  auto it = s.scripts.find(std::string(sha256_hex));
  if (it == s.scripts.end()) {
    return Status::invalid("no script of IR revision " + std::to_string(s.revision) +
                           " has SHA-256 " + std::string(sha256_hex));
  }
  if (it->second != ScriptStatus::kPendingFeedback) {
    return Status::failed_precondition("script " + it->first + " is already " +
                                       std::string(script_status_name(it->second)));
  }
  return append({ev::attempt_draft(ev::ScriptAuthorized{s.id, s.revision, std::string(sha256_hex)},
                                   learner_actor(learner))});
}

namespace {

// What the last apply recorded of one action: what its targets resolved to, and whether it ran.
struct AppliedAction {
  bool seen = false;
  bool failed = false;
  std::string outcome;  // "exit N (error)" when it failed
  world::AppliedCall call;
  Digest output{};  // its output blob
};

// One action.completed's record, as apply recorded it (`output`: its output blob).
AppliedAction applied_of(const ev::ActionCompleted& action, const Digest& output) {
  AppliedAction a;
  a.seen = true;
  const std::string error = action.error.value_or("");
  a.failed = action.exit_code != 0 || !error.empty();
  if (a.failed) {
    a.outcome = "exit " + std::to_string(action.exit_code) +
                (error.empty() ? "" : " (" + safe_text(error, 256) + ")");
  }
  a.call.resolved = action.resolved;
  a.output = output;
  return a;
}

// The action.completed events of the attempt's last apply, by index.
Result<std::vector<AppliedAction>> last_apply(const EventLog& log, const AttemptState& s,
                                              size_t actions) {
  std::vector<AppliedAction> out(actions);
  ev::PayloadReader reader;
  Status bad = Status::ok();
  AURA_RETURN_IF_ERROR(log.read_stream(stream_of(s.id), 1, [&](const EventView& e) {
    if (e.type == ev::kAttemptPhase) {
      auto phase = ev::AttemptPhase::decode(reader, e);
      if (!phase.ok()) {
        bad = Status::corruption(stream_of(s.id) + " seq " + std::to_string(e.seq) + ": " +
                                 phase.status().message());
        return false;
      }
      if (phase->to == phase_name(Phase::kApply)) out.assign(actions, AppliedAction{});
      return true;
    }
    if (e.type != ev::kActionCompleted || e.actor != "supervisor") return true;
    auto action = ev::ActionCompleted::decode(reader, e);
    if (!action.ok()) {
      bad = Status::corruption(stream_of(s.id) + " seq " + std::to_string(e.seq) + ": " +
                               action.status().message());
      return false;
    }
    if (action->index >= actions) return true;
    out[action->index] =
        applied_of(*action, action->refs.empty() ? Digest{} : action->refs.front().sha256);
    return true;
  }));
  AURA_RETURN_IF_ERROR(bad);
  return out;
}

// The ACK readback: the supervisor reads every action's effect back from the live world as it
// is now (World::read_back, the lab's own code) and compares it with the request. `r` receives
// the lines; `differences` each difference named by action; the event is returned unappended.
Result<ev::AckReadback> read_back_live(world::World& world, const BlobStore& blobs,
                                       const AttemptState& s, const intervention::Intervention& ir,
                                       std::vector<AppliedAction> applied, AckResult& r,
                                       std::string& differences) {
  r = AckResult{};
  r.as_requested = true;
  ev::AckReadback readback{s.id, s.revision, true, {}};
  for (size_t i = 0; i < ir.actions.size(); ++i) {
    const intervention::Action& a = ir.actions[i];
    AckLine line;
    line.index = uint32_t(i);
    line.call = a.is_script ? "script " + to_hex(a.script_sha256) : scenario::call_json(a.call);
    if (a.is_script) {
      line.readback.typed = false;
      line.readback.observed = "a script requests no typed effect; nothing to compare";
    } else if (i >= applied.size() || !applied[i].seen) {
      line.readback.typed = false;
      line.readback.observed = "it did not run (the apply stopped before it)";
    } else if (applied[i].failed) {
      line.readback.typed = false;
      line.readback.observed =
          "it failed at apply (" + applied[i].outcome + "); nothing to compare";
    } else {
      auto output = blobs.get(applied[i].output);
      if (!output.ok())
        return output.status().with_context("the output of action " + std::to_string(i));
      applied[i].call.output = std::move(output).value();
      AURA_ASSIGN_OR_RETURN(line.readback, world.read_back(a.call, applied[i].call));
    }
    line.readback.observed = safe_text(line.readback.observed, 4096);
    ev::AckReadback::Line recorded{
        i, std::nullopt, std::nullopt, line.readback.typed, line.readback.observed, {}};
    if (a.is_script) {
      recorded.script_sha256 = to_hex(a.script_sha256);
    } else {
      recorded.call = scenario::call_json(a.call);
    }
    for (auto& d : line.readback.differences) {
      d = safe_text(d, 1024);
      recorded.differences.push_back(d);
      differences += (differences.empty() ? "" : "; ") + std::string("action ") +
                     std::to_string(i) + " (" + (a.is_script ? "script" : a.call.name) + "): " + d;
    }
    if (!line.readback.differences.empty()) r.as_requested = false;
    readback.actions.push_back(std::move(recorded));
    r.lines.push_back(std::move(line));
  }
  readback.as_requested = r.as_requested;
  return readback;
}

// The lines of a recorded readback, as the learner was shown them.
AckResult ack_result_of(const ev::AckReadback& readback, uint64_t seq) {
  AckResult r;
  r.readback_seq = seq;
  r.as_requested = readback.as_requested;
  for (const auto& l : readback.actions) {
    AckLine line;
    line.index = uint32_t(l.index);
    line.call = l.call ? *l.call : "script " + l.script_sha256.value_or("");
    line.readback.typed = l.typed;
    line.readback.observed = l.observed;
    line.readback.differences = l.differences;
    r.lines.push_back(std::move(line));
  }
  return r;
}

}  // namespace

Result<ApplyResult> AttemptEngine::apply(std::string_view id, std::string_view learner) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "apply", Phase::kContract));
  for (const auto& [sha, status] : s.scripts) {
    if (status != ScriptStatus::kPendingExecution) {
      return Status::failed_precondition(
          "script " + sha + " of IR revision " + std::to_string(s.revision) +
          " is not authorised (status " + std::string(script_status_name(status)) +
          "); authorise it before apply");
    }
  }
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  intervention::Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir, current_ir(*ctx_.blobs, s, b.manifest));
  std::unique_ptr<world::World> world;
  AURA_ASSIGN_OR_RETURN(world, open_live(b, s));

  const auto records = gate::run_actions(*world, ir.actions);
  std::vector<EventDraft> drafts{phase_event(s, Phase::kContract, Phase::kApply)};
  std::vector<AppliedAction> applied;
  ApplyResult r;
  for (size_t i = 0; i < records.size(); ++i) {
    const auto& rec = records[i];
    BlobInfo blob;
    AURA_ASSIGN_OR_RETURN(blob, put_blob(*ctx_.blobs, rec.output));
    ev::ActionCompleted action{gate::action_members(rec)};
    action.attempt = s.id;
    action.world = "live";
    action.stage = "apply";
    action.index = i;
    action.refs = one_ref("act-" + std::to_string(s.actions_run + i + 1), blob, "action.output");
    applied.push_back(applied_of(action, blob.sha256));
    drafts.push_back(ev::attempt_draft(action, "supervisor"));
    const bool failed = rec.exit_code != 0 || !rec.error.empty();
    r.failed += failed ? 1 : 0;
    r.aborted = r.aborted || rec.host_failure;
    r.lines.push_back((rec.call_json.empty() ? "script " + rec.script_sha256 : rec.call_json) +
                      ": exit " + std::to_string(rec.exit_code) +
                      (rec.error.empty() ? "" : " (" + rec.error + ")"));
  }
  r.actions = uint32_t(records.size());
  drafts.push_back(ev::attempt_draft(
      ev::ApplyCompleted{s.id, s.revision, r.actions, r.failed, r.aborted}, "supervisor"));
  // The apply ends with its readback recorded, so the learner sees what each action left before
  // acknowledging it (ack). A readback the host cannot take is not a reason to lose the record
  // of what ran: the apply is recorded without it, and ack reads back.
  std::string differences;
  auto readback = read_back_live(*world, *ctx_.blobs, s, ir, applied, r.readback, differences);
  if (readback.ok()) {
    drafts.push_back(ev::attempt_draft(*readback, "supervisor"));
  } else {
    r.readback = AckResult{};
    r.readback_error = readback.status().message();
  }
  drafts.push_back(phase_event(s, Phase::kApply, Phase::kAck));
  auto appended = ctx_.log->append_all(drafts);
  if (!appended.ok()) return appended.status();
  if (readback.ok()) r.readback.readback_seq = (*appended)[drafts.size() - 2].seq;
  return r;
}

Status AttemptEngine::ack(std::string_view id, std::string_view learner, std::string_view note,
                          AckResult* result, std::optional<uint64_t> readback_seq) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "ack", Phase::kAck));
  AURA_RETURN_IF_ERROR(learner_text("the note", note, true));
  if (readback_seq && *readback_seq != s.readback_seq) {
    return Status::failed_precondition(
        "the readback at seq " + std::to_string(*readback_seq) + " is not attempt " + s.id +
        "'s latest" +
        (s.readback_seq == 0 ? std::string(" (it has none yet: 'aura attempt ack " + s.id +
                                           "' reads the live world back)")
                             : "; its latest is at seq " + std::to_string(s.readback_seq)));
  }
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  intervention::Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir, current_ir(*ctx_.blobs, s, b.manifest));
  std::vector<AppliedAction> applied;
  AURA_ASSIGN_OR_RETURN(applied, last_apply(*ctx_.log, s, ir.actions.size()));
  std::unique_ptr<world::World> world;
  AURA_ASSIGN_OR_RETURN(world, open_live(b, s));

  // The world is read back again: what is acknowledged must still hold.
  AckResult fresh;
  std::string differences;
  ev::AckReadback now;
  AURA_ASSIGN_OR_RETURN(now,
                        read_back_live(*world, *ctx_.blobs, s, ir, applied, fresh, differences));

  if (s.readback_seq != 0 && s.readback_as_requested && fresh.as_requested) {
    // The learner acknowledges the readback they were shown (the latest one recorded), and the
    // world still reads back as requested: the acknowledgement cites it.
    auto shown = ctx_.log->get(s.readback_seq);
    if (!shown.ok())
      return shown.status().with_context("the readback at seq " + std::to_string(s.readback_seq));
    ev::PayloadReader reader;
    auto recorded = ev::AckReadback::decode(
        reader, EventView{shown->seq, shown->prev_hash, shown->ts_us, shown->stream, shown->type,
                          shown->actor, shown->payload, shown->hash});
    if (!recorded.ok()) return recorded.status().with_context("seq " + std::to_string(shown->seq));
    if (result != nullptr) *result = ack_result_of(*recorded, s.readback_seq);
    return append({ev::attempt_draft(ev::AttemptAcknowledged{s.id, s.readback_seq,
                                                             s.readback_sha256, std::string(note)},
                                     learner_actor(learner)),
                   phase_event(s, Phase::kAck, Phase::kVerify)});
  }

  // Otherwise the learner has not been shown a readback that holds: the fresh one is recorded
  // and shown, and nothing is acknowledged.
  auto appended = ctx_.log->append(ev::attempt_draft(now, "supervisor"));
  if (!appended.ok()) return appended.status();
  fresh.readback_seq = appended->seq;
  if (result != nullptr) *result = fresh;
  const std::string seq = std::to_string(fresh.readback_seq);
  if (!fresh.as_requested) {
    return Status::failed_precondition(
        "ACK failed: what the supervisor read back differs from what the actions requested: " +
        differences + " (recorded as ack.readback at seq " + seq +
        "); the attempt stays in phase ack: 'aura attempt reset " + s.id +
        "' rebuilds the live world");
  }
  return Status::failed_precondition(
      "not acknowledged: the live world now reads back as every action requested, but that is "
      "not the readback you were shown; the supervisor recorded it as ack.readback at seq " +
      seq + ": read it, then acknowledge it with 'aura attempt ack " + s.id + " --readback " + seq +
      "'");
}

// ---- verify, gate, receipt ----

Result<VerifyResult> AttemptEngine::verify(std::string_view id, std::string_view learner) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "verify", Phase::kVerify));
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  intervention::Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir, current_ir(*ctx_.blobs, s, b.manifest));
  const auto spec = gate::GateSpec::from(b.manifest, promised_of(ir));
  std::unique_ptr<world::World> world;
  AURA_ASSIGN_OR_RETURN(world, open_live(b, s));

  VerifyResult r;
  std::vector<EventDraft> facts;
  size_t postconditions = 0;
  bool all_ok = true;
  for (const auto* c : gate::required_checks(spec, scenario::WorldRole::kPrimary)) {
    const scenario::CheckSpec* check = b.manifest.find_check(c->id);
    world::CheckOutput out;
    AURA_ASSIGN_OR_RETURN(out, world->check(*check));
    r.checks.emplace_back(c->id, out.ok);
    if (check->kind == scenario::CheckKind::kPostcondition) {
      ++postconditions;
      all_ok = all_ok && out.ok;
    }
    facts.push_back(ev::attempt_draft(
        ev::VerifyFact{s.id, c->id, std::string(scenario::check_kind_name(check->kind)), out.ok,
                       safe_text(out.observed, 1024)},
        "supervisor"));
  }
  r.recovered = postconditions > 0 && all_ok;
  // The supervisor's facts first; the engine's conclusion cites their seqs.
  auto appended = ctx_.log->append_all(facts);
  if (!appended.ok()) return appended.status();
  ev::AttemptVerified verified{s.id, r.recovered, {}};
  for (const auto& a : *appended) verified.facts.push_back(a.seq);
  AURA_RETURN_IF_ERROR(append({ev::attempt_draft(verified, "engine"),
                               phase_event(s, Phase::kVerify, Phase::kTransferGate)}));
  return r;
}

Result<GateOutcome> AttemptEngine::gate(
    std::string_view id, std::string_view learner,
    std::function<void(gate::Property, gate::Outcome)> progress) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "gate", Phase::kTransferGate));
  Bound b;
  AURA_ASSIGN_OR_RETURN(b, bind(s));
  intervention::Intervention ir;
  AURA_ASSIGN_OR_RETURN(ir, current_ir(*ctx_.blobs, s, b.manifest));
  const auto spec = gate::GateSpec::from(b.manifest, promised_of(ir));
  const bool stop_early = s.mode != "judge";

  const std::string capabilities = b.driver->capabilities_json();
  const ev::GateStarted gate_started{s.id,
                                     s.revision,
                                     s.ir_sha256,
                                     stop_early,
                                     {kernel_release(), ctx_.lab_build_digest,
                                      b.driver->profile_digest(), to_hex(sha256(capabilities))},
                                     capabilities};
  auto started = ctx_.log->append(ev::attempt_draft(gate_started, "engine"));
  if (!started.ok()) return started.status();

  gate::GateRunInput in;
  in.attempt_id = s.id;
  in.gate_seq = started->seq;
  in.manifest = &b.manifest;
  in.package_dir = b.package_dir;
  in.driver = b.driver.get();
  in.ir = &ir;
  in.spec = &spec;
  in.seed = s.seed;
  in.work_dir = ctx_.worlds_dir / s.id / ("gate-" + std::to_string(started->seq));
  in.stop_at_first_failure = stop_early;
  // Judge mode runs every property: as many at once as the machine has cores (the driver
  // permitting), up to the five.
  in.parallel = std::clamp(std::thread::hardware_concurrency(), 1u, 5u);
  in.progress = std::move(progress);
  in.package_sums = b.sums;
  auto ran = gate::run_gate(in, *ctx_.log, *ctx_.blobs);
  std::error_code ec;
  fs::remove_all(in.work_dir, ec);
  if (!ran.ok()) {
    return ran.status().with_context("gate " + std::to_string(started->seq) +
                                     " stopped without a verdict (run 'gate' again)");
  }

  GateOutcome o;
  o.gate_seq = started->seq;
  o.result = gate::grade(spec, ran->facts, ran->not_run);
  std::vector<EventDraft> drafts;
  for (const auto& p : o.result.properties) {
    drafts.push_back(ev::attempt_draft(
        ev::GateProperty{s.id, o.gate_seq, std::string(gate::property_name(p.property)),
                         std::string(gate::outcome_name(p.status)), p.reason,
                         std::vector<uint64_t>(p.cited.begin(), p.cited.end()), p.finding.check,
                         p.finding.description, p.finding.observed},
        "engine"));
  }
  drafts.push_back(ev::attempt_draft(
      ev::GateVerdict{s.id, o.gate_seq, std::string(gate::verdict_name(o.result.verdict)),
                      o.result.recovered, gate::result_json(o.result)},
      "engine"));
  const Phase next =
      o.result.verdict == gate::Verdict::kVerified ? Phase::kReceipt : Phase::kReflect;
  drafts.push_back(phase_event(s, Phase::kTransferGate, next));
  auto appended = ctx_.log->append_all(drafts);
  if (!appended.ok()) return appended.status();
  o.verdict_seq = (*appended)[drafts.size() - 2].seq;
  return o;
}

Result<ReceiptOutcome> AttemptEngine::receipt(std::string_view id, std::string_view learner) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  // A refusal says why there is no receipt: the verdict, when the gate gave one that is not
  // VERIFIED, before the phase the attempt is in.
  const std::string_view verified = gate::verdict_name(gate::Verdict::kVerified);
  if (!s.verdict.empty() && s.verdict != verified) {
    return Status::failed_precondition("attempt " + s.id + ": verdict " + s.verdict +
                                       "; receipts are issued only for VERIFIED");
  }
  if (!s.receipt_sha256.empty()) {
    return Status::failed_precondition("attempt " + s.id + " already has its receipt " +
                                       s.receipt_sha256);
  }
  AURA_RETURN_IF_ERROR(need_phase(s, "receipt", Phase::kReceipt));
  if (s.verdict != verified) {
    return Status::failed_precondition("attempt " + s.id +
                                       " has no verdict; receipts are "
                                       "issued only for VERIFIED");
  }
  if (ctx_.lab_signer == nullptr) return Status::unavailable("no lab signing key");
  ReceiptOutcome o;
  AURA_ASSIGN_OR_RETURN(o.receipt,
                        receipt::issue_receipt(*ctx_.log, s.id, *ctx_.lab_signer, *ctx_.blobs));
  BlobInfo blob;
  AURA_ASSIGN_OR_RETURN(blob, put_blob(*ctx_.blobs, o.receipt.envelope));
  const ev::ReceiptIssued issued{s.id,
                                 to_hex(o.receipt.envelope_sha256),
                                 o.receipt.first_seq,
                                 o.receipt.last_seq,
                                 o.receipt.checkpoint_size,
                                 one_ref("receipt", blob, "receipt.dsse")};
  auto appended = ctx_.log->append_all(std::vector<EventDraft>{
      ev::attempt_draft(issued, "engine"), phase_event(s, Phase::kReceipt, Phase::kReflect)});
  if (!appended.ok()) return appended.status();
  o.event_seq = appended->front().seq;
  return o;
}

// ---- the end ----

Status AttemptEngine::reflect(std::string_view id, std::string_view learner,
                              std::string_view text) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner, "reflect", Phase::kReflect));
  AURA_RETURN_IF_ERROR(learner_text("the reflection", text, false));
  AURA_RETURN_IF_ERROR(append(
      {ev::attempt_draft(ev::AttemptReflected{s.id, std::string(text)}, learner_actor(learner)),
       phase_event(s, Phase::kReflect, Phase::kDone)}));
  destroy_live(s);
  return Status::ok();
}

Status AttemptEngine::abandon(std::string_view id, std::string_view learner,
                              std::string_view reason) {
  return end_attempt(id, learner, reason, learner_actor(learner));
}

Status AttemptEngine::expire(std::string_view id, std::string_view reason) {
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, state(id));
  return end_attempt(id, s.learner, reason, "engine");
}

Status AttemptEngine::end_attempt(std::string_view id, std::string_view learner,
                                  std::string_view reason, const std::string& actor) {
  const AttemptLock lock = lock_attempt(id);
  AttemptState s;
  AURA_ASSIGN_OR_RETURN(s, load(id, learner));
  if (s.phase == Phase::kDone) return Status::failed_precondition("attempt " + s.id + " is done");
  AURA_RETURN_IF_ERROR(learner_text("the reason", reason, false));
  AURA_RETURN_IF_ERROR(
      append({ev::attempt_draft(ev::AttemptAbandoned{s.id, std::string(reason)}, actor),
              phase_event(s, s.phase, Phase::kDone)}));
  destroy_live(s);
  return Status::ok();
}

std::vector<std::string> AttemptEngine::held_attempts() const {
  std::vector<std::string> out;
  std::lock_guard held(held_mu_);
  out.reserve(held_.size());
  // Each is held by its live folder, WORLDS/<attempt>/live.
  for (const auto& [dir, h] : held_) out.push_back(fs::path(dir).parent_path().filename());
  return out;
}

Result<scenario::Manifest> attempt_manifest(const BlobStore& blobs, const AttemptState& s) {
  auto bytes = blobs.get(s.manifest.sha256);
  if (!bytes.ok()) return bytes.status().with_context("the attempt's manifest blob");
  auto m = scenario::parse_manifest(*bytes);
  if (!m.ok()) return m.status().with_context("the attempt's manifest blob");
  return m;
}

}  // namespace aura::attempt
