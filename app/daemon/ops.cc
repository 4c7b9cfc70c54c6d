// The daemon's operations (docs/formats/daemon-protocol.md, "Operations"): each reads its args
// strictly, checks the caller's credential itself, calls the lab's use cases and answers with
// an HTTP status and a JSON body or an API error.
#include <sys/stat.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "app/daemon/daemon_impl.h"
#include "app/lab/access.h"
#include "app/lab/capabilities.h"
#include "app/lab/folders.h"
#include "app/lab/operator_events.h"
#include "app/lab/scenario_registry.h"
#include "app/lab/views.h"
#include "app/rpc/frame.h"
#include "engine/attempt/attempt_state.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/sha256.h"
#include "engine/events/attempt_events.h"
#include "engine/events/event_types.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/log/snapshot.h"
#include "engine/merkle/merkle.h"
#include "engine/package/publisher_key.h"
#include "engine/receipt/receipt.h"
#include "engine/receipt/receipt_format.h"
#include "workers/supervisor/supervisor.h"

namespace aura::daemon {
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using lab::Cell;
using lab::Rows;
using rpc::api_error;
using rpc::ApiError;
using rpc::Reply;
using rpc::Request;

namespace {

constexpr size_t kMaxLearnerText = attempt::kMaxLearnerTextBytes;

Reply ok(std::string body, int status = 200) {
  Reply r;
  r.status = status;
  r.body_json = std::move(body);
  return r;
}

Reply fail(ApiError e) {
  Reply r;
  r.status = e.status;
  r.error = std::move(e);
  return r;
}

Reply fail(const Status& s) { return fail(rpc::api_error_from(s)); }

// An engine refusal: out of phase when the attempt's state says so.
Reply refused(const Status& s, const attempt::AttemptState* st) {
  ApiError e = rpc::api_error_from(s);
  if (s.code() == ErrorCode::kFailedPrecondition) {
    e.code = "out_of_phase";
    if (st) {
      e.phase = std::string(attempt::phase_name(st->phase));
      e.next = app::next_step(*st);
    }
  }
  return fail(e);
}

std::string text_of(const Cell* c) { return c && c->kind == Cell::Kind::kText ? c->s : ""; }
int64_t int_of(const Cell* c) { return c && c->kind == Cell::Kind::kInt ? c->i : 0; }

Status read_text_file(const fs::path& p, size_t max, std::string* out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return Status::not_found("cannot read " + p.string());
  std::string s(max + 1, '\0');
  in.read(s.data(), std::streamsize(s.size()));
  s.resize(size_t(in.gcount()));
  if (s.size() > max)
    return Status::invalid(p.string() + " is over " + std::to_string(max) + " bytes");
  *out = std::move(s);
  return Status::ok();
}

}  // namespace

bool Daemon::Impl::is_stream_op(std::string_view op) {
  return op == "attempt.events" || op == "judge.events";
}

namespace {

// ---- public reads ----

Reply op_health(Daemon::Impl& d) {
  return ok(JsonWriter()
                .str("status", "ok")
                .raw("daemon", JsonWriter()
                                   .num("pid", int64_t(::getpid()))
                                   .str("started_at", d.started_at)
                                   .str("version", "1")
                                   .done())
                .num("log_head", d.session->writer.log->head().seq)
                .done());
}

Reply op_capabilities(Daemon::Impl& d) {
  std::lock_guard lock(d.proj_mu);
  if (Status s = d.catch_up_locked(); !s.is_ok()) return fail(s);
  auto caps = d.projections->capabilities();
  auto labs = d.projections->labs();
  if (!caps.ok()) return fail(caps.status());
  if (!labs.ok()) return fail(labs.status());
  JsonArray lab_rows, cap_rows;
  int64_t measured = 0;
  for (size_t i = 0; i < caps->rows.size(); ++i) {
    measured = std::max(measured, int_of(caps->get(i, "seq")));
    cap_rows.raw(JsonWriter()
                     .str("id", text_of(caps->get(i, "name")))
                     .boolean("available", int_of(caps->get(i, "available")) != 0)
                     .str("detail", text_of(caps->get(i, "reason")))
                     .done());
  }
  for (size_t i = 0; i < labs->rows.size(); ++i) {
    lab_rows.raw(JsonWriter()
                     .str("scenario", text_of(labs->get(i, "lab")))
                     .str("title", text_of(labs->get(i, "title")))
                     .boolean("available", int_of(labs->get(i, "available")) != 0)
                     .str("reason", text_of(labs->get(i, "reason")))
                     .done());
  }
  return ok(JsonWriter()
                .num("measured_seq", measured)
                .raw("labs", lab_rows.done())
                .raw("capabilities", cap_rows.done())
                .done());
}

// Each lab on the capability panel: scenario id -> (available, why not).
using LabPanel = std::map<std::string, std::pair<bool, std::string>>;
Result<LabPanel> lab_panel(Daemon::Impl& d) {
  std::lock_guard lock(d.proj_mu);
  AURA_RETURN_IF_ERROR(d.catch_up_locked());
  auto labs = d.projections->labs();
  if (!labs.ok()) return labs.status();
  LabPanel out;
  for (size_t i = 0; i < labs->rows.size(); ++i) {
    out[text_of(labs->get(i, "lab"))] = {int_of(labs->get(i, "available")) != 0,
                                         text_of(labs->get(i, "reason"))};
  }
  return out;
}

// Refuses (503, naming why) a scenario whose lab the panel shows unavailable.
std::optional<Reply> unavailable_lab(Daemon::Impl& d, const std::string& scenario) {
  auto panel = lab_panel(d);
  if (!panel.ok()) return fail(panel.status());
  auto it = panel->find(scenario);
  if (it == panel->end() || it->second.first) return std::nullopt;
  return fail(api_error(503, "unavailable",
                        "lab " + scenario + " is unavailable here: " + it->second.second));
}

Reply op_scenarios_list(Daemon::Impl& d) {
  auto panel = lab_panel(d);
  if (!panel.ok()) return fail(panel.status());
  Result<Rows> rows = Rows{};
  {
    std::lock_guard lock(d.proj_mu);
    rows = d.projections->scenarios();
  }
  if (!rows.ok()) return fail(rows.status());
  JsonArray out;
  for (size_t i = 0; i < rows->rows.size(); ++i) {
    if (text_of(rows->get(i, "status")) != "loaded") continue;
    std::string id = text_of(rows->get(i, "id"));
    auto avail = panel->find(id);
    const bool listed = avail != panel->end();
    out.raw(JsonWriter()
                .str("id", id)
                .str("version", text_of(rows->get(i, "version")))
                .str("family", text_of(rows->get(i, "family")))
                .str("title", text_of(rows->get(i, "title")))
                .boolean("available", listed && avail->second.first)
                .str("reason", listed ? avail->second.second : "not on the capability panel")
                .done());
  }
  return ok(JsonWriter().raw("scenarios", out.done()).done());
}

Result<std::string> scenario_arg(const json::Object& a) {
  auto s = a.required_string("scenario", 128);
  if (!s.ok()) return s.status();
  return std::string(*s);
}

Reply op_scenarios_get(Daemon::Impl& d, const json::Object& a) {
  auto name = scenario_arg(a);
  if (!name.ok()) return fail(name.status());
  auto id = d.session->engine->scenario_named(*name);
  if (!id.ok()) return fail(id.status());
  auto m = d.session->engine->scenario_manifest(*id);
  if (!m.ok()) return fail(m.status());
  return ok(app::scenario_public_json(*m));
}

// ---- attempts ----

struct Authed {
  std::string attempt;
  attempt::AttemptState state;
};

// The attempt named in args, its token checked by the daemon itself.
Result<Authed> authed(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto id = a.required_string("attempt", 16);
  if (!id.ok()) return id.status();
  if (!attempt::is_valid_attempt_id(*id)) return a.error("attempt", "not an attempt id");
  // Root on the lab's machine (the CLI, SO_PEERCRED) reaches every attempt without its token.
  const bool as_root = r.peer_is_root && r.auth == rpc::AuthKind::kNone;
  if (r.auth != rpc::AuthKind::kToken && !as_root) {
    return Status(ErrorCode::kFailedPrecondition, "unauthorized: this attempt needs its token");
  }
  auto st = as_root ? d.attempts->state(*id) : d.attempts->open(*id, r.secret);
  if (!st.ok()) return st.status();
  Authed out;
  out.attempt = std::string(*id);
  out.state = std::move(st).value();
  return out;
}

Reply auth_failure(const Status& s) {
  if (s.code() == ErrorCode::kFailedPrecondition) {
    // No token: 401. A token that is not this attempt's (another's, a revoked one): 403.
    bool none = s.message().find("needs its token") != std::string::npos;
    return fail(
        none ? api_error(401, "unauthorized", "this attempt needs its token")
             : api_error(403, "forbidden", "the token presented does not open this attempt"));
  }
  // An unknown attempt reads as a wrong token: nobody learns which ids exist.
  if (s.code() == ErrorCode::kNotFound) {
    return fail(api_error(403, "forbidden", "the token presented does not open this attempt"));
  }
  return fail(s);
}

// Who a request comes from, for the per-client limits: the address the front saw ("client",
// which only the front sets: it builds every member it forwards), "" for the machine's root.
Result<std::string> client_arg(const Request& r, const json::Object& a) {
  auto c = a.optional_string("client", 64);
  if (!c.ok()) return c.status();
  if (*c) return std::string(**c);
  return r.peer_is_root ? std::string() : std::string("front");
}

Reply op_attempt_create(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto name = scenario_arg(a);
  if (!name.ok()) return fail(name.status());
  std::string learner = "learner";
  auto l = a.optional_string("learner", 32);
  if (!l.ok()) return fail(l.status());
  if (*l) learner = std::string(**l);
  auto client = client_arg(r, a);
  if (!client.ok()) return fail(client.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  if (!attempt::is_valid_learner(learner)) {
    ApiError e = api_error(400, "malformed", "learner must match [a-z][a-z0-9_-]{0,31}");
    e.path = "$.learner";
    return fail(e);
  }
  auto id = d.session->engine->scenario_named(*name);
  if (!id.ok()) return fail(id.status());
  if (auto refused = unavailable_lab(d, *id)) return *refused;
  // A place among the live attempts before any world is built.
  if (auto refused =
          d.live->reserve(*client, d.session->engine->held_attempts(), SteadyClock::now())) {
    ApiError e =
        api_error(refused->status, refused->status == 429 ? "too_many_requests" : "unavailable",
                  refused->message);
    e.retry_after_s = refused->retry_after_s;
    return fail(e);
  }
  attempt::StartRequest req;
  req.learner = learner;
  req.scenario_id = *id;
  req.mode = "learn";
  auto attempt_id = d.session->engine->start(req);
  if (!attempt_id.ok()) {
    d.live->unreserve(*client);
    return fail(attempt_id.status());
  }
  d.live->bind(*client, *attempt_id, SteadyClock::now());
  app::NewToken cap = app::new_token();
  if (Status s = app::grant_access(*d.session->writer.log, *attempt_id, cap.sha256); !s.is_ok()) {
    return fail(s);
  }
  auto st = d.session->engine->state(*attempt_id);
  return ok(JsonWriter()
                .str("attempt", *attempt_id)
                .str("token", cap.token)
                .str("phase", "observe")
                .str("next", st.ok() ? app::next_step(*st) : "")
                .done(),
            201);
}

Reply op_attempt_token(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  app::NewToken cap = app::new_token();
  if (Status s = app::grant_access(*d.session->writer.log, x->attempt, cap.sha256); !s.is_ok()) {
    return fail(s);
  }
  return ok(JsonWriter().str("token", cap.token).done());
}

// One body member that is a bounded string.
Result<std::string> text_member(const json::Object& o, std::string_view name, bool required) {
  if (!required && !o.has(name)) return std::string();
  auto s = o.required_string(name, kMaxLearnerText);
  if (!s.ok()) return s.status();
  return std::string(*s);
}

Reply run_gate(Daemon::Impl& d, const Authed& x) {
  // The gate takes minutes: it runs on the gate pool after the reply (now, or when a worker is
  // free); its progress is in the attempt's events.
  std::string id = x.attempt, learner = x.state.learner;
  // A client's share of the pool: its address (the machine's own attempts by learner name).
  const std::string client = d.live->client_of(id);
  const std::string holder = client.empty() ? "learner " + learner : "client " + client;
  auto place = d.gates->submit(holder, x.state.scenario_id, [&d, id, learner] {
    auto started = std::chrono::steady_clock::now();
    auto r = d.session->engine->gate(id, learner);
    d.metrics.gate(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    JsonWriter line;
    line.str("event", "gate").str("attempt", id).boolean("ok", r.ok());
    if (!r.ok()) line.str("error", r.status().message());
    d.log_line(line.done());
    d.live->touch(id, SteadyClock::now());
  });
  if (!place.ok()) {
    ApiError e = rpc::api_error_from(place.status());
    if (place.status().code() == ErrorCode::kBusy) e.retry_after_s = d.gates->retry_after_s();
    return fail(e);
  }
  JsonWriter j;
  j.str("attempt", id).str("gate", place->position == 0 ? "started" : "queued");
  j.num("queue_position", int64_t(place->position));
  if (place->expected_wait_s) j.real("expected_wait_s", *place->expected_wait_s);
  j.str("next", place->position == 0
                    ? "follow the gate on the attempt's event stream"
                    : "your gate is number " + std::to_string(place->position) +
                          " in the queue; it starts when a gate ahead of it ends (follow the "
                          "attempt's event stream)");
  return ok(j.done(), 202);
}

Reply op_attempt_command(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  auto command =
      a.required_enum("command", {"predict", "probe", "intervention", "authorize", "apply", "ack",
                                  "verify", "gate", "receipt", "reflect", "abandon", "reset"});
  if (!command.ok()) return fail(command.status());
  json::Object body;
  if (a.has("body")) {
    auto b = a.object("body");
    if (!b.ok()) return fail(b.status());
    body = std::move(b).value();
  }
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  attempt::AttemptEngine& e = *d.session->engine;
  const std::string& id = x->attempt;
  d.live->touch(id, SteadyClock::now());  // a command: its idle time starts again
  const std::string& learner = x->state.learner;
  const std::string_view cmd = *command;
  auto body_done = [&]() -> Status { return a.has("body") ? body.done() : Status::ok(); };
  // A refusal's phase and next step are the attempt's as the command left it: a refused ack
  // may have recorded a newer readback, which the next step must name.
  auto refused_now = [&](const Status& s) {
    auto now = e.state(id);
    return refused(s, now.ok() ? &*now : &x->state);
  };

  if (cmd == "predict") {
    auto h = body.required_string("hypothesis", 64);
    if (!h.ok()) return fail(h.status());
    auto expect = text_member(body, "expect", true);
    if (!expect.ok()) return fail(expect.status());
    auto conf = body.optional_u64("confidence");
    if (!conf.ok()) return fail(conf.status());
    if (conf->value_or(50) > 100) return fail(body.error("confidence", "must be 0..100"));
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    Status s = e.predict(id, learner, *h, *expect, uint32_t(conf->value_or(50)));
    if (!s.is_ok()) return refused_now(s);
    auto st = e.state(id);
    return ok(st.ok() ? app::attempt_view_json(*st) : "{}");
  }
  // What the supervisor read back of each action of the last apply (ack.readback).
  auto readback_json = [](const attempt::AckResult& r) {
    JsonArray lines;
    for (const auto& l : r.lines) {
      JsonArray diffs;
      for (const auto& df : l.readback.differences) diffs.str(df);
      lines.raw(JsonWriter()
                    .num("index", l.index)
                    .str("call", l.call)
                    .boolean("typed", l.readback.typed)
                    .str("observed", l.readback.observed)
                    .raw("differences", diffs.done())
                    .done());
    }
    return JsonWriter()
        .num("readback_seq", r.readback_seq)
        .boolean("as_requested", r.as_requested)
        .raw("lines", lines.done())
        .done();
  };
  if (cmd == "probe") {
    // The body is the call: {"call":NAME,"params":{...}}; the engine validates it whole.
    auto call = body.required_string("call", 64);
    if (!call.ok()) return fail(call.status());
    auto params = body.optional_object("params");
    if (!params.ok()) return fail(params.status());
    std::string call_json = JsonWriter()
                                .str("call", *call)
                                .raw("params", *params ? body.value("params")->minified() : "{}")
                                .done();
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    auto p = e.probe(id, learner, call_json);
    if (!p.ok()) return refused_now(p.status());
    return ok(JsonWriter()
                  .num("probe", p->probe)
                  .str("evidence", p->evidence)
                  .num("exit_code", p->exit_code)
                  .boolean("truncated", p->truncated)
                  .str("error", p->error)
                  .str("output", p->output)
                  .boolean("refused", p->refused)  // refused before reading: nothing spent
                  .num("cost", p->cost)
                  .num("spent", p->spent)
                  .num("budget", p->budget)
                  .done());
  }
  if (cmd == "intervention") {
    if (!a.has("body")) return fail(api_error(400, "malformed", "the InterventionIR is missing"));
    std::string ir = a.value("body")->minified();
    auto rev = e.submit(id, learner, ir);
    if (!rev.ok()) return refused_now(rev.status());
    auto st = e.state(id);
    return ok(
        JsonWriter().num("revision", *rev).str("next", st.ok() ? app::next_step(*st) : "").done());
  }
  if (cmd == "authorize") {
    auto sha = body.required_string("sha256", 64);
    if (!sha.ok()) return fail(sha.status());
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    Status s = e.authorize(id, learner, *sha);
    if (!s.is_ok()) return refused_now(s);
    return ok(JsonWriter().str("authorized", *sha).done());
  }
  if (cmd == "apply") {
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    auto ap = e.apply(id, learner);
    if (!ap.ok()) return refused_now(ap.status());
    JsonArray lines;
    for (const auto& l : ap->lines) lines.str(l);
    JsonWriter out;
    out.num("actions", ap->actions)
        .num("failed", ap->failed)
        .boolean("aborted", ap->aborted)
        .raw("lines", lines.done());
    // The readback to acknowledge next (ack names its readback_seq), or why there is none.
    if (ap->readback.readback_seq != 0) {
      out.raw("readback", readback_json(ap->readback));
    } else {
      out.str("readback_error", ap->readback_error);
    }
    return ok(out.done());
  }
  if (cmd == "ack") {
    auto note = text_member(body, "note", false);
    if (!note.ok()) return fail(note.status());
    // The readback the learner was shown (apply's answer names its seq); a stale one is refused.
    auto shown = body.optional_u64("readback_seq");
    if (!shown.ok()) return fail(shown.status());
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    attempt::AckResult res;
    Status s = e.ack(id, learner, *note, &res, *shown);
    if (!s.is_ok()) return refused_now(s);
    return ok(readback_json(res));
  }
  if (cmd == "verify") {
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    auto v = e.verify(id, learner);
    if (!v.ok()) return refused_now(v.status());
    JsonArray checks;
    for (const auto& [check, good] : v->checks) {
      checks.raw(JsonWriter().str("check", check).boolean("ok", good).done());
    }
    return ok(JsonWriter().boolean("recovered", v->recovered).raw("checks", checks.done()).done());
  }
  if (cmd == "gate") {
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    if (x->state.phase != attempt::Phase::kTransferGate) {
      return refused(Status::failed_precondition("attempt " + id + " is in phase " +
                                                 std::string(attempt::phase_name(x->state.phase)) +
                                                 "; 'gate' needs phase transfer_gate"),
                     &x->state);
    }
    return run_gate(d, *x);
  }
  if (cmd == "receipt") {
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    if (x->state.phase == attempt::Phase::kReflect && x->state.verdict != "VERIFIED") {
      ApiError err =
          api_error(409, "out_of_phase",
                    "verdict " + x->state.verdict + "; receipts are issued only for VERIFIED");
      err.phase = "reflect";
      err.next = app::next_step(x->state);
      return fail(err);
    }
    auto rc = e.receipt(id, learner);
    if (!rc.ok()) return refused_now(rc.status());
    return ok(JsonWriter()
                  .str("receipt_sha256", to_hex(rc->receipt.envelope_sha256))
                  .num("event_seq", rc->event_seq)
                  .done());
  }
  if (cmd == "reflect" || cmd == "abandon" || cmd == "reset") {
    const char* member = cmd == "reflect" ? "text" : "reason";
    auto text = text_member(body, member, cmd == "reflect");
    if (!text.ok()) return fail(text.status());
    if (Status s = body_done(); !s.is_ok()) return fail(s);
    if (cmd == "reset") {
      auto prev = e.reset(id, learner, *text);
      if (!prev.ok()) return refused_now(prev.status());
      return ok(JsonWriter().str("previous", *prev).done());
    }
    Status s = cmd == "reflect" ? e.reflect(id, learner, *text) : e.abandon(id, learner, *text);
    if (!s.is_ok()) return refused_now(s);
  }
  auto st = e.state(id);
  if (!st.ok()) return fail(st.status());
  return ok(app::attempt_view_json(*st));
}

Reply op_attempt_state(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  return ok(app::attempt_view_json(x->state));
}

Reply op_attempt_validate(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  auto ir = a.value("ir");
  if (!ir.ok()) return fail(ir.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  auto m = d.session->engine->scenario_manifest(x->state.scenario_id);
  if (!m.ok()) return fail(m.status());
  intervention::IrContext ctx{&*m, x->state.unlocked};
  auto parsed = intervention::parse_intervention(ir->minified(), ctx);
  if (parsed.ok()) return ok(R"({"ok":true,"errors":[]})");
  // The validator names the first problem: "<path>: <what>".
  const std::string msg = parsed.status().message();
  JsonWriter err;
  size_t colon = msg.find(": ");
  if (colon != std::string::npos && msg.find(' ') >= colon) {
    err.str("path", msg.substr(0, colon)).str("message", msg.substr(colon + 2));
  } else {
    err.str("path", "").str("message", msg);
  }
  return ok(JsonWriter().boolean("ok", false).raw("errors", "[" + err.done() + "]").done());
}

// The attempt's catalog: what its learner may call, name and cite, with the budget left
// (the same document `aura attempt catalog --json` prints).
Reply op_attempt_catalog(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  auto m = attempt::attempt_manifest(*d.session->writer.blobs, x->state);
  if (!m.ok()) return fail(m.status());
  return ok(app::attempt_catalog_json(*m, x->state));
}

Reply op_attempt_evidence(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  auto one = a.optional_string("evidence", 16);
  if (!one.ok()) return fail(one.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  if (*one && !x->state.unlocked.count(std::string(**one))) {
    return fail(api_error(404, "not_found", "no unlocked evidence " + std::string(**one)));
  }
  events::PayloadReader reader;
  JsonArray items;
  std::string item;
  std::map<uint64_t, std::string> calls;  // probe -> its call
  Status bad;
  Status s = d.session->writer.log->read_stream(
      attempt::stream_of(x->attempt), 0, [&](const EventView& e) {
        if (e.type == events::kProbeRequested) {
          auto p = events::ProbeRequested::decode(reader, e);
          if (p.ok()) calls[p->probe] = p->call;
          return true;
        }
        if (e.type != events::kProbeCompleted) return true;
        auto p = events::ProbeCompleted::decode(reader, e);
        if (!p.ok()) {
          bad = p.status();
          return false;
        }
        if (!x->state.unlocked.count(p->evidence)) return true;
        if (*one && p->evidence != **one) return true;
        JsonWriter j;
        j.str("id", p->evidence)
            .num("probe", p->probe)
            .raw("call", calls.count(p->probe) ? calls[p->probe] : "null")
            .num("exit_code", p->exit_code)
            .boolean("truncated", p->truncated)
            .num("seq", e.seq);
        if (*one) {
          std::string content;
          for (const auto& ref : p->refs) {
            if (ref.id != p->evidence) continue;
            auto blob = d.session->writer.blobs->get(ref.sha256);
            if (!blob.ok()) {
              bad = blob.status();
              return false;
            }
            content = std::move(blob).value();
          }
          j.str("content", content);
          item = j.done();
          return false;
        }
        items.raw(j.done());
        return true;
      });
  if (!s.is_ok()) return fail(s);
  if (!bad.is_ok()) return fail(bad);
  if (*one) {
    if (item.empty()) return fail(api_error(404, "not_found", "no evidence " + std::string(**one)));
    return ok(item);
  }
  return ok(JsonWriter().raw("evidence", items.done()).done());
}

// The receipt file of a receipt.issued event, by the receipt's SHA-256.
Result<std::string> receipt_bytes(Daemon::Impl& d, const std::string& attempt,
                                  const std::string& sha) {
  events::PayloadReader reader;
  std::optional<Digest> blob;
  Status s =
      d.session->writer.log->read_stream(attempt::stream_of(attempt), 0, [&](const EventView& e) {
        if (e.type != events::kReceiptIssued) return true;
        auto p = events::ReceiptIssued::decode(reader, e);
        if (p.ok() && p->receipt_sha256 == sha) {
          for (const auto& ref : p->refs) blob = ref.sha256;
          return false;
        }
        return true;
      });
  if (!s.is_ok()) return s;
  if (!blob) return Status::not_found("no receipt " + sha);
  return d.session->writer.blobs->get(*blob);
}

Reply op_attempt_receipt(Daemon::Impl& d, const Request& r, const json::Object& a) {
  auto x = authed(d, r, a);
  if (!x.ok()) return auth_failure(x.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  if (x->state.receipt_sha256.empty()) {
    ApiError e =
        api_error(404, "not_found",
                  x->state.verdict.empty() || x->state.verdict == "VERIFIED"
                      ? "this attempt has no receipt yet"
                      : "verdict " + x->state.verdict + "; receipts are issued only for VERIFIED");
    e.phase = std::string(attempt::phase_name(x->state.phase));
    e.next = app::next_step(x->state);
    return fail(e);
  }
  auto bytes = receipt_bytes(d, x->attempt, x->state.receipt_sha256);
  if (!bytes.ok()) return fail(bytes.status());
  return ok(*bytes);
}

// ---- judge, receipts, proof ----

Reply op_judge_enqueue(Daemon::Impl& d, const json::Object& a) {
  auto name = scenario_arg(a);
  if (!name.ok()) return fail(name.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  auto id = d.judge_engine->scenario_named(*name);
  if (!id.ok()) return fail(id.status());
  if (auto refused = unavailable_lab(d, *id)) return *refused;
  auto run = d.judge->enqueue(*id);
  if (!run.ok()) return fail(run.status());
  return ok(*d.judge->run_json(*run), 202);
}

Result<std::string> run_arg(const json::Object& a) {
  auto run = a.required_string("run", 16);
  if (!run.ok()) return run.status();
  if (!rpc::is_hex(*run, 16)) return a.error("run", "not a run id");
  return std::string(*run);
}

Reply op_judge_get(Daemon::Impl& d, const json::Object& a) {
  auto run = run_arg(a);
  if (!run.ok()) return fail(run.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  auto j = d.judge->run_json(*run);
  if (!j) return fail(api_error(404, "not_found", "no judge run " + *run));
  return ok(*j);
}

// A judge attempt's receipt, public: only attempts in judge mode are looked at.
Reply op_receipt_get(Daemon::Impl& d, const json::Object& a) {
  auto sha = a.required_string("sha256", 64);
  if (!sha.ok()) return fail(sha.status());
  if (!is_lower_hex64(*sha)) return fail(a.error("sha256", "not a SHA-256"));
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  std::vector<std::string> attempts;
  {
    std::lock_guard lock(d.proj_mu);
    if (Status s = d.catch_up_locked(); !s.is_ok()) return fail(s);
    auto rows = d.projections->attempts();
    if (!rows.ok()) return fail(rows.status());
    for (size_t i = 0; i < rows->rows.size(); ++i) {
      if (text_of(rows->get(i, "mode")) == "judge" &&
          text_of(rows->get(i, "receipt_sha256")) == *sha) {
        attempts.push_back(text_of(rows->get(i, "attempt")));
      }
    }
  }
  if (attempts.empty())
    return fail(api_error(404, "not_found", "no judge receipt " + std::string(*sha)));
  auto bytes = receipt_bytes(d, attempts.front(), std::string(*sha));
  if (!bytes.ok()) return fail(bytes.status());
  return ok(*bytes);
}

Reply op_receipt_verify(Daemon::Impl& d, const json::Object& a) {
  auto rec = a.value("receipt");
  if (!rec.ok()) return fail(rec.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  std::string envelope = rec->minified();
  auto one = [](const receipt::ReceiptReport& r) {
    JsonArray failures;
    for (const auto& f : r.failures) {
      failures.raw(JsonWriter().str("field", f.field).str("what", f.what).done());
    }
    return JsonWriter()
        .boolean("ok", r.ok())
        .str("attempt", r.attempt)
        .str("verdict", r.verdict)
        .raw("failures", failures.done())
        .done();
  };
  NoteVerifierKey key = d.session->writer.keys->lab_verifier();
  auto offline = receipt::verify_receipt(envelope, key, std::nullopt);
  // Not this lab's signature (or not a receipt): nothing of it is read, so a replay would
  // report the same, and no log is opened for it.
  if (offline.attempt.empty()) {
    return ok(JsonWriter().raw("offline", one(offline)).raw("replay", one(offline)).done());
  }
  d.replay_slots.acquire();
  struct Slot {
    std::counting_semaphore<64>& s;
    ~Slot() { s.release(); }
  } slot{d.replay_slots};
  // Replayed against a still view of the log: judge runs and gates may be appending meanwhile.
  auto view = d.still_view();
  if (!view.ok()) return fail(view.status());
  // The receipt's own events, not the whole log: a request costs the attempt's size.
  auto replay = receipt::verify_receipt(
      envelope, key,
      receipt::ReplayContext{view->get(), d.session->writer.blobs.get(), /*whole_log=*/false});
  return ok(JsonWriter().raw("offline", one(offline)).raw("replay", one(replay)).done());
}

// Events the furthest-behind projection is behind the log's head.
uint64_t projection_lag(Daemon::Impl& d) {
  std::lock_guard lock(d.proj_mu);
  uint64_t lag = 0;
  for (const auto& st : d.projections->states()) {
    uint64_t at = st.position ? st.position->last_seq : 0;
    lag = std::max(lag, st.head_seq > at ? st.head_seq - at : 0);
  }
  return lag;
}

// Inclusion proofs of a receipt's events (the attempt's events it binds) against the latest
// checkpoint, one made first when the latest does not cover them.
Reply op_proof_receipt(Daemon::Impl& d, const json::Object& a) {
  auto sha = a.required_string("sha256", 64);
  if (!sha.ok()) return fail(sha.status());
  if (!is_lower_hex64(*sha)) return fail(a.error("sha256", "not a SHA-256"));
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  std::string attempt;
  {
    std::lock_guard lock(d.proj_mu);
    if (Status s = d.catch_up_locked(); !s.is_ok()) return fail(s);
    auto rows = d.projections->attempts();
    if (!rows.ok()) return fail(rows.status());
    for (size_t i = 0; i < rows->rows.size(); ++i) {
      if (text_of(rows->get(i, "receipt_sha256")) == *sha)
        attempt = text_of(rows->get(i, "attempt"));
    }
  }
  if (attempt.empty()) return fail(api_error(404, "not_found", "no receipt " + std::string(*sha)));
  EventLog& log = *d.session->writer.log;
  events::PayloadReader reader;
  uint64_t first = 0, last = 0;
  std::vector<std::pair<uint64_t, Digest>> bound;  // the attempt's events in [first, last]
  Status s = log.read_stream(attempt::stream_of(attempt), 0, [&](const EventView& e) {
    if (e.type == events::kReceiptIssued) {
      auto p = events::ReceiptIssued::decode(reader, e);
      if (p.ok() && p->receipt_sha256 == *sha) {
        first = p->first_seq;
        last = p->last_seq;
      }
    }
    bound.emplace_back(e.seq, e.hash);
    return true;
  });
  if (!s.is_ok()) return fail(s);
  if (last == 0) return fail(api_error(404, "not_found", "no receipt " + std::string(*sha)));
  auto cp = log.latest_checkpoint();
  if (!cp.ok()) return fail(cp.status());
  std::optional<StoredCheckpoint> ck = *cp;
  if (!ck || ck->size < last) {
    auto made = log.checkpoint();
    if (!made.ok()) return fail(made.status());
    ck = *made;
  }
  JsonArray proofs;
  for (const auto& [seq, hash] : bound) {
    if (seq < first || seq > last) continue;
    auto proof = merkle::inclusion_proof(seq - 1, ck->size, log.nodes());
    if (!proof.ok()) return fail(proof.status());
    JsonArray path;
    for (const auto& h : *proof) path.str(to_hex(h));
    proofs.raw(JsonWriter()
                   .num("seq", seq)
                   .str("event_hash", to_hex(hash))
                   .raw("path", path.done())
                   .done());
  }
  return ok(
      JsonWriter()
          .str("attempt", attempt)
          .raw("checkpoint", JsonWriter().num("size", ck->size).str("note", ck->signed_note).done())
          .raw("proofs", proofs.done())
          .done());
}

Reply op_proof(Daemon::Impl& d) {
  EventLog& log = *d.session->writer.log;
  LogHead head = log.head();
  JsonWriter j;
  j.raw("head", JsonWriter().num("seq", head.seq).str("hash", to_hex(head.hash)).done());
  auto cp = log.latest_checkpoint();
  if (cp.ok() && cp->has_value()) {
    j.raw("checkpoint",
          JsonWriter().num("size", (*cp)->size).str("note", (*cp)->signed_note).done());
  } else {
    j.null("checkpoint");
  }
  {
    std::lock_guard lock(d.verify_mu);
    j.raw("last_verify", JsonWriter()
                             .str("at", d.last_verify.at)
                             .boolean("ok", d.last_verify.ok)
                             .num("events", d.last_verify.events)
                             .str("detail", d.last_verify.detail)
                             .done());
  }
  j.num("projection_lag", projection_lag(d));
  return ok(j.done());
}

// The lab's verifier key (docs/formats/keys.md), for checking receipts and checkpoints away
// from the lab. Fetched from the lab itself it proves only that this lab signed; a verifier who
// pins the key from elsewhere proves more.
Reply op_lab_key(Daemon::Impl& d) {
  return ok(JsonWriter()
                .str("verifier_key", format_verifier_key(d.session->writer.keys->lab_verifier()))
                .done());
}

// ---- operators ----

Status check_operator(Daemon::Impl& d, const Request& r) {
  // Root on this machine (the CLI) owns the lab: no token. The front's requests always need it.
  if (r.peer_is_root && r.auth == rpc::AuthKind::kNone) return Status::ok();
  if (r.auth != rpc::AuthKind::kOperator) return Status::failed_precondition("none");
  std::string token;
  // Read on every request: rotation is a file replace, no restart.
  if (Status s = read_text_file(d.opt.operator_token, rpc::kMaxOperatorTokenBytes + 2, &token);
      !s.is_ok()) {
    return Status::unavailable("operator token file not readable");
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == '\r')) token.pop_back();
  if (token.size() < 32) return Status::unavailable("operator token file holds under 32 bytes");
  if (!app::equal_constant_time(token, r.secret)) return Status::failed_precondition("wrong");
  return Status::ok();
}

Reply op_operator(Daemon::Impl& d, const Request& r, const json::Object& a) {
  if (Status s = check_operator(d, r); !s.is_ok()) {
    if (s.code() == ErrorCode::kUnavailable) {
      return fail(api_error(503, "unavailable", "operator routes are off: " + s.message()));
    }
    return fail(s.message() == "none"
                    ? api_error(401, "unauthorized", "operator routes need the operator token")
                    : api_error(403, "forbidden", "the operator token does not match"));
  }
  // Where a snapshot goes: DATA/../snapshots/<UTC time>, or a folder root names (`aura log
  // snapshot --out`); a path is never taken from the front, which would write as root anywhere.
  auto out_arg = r.op == "operator.snapshot"
                     ? a.optional_string("out", 4096)
                     : Result<std::optional<std::string_view>>(std::nullopt);
  if (!out_arg.ok()) return fail(out_arg.status());
  if (*out_arg && !r.peer_is_root) {
    return fail(api_error(403, "forbidden",
                          "a snapshot folder is chosen only by root on the "
                          "lab's machine (aura log snapshot --out)"));
  }
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  EventLog& log = *d.session->writer.log;
  if (r.op == "operator.checkpoint") {
    auto cp = log.checkpoint();
    if (!cp.ok()) return fail(cp.status());
    return ok(JsonWriter().num("size", cp->size).str("note", cp->signed_note).done());
  }
  if (r.op == "operator.rebuild") {
    std::lock_guard lock(d.proj_mu);
    auto rep = d.projections->rebuild_all();
    if (!rep.ok()) return fail(rep.status());
    JsonArray rebuilt;
    for (const auto& p : *rep) {
      rebuilt.raw(JsonWriter().str("name", p.name).num("events_applied", p.events_applied).done());
    }
    return ok(JsonWriter().num("head", log.head().seq).raw("projections", rebuilt.done()).done());
  }
  if (r.op == "operator.refresh") {
    auto m = app::measure_and_record(log);
    if (!m.ok()) return fail(m.status());
    return ok(JsonWriter()
                  .num("seq", m->seq)
                  .num("available", uint64_t(m->available()))
                  .num("measured", uint64_t(m->measurement.capabilities.size()))
                  .done());
  }
  if (r.op == "operator.verify") {
    d.verify_chain();
    std::lock_guard lock(d.verify_mu);
    return ok(JsonWriter()
                  .boolean("ok", d.last_verify.ok)
                  .num("events", d.last_verify.events)
                  .str("detail", d.last_verify.detail)
                  .done());
  }
  if (r.op == "operator.snapshot") {
    // A consistent signed copy while appends go on (docs/OPERATIONS.md, backups), in
    // DATA/../snapshots/<UTC time>.
    std::string stamp = now_rfc3339();
    for (char& c : stamp) {
      if (c == ':') c = '-';
    }
    fs::path out = *out_arg ? fs::path(**out_arg)
                            : fs::absolute(d.opt.folders.data).lexically_normal().parent_path() /
                                  "snapshots" / stamp;
    std::error_code ec;
    if (*out_arg && !out.is_absolute()) {
      ApiError e = api_error(400, "malformed", "out: must be an absolute path");
      e.path = "$.out";
      return fail(e);
    }
    if (!*out_arg && fs::exists(out, ec))
      return fail(api_error(429, "too_many_requests", "a snapshot was made this second"));
    if (!*out_arg) fs::create_directories(out.parent_path(), ec);
    auto m =
        make_snapshot(log, *d.session->writer.blobs, out, d.session->writer.keys->lab_signer());
    if (!m.ok()) return fail(m.status());
    return ok(JsonWriter()
                  .str("path", out.string())
                  .num("head_seq", m->head_seq)
                  .str("head_hash", to_hex(m->head_hash))
                  .str("merkle_root", to_hex(m->merkle_root))
                  .num("files", uint64_t(m->files.size()))
                  .done());
  }
  if (r.op == "operator.reap") {
    auto reaped = supervisor::reap_and_record(fs::absolute(d.opt.folders.data / "sandbox"), log);
    if (!reaped.ok()) return fail(reaped.status());
    JsonArray failures;
    for (const auto& f : reaped->failures) failures.str(f);
    return ok(JsonWriter()
                  .num("runs", uint64_t(reaped->runs_reaped))
                  .num("paths", uint64_t(reaped->paths_removed))
                  .num("orphan_runs", uint64_t(reaped->orphan_runs_reaped))
                  .num("seq", reaped->seq)
                  .raw("failures", failures.done())
                  .done());
  }
  return fail(api_error(404, "not_found", "no operator op " + r.op));
}

// ---- root's own: what the `aura` command does on a lab whose daemon holds it ----

// Ops only root on the lab's machine may ask (SO_PEERCRED): they take paths on the machine or
// write events by hand. The front never sends them (no route does) and is refused if it does.
std::optional<Reply> root_only(const Request& r) {
  if (r.peer_is_root && r.auth == rpc::AuthKind::kNone) return std::nullopt;
  return fail(api_error(403, "forbidden", r.op + " is only for root on the lab's machine"));
}

// `aura log append`: one operator event, held to what the command holds it to.
Reply op_log_append(Daemon::Impl& d, const Request& r, const json::Object& a) {
  if (auto no = root_only(r)) return *no;
  EventDraft e;
  for (auto [name, field] :
       {std::pair{"stream", &e.stream}, std::pair{"type", &e.type}, std::pair{"actor", &e.actor}}) {
    auto v = a.required_string(name, 256);
    if (!v.ok()) return fail(v.status());
    *field = std::string(*v);
  }
  auto payload = a.value("payload");
  if (!payload.ok()) return fail(payload.status());
  if (!payload->as_object().ok()) return fail(a.error("payload", "must be a JSON object"));
  e.payload = payload->minified();
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  if (Status s = app::check_operator_event(e); !s.is_ok()) return fail(s);
  auto appended = d.session->writer.log->append(e);
  if (!appended.ok()) return fail(appended.status());
  return ok(JsonWriter().num("seq", appended->seq).str("hash", to_hex(appended->hash)).done());
}

// The package folders of args.dirs: absolute paths, at most kMaxPackagesPerRun.
Result<std::vector<fs::path>> package_dirs_arg(const json::Object& a) {
  auto list = a.value("dirs");
  if (!list.ok()) return list.status();
  auto arr = list->as_array();
  if (!arr.ok()) return a.error("dirs", "must be an array of absolute paths");
  AURA_RETURN_IF_ERROR(app::check_package_count(arr->elements().size()));
  std::vector<fs::path> dirs;
  for (const auto& v : arr->elements()) {
    auto p = v.as_string();
    if (!p.ok() || p->empty() || p->size() > 4096 || (*p)[0] != '/') {
      return a.error("dirs", "each must be an absolute path");
    }
    dirs.emplace_back(std::string(*p));
  }
  return dirs;
}

// `aura scenario load DIR...`: each folder loaded against the keys folder's trust store, as
// the command loads it, and recorded by the daemon's writer.
Reply op_scenario_load(Daemon::Impl& d, const Request& r, const json::Object& a) {
  if (auto no = root_only(r)) return *no;
  auto dirs = package_dirs_arg(a);
  if (!dirs.ok()) return fail(dirs.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  auto trust = app::publisher_trust(d.opt.folders.keys);
  if (!trust.ok()) return fail(trust.status());
  std::vector<app::Outcome> outcomes;
  for (const fs::path& dir : *dirs) outcomes.push_back(app::load_one(dir, *trust));
  if (Status s = app::record(d.session->writer, outcomes); !s.is_ok()) return fail(s);
  const app::OutcomeReport rep = app::report_outcomes(outcomes);
  return ok(JsonWriter()
                .str("lines", rep.lines)
                .num("loaded", uint64_t(rep.loaded))
                .num("rejected", uint64_t(rep.rejected))
                .raw("packages", rep.packages_json)
                .done());
}

// `aura scenario sign DIR`: the folder signed with the publisher key root names and the
// signing recorded (scenario.signed) by the daemon's writer.
Reply op_scenario_sign(Daemon::Impl& d, const Request& r, const json::Object& a) {
  if (auto no = root_only(r)) return *no;
  fs::path paths[2];
  const char* names[2] = {"dir", "key"};
  for (int i = 0; i < 2; ++i) {
    auto v = a.required_string(names[i], 4096);
    if (!v.ok()) return fail(v.status());
    if (v->empty() || (*v)[0] != '/') return fail(a.error(names[i], "must be an absolute path"));
    paths[i] = std::string(*v);
  }
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  const fs::path &dir = paths[0], &key = paths[1];
  if (Status s = app::check_key_outside(key, dir); !s.is_ok()) return fail(s);
  auto signer = load_publisher_key(key);
  if (!signer.ok()) return fail(signer.status());
  auto rec = app::sign_and_record(dir, *signer, &d.session->writer);
  if (!rec.ok()) return fail(rec.status());
  return ok(JsonWriter()
                .str("lines", app::signed_lines(rec->pkg))
                .num("seq", rec->seq)
                .raw("json", app::signed_json(*rec, true))
                .done());
}

// `aura setup` on a lab the daemon holds: its keys are kept, each bundled package signed when
// its files match their SHA256SUMS, then loaded and recorded by the daemon's writer, and the
// capability panel measured (app::setup with the daemon's writer). The front's user is the
// command's to create.
Reply op_lab_setup(Daemon::Impl& d, const Request& r, const json::Object& a) {
  if (auto no = root_only(r)) return *no;
  auto dirs = package_dirs_arg(a);
  if (!dirs.ok()) return fail(dirs.status());
  if (Status s = a.done(); !s.is_ok()) return fail(s);
  std::string lines;
  auto rep = app::setup(
      d.opt.folders, *dirs, [&](const std::string& line) { lines += line + "\n"; },
      &d.session->writer);
  if (!rep.ok()) return fail(rep.status());
  const app::OutcomeReport out = app::report_outcomes(rep->outcomes);
  return ok(JsonWriter()
                .str("lines", lines + out.lines)
                .num("loaded", uint64_t(out.loaded))
                .num("rejected", uint64_t(out.rejected))
                .raw("packages", out.packages_json)
                .num("capabilities_seq", rep->capabilities.seq)
                .boolean("lab_key_created", rep->lab_key_created)
                .str("lab_key", rep->lab_key)
                .boolean("publisher_key_created", rep->publisher_key_created)
                .str("publisher", rep->publisher)
                .num("signed", uint64_t(rep->signed_count))
                .num("kept", uint64_t(rep->kept_count))
                .done());
}

Reply op_metrics(Daemon::Impl& d) {
  Metrics::Gauges g;
  g.log_head = d.session->writer.log->head().seq;
  g.projection_lag = projection_lag(d);
  {
    std::lock_guard lock(d.verify_mu);
    g.chain_verified = d.last_verify.ok ? 1 : 0;
  }
  g.judge_waiting = d.judge->waiting();
  g.judge_running = d.judge->running() ? 1 : 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(d.opt.folders.data / "worlds", ec)) {
    if (e.is_directory(ec)) g.live_worlds++;
  }
  {
    std::lock_guard lock(d.conn_mu);
    g.connections = d.connections.size();
  }
  return ok(JsonWriter()
                .str("text", d.metrics.text(g))
                .str("content_type", "text/plain; version=0.0.4")
                .done());
}

}  // namespace

Reply Daemon::Impl::handle(const Request& r) {
  auto args = Args::parse(r.args_json);
  if (!args.ok()) return fail(args.status());
  const json::Object& a = (*args)->obj;
  const std::string& op = r.op;
  if (op == "health") return op_health(*this);
  if (op == "capabilities") return op_capabilities(*this);
  if (op == "scenarios.list") return op_scenarios_list(*this);
  if (op == "scenarios.get") return op_scenarios_get(*this, a);
  if (op == "attempt.create") return op_attempt_create(*this, r, a);
  if (op == "attempt.state") return op_attempt_state(*this, r, a);
  if (op == "attempt.token") return op_attempt_token(*this, r, a);
  if (op == "attempt.command") return op_attempt_command(*this, r, a);
  if (op == "attempt.validate") return op_attempt_validate(*this, r, a);
  if (op == "attempt.evidence") return op_attempt_evidence(*this, r, a);
  if (op == "attempt.catalog") return op_attempt_catalog(*this, r, a);
  if (op == "attempt.receipt") return op_attempt_receipt(*this, r, a);
  if (op == "judge.list") return ok(judge->list_json());
  if (op == "judge.enqueue") return op_judge_enqueue(*this, a);
  if (op == "judge.get") return op_judge_get(*this, a);
  if (op == "receipt.get") return op_receipt_get(*this, a);
  if (op == "receipt.verify") return op_receipt_verify(*this, a);
  if (op == "proof") return op_proof(*this);
  if (op == "log.append") return op_log_append(*this, r, a);
  if (op == "scenario.load") return op_scenario_load(*this, r, a);
  if (op == "lab.setup") return op_lab_setup(*this, r, a);
  if (op == "scenario.sign") return op_scenario_sign(*this, r, a);
  if (op == "lab.key") return op_lab_key(*this);
  if (op == "proof.receipt") return op_proof_receipt(*this, a);
  if (op == "metrics") return op_metrics(*this);
  if (op.rfind("operator.", 0) == 0) return op_operator(*this, r, a);
  ApiError e = api_error(404, "not_found", "no operation " + op);
  e.expected = {"health",           "capabilities",     "scenarios.list",  "scenarios.get",
                "attempt.create",   "attempt.state",    "attempt.token",   "attempt.command",
                "attempt.validate", "attempt.evidence", "attempt.catalog", "attempt.receipt",
                "attempt.events",   "judge.list",       "judge.enqueue",   "judge.get",
                "judge.events",     "receipt.get",      "receipt.verify",  "proof",
                "lab.key",          "metrics"};
  return fail(e);
}

}  // namespace aura::daemon
