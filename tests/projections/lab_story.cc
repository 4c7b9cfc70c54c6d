#include "tests/projections/lab_story.h"

#include <cstdio>
#include <functional>
#include <stdexcept>

#include "engine/blob/evidence_ref.h"
#include "engine/events/event_types.h"

namespace aura::testing {

namespace {

struct Blobs {
  EvidenceRef manifest, out1, out2, ir1, ir2, act, receipt;
};

EvidenceRef put(BlobStore& store, const std::string& bytes, std::string kind) {
  auto info = store.put(as_bytes(bytes));
  if (!info.ok()) throw std::runtime_error(info.status().message());
  return {"x", info->sha256, std::move(kind), info->bytes};
}

std::string ref(EvidenceRef r, const std::string& id) {
  r.id = id;
  return evidence_ref_json(r);
}

std::string hex(const Digest& d) { return to_hex(d); }

// One attempt's remaining commands; each command is one atomic append of one or more events.
class AttemptRun {
 public:
  AttemptRun(AttemptPlan plan, const Blobs& b) : p_(std::move(plan)), b_(b) {
    stream_ = "attempt/" + p_.id;
  }

  bool done() const { return finished_; }

  // The next command's events; `seq` is the seq its first event will get.
  std::vector<EventDraft> next(uint64_t seq) {
    std::vector<EventDraft> out;
    auto add = [&](const char* type, const std::string& actor, const std::string& members) {
      out.push_back({stream_, type, actor, R"({"v":1,"attempt":")" + p_.id + "\"" + members + "}"});
      return seq + out.size() - 1;
    };
    auto phase = [&](const std::string& from, const std::string& to) {
      add(events::kAttemptPhase, "engine", R"(,"from":")" + from + R"(","to":")" + to + "\"");
    };
    const std::string learner = "learner:" + p_.id.substr(12);
    const int s = step_++;
    if (s == 0) {
      started_ = seq;
      add(events::kAttemptStarted, learner,
          R"(,"learner":")" + p_.id.substr(12) + R"(","mode":")" + p_.mode +
              R"(","seed":18446744073709551557,"scenario":{"id":"perm-drift","version":"1.1.0",)"
              R"("package_digest":")" +
              hex(sha256("perm-drift 1.1.0")) + R"(","manifest_sha256":")" +
              hex(b_.manifest.sha256) + R"(","publisher":"aura.lab/test"},"probe_budget":5,)" +
              R"("refs":[)" + ref(b_.manifest, "manifest") + "]");
      return out;
    }
    if (s == 1) {
      phase("observe", "predict");
      add(events::kAttemptPredicted, learner,
          R"(,"hypothesis":"h2","expect":"mode 0644 \"drifted\"\nback","confidence":75)");
      phase("predict", "inspect");
      return out;
    }
    // Probes: request and completion are separate appends (learner, then supervisor).
    const int probe_steps = 2 * p_.probes;
    if (s < 2 + probe_steps) {
      const int k = (s - 2) / 2 + 1;
      if ((s - 2) % 2 == 0) {
        add(events::kProbeRequested, learner,
            R"(,"probe":)" + std::to_string(k) +
                R"(,"call":{"call":"file.stat","params":{"path":"/etc/app/f)" + std::to_string(k) +
                R"("}},"cost":2,"spent":)" + std::to_string(2 * k));
      } else if (p_.probe_without_output && k == 2) {
        add(events::kProbeCompleted, "supervisor",
            R"(,"probe":2,"evidence":"ev-2","exit_code":-1,"truncated":false,)"
            R"("error":"timed out","resolved":[])");
      } else {
        add(events::kProbeCompleted, "supervisor",
            R"(,"probe":)" + std::to_string(k) + R"(,"evidence":"ev-)" + std::to_string(k) +
                R"(","exit_code":0,"truncated":)" + (k == 1 ? "true" : "false") +
                R"(,"error":null,"resolved":["/etc/app/f1"],"refs":[)" +
                ref(k == 1 ? b_.out1 : b_.out2, "ev-" + std::to_string(k)) + "]");
      }
      return out;
    }
    const int c = s - 2 - probe_steps;  // contract onwards
    if (p_.verdict.empty()) {           // abandoned in inspect
      add(events::kAttemptAbandoned, learner, R"(,"reason":"out of time")");
      phase("inspect", "done");
      finished_ = true;
      return out;
    }
    const std::string script_sha = hex(b_.act.sha256);
    auto submit = [&](int revision) {
      const EvidenceRef& ir = revision == 1 ? b_.ir1 : b_.ir2;
      add(events::kInterventionSubmitted, learner,
          R"(,"revision":)" + std::to_string(revision) + R"(,"ir_sha256":")" + hex(ir.sha256) +
              R"(","scripts":)" +
              (p_.script ? R"([{"sha256":")" + script_sha + R"(","status":"pending_feedback"}])"
                         : std::string("[]")) +
              R"(,"refs":[)" + ref(ir, "ir-" + std::to_string(revision)) + "]");
    };
    const int revision = p_.second_revision ? 2 : 1;
    std::vector<std::function<void()>> commands = {
        [&] {
          submit(1);
          phase("inspect", "contract");
        },
    };
    if (p_.second_revision) commands.push_back([&] { submit(2); });
    if (p_.script) {
      commands.push_back([&] {
        add(events::kScriptAuthorized, learner,
            R"(,"revision":)" + std::to_string(revision) + R"(,"sha256":")" + script_sha + "\"");
      });
    }
    commands.push_back([&] {
      phase("contract", "apply");
      const std::string what =
          p_.mode == "judge"
              ? R"("script_sha256":")" + script_sha + "\""
              : std::string(R"("call":{"call":"file.chmod","params":{"mode":"0600"}})");
      add(events::kActionCompleted, "supervisor",
          R"(,"world":"live","stage":"apply","index":0,)" + what + R"(,"exit_code":)" +
              (p_.failed_action ? R"(1,"error":"permission denied")" : R"(0,"error":"")") +
              R"(,"resolved":["/etc/app/f1"],"refs":[)" + ref(b_.act, "act-1") + "]");
      add(events::kApplyCompleted, "supervisor",
          R"(,"revision":)" + std::to_string(revision) + R"(,"actions":1,"failed":)" +
              (p_.failed_action ? "1" : "0"));
      phase("apply", "ack");
    });
    commands.push_back([&] {
      add(events::kAttemptAcknowledged, learner, R"(,"note":"")");
      phase("ack", "verify");
    });
    commands.push_back([&] {
      const uint64_t f1 =
          add(events::kVerifyFact, "supervisor",
              R"(,"check":"mode","kind":"postcondition","ok":true,"observed":"0600")");
      const uint64_t f2 = add(events::kVerifyFact, "supervisor",
                              R"(,"check":"up","kind":"invariant","ok":true,"observed":"200")");
      add(events::kAttemptVerified, "engine",
          R"(,"recovered":)" + std::string(p_.verdict == "NOT_RECOVERED" ? "false" : "true") +
              R"(,"facts":[)" + std::to_string(f1) + "," + std::to_string(f2) + "]");
      phase("verify", "transfer_gate");
      if (p_.coach) {
        add(events::kCoachUsed, "engine",
            R"(,"call":1,"request_sha256":")" + script_sha + R"(","response_sha256":")" +
                script_sha + R"(","model":"none")");
      }
    });
    commands.push_back([&] {
      gate_ = add(events::kGateStarted, "engine",
                  R"(,"revision":)" + std::to_string(revision) + R"(,"ir_sha256":")" +
                      hex((revision == 1 ? b_.ir1 : b_.ir2).sha256) +
                      R"(","stop_at_first_failure":true,"environment":{"kernel_release":"6.1",)"
                      R"("lab_build_digest":")" +
                      script_sha + R"(","sandbox_profile_digest":")" + script_sha +
                      R"(","capability_snapshot_digest":")" + script_sha +
                      R"("},"capabilities":{"driver":"filetree"})");
    });
    static const char* kProps[] = {"primary", "twin", "control", "repeat", "reversal"};
    for (int prop = 0; prop < 5; ++prop) {
      commands.push_back([&, prop] {
        for (int f = 0; f < 2; ++f) {
          facts_[prop].push_back(add(events::kGateFact, "supervisor",
                                     R"(,"gate":)" + std::to_string(gate_) + R"(,"property":")" +
                                         kProps[prop] + R"(","world":"w)" + std::to_string(prop) +
                                         R"(","stage":"after_apply",)" +
                                         R"("check":"mode","ok":true,"observed":"0600")"));
        }
      });
    }
    commands.push_back([&] {
      for (int prop = 0; prop < 5; ++prop) {
        const bool pass = p_.verdict == "VERIFIED" || prop == 0;
        std::string cited;
        for (uint64_t f : facts_[prop]) cited += (cited.empty() ? "" : ",") + std::to_string(f);
        add(events::kGateProperty, "engine",
            R"(,"gate":)" + std::to_string(gate_) + R"(,"property":")" + kProps[prop] +
                R"(","status":")" + (pass ? "pass" : (prop == 1 ? "fail" : "not_run")) +
                R"(","reason":")" + (pass ? "" : (prop == 1 ? "check mode failed" : "not run")) +
                R"(","cited":[)" + cited + "]");
      }
      const bool recovered = p_.verdict != "NOT_RECOVERED";
      add(events::kGateVerdict, "engine",
          R"(,"gate":)" + std::to_string(gate_) + R"(,"verdict":")" + p_.verdict +
              R"(","recovered":)" + (recovered ? "true" : "false") + R"(,"result":{"verdict":")" +
              p_.verdict + R"("})");
      phase("transfer_gate", p_.verdict == "VERIFIED" ? "receipt" : "reflect");
    });
    if (p_.verdict == "VERIFIED") {
      commands.push_back([&] {
        add(events::kReceiptIssued, "engine",
            R"(,"receipt_sha256":")" + hex(b_.receipt.sha256) + R"(","first_seq":)" +
                std::to_string(started_) + R"(,"last_seq":)" + std::to_string(seq - 1) +
                R"(,"checkpoint_size":)" + std::to_string(seq - 1) + R"(,"refs":[)" +
                ref(b_.receipt, "receipt") + "]");
        phase("receipt", "reflect");
      });
    }
    commands.push_back([&] {
      add(events::kAttemptReflected, learner, R"(,"text":"twin drifted too")");
      phase("reflect", "done");
    });
    commands.at(size_t(c))();
    if (size_t(c) + 1 == commands.size()) finished_ = true;
    return out;
  }

 private:
  AttemptPlan p_;
  const Blobs& b_;
  std::string stream_;
  int step_ = 0;
  bool finished_ = false;
  uint64_t started_ = 0, gate_ = 0;
  std::vector<uint64_t> facts_[5];
};

std::string scenario_loaded(const std::string& dir, const std::string& id,
                            const std::string& version, const EvidenceRef& manifest) {
  return R"({"v":1,"dir":")" + dir + R"(","id":")" + id + R"(","version":")" + version +
         R"(","family":"files","title":"Permissions drift","package_digest":")" +
         hex(sha256(id + " " + version)) + R"(","manifest_sha256":")" + hex(manifest.sha256) +
         R"(","publisher":"aura.lab/test","refs":[)" + ref(manifest, "manifest") + "]}";
}

}  // namespace

uint64_t LabStory::find(std::string_view stream, std::string_view type, int nth) const {
  for (size_t i = 0; i < drafts.size(); ++i) {
    if (drafts[i].stream == stream && drafts[i].type == type && nth-- == 0) return i + 1;
  }
  throw std::runtime_error("no such event in the story");
}

LabStory make_lab_story(BlobStore& store, int rounds) {
  Blobs b;
  b.manifest = put(store, R"({"schema":1,"id":"perm-drift"})", "scenario.manifest");
  b.out1 = put(store, "-rw-r--r-- 1 root root 42 /etc/app/f1\n", "probe.output");
  b.out2 = put(store, "-rw------- 1 root root 42 /etc/app/f2\n", "probe.output");
  b.ir1 = put(store, R"({"ir":1})", "intervention.ir");
  b.ir2 = put(store, R"({"ir":2})", "intervention.ir");
  b.act = put(store, "mode changed\n", "action.output");
  b.receipt = put(store, R"({"payloadType":"receipt"})", "receipt.dsse");

  LabStory story;
  auto lab = [&](const char* type, const std::string& payload) {
    story.drafts.push_back({"lab/scenarios", type, "engine", payload});
  };
  lab(events::kScenarioLoaded,
      scenario_loaded("scenarios/perm", "perm-drift", "1.0.0", b.manifest));
  lab(events::kScenarioRejected,
      R"({"v":1,"dir":"scenarios/unsigned","reason":"package.sig.json: missing"})");
  lab(events::kScenarioLoaded, scenario_loaded("scenarios/disk", "disk-full", "2.0.0", b.manifest));
  // Events the projections must ignore: other streams.
  story.drafts.push_back({"log", "note.added", "operator", R"({"text":"hello"})"});
  story.drafts.push_back({"lab/other", events::kScenarioLoaded, "engine", R"({"anything":1})"});
  // Two capability measurements (docs/CAPABILITIES.md): the second finds nginx, which the first
  // lacked; a measurement in another stream is ignored.
  auto caps = [&](const char* stream, bool nginx) {
    story.drafts.push_back(
        {stream, events::kCapabilitiesMeasured, "supervisor",
         std::string(R"({"v":1,"host":"story","kernel_release":"6.1.0","capabilities":[)") +
             R"({"name":"ns_user","available":true,"reason":"unshared"},)" +
             R"({"name":"sched_ext","available":false,"reason":"no /sys/kernel/sched_ext"},)" +
             R"({"name":"tool_nginx","available":)" + (nginx ? "true" : "false") +
             R"(,"reason":")" + (nginx ? "nginx/1.22.1" : "not found on PATH") + R"("}]})"});
  };
  caps("lab/capabilities", false);
  caps("lab/other", true);
  caps("lab/capabilities", true);

  std::vector<AttemptRun> runs;
  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < 6; ++k) {
      AttemptPlan p;
      char id[17];
      std::snprintf(id, sizeof id, "%08x%08x", 0xa77e0000u + unsigned(r),
                    0xc0de0000u + unsigned(k));
      p.id = id;
      switch (k) {
        case 0:  // verified, script authorised, receipt
          p.verdict = "VERIFIED";
          p.script = true;
          p.coach = true;
          break;
        case 1:  // recovered but unproven; contract revised once
          p.verdict = "RECOVERED_UNPROVEN";
          p.second_revision = true;
          p.probes = 1;
          break;
        case 2:  // not recovered: the action failed; one probe had no output
          p.verdict = "NOT_RECOVERED";
          p.failed_action = true;
          p.probe_without_output = true;
          break;
        case 3:  // abandoned while inspecting
          p.probes = 1;
          break;
        case 4:  // judge mode with a script action, verified after a second revision
          p.mode = "judge";
          p.verdict = "VERIFIED";
          p.script = true;
          p.second_revision = true;
          break;
        default:
          p.verdict = "RECOVERED_UNPROVEN";
          break;
      }
      story.attempts.push_back(p);
      runs.emplace_back(p, b);
    }
  }
  // One command of each live attempt in turn.
  for (bool any = true; any;) {
    any = false;
    for (AttemptRun& run : runs) {
      if (run.done()) continue;
      any = true;
      for (EventDraft& d : run.next(story.drafts.size() + 1)) story.drafts.push_back(std::move(d));
    }
  }
  // The registry changes later: perm reloaded at a new version, disk rejected after a change.
  lab(events::kScenarioLoaded,
      scenario_loaded("scenarios/perm", "perm-drift", "1.1.0", b.manifest));
  lab(events::kScenarioRejected,
      R"({"v":1,"dir":"scenarios/disk","reason":"manifest.json: changed file"})");
  return story;
}

void append_story(EventLog& log, const LabStory& story, size_t from, size_t count, size_t group) {
  std::vector<EventDraft> batch;
  for (size_t i = from; i < from + count; ++i) {
    batch.push_back(story.drafts.at(i));
    if (batch.size() == group || i + 1 == from + count) {
      auto r = log.append_all(batch);
      if (!r.ok()) throw std::runtime_error("append_story: " + r.status().message());
      batch.clear();
    }
  }
}

}  // namespace aura::testing
