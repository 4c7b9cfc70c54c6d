#include "engine/gate/gate_runner.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <span>
#include <thread>

#include "engine/blob/evidence_ref.h"
#include "engine/common/text.h"
#include "engine/crypto/sha256.h"
#include "engine/events/attempt_events.h"
#include "engine/events/gate_events.h"
#include "engine/events/world_events.h"
#include "engine/gate/change_set.h"
#include "engine/world/world_built.h"

namespace aura::gate {
namespace {

using scenario::WorldRole;

constexpr size_t kMaxErrorBytes = 1024;
constexpr size_t kMaxObservedBytes = 1024;
constexpr size_t kMaxResolved = 64;
constexpr size_t kMaxResolvedBytes = 256;

// One property's worlds and the events they produce, appended together by commit().
class PropertyRun {
 public:
  PropertyRun(const GateRunInput& in, Property p, BlobStore& blobs)
      : in_(in), property_(p), blobs_(blobs) {}
  ~PropertyRun() { release_worlds(); }
  // Destroys the property's worlds (its recorded events are kept for commit()).
  void release_worlds() {
    for (auto& w : worlds_) (void)in_.driver->destroy(std::move(w));
    worlds_.clear();
  }

  Result<world::World*> build(const std::string& world_id) {
    const auto dir = in_.work_dir / (std::string(property_name(property_)) + "-" + world_id);
    auto w = in_.driver->create(in_.package_dir, *in_.manifest, world_id, in_.seed, dir);
    if (!w.ok()) {
      return w.status().with_context("gate property " + std::string(property_name(property_)) +
                                     ": building world " + world_id);
    }
    (*w)->bind_attempt(in_.attempt_id);
    worlds_.push_back(std::move(w).value());
    if (!in_.package_sums.empty()) {
      auto record = worlds_.back()->build_record();
      if (!record.ok()) return record.status().with_context("gate: world " + world_id);
      events::WorldBuilt built;
      AURA_ASSIGN_OR_RETURN(built, world::world_built_event(in_.attempt_id, world_id, *record,
                                                            in_.package_sums, blobs_));
      built.gate = events::WorldBuilt::Gate{in_.gate_seq, std::string(property_name(property_))};
      drafts_.push_back(events::attempt_draft(built, "supervisor"));
    }
    return worlds_.back().get();
  }

  aura::Status apply(world::World& w, std::string_view stage,
                     const std::vector<intervention::Action>& actions) {
    const auto records = run_actions(w, actions);
    for (size_t i = 0; i < records.size(); ++i) {
      const ActionRecord& r = records[i];
      auto blob =
          blobs_.put(std::span(reinterpret_cast<const uint8_t*>(r.output.data()), r.output.size()));
      if (!blob.ok()) return blob.status().with_context("storing a gate action's output");
      events::GateAction action{action_members(r)};
      action.attempt = in_.attempt_id;
      action.gate = in_.gate_seq;
      action.property = property_name(property_);
      action.world = w.id();
      action.stage = stage;
      action.index = i;
      action.refs = {{"output", blob->sha256, "action.output", blob->bytes}};
      drafts_.push_back(events::attempt_draft(action, "supervisor"));
    }
    return aura::Status::ok();
  }

  aura::Status checks(world::World& w, Stage stage, WorldRole role) {
    for (const auto* c : required_checks(*in_.spec, role)) {
      const scenario::CheckSpec* spec = in_.manifest->find_check(c->id);
      if (spec == nullptr)
        return aura::Status::corruption("check " + c->id + " is not in the manifest");
      auto out = w.check(*spec);
      if (!out.ok()) {
        return out.status().with_context("gate property " + std::string(property_name(property_)) +
                                         ": check " + c->id + " on world " + w.id());
      }
      add_fact(w.id(), stage, c->id, out->ok, safe_text(out->observed, kMaxObservedBytes), "");
    }
    return aura::Status::ok();
  }

  aura::Status fingerprint(world::World& w, Stage stage) {
    auto fp = w.fingerprint();
    if (!fp.ok()) {
      return fp.status().with_context("gate property " + std::string(property_name(property_)) +
                                      ": fingerprint of world " + w.id());
    }
    add_fact(w.id(), stage, std::string(kFingerprintCheck), true, "", *fp);
    return aura::Status::ok();
  }

  // The world's change set, judged against the incident's change surface and stored as a blob
  // the fact refers to (a replay judges it again).
  aura::Status changes(world::World& w, Stage stage) {
    if (!in_.manifest->changes) return aura::Status::ok();
    auto text = w.changes();
    if (!text.ok()) {
      return text.status().with_context("gate property " + std::string(property_name(property_)) +
                                        ": change set of world " + w.id());
    }
    std::vector<Change> parsed;
    AURA_ASSIGN_OR_RETURN(parsed, parse_change_set(*text));
    const ChangeJudgement j = judge_changes(*in_.manifest->changes, parsed);
    auto blob = blobs_.put(std::span(reinterpret_cast<const uint8_t*>(text->data()), text->size()));
    if (!blob.ok()) return blob.status().with_context("storing a change set");
    add_fact(
        w.id(), stage, std::string(kChangesCheck), j.ok,
        safe_text(j.ok ? j.summary : j.observed, kMaxObservedBytes), j.fix_digest,
        {{std::string(kChangesRefId), blob->sha256, std::string(kChangesBlobKind), blob->bytes}});
    return aura::Status::ok();
  }

  // Appends the property's events in one batch; returns its facts with their seqs.
  Result<std::vector<Fact>> commit(EventLog& log, GateRunOutput& out) {
    auto appended = log.append_all(drafts_);
    if (!appended.ok()) return appended.status().with_context("appending the gate's facts");
    std::vector<Fact> facts;
    for (auto& [index, fact] : facts_) {
      fact.seq = (*appended)[index].seq;
      facts.push_back(fact);
    }
    for (const auto& a : *appended) out.event_seqs.push_back(a.seq);
    return facts;
  }

 private:
  void add_fact(const std::string& world, Stage stage, const std::string& check, bool ok,
                const std::string& observed, const std::string& value,
                std::vector<EvidenceRef> refs = {}) {
    events::GateFact fact{in_.attempt_id,
                          in_.gate_seq,
                          std::string(property_name(property_)),
                          world,
                          std::string(stage_name(stage)),
                          check,
                          ok,
                          observed,
                          std::nullopt};
    if (!value.empty()) fact.value = value;
    fact.refs = std::move(refs);
    Fact f;
    f.property = property_;
    f.world = world;
    f.stage = stage;
    f.check = check;
    f.ok = ok;
    f.value = value;
    f.observed = observed;
    facts_.emplace_back(drafts_.size(), std::move(f));
    drafts_.push_back(events::attempt_draft(fact, "supervisor"));
  }

  const GateRunInput& in_;
  Property property_;
  BlobStore& blobs_;
  std::vector<std::unique_ptr<world::World>> worlds_;
  std::vector<EventDraft> drafts_;
  std::vector<std::pair<size_t, Fact>> facts_;  // index into drafts_, fact
};

// Builds and runs one property's worlds, recording into `run`.
aura::Status run_property(const GateRunInput& in, Property p, PropertyRun& run) {
  const auto& actions = in.ir->actions;
  const std::string& primary = in.spec->primary_world;
  switch (p) {
    case Property::kPrimary: {
      world::World* w = nullptr;
      AURA_ASSIGN_OR_RETURN(w, run.build(primary));
      AURA_RETURN_IF_ERROR(run.apply(*w, "apply", actions));
      AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kAfterApply));
      return run.checks(*w, Stage::kAfterApply, WorldRole::kPrimary);
    }
    case Property::kTwin:
      for (const auto& id : in.spec->twin_worlds) {
        world::World* w = nullptr;
        AURA_ASSIGN_OR_RETURN(w, run.build(id));
        AURA_RETURN_IF_ERROR(run.apply(*w, "apply", actions));
        AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kAfterApply));
        AURA_RETURN_IF_ERROR(run.checks(*w, Stage::kAfterApply, WorldRole::kTwin));
      }
      return aura::Status::ok();
    case Property::kControl: {
      world::World* w = nullptr;
      AURA_ASSIGN_OR_RETURN(w, run.build(in.spec->control_world));
      AURA_RETURN_IF_ERROR(run.apply(*w, "apply", actions));
      AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kAfterApply));
      return run.checks(*w, Stage::kAfterApply, WorldRole::kControl);
    }
    case Property::kRepeat: {
      world::World* w = nullptr;
      AURA_ASSIGN_OR_RETURN(w, run.build(primary));
      AURA_RETURN_IF_ERROR(run.apply(*w, "apply", actions));
      AURA_RETURN_IF_ERROR(run.fingerprint(*w, Stage::kAfterApply));
      AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kAfterApply));
      AURA_RETURN_IF_ERROR(run.apply(*w, "repeat", actions));
      AURA_RETURN_IF_ERROR(run.fingerprint(*w, Stage::kAfterRepeat));
      AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kAfterRepeat));
      return run.checks(*w, Stage::kAfterRepeat, WorldRole::kPrimary);
    }
    case Property::kReversal: {
      world::World* w = nullptr;
      AURA_ASSIGN_OR_RETURN(w, run.build(primary));
      AURA_RETURN_IF_ERROR(run.fingerprint(*w, Stage::kBefore));
      AURA_RETURN_IF_ERROR(run.changes(*w, Stage::kBefore));
      AURA_RETURN_IF_ERROR(run.apply(*w, "apply", actions));
      w->begin_rollback();
      AURA_RETURN_IF_ERROR(run.apply(*w, "rollback", in.ir->rollback));
      AURA_RETURN_IF_ERROR(run.fingerprint(*w, Stage::kAfterRollback));
      return run.changes(*w, Stage::kAfterRollback);
    }
  }
  return aura::Status::invalid("unknown gate property");
}

}  // namespace

ActionRecord run_action(world::World& world, const intervention::Action& action) {
  ActionRecord r;
  Result<world::CallOutput> out = aura::Status::unavailable("not run");
  if (action.is_script) {
    r.script_sha256 = to_hex(action.script_sha256);
    out = world.run_script(action.script_target, action.script);
  } else {
    r.call_json = scenario::call_json(action.call);
    out = world.act(action.call);
  }
  if (!out.ok()) {
    r.exit_code = -1;
    r.host_failure = true;
    r.error = safe_text(out.status().message(), kMaxErrorBytes);
    return r;
  }
  r.exit_code = out->exit_code;
  r.error = safe_text(out->error, kMaxErrorBytes);
  for (size_t i = 0; i < out->resolved.size() && i < kMaxResolved; ++i)
    r.resolved.push_back(safe_text(out->resolved[i], kMaxResolvedBytes));
  r.output = std::move(out->output);
  r.truncated = out->truncated;
  return r;
}

std::vector<ActionRecord> run_actions(world::World& world,
                                      const std::vector<intervention::Action>& actions) {
  std::vector<ActionRecord> records;
  for (const auto& a : actions) {
    records.push_back(run_action(world, a));
    if (records.back().host_failure) break;
  }
  return records;
}

events::ActionMembers action_members(const ActionRecord& r) {
  events::ActionMembers m;
  if (r.script_sha256.empty()) {
    m.call = r.call_json;
  } else {
    m.script_sha256 = r.script_sha256;
  }
  m.exit_code = r.exit_code;
  m.error = r.error;
  m.truncated = r.truncated;
  m.resolved = r.resolved;
  return m;
}

namespace {

// Every property at once on up to in.parallel threads (each its own worlds, destroyed as soon as
// it is done), then committed and graded in kProperties order: the log holds the same events in
// the same order as a serial run, and the first error in that order is the one returned.
Result<GateRunOutput> run_gate_parallel(const GateRunInput& in, EventLog& log, BlobStore& blobs) {
  struct Slot {
    std::unique_ptr<PropertyRun> run;
    aura::Status status = aura::Status::ok();
  };
  std::vector<Slot> slots(std::size(kProperties));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < std::size(kProperties); i = next++) {
      slots[i].run = std::make_unique<PropertyRun>(in, kProperties[i], blobs);
      slots[i].status = run_property(in, kProperties[i], *slots[i].run);
      slots[i].run->release_worlds();
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::min<size_t>(in.parallel, std::size(kProperties)); ++t)
    threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  GateRunOutput out;
  std::vector<Fact> all;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (!slots[i].status.is_ok()) return slots[i].status;
    std::vector<Fact> facts;
    AURA_ASSIGN_OR_RETURN(facts, slots[i].run->commit(log, out));
    all.insert(all.end(), facts.begin(), facts.end());
    out.facts.insert(out.facts.end(), facts.begin(), facts.end());
    if (in.progress)
      in.progress(kProperties[i], grade(*in.spec, all).properties[size_t(kProperties[i])].status);
  }
  return out;
}

}  // namespace

Result<GateRunOutput> run_gate(const GateRunInput& in, EventLog& log, BlobStore& blobs) {
  if (in.manifest == nullptr || in.driver == nullptr || in.ir == nullptr || in.spec == nullptr) {
    return aura::Status::invalid("run_gate: manifest, driver, IR and spec are required");
  }
  if (!in.stop_at_first_failure && in.parallel > 1 && in.driver->concurrent_worlds())
    return run_gate_parallel(in, log, blobs);
  GateRunOutput out;
  std::vector<Fact> all;
  bool stopped = false;
  for (Property p : kProperties) {
    if (stopped) {
      out.not_run.push_back(p);
      continue;
    }
    std::vector<Fact> facts;
    {
      PropertyRun run(in, p, blobs);
      aura::Status s = run_property(in, p, run);
      if (!s.is_ok()) return s;
      AURA_ASSIGN_OR_RETURN(facts, run.commit(log, out));
    }  // the property's worlds are destroyed here, before the next are built
    all.insert(all.end(), facts.begin(), facts.end());
    out.facts.insert(out.facts.end(), facts.begin(), facts.end());
    // Graded on this property's facts alone, exactly as the final grade will see them.
    const GateResult partial = grade(*in.spec, all);
    const Outcome status = partial.properties[size_t(p)].status;
    if (in.progress) in.progress(p, status);
    if (status != Outcome::kPass && in.stop_at_first_failure) stopped = true;
  }
  return out;
}

}  // namespace aura::gate
