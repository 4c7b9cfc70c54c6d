// `aura bench replay`: builds a log of N attempts' worth of events (docs/ATTEMPTS.md) and
// measures rebuilding every lab projection from it, against its peer measured in the same run:
// one raw pass over the same events with read_range and no projecting. Figures are printed,
// never asserted.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "engine/blob/blob_store.h"
#include "engine/blob/evidence_ref.h"
#include "engine/cli/cli.h"
#include "engine/common/json_writer.h"
#include "engine/keys/key_store.h"
#include "engine/log/event_log.h"
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

// The few blobs every attempt's refs point at (reused, so the bench stays small on disk).
struct Blobs {
  std::vector<EvidenceRef> manifests, probe_outputs, irs, action_outputs, receipts;
};

Result<EvidenceRef> put_blob(BlobStore& store, const std::string& bytes, std::string kind) {
  auto info = store.put(as_bytes(bytes));
  if (!info.ok()) return info.status();
  return EvidenceRef{"x", info->sha256, std::move(kind), info->bytes};
}

Result<Blobs> make_blobs(BlobStore& store) {
  Blobs b;
  auto add = [&](std::vector<EvidenceRef>& into, int n, const std::string& kind,
                 size_t bytes) -> Status {
    for (int i = 0; i < n; ++i) {
      std::string content(bytes, ' ');
      for (size_t k = 0; k < content.size(); ++k) {
        content[k] = char('a' + splitmix64(k * 131 + uint64_t(i) * 7 + kind.size()) % 26);
      }
      auto r = put_blob(store, kind + " " + std::to_string(i) + "\n" + content, kind);
      if (!r.ok()) return r.status();
      into.push_back(*r);
    }
    return Status::ok();
  };
  AURA_RETURN_IF_ERROR(add(b.manifests, 3, "scenario.manifest", 6000));
  AURA_RETURN_IF_ERROR(add(b.probe_outputs, 16, "probe.output", 1500));
  AURA_RETURN_IF_ERROR(add(b.irs, 8, "intervention.ir", 900));
  AURA_RETURN_IF_ERROR(add(b.action_outputs, 4, "action.output", 300));
  AURA_RETURN_IF_ERROR(add(b.receipts, 2, "receipt.dsse", 9000));
  return b;
}

std::string ref_json(EvidenceRef ref, std::string id) {
  ref.id = std::move(id);
  return evidence_ref_json(ref);
}

constexpr const char* kScenarios[] = {"perm-drift", "disk-full", "dns-stale"};
constexpr const char* kProperties[] = {"primary", "twin", "control", "repeat", "reversal"};
constexpr const char* kCall = R"({"call":"file.stat","params":{"path":"/etc/app/config"}})";
constexpr const char* kAction =
    R"({"call":"file.chmod","params":{"mode":"0600","target":{"role":"secret"}}})";

// One attempt's events, produced one at a time so several attempts can interleave. `next`
// is told the seq its event will get (the writer is the only appender), so payloads can cite the
// seqs of earlier events as the engine's do.
class AttemptScript {
 public:
  AttemptScript(uint64_t n, const Blobs& blobs) : n_(n), blobs_(blobs) {
    id_ = hex64(splitmix64(n) | 1);
    stream_ = "attempt/" + id_;
    const uint64_t r = splitmix64(n ^ 0x5eed);
    verdict_ = r % 10 < 5 ? "VERIFIED" : (r % 10 < 8 ? "RECOVERED_UNPROVEN" : "NOT_RECOVERED");
    with_script_ = r % 7 == 0;
    scenario_ = size_t(n % 3);
  }

  bool done() const { return step_ >= total(); }

  EventDraft next(uint64_t seq) {
    EventDraft d = make(step_, seq);
    ++step_;
    return d;
  }

 private:
  // Steps: 0 started, 1-3 the prediction, 4-9 three probes, 10-12 the contract (a script
  // authorised, or a second revision), 13-22 apply to verify, 23-49 the gate (started, 20 facts,
  // 5 properties, verdict), then the receipt (VERIFIED only) and the reflection.
  int total() const { return kGateEnd + (verdict_ == "VERIFIED" ? 3 : 1) + 2; }
  static constexpr int kProbesEnd = 10, kScriptEnd = 12, kVerifyEnd = 23;
  static constexpr int kGateEnd = kVerifyEnd + 1 + 20 + 5 + 1;  // started, facts, props, verdict

  std::string head() const { return R"({"v":1,"attempt":")" + id_ + "\""; }
  EventDraft ev(const char* type, const char* actor, const std::string& members) const {
    return {stream_, type, actor, head() + members + "}"};
  }
  EventDraft phase(const char* from, const char* to) const {
    return ev("attempt.phase", "engine",
              std::string(R"(,"from":")") + from + R"(","to":")" + to + "\"");
  }
  std::string learner() const { return "learner:l" + std::to_string(n_ % 500); }

  EventDraft make(int s, uint64_t seq) {
    const std::string ir_hash = to_hex(blobs_.irs[n_ % blobs_.irs.size()].sha256);
    const std::string revision = with_script_ ? "1" : "2";
    const std::string script_hash = to_hex(blobs_.action_outputs[n_ % 4].sha256);
    if (s == 0) {
      const EvidenceRef& m = blobs_.manifests[scenario_];
      return {stream_, "attempt.started", learner(),
              head() + R"(,"learner":"l)" + std::to_string(n_ % 500) + R"(","mode":")" +
                  (n_ % 10 == 9 ? "judge" : "learn") + R"(","seed":)" +
                  std::to_string(splitmix64(n_ + 17)) + R"(,"scenario":{"id":")" +
                  kScenarios[scenario_] + R"(","version":"1.0.0","package_digest":")" +
                  to_hex(sha256(kScenarios[scenario_])) + R"(","manifest_sha256":")" +
                  to_hex(m.sha256) + R"(","publisher":"aura.lab/bench"},"probe_budget":10,)" +
                  R"("refs":[)" + ref_json(m, "manifest") + "]}"};
    }
    if (s == 1) return phase("observe", "predict");
    if (s == 2) {
      return {stream_, "attempt.predicted", learner(),
              head() + R"(,"hypothesis":"h)" + std::to_string(n_ % 4) +
                  R"(","expect":"the config file's mode drifted to 0644","confidence":)" +
                  std::to_string(40 + n_ % 60) + "}"};
    }
    if (s == 3) return phase("predict", "inspect");
    if (s < kProbesEnd) {
      const int probe = (s - 4) / 2 + 1;
      if ((s - 4) % 2 == 0) {
        return {stream_, "probe.requested", learner(),
                head() + R"(,"probe":)" + std::to_string(probe) + R"(,"call":)" + kCall +
                    R"(,"cost":1,"spent":)" + std::to_string(probe) + "}"};
      }
      const EvidenceRef& out = blobs_.probe_outputs[(n_ * 3 + probe) % 16];
      const std::string ev_id = "ev-" + std::to_string(probe);
      return ev("probe.completed", "supervisor",
                R"(,"probe":)" + std::to_string(probe) + R"(,"evidence":")" + ev_id +
                    R"(","exit_code":0,"truncated":)" + (probe == 3 ? "true" : "false") +
                    R"(,"error":"","resolved":["/etc/app/config"],"refs":[)" +
                    ref_json(out, ev_id) + "]");
    }
    if (s == kProbesEnd || (s == kScriptEnd && !with_script_)) {
      // Attempts without a script revise their contract once (revision 2) instead.
      const int revision = s == kProbesEnd ? 1 : 2;
      std::string scripts =
          with_script_ ? R"([{"sha256":")" + script_hash + R"(","status":"pending_feedback"}])"
                       : "[]";
      return {stream_, "intervention.submitted", learner(),
              head() + R"(,"revision":)" + std::to_string(revision) + R"(,"ir_sha256":")" +
                  ir_hash + R"(","scripts":)" + scripts + R"(,"refs":[)" +
                  ref_json(blobs_.irs[n_ % blobs_.irs.size()], "ir-" + std::to_string(revision)) +
                  "]}"};
    }
    if (s == kProbesEnd + 1) return phase("inspect", "contract");
    if (s == kScriptEnd) {
      return {stream_, "script.authorized", learner(),
              head() + R"(,"revision":1,"sha256":")" + script_hash + "\"}"};
    }
    switch (s) {
      case kScriptEnd + 1:
        return phase("contract", "apply");
      case kScriptEnd + 2:
        return ev("action.completed", "supervisor",
                  std::string(R"(,"world":"live","stage":"apply","index":0,"call":)") + kAction +
                      R"(,"exit_code":0,"error":"","resolved":["/etc/app/secret"],"refs":[)" +
                      ref_json(blobs_.action_outputs[n_ % 4], "act-1") + "]");
      case kScriptEnd + 3:
        return ev("apply.completed", "supervisor",
                  R"(,"revision":)" + revision + R"(,"actions":1,"failed":0)");
      case kScriptEnd + 4:
        return phase("apply", "ack");
      case kScriptEnd + 5:
        return {stream_, "attempt.acknowledged", learner(), head() + R"(,"note":""})"};
      case kScriptEnd + 6:
        return phase("ack", "verify");
      case kScriptEnd + 7:
      case kScriptEnd + 8:
        verify_facts_.push_back(seq);
        return ev("verify.fact", "supervisor",
                  std::string(R"(,"check":")") + (s == kScriptEnd + 7 ? "secret-mode" : "app-up") +
                      R"(","kind":"postcondition","ok":true,"observed":"0600")");
      case kScriptEnd + 9:
        return ev("attempt.verified", "engine",
                  R"(,"recovered":)" + std::string(verdict_ == "NOT_RECOVERED" ? "false" : "true") +
                      R"(,"facts":[)" + std::to_string(verify_facts_[0]) + "," +
                      std::to_string(verify_facts_[1]) + "]");
      case kScriptEnd + 10:
        return phase("verify", "transfer_gate");
      default:
        break;
    }
    if (s == kVerifyEnd) {
      gate_seq_ = seq;
      return ev("gate.started", "engine",
                R"(,"revision":)" + revision + R"(,"ir_sha256":")" + ir_hash +
                    R"(","stop_at_first_failure":false,"environment":{"kernel_release":"6.1.0",)"
                    R"("lab_build_digest":")" +
                    ir_hash + R"(","sandbox_profile_digest":")" + ir_hash +
                    R"(","capability_snapshot_digest":")" + ir_hash +
                    R"("},"capabilities":{"driver":"filetree","worlds":4})");
    }
    const int g = s - kVerifyEnd - 1;
    if (g < 20) {
      const int property = g / 4;
      facts_[property].push_back(seq);
      const bool ok = !(verdict_ != "VERIFIED" && property == 1 && g % 4 == 3);
      return ev("gate.fact", "supervisor",
                R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"property":")" +
                    kProperties[property] + R"(","world":")" +
                    (property == 1 ? "twin-1" : (property == 2 ? "control" : "primary")) +
                    R"(","stage":"after_apply","check":"secret-mode","ok":)" +
                    (ok ? "true" : "false") + R"(,"observed":"0600")");
    }
    if (g < 25) {
      const int property = g - 20;
      const bool pass = verdict_ == "VERIFIED" || property != 1;
      std::string cited;
      for (uint64_t f : facts_[property]) cited += (cited.empty() ? "" : ",") + std::to_string(f);
      return ev("gate.property", "engine",
                R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"property":")" +
                    kProperties[property] + R"(","status":")" + (pass ? "pass" : "fail") +
                    R"(","reason":")" + (pass ? "" : "check secret-mode failed at after_apply") +
                    R"(","cited":[)" + cited + "]");
    }
    if (g == 25) {
      const bool recovered = verdict_ != "NOT_RECOVERED";
      return ev("gate.verdict", "engine",
                R"(,"gate":)" + std::to_string(gate_seq_) + R"(,"verdict":")" + verdict_ +
                    R"(","recovered":)" + (recovered ? "true" : "false") +
                    R"(,"result":{"recovered":)" + (recovered ? "true" : "false") +
                    R"(,"verdict":")" + verdict_ + R"("})");
    }
    const int tail = s - kGateEnd;
    if (verdict_ == "VERIFIED") {
      if (tail == 0) return phase("transfer_gate", "receipt");
      if (tail == 1) {
        const EvidenceRef& r = blobs_.receipts[n_ % 2];
        return ev("receipt.issued", "engine",
                  R"(,"receipt_sha256":")" + to_hex(r.sha256) + R"(","first_seq":1,"last_seq":)" +
                      std::to_string(seq - 1) + R"(,"checkpoint_size":)" + std::to_string(seq - 1) +
                      R"(,"refs":[)" + ref_json(r, "receipt") + "]");
      }
      if (tail == 2) return phase("receipt", "reflect");
    } else if (tail == 0) {
      return phase("transfer_gate", "reflect");
    }
    if (total() - s == 2) {
      return {stream_, "attempt.reflected", learner(),
              head() + R"(,"text":"the twin had the same drift; the role target carried over"})"};
    }
    return phase("reflect", "done");
  }

  uint64_t n_;
  const Blobs& blobs_;
  std::string id_, stream_, verdict_;
  bool with_script_ = false;
  size_t scenario_ = 0;
  int step_ = 0;
  uint64_t gate_seq_ = 0;
  std::vector<uint64_t> verify_facts_;
  std::vector<uint64_t> facts_[5];
};

// Appends the registry and `attempts` attempts, `kInterleave` at a time, in big append_all calls.
Status build_log(EventLog& log, const Blobs& blobs, uint64_t attempts,
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
  for (size_t i = 0; i < 3; ++i) {
    const EvidenceRef& m = blobs.manifests[i];
    batch.push_back({"lab/scenarios", "scenario.loaded", "engine",
                     R"({"v":1,"dir":"scenarios/)" + std::string(kScenarios[i]) + R"(","id":")" +
                         kScenarios[i] +
                         R"(","version":"1.0.0","family":"files","title":"A bench scenario",)"
                         R"("package_digest":")" +
                         to_hex(sha256(kScenarios[i])) + R"(","manifest_sha256":")" +
                         to_hex(m.sha256) + R"(","publisher":"aura.lab/bench","refs":[)" +
                         ref_json(m, "manifest") + "]}"});
    ++next_seq;
  }
  batch.push_back(
      {"lab/scenarios", "scenario.rejected", "engine",
       R"({"v":1,"dir":"scenarios/broken","reason":"package.sig.json: bad signature"})"});
  ++next_seq;

  std::vector<std::unique_ptr<AttemptScript>> active;
  uint64_t started = 0, finished = 0;
  while (finished < attempts) {
    while (active.size() < kInterleave && started < attempts) {
      active.push_back(std::make_unique<AttemptScript>(started++, blobs));
    }
    for (size_t i = 0; i < active.size();) {
      batch.push_back(active[i]->next(next_seq++));
      if (active[i]->done()) {
        active.erase(active.begin() + long(i));
        ++finished;
        if (finished % 5000 == 0) progress(finished);
      } else {
        ++i;
      }
    }
    if (batch.size() >= kBatchEvents) AURA_RETURN_IF_ERROR(flush());
  }
  return flush();
}

int bench_replay(Invocation& inv) {
  auto attempts = inv.get_u64("attempts", 100000);
  if (!attempts.ok()) return inv.fail(attempts.status(), 2);
  if (*attempts == 0 || *attempts > 10000000) {
    return inv.fail(Status::invalid("--attempts: must be 1..10000000"), 2);
  }
  fs::path root;
  const bool keep = inv.has("keep");
  if (keep) {
    root = inv.get("keep");
    std::error_code ec;
    if (fs::exists(root / "data", ec) || fs::exists(root / "keys", ec)) {
      return inv.fail(Status::failed_precondition("--keep " + root.string() +
                                                  ": data or keys already exist there"));
    }
    fs::create_directories(root, ec);
    if (ec) return inv.fail(Status::io("--keep " + root.string() + ": " + ec.message()));
  } else {
    char tmpl[] = "/tmp/aura-bench-replay-XXXXXX";
    if (!mkdtemp(tmpl)) return inv.fail(Status::io("mkdtemp"));
    root = tmpl;
  }
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
  auto blobs = make_blobs(*store);
  if (!blobs.ok()) return fail(blobs.status());

  // 1. The log.
  double build_s = 0;
  {
    EventLog::Options lo;
    lo.signer = &keys->lab_signer();
    lo.blobs = &*store;
    auto log = EventLog::open(root / "data" / "log", lo);
    if (!log.ok()) return fail(log.status());
    say("appending " + std::to_string(*attempts) + " attempts ...");
    const auto t0 = Clock::now();
    Status s = build_log(**log, *blobs, *attempts, [&](uint64_t done) {
      if (!inv.json) std::cerr << "\r  " << done << " attempts" << std::flush;
    });
    if (!inv.json) std::cerr << "\n";
    if (!s.is_ok()) return fail(s);
    build_s = seconds_since(t0);
  }

  // Measured on a read-only open, as the CLI's projection commands open the log.
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

  // TODO(receipts): issue receipts for a sample of VERIFIED attempts with
  // receipt::issue_receipt and time receipt::verify_receipt with and without replay.

  const double rebuild_eps = double(events) / rebuild_s;
  const double read_eps = double(read_events) / read_s;
  std::printf("aura bench replay: %llu attempts, %llu events (%.0f bytes of payload each)\n",
              (unsigned long long)*attempts, (unsigned long long)events,
              double(payload_bytes) / double(std::max<uint64_t>(1, read_events)));
  std::printf("  %-40s %12s %14s\n", "phase", "events/s", "per CPU s");
  std::printf("  %-40s %12.0f %14s  (%.1f s)\n", "build the log (append_all, 4096 per call)",
              double(events) / build_s, "", build_s);
  std::printf("  %-40s %12.0f %14.0f  (%.2f s, %.2f CPU s)\n",
              "raw read_range, no projecting (peer)", read_eps, double(events) / read_cpu, read_s,
              read_cpu);
  std::printf("  %-40s %12.0f %14.0f  (%.2f s, %.2f CPU s)\n", "rebuild all projections",
              rebuild_eps, double(events) / rebuild_cpu, rebuild_s, rebuild_cpu);
  std::printf("  rebuild / raw read: %.0f%% (wall), %.0f%% (CPU)\n", 100.0 * rebuild_eps / read_eps,
              100.0 * read_cpu / rebuild_cpu);
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
  if (keep)
    std::printf("  kept: --data %s --keys %s\n", (root / "data").c_str(), (root / "keys").c_str());
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
                    .done());
  proj->reset();
  log->reset();
  if (!keep) fs::remove_all(root);
  return 0;
}

}  // namespace

void register_bench_replay_commands(Registry& r) {
  r.add({"bench replay",
         "",
         "measure rebuilding every projection against a raw read of the same log",
         "Builds a log of N attempts (about 53 events each, following docs/ATTEMPTS.md) in a "
         "temporary\nfolder, then times one raw read_range pass and a rebuild of every "
         "projection. Figures are\nprinted, never asserted; record them in docs/PERFORMANCE.md "
         "with this command.",
         {{"attempts", "N", "attempts in the log (default 100000)"},
          {"keep", "DIR", "keep the log in DIR/data and its keys in DIR/keys"}},
         0,
         0,
         bench_replay});
}

}  // namespace aura::cli
