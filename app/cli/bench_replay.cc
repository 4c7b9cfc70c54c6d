// `aura bench replay`: builds a log of N attempts' worth of events (docs/ATTEMPTS.md), made by the
// lab's synthetic history generator (app/lab/synthetic_history.h) on a real scenario package, and
// measures rebuilding every lab projection from it against its peer measured in the same run (one
// raw read_range pass over the same events, no projecting), and issuing and verifying receipts
// (offline and with replay). Figures are printed, never asserted.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <iostream>
#include <span>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/lab/synthetic_history.h"
#include "engine/blob/blob_store.h"
#include "engine/common/json_writer.h"
#include "engine/events/attempt_events.h"
#include "engine/gate/grader.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/keys/key_store.h"
#include "engine/log/event_log.h"
#include "engine/receipt/receipt.h"
#include "engine/scenario/manifest.h"
#include "projections/lab/lab_projections.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// User + system CPU seconds of this process so far. On a shared machine the wall time of a
// single-threaded phase includes waiting for a core; its CPU time does not.
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         double(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::string hex64(uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

// The scenario every attempt works: a real package's manifest, its hypotheses and its judge gold
// IR (stored as blobs, so receipts issue and replay re-grades), graded by the package's checks.
Result<app::SyntheticScenario> load_scenario(const fs::path& dir, BlobStore& store) {
  app::SyntheticScenario s;
  s.dir = dir.string();
  auto bytes = read_small_file(dir / "manifest.json", 1 << 20);
  if (!bytes.ok()) return bytes.status().with_context("--scenario");
  auto m = scenario::parse_manifest(*bytes);
  if (!m.ok()) return m.status().with_context(dir.string() + "/manifest.json");
  const scenario::JudgeCase* gold = m->find_judge("gold");
  if (gold == nullptr) return Status::invalid(s.dir + ": the manifest has no judge gold case");
  s.id = m->id;
  s.version = m->version;
  s.family = m->family;
  s.title = m->title;
  s.publisher = "aura.publisher/bench";
  AURA_ASSIGN_OR_RETURN(s.manifest, app::store_blob(store, *bytes, "scenario.manifest"));
  s.probe_budget = m->probe_budget;
  for (const auto& h : m->hypotheses) s.hypotheses.push_back(h.id);
  s.expect = "web2 serves the release again";
  s.probe_calls = {gold->probe_calls_json.empty() ? R"({"call":"file.read","params":{"path":"/"}})"
                                                  : gold->probe_calls_json.front()};
  s.resolved = {"/fleet/host_vars/web2.conf"};
  intervention::IrContext context{&*m, {"ev-1", "ev-2", "ev-3"}};
  auto ir = intervention::parse_intervention(gold->ir_json, context);
  if (!ir.ok()) return ir.status().with_context(s.dir + ": the gold IR");
  for (const auto& a : ir->actions)
    if (!a.is_script) s.action_calls.push_back(scenario::call_json(a.call));
  for (const auto& a : ir->rollback)
    if (!a.is_script) s.rollback_calls.push_back(scenario::call_json(a.call));
  if (s.action_calls.empty() || s.rollback_calls.empty())
    return Status::invalid(s.dir + ": the gold IR has no call action or no call rollback");
  std::vector<std::string> promised = ir->postconditions;
  promised.insert(promised.end(), ir->invariants.begin(), ir->invariants.end());
  s.spec = gate::GateSpec::from(*m, promised);
  // Revisions 1 and 2 submit the same IR.
  EvidenceRef ir_ref;
  AURA_ASSIGN_OR_RETURN(ir_ref, app::store_blob(store, gold->ir_json, "intervention.ir"));
  s.irs = {ir_ref};
  AURA_RETURN_IF_ERROR(app::add_package(s, store, 16));
  return s;
}

// What attempt n does: about half VERIFIED, 30% RECOVERED_UNPROVEN, 20% NOT_RECOVERED; every
// tenth in judge mode; a seventh of those not held authorise a script instead of revising their
// contract. Held attempts stop after a VERIFIED gate, for a real receipt.
app::SyntheticAttempt plan_of(uint64_t n, bool hold) {
  app::SyntheticAttempt p;
  p.id = hex64(splitmix64(n) | 1);
  p.learner = "l" + std::to_string(n % 500);
  p.mode = n % 10 == 9 ? "judge" : "learn";
  p.seed = splitmix64(n + 17);
  const uint64_t r = splitmix64(n ^ 0x5eed);
  p.verdict =
      hold || r % 10 < 5 ? "VERIFIED" : (r % 10 < 8 ? "RECOVERED_UNPROVEN" : "NOT_RECOVERED");
  p.probes = 3;
  p.truncated_probe = 3;
  p.script = !hold && r % 7 == 0;
  p.second_revision = !p.script;
  p.hold_for_receipt = hold;
  p.variant = size_t(n);
  p.confidence = 40 + n % 60;
  return p;
}

// Appends the registry, a capability panel and `attempts` attempts, kInterleave at a time, in
// big append_all calls. Every `hold_every`-th attempt (0: none) stops at phase receipt and is
// returned in `held`.
Status build_log(EventLog& log, const app::SyntheticScenario& sc, uint64_t attempts,
                 uint64_t hold_every, std::vector<app::AttemptHistory>& held,
                 const std::function<void(uint64_t)>& progress) {
  constexpr size_t kInterleave = 8;
  constexpr size_t kBatchEvents = 4096;
  std::vector<EventDraft> batch;
  uint64_t next_seq = log.head().seq + 1;
  auto flush = [&]() -> Status {
    if (batch.empty()) return Status::ok();
    auto r = log.append_all(batch);
    if (!r.ok()) return r.status();
    if (r->front().seq != next_seq - batch.size()) {
      return Status::failed_precondition("bench replay: another process appended to the log");
    }
    batch.clear();
    return Status::ok();
  };
  batch.push_back(app::scenario_loaded(sc));
  batch.push_back(app::scenario_rejected("scenarios/broken", "package.sig.json: bad signature"));
  batch.push_back(app::capabilities_measured(
      std::string(events::kCapabilityStream),
      {"bench",
       sc.kernel_release,
       {{"ns_user", true, "unshared"}, {"cgroup_v2", true, "mounted"}}}));
  next_seq += batch.size();

  uint64_t started = 0, finished = 0;
  AURA_RETURN_IF_ERROR(app::interleave(
      sc, kInterleave,
      [&]() -> std::optional<app::SyntheticAttempt> {
        if (started == attempts) return std::nullopt;
        const bool hold = hold_every != 0 && started % hold_every == 0;
        return plan_of(started++, hold);
      },
      next_seq,
      [&](std::vector<EventDraft>&& command) -> Status {
        for (EventDraft& d : command) batch.push_back(std::move(d));
        return batch.size() >= kBatchEvents ? flush() : Status::ok();
      },
      [&](app::AttemptHistory&& done) {
        if (done.awaiting_receipt()) held.push_back(std::move(done));
        if (++finished % 5000 == 0) progress(finished);
      }));
  return flush();
}

struct ReceiptFigures {
  uint64_t issued = 0, events = 0, replayed = 0;  // events: bound by all the receipts
  double issue_s = 0, verify_s = 0, verify_cpu = 0, replay_s = 0;
  double events_replay_s = 0;  // the same receipts replayed by their own events (the lab's)
  std::string failure;
};

int bench_replay(Invocation& inv) {
  auto attempts = inv.get_u64("attempts", 100000);
  if (!attempts.ok()) return inv.fail(attempts.status(), 2);
  if (*attempts == 0 || *attempts > 10000000) {
    return inv.fail(Status::invalid("--attempts: must be 1..10000000"), 2);
  }
  auto receipts = inv.get_u64("receipts", 1000);
  if (!receipts.ok()) return inv.fail(receipts.status(), 2);
  auto replays = inv.get_u64("replays", 3);
  if (!replays.ok()) return inv.fail(replays.status(), 2);
  const bool keep = inv.has("keep");
  auto bench_dir = make_bench_root(inv, "/tmp/aura-bench-replay-XXXXXX");
  if (!bench_dir.ok()) return inv.fail(bench_dir.status());
  const fs::path root = *bench_dir;
  auto fail = [&](const Status& s) {
    if (!keep) fs::remove_all(root);
    return inv.fail(s);
  };
  auto say = [&](const std::string& s) {
    if (!inv.json) std::cerr << s << std::endl;
  };

  auto keys = KeyStore::init(root / "keys");
  if (!keys.ok()) return fail(keys.status());
  auto store = BlobStore::open(root / "data" / "blobs");
  if (!store.ok()) return fail(store.status());
  auto sc = load_scenario(inv.has("scenario") ? fs::path(inv.get("scenario"))
                                              : app::default_scenarios_dir() / "t0-config-drift",
                          *store);
  if (!sc.ok()) return fail(sc.status());
  const NoteVerifierKey pinned = keys->lab_verifier();

  // 1. The log, and real receipts for a sample of VERIFIED attempts.
  double build_s = 0;
  ReceiptFigures rf;
  std::vector<std::string> envelopes;
  {
    EventLog::Options lo;
    lo.signer = &keys->lab_signer();
    lo.blobs = &*store;
    auto log = EventLog::open(root / "data" / "log", lo);
    if (!log.ok()) return fail(log.status());
    say("appending " + std::to_string(*attempts) + " attempts ...");
    const uint64_t hold_every =
        *receipts == 0 ? 0 : std::max<uint64_t>(1, *attempts / std::min(*receipts, *attempts));
    std::vector<app::AttemptHistory> held;
    const auto t0 = Clock::now();
    Status s = build_log(**log, *sc, *attempts, hold_every, held, [&](uint64_t done) {
      if (!inv.json) std::cerr << "\r  " << done << " attempts" << std::flush;
    });
    if (!inv.json) std::cerr << "\n";
    if (!s.is_ok()) return fail(s);
    build_s = seconds_since(t0);

    say("issuing " + std::to_string(held.size()) + " receipts ...");
    std::vector<EventDraft> after;
    const auto i0 = Clock::now();
    for (const app::AttemptHistory& a : held) {
      const std::string& id = a.plan().id;
      auto r = receipt::issue_receipt(**log, id, keys->lab_signer(), *store);
      if (!r.ok()) return fail(r.status().with_context("issue_receipt " + id));
      auto blob = app::store_blob(*store, r->envelope, "receipt.dsse");
      if (!blob.ok()) return fail(blob.status());
      blob->id = "receipt";
      const events::ReceiptIssued issued{id,          to_hex(r->envelope_sha256), r->first_seq,
                                         r->last_seq, r->checkpoint_size,         {*blob}};
      for (EventDraft& d : a.after_receipt(issued)) after.push_back(std::move(d));
      envelopes.push_back(std::move(r->envelope));
    }
    rf.issue_s = seconds_since(i0);
    rf.issued = envelopes.size();
    // How many events the receipts bind (their attempts' events up to the verdict).
    for (const app::AttemptHistory& a : held) {
      Status c = (*log)->read_stream("attempt/" + a.plan().id, 1, [&](const EventView& e) {
        if (e.type == events::kReceiptIssued) return false;
        ++rf.events;
        return true;
      });
      if (!c.is_ok()) return fail(c);
    }
    for (size_t i = 0; i < after.size(); i += 1024) {
      std::span<const EventDraft> part(after.data() + i, std::min<size_t>(1024, after.size() - i));
      if (auto r = (*log)->append_all(part); !r.ok()) return fail(r.status());
    }
  }

  // Measured on a read-only open, as the CLI's projection and receipt commands open the log.
  EventLog::Options ro;
  ro.read_only = true;
  auto log = EventLog::open(root / "data" / "log", ro);
  if (!log.ok()) return fail(log.status());
  const uint64_t events = (*log)->head().seq;

  // 2. The peer: one raw pass over the same events, no projecting.
  say("raw read of " + std::to_string(events) + " events ...");
  uint64_t payload_bytes = 0, read_events = 0;
  const double read_cpu0 = cpu_seconds();
  const auto r0 = Clock::now();
  Status rs = (*log)->read_range(1, events, [&](const EventView& e) {
    payload_bytes += e.payload.size();
    ++read_events;
    return true;
  });
  const double read_s = seconds_since(r0);
  const double read_cpu = cpu_seconds() - read_cpu0;
  if (!rs.is_ok()) return fail(rs);

  // 3. Rebuild every projection.
  say("rebuilding the projections ...");
  auto proj = lab::LabProjections::open(**log, lab::LabProjections::file_in(root / "data"));
  if (!proj.ok()) return fail(proj.status());
  const double rebuild_cpu0 = cpu_seconds();
  const auto p0 = Clock::now();
  auto reports = (*proj)->rebuild_all();
  const double rebuild_s = seconds_since(p0);
  const double rebuild_cpu = cpu_seconds() - rebuild_cpu0;
  if (!reports.ok()) return fail(reports.status());
  if (Status s = (*proj)->serve_check_all(); !s.is_ok()) return fail(s);

  // 4. Receipts: every one offline; a few with replay (each replay verifies the whole log).
  if (!envelopes.empty()) {
    say("verifying " + std::to_string(envelopes.size()) + " receipts, " +
        std::to_string(std::min<uint64_t>(*replays, envelopes.size())) + " with replay ...");
    const double c0 = cpu_seconds();
    const auto v0 = Clock::now();
    for (const std::string& e : envelopes) {
      receipt::ReceiptReport r = receipt::verify_receipt(e, pinned);
      if (!r.ok() && rf.failure.empty()) {
        rf.failure =
            r.failures.empty() ? "no check ran" : r.failures[0].field + ": " + r.failures[0].what;
      }
    }
    rf.verify_s = seconds_since(v0);
    rf.verify_cpu = cpu_seconds() - c0;
    const auto x0 = Clock::now();
    for (size_t i = 0; i < envelopes.size() && i < *replays; ++i) {
      receipt::ReceiptReport r =
          receipt::verify_receipt(envelopes[i], pinned, receipt::ReplayContext{&**log, &*store});
      if (!r.ok() && rf.failure.empty()) {
        rf.failure =
            r.failures.empty() ? "no check ran" : r.failures[0].field + ": " + r.failures[0].what;
      }
      ++rf.replayed;
    }
    rf.replay_s = seconds_since(x0);
    // The lab's per-request replay: the receipt's own events, each proven into the log's tree.
    const auto y0 = Clock::now();
    for (size_t i = 0; i < envelopes.size() && i < *replays; ++i) {
      receipt::ReceiptReport r = receipt::verify_receipt(
          envelopes[i], pinned, receipt::ReplayContext{&**log, &*store, /*whole_log=*/false});
      if (!r.ok() && rf.failure.empty()) {
        rf.failure =
            r.failures.empty() ? "no check ran" : r.failures[0].field + ": " + r.failures[0].what;
      }
    }
    rf.events_replay_s = seconds_since(y0);
    if (!rf.failure.empty())
      return fail(Status::corruption("a bench receipt failed: " + rf.failure));
  }

  const double rebuild_eps = double(events) / rebuild_s;
  const double read_eps = double(read_events) / read_s;
  std::printf("aura bench replay: %llu attempts, %llu events (%.0f bytes of payload each)\n",
              (unsigned long long)*attempts, (unsigned long long)events,
              double(payload_bytes) / double(std::max<uint64_t>(1, read_events)));
  std::printf("  %-42s %12s %13s\n", "phase", "events/s", "per CPU s");
  std::printf("  %-42s %12.0f %13s  (%.1f s)\n", "build the log (append_all, 4096 per call)",
              double(events) / build_s, "", build_s);
  std::printf("  %-42s %12.0f %13.0f  (%.2f s, %.2f CPU s)\n",
              "raw read_range, no projecting (peer)", read_eps, double(events) / read_cpu, read_s,
              read_cpu);
  std::printf("  %-42s %12.0f %13.0f  (%.2f s, %.2f CPU s)\n", "rebuild all projections",
              rebuild_eps, double(events) / rebuild_cpu, rebuild_s, rebuild_cpu);
  std::printf("  rebuild as a share of the raw read: %.0f%% (wall), %.0f%% (CPU)\n",
              100.0 * rebuild_eps / read_eps, 100.0 * read_cpu / rebuild_cpu);
  JsonArray items;
  for (const auto& r : *reports) {
    std::string counts;
    JsonWriter rows;
    for (const auto& [table, n] : r.rows) {
      counts += " " + table + "=" + std::to_string(n);
      rows.num(table, n);
    }
    std::printf("    %-14s rows:%s\n", r.name.c_str(), counts.c_str());
    items.raw(JsonWriter().str("name", r.name).raw("rows", rows.done()).done());
  }
  JsonWriter rj;
  rj.num("issued", rf.issued);
  if (rf.issued > 0) {
    const double verify_eps = double(rf.events) / rf.verify_s;
    std::printf("  receipts: %llu issued in %.2f s (%.1f ms each), %.0f events each\n",
                (unsigned long long)rf.issued, rf.issue_s, 1000 * rf.issue_s / double(rf.issued),
                double(rf.events) / double(rf.issued));
    std::printf("  %-42s %12.0f %13.0f  (%.1f receipts/s)\n", "receipt verify, offline (events)",
                verify_eps, double(rf.events) / rf.verify_cpu, double(rf.issued) / rf.verify_s);
    if (rf.replayed > 0) {
      std::printf("  %-42s %12.0f %13s  (%.2f s per receipt: verifies all %llu events)\n",
                  "receipt verify --replay (events of receipts)",
                  double(rf.events) / double(rf.issued) * double(rf.replayed) / rf.replay_s, "",
                  rf.replay_s / double(rf.replayed), (unsigned long long)events);
      std::printf("  %-42s %12s %13s  (%.2f ms per receipt: its own events only)\n",
                  "receipt replay by its events (the lab's)", "", "",
                  1000 * rf.events_replay_s / double(rf.replayed));
    }
    rj.real("issue_ms_each", 1000 * rf.issue_s / double(rf.issued))
        .real("verify_events_per_s", verify_eps)
        .real("verify_receipts_per_s", double(rf.issued) / rf.verify_s)
        .num("replayed", rf.replayed)
        .real("replay_seconds_each", rf.replayed ? rf.replay_s / double(rf.replayed) : 0)
        .real("events_replay_ms_each",
              rf.replayed ? 1000 * rf.events_replay_s / double(rf.replayed) : 0);
  }
  if (keep) {
    std::printf("  kept: --data %s --keys %s\n", (root / "data").c_str(), (root / "keys").c_str());
  }
  inv.emit_json(JsonWriter()
                    .num("attempts", *attempts)
                    .num("events", events)
                    .real("build_events_per_s", double(events) / build_s)
                    .real("raw_read_events_per_s", read_eps)
                    .real("raw_read_events_per_cpu_s", double(events) / read_cpu)
                    .real("rebuild_events_per_s", rebuild_eps)
                    .real("rebuild_events_per_cpu_s", double(events) / rebuild_cpu)
                    .real("rebuild_seconds", rebuild_s)
                    .raw("projections", items.done())
                    .raw("receipts", rj.done())
                    .done());
  proj->reset();
  log->reset();
  if (!keep) fs::remove_all(root);
  return 0;
}

}  // namespace

void register_bench_replay_commands(CommandTable& r) {
  r.add({"bench replay",
         "",
         "measure rebuilding every projection, and verifying receipts, on a large log",
         "Builds a log of N attempts (about 57 events each, following docs/ATTEMPTS.md) on the "
         "scenario\npackage in --scenario, in a temporary folder; issues real receipts for a "
         "sample of VERIFIED\nattempts; then times one raw read_range pass, a rebuild of every "
         "projection, and receipt\nverification offline and with replay. Figures are printed, "
         "never asserted; record them in\ndocs/PERFORMANCE.md with this command.",
         {{"attempts", "N", "attempts in the log (default 100000)"},
          {"receipts", "N", "receipts to issue and verify offline (default 1000)"},
          {"replays", "N", "of those, how many to verify with replay (default 3)"},
          {"scenario", "DIR", "the scenario package (default: the bundled t0-config-drift)"},
          {"keep", "DIR", "keep the log in DIR/data and its keys in DIR/keys"}},
         0,
         0,
         bench_replay});
}

}  // namespace aura::cli
