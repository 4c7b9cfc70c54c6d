// Commands that go to the lab's daemon when one holds the data folder: instead of failing with
// "data folder ... is in use by pid N", `aura judge` queues its run on the daemon (the same queue
// as Judge Mode in the browser) and follows it to its verdicts.
#include "app/cli/daemon_forward.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <thread>

#include "app/cli/cli_support.h"
#include "app/daemon/daemon.h"
#include "app/rpc/client.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/intervention/intervention_ir.h"
#include "engine/json/json_reader.h"
#include "engine/log/snapshot.h"
#include "engine/scenario/call.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using namespace std::chrono_literals;

// A call on a fresh connection; nullopt when the daemon does not answer.
std::optional<rpc::Reply> call(const fs::path& socket, const std::string& op,
                               const std::string& args, std::chrono::milliseconds timeout = 30s) {
  auto c = rpc::Client::connect(socket);
  if (!c.ok()) return std::nullopt;
  rpc::Request r;
  r.op = op;
  r.request_id = rpc::new_request_id();
  r.args_json = args;
  auto reply = c->call(r, timeout);
  if (!reply.ok()) return std::nullopt;
  return *reply;
}

std::string text(const json::Object& o, std::string_view name) {
  auto v = o.optional_value(name);
  if (!v) return "";
  auto s = v->as_string();
  return s.ok() ? std::string(*s) : v->minified();
}

// One call's answer body, or the daemon's refusal in its own words.
Result<std::string> ask(const fs::path& socket, const std::string& op, const std::string& args,
                        std::chrono::milliseconds timeout) {
  auto r = call(socket, op, args, timeout);
  if (!r) return Status::unavailable("the lab's daemon stopped answering");
  if (r->status != 200) {
    return Status::failed_precondition(r->error ? r->error->message
                                                : op + " answered " + std::to_string(r->status));
  }
  return r->body_json;
}

// An answer's body as an object, or the command's failure.
std::optional<json::Object> answered(Invocation& inv, const Result<std::string>& body,
                                     json::Reader& reader, int* code) {
  if (!body.ok()) {
    *code = inv.fail(body.status());
    return std::nullopt;
  }
  auto o = reader.parse_object(*body);
  if (!o.ok()) {
    *code = inv.fail(o.status());
    return std::nullopt;
  }
  return *o;
}

// One finished case of a daemon judge run, printed as the in-process judge prints it.
void print_case(const json::Object& c, const fs::path& receipts) {
  std::cout << "case " << text(c, "case") << " (attempt " << text(c, "attempt") << "):\n";
  auto gate = c.optional_value("gate");
  if (gate) {
    if (auto g = gate->as_object(); g.ok()) {
      if (auto props = g->optional_value("properties")) {
        if (auto list = props->as_array(); list.ok()) {
          for (const auto& p : list->elements()) {
            auto po = p.as_object();
            if (!po.ok()) continue;
            std::cout << "  " << text(*po, "property") << ": " << text(*po, "status");
            const std::string why = text(*po, "reason");
            std::cout << (why.empty() ? "" : " (" + why + ")") << "\n";
          }
        }
      }
    }
  }
  std::cout << "  gate: " << text(c, "gate_seconds") << " s on fresh worlds\n";
  const bool as_expected = text(c, "as_expected") == "true";
  std::cout << "case " << text(c, "case") << ": " << text(c, "verdict") << ", expected "
            << text(c, "expect") << (as_expected ? " -- as expected" : " -- NOT as expected")
            << "\n";
  if (!text(c, "receipt_sha256").empty()) {
    std::cout << "  receipt written to " << (receipts / (text(c, "attempt") + ".receipt.json"))
              << "\n";
  }
}

// The data folder's daemon socket when a daemon answers on it.
std::optional<fs::path> running_daemon(const Invocation& inv) {
  const fs::path socket = daemon::default_socket(inv.data_dir);
  std::error_code ec;
  if (!fs::exists(socket, ec)) return std::nullopt;
  auto health = call(socket, "health", "{}");
  if (!health || health->status != 200) return std::nullopt;
  return socket;
}

}  // namespace

std::optional<int> forward_snapshot(Invocation& inv) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  const fs::path out = fs::absolute(inv.get("out")).lexically_normal();
  auto r = call(*socket, "operator.snapshot", JsonWriter().str("out", out.string()).done(),
                std::chrono::hours(4));  // a hang guard for a large log
  if (!r) return inv.fail(Status::unavailable("the lab's daemon stopped answering"));
  if (r->status != 200) {
    return inv.fail(Status::failed_precondition(
        r->error ? r->error->message : "operator.snapshot answered " + std::to_string(r->status)));
  }
  json::Reader reader;
  auto o = reader.parse_object(r->body_json);
  if (!o.ok()) return inv.fail(o.status());
  std::cout << "snapshot " << inv.get("out")
            << " (made by the lab's daemon): head seq=" << text(*o, "head_seq")
            << " hash=" << text(*o, "head_hash") << " root=" << text(*o, "merkle_root") << ", "
            << text(*o, "files") << " files, signed manifest " << kSnapshotManifestFile << "\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .str("out", inv.get("out"))
                    .raw("head_seq", text(*o, "head_seq"))
                    .str("head_hash", text(*o, "head_hash"))
                    .str("merkle_root", text(*o, "merkle_root"))
                    .raw("files", text(*o, "files"))
                    .done());
  return 0;
}

std::optional<int> forward_operator(Invocation& inv) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  const bool checkpoint = inv.command->path == "log checkpoint";
  const bool rebuild = inv.command->path == "projections rebuild";
  if (rebuild && inv.has("batch")) {
    return inv.fail(Status::failed_precondition(
                        "the lab's daemon holds " + inv.data_dir.string() +
                        " and rebuilds its projections with its own batch size: run without "
                        "--batch, or stop the daemon"),
                    2);
  }
  const std::string op = checkpoint ? "operator.checkpoint"
                         : rebuild  ? "operator.rebuild"
                                    : "operator.refresh";
  json::Reader reader;
  int code = 0;
  auto o = answered(inv, ask(*socket, op, "{}", std::chrono::minutes(10)), reader, &code);
  if (!o) return code;
  if (checkpoint) {
    std::cout << text(*o, "note");
    inv.emit_json(JsonWriter().boolean("ok", true).raw("size", text(*o, "size")).done());
  } else if (rebuild) {
    std::cout << "the lab's daemon rebuilt every projection from seq 1 to " << text(*o, "head")
              << " (it holds " << inv.data_dir.string() << ")\n";
    inv.emit_json(JsonWriter()
                      .boolean("ok", true)
                      .raw("head_seq", text(*o, "head"))
                      .raw("projections", text(*o, "projections"))
                      .done());
  } else {
    std::cout << "measured and recorded by the lab's daemon (capabilities.measured at seq "
              << text(*o, "seq") << "; " << text(*o, "available")
              << " capabilities available); 'aura caps show' prints the panel\n";
    inv.emit_json(JsonWriter()
                      .boolean("ok", true)
                      .raw("seq", text(*o, "seq"))
                      .raw("available", text(*o, "available"))
                      .done());
  }
  return 0;
}

std::optional<int> forward_judge(Invocation& inv) {
  auto found = running_daemon(inv);
  if (!found) return std::nullopt;  // no daemon: run in this process
  const fs::path socket = *found;
  if (inv.has("seed") || inv.has("case") || inv.has("out")) {
    return inv.fail(Status::failed_precondition(
                        "the lab's daemon holds " + inv.data_dir.string() +
                        " and runs judge runs itself, with every case, a seed of its own and "
                        "receipts in " +
                        (inv.data_dir / "receipts").string() +
                        ": run without --seed, --case and --out, or stop the daemon"),
                    2);
  }
  auto queued =
      call(socket, "judge.enqueue", JsonWriter().str("scenario", inv.positional[0]).done());
  if (!queued) return inv.fail(Status::unavailable("the lab's daemon stopped answering"));
  if (queued->status != 202) {
    return inv.fail(Status::failed_precondition(
        queued->error ? queued->error->message
                      : "judge.enqueue answered " + std::to_string(queued->status)));
  }
  json::Reader reader;
  auto q = reader.parse_object(queued->body_json);
  if (!q.ok()) return inv.fail(q.status());
  const std::string run = text(*q, "run");
  std::cout << "the lab's daemon holds " << inv.data_dir.string() << ": judge run " << run << " of "
            << text(*q, "scenario") << " queued there (position " << text(*q, "position")
            << "); following it\n";
  size_t printed = 0;
  std::string last_state = "queued", last_position = text(*q, "position");
  for (;;) {
    std::this_thread::sleep_for(300ms);
    auto got = call(socket, "judge.get", JsonWriter().str("run", run).done());
    if (!got || got->status != 200) {
      return inv.fail(Status::unavailable("the lab's daemon stopped answering about run " + run));
    }
    json::Reader r;
    auto o = r.parse_object(got->body_json);
    if (!o.ok()) return inv.fail(o.status());
    const std::string state = text(*o, "state"), position = text(*o, "position");
    if (state == "queued" && position != last_position) {
      std::cout << "queue position " << position << "\n";
    }
    if (state == "running" && last_state == "queued") std::cout << "running\n";
    last_state = state;
    last_position = position;
    auto cases = o->array("cases");
    if (!cases.ok()) return inv.fail(cases.status());
    const auto list = cases->elements();
    for (; printed < list.size(); ++printed) {
      auto c = list[printed].as_object();
      if (c.ok()) print_case(*c, inv.data_dir / "receipts");
    }
    if (state == "failed") {
      return inv.fail(
          Status::failed_precondition("judge run " + run + " failed: " + text(*o, "error")));
    }
    if (state != "done") continue;
    bool all = !list.empty();
    JsonArray out_cases;
    JsonWriter out;
    out.str("scenario", text(*o, "scenario")).str("run", run);
    for (const auto& v : list) {
      auto c = v.as_object();
      if (!c.ok()) continue;
      all = all && text(*c, "as_expected") == "true";
      const std::string sha = text(*c, "receipt_sha256");
      const std::string entry =
          JsonWriter()
              .str("case", text(*c, "case"))
              .str("attempt", text(*c, "attempt"))
              .str("verdict", text(*c, "verdict"))
              .str("expected", text(*c, "expect"))
              .str("receipt", sha.empty() ? ""
                                          : (inv.data_dir / "receipts" /
                                             (text(*c, "attempt") + ".receipt.json"))
                                                .string())
              .str("receipt_sha256", sha)
              .raw("gate",
                   c->optional_value("gate") ? c->optional_value("gate")->minified() : "null")
              .done();
      out.raw(text(*c, "case"), entry);
      out_cases.raw(entry);
    }
    inv.emit_json(out.raw("cases", out_cases.done()).done());
    return all ? 0 : 1;
  }
}

namespace {

// Prints an answer's members, one per line, and its next step last.
void print_answer(const std::string& body) {
  json::Reader reader;
  auto o = reader.parse_object(body);
  if (!o.ok()) {
    std::cout << body << "\n";
    return;
  }
  std::string next;
  for (std::string_view name : o->names()) {
    auto value = o->optional_value(name);
    if (!value) continue;
    auto s = value->as_string();
    const std::string text = s.ok() ? std::string(*s) : value->minified();
    if (name == "next") {
      next = text;
      continue;
    }
    std::cout << "  " << name << ": " << text << "\n";
  }
  if (!next.empty()) std::cout << "next: " << next << "\n";
}

// A refusal as the in-process command words it, with the daemon's next step.
int refused(Invocation& inv, const rpc::Reply& r) {
  const std::string why =
      r.error ? r.error->message : "the daemon answered " + std::to_string(r.status);
  int code = inv.fail(Status::failed_precondition(why));
  if (r.error && !r.error->next.empty()) std::cerr << "next: " << r.error->next << "\n";
  return code;
}

}  // namespace

std::optional<int> forward_attempt(Invocation& inv) {
  static const std::map<std::string, std::string, std::less<>> kCommands = {
      {"attempt predict", "predict"},     {"attempt probe", "probe"},
      {"attempt submit", "intervention"}, {"attempt authorize", "authorize"},
      {"attempt apply", "apply"},         {"attempt ack", "ack"},
      {"attempt verify", "verify"},       {"attempt gate", "gate"},
      {"attempt receipt", "receipt"},     {"attempt reflect", "reflect"},
      {"attempt abandon", "abandon"},     {"attempt reset", "reset"}};
  const std::string& path = inv.command->path;
  if (path != "attempt start" && !kCommands.count(path)) return std::nullopt;
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;  // no daemon: the command runs in this process
  std::cout << "(through the lab's daemon, which holds " << inv.data_dir.string() << ")\n";

  if (path == "attempt start") {
    if (inv.has("seed") || inv.get("mode", "learn") != "learn") {
      return inv.fail(Status::failed_precondition(
                          "the lab's daemon starts learn-mode attempts with a seed of its own: run "
                          "without --seed and --mode, or stop the daemon"),
                      2);
    }
    JsonWriter args;
    args.str("scenario", inv.positional[0]);
    if (inv.has("learner")) args.str("learner", inv.get("learner"));
    auto r = call(*socket, "attempt.create", args.done(), std::chrono::minutes(10));
    if (!r) return inv.fail(Status::unavailable("the lab's daemon stopped answering"));
    if (r->status != 201) return refused(inv, *r);
    std::cout << "started attempt (its token opens it in the browser lab; shown once):\n";
    print_answer(r->body_json);
    inv.emit_json(r->body_json);
    return 0;
  }

  const std::string& attempt = inv.positional[0];
  const std::string command = kCommands.at(path);
  std::string body = "{}";
  if (command == "predict") {
    auto conf = inv.get_u64("confidence", 50);
    if (!conf.ok()) return inv.fail(conf.status(), 2);
    body = JsonWriter()
               .str("hypothesis", inv.get("hypothesis"))
               .str("expect", inv.get("expect"))
               .num("confidence", *conf)
               .done();
  } else if (command == "probe") {
    if (inv.positional.size() > 1) {
      body = inv.positional[1];
    } else if (inv.has("call-file")) {
      auto bytes = read_small_file(inv.get("call-file"), scenario::kMaxCallJsonBytes);
      if (!bytes.ok()) return inv.fail(bytes.status(), 2);
      body = std::move(bytes).value();
    } else {
      return inv.fail(Status::invalid("give the probe call as CALL_JSON or --call-file FILE"), 2);
    }
  } else if (command == "intervention") {
    auto bytes = read_small_file(inv.positional[1], intervention::kMaxIrBytes);
    if (!bytes.ok()) return inv.fail(bytes.status(), 2);
    body = std::move(bytes).value();
  } else if (command == "authorize") {
    body = JsonWriter().str("sha256", inv.positional[1]).done();
  } else if (command == "ack") {
    JsonWriter ack;
    if (inv.has("note")) ack.str("note", inv.get("note"));
    if (inv.has("readback")) {
      auto seq = inv.get_u64("readback", 0);
      if (!seq.ok()) return inv.fail(seq.status(), 2);
      ack.num("readback_seq", *seq);
    }
    body = ack.done();
  } else if (command == "reflect") {
    body = JsonWriter().str("text", inv.get("text")).done();
  } else if ((command == "abandon" || command == "reset") && inv.has("reason")) {
    body = JsonWriter().str("reason", inv.get("reason")).done();
  }
  // The body must be a JSON object; the daemon names what is wrong in it.
  json::Reader check;
  if (auto o = check.parse_object(body); !o.ok()) return inv.fail(o.status(), 2);
  const std::string args =
      JsonWriter().str("attempt", attempt).str("command", command).raw("body", body).done();
  auto r = call(*socket, "attempt.command", args, std::chrono::minutes(30));
  if (!r) return inv.fail(Status::unavailable("the lab's daemon stopped answering"));
  if (r->status != 200 && r->status != 202) return refused(inv, *r);
  print_answer(r->body_json);
  std::string last = r->body_json;
  const std::string state_args = JsonWriter().str("attempt", attempt).done();
  if (command == "gate") {
    // The gate runs on in the daemon: follow the attempt until it leaves its gate phase.
    std::cout << "the gate runs on fresh worlds; waiting for its verdict\n";
    for (;;) {
      std::this_thread::sleep_for(500ms);
      auto st = call(*socket, "attempt.state", state_args);
      if (!st || st->status != 200) {
        return inv.fail(Status::unavailable("the lab's daemon stopped answering"));
      }
      json::Reader reader;
      auto o = reader.parse_object(st->body_json);
      if (!o.ok()) return inv.fail(o.status());
      if (text(*o, "phase") != "transfer_gate") break;
    }
  }
  if (command == "receipt" && inv.has("out")) {
    auto file = call(*socket, "attempt.receipt", state_args);
    if (!file || file->status != 200) return inv.fail(Status::unavailable("no receipt file"));
    const fs::path out = inv.get("out");
    const fs::path dir = out.has_parent_path() ? out.parent_path() : fs::path(".");
    if (Status s = file_io::replace_file_durably(dir, out, file->body_json, 0644); !s.is_ok()) {
      return inv.fail(s);
    }
    std::cout << "written to " << inv.get("out") << "\n";
  }
  auto st = call(*socket, "attempt.state", state_args);
  if (st && st->status == 200) {
    json::Reader reader;
    auto o = reader.parse_object(st->body_json);
    if (o.ok()) {
      // What the gate found, in the grader's learner-safe words (after a gate command only).
      if (command == "gate") {
        if (auto fs = o->optional_value("findings")) {
          if (auto list = fs->as_array(); list.ok()) {
            for (const auto& item : list->elements()) {
              auto f = item.as_object();
              if (!f.ok()) continue;
              std::cout << "  " << text(*f, "property") << ": fail / "
                        << (text(*f, "check").empty() ? "" : text(*f, "check") + ": ")
                        << text(*f, "description") << " -- observed: " << text(*f, "observed")
                        << "\n";
            }
          }
        }
      }
      std::cout << "attempt " << attempt << " is now in phase " << text(*o, "phase");
      if (!text(*o, "verdict").empty()) std::cout << " (verdict " << text(*o, "verdict") << ")";
      std::cout << "\nnext: " << text(*o, "next") << "\n";
    }
    last = st->body_json;
  }
  inv.emit_json(last);
  return 0;
}

std::optional<int> forward_log_append(Invocation& inv, const EventDraft& event) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  json::Reader payload_reader;
  if (auto p = payload_reader.parse_object(event.payload); !p.ok()) {
    return inv.fail(p.status().with_context("--payload"), 2);
  }
  auto r = ask(*socket, "log.append",
               JsonWriter()
                   .str("stream", event.stream)
                   .str("type", event.type)
                   .str("actor", event.actor)
                   .raw("payload", event.payload)
                   .done(),
               60s);
  json::Reader reader;
  int code = 0;
  auto o = answered(inv, r, reader, &code);
  if (!o) return code;
  std::cout << "appended seq=" << text(*o, "seq") << " hash=" << text(*o, "hash")
            << " (by the lab's daemon)\n";
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .raw("seq", text(*o, "seq"))
                    .str("hash", text(*o, "hash"))
                    .done());
  return 0;
}

namespace {

std::string dirs_json(const std::vector<fs::path>& dirs) {
  JsonArray list;
  for (const fs::path& d : dirs) list.str(fs::absolute(d).lexically_normal().string());
  return JsonWriter().raw("dirs", list.done()).done();
}

// A load's or a set-up's answer: its lines printed; the JSON's ok and counts.
JsonWriter print_loaded(const Invocation& inv, const json::Object& o, std::string_view did) {
  std::cout << "the lab's daemon holds " << inv.data_dir.string() << "; " << did << ":\n"
            << text(o, "lines");
  JsonWriter j;
  j.boolean("ok", text(o, "rejected") == "0")
      .raw("loaded", text(o, "loaded"))
      .raw("rejected", text(o, "rejected"))
      .raw("packages", text(o, "packages"));
  return j;
}

}  // namespace

std::optional<int> forward_scenario_load(Invocation& inv, const std::vector<fs::path>& dirs) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  auto r = ask(*socket, "scenario.load", dirs_json(dirs), std::chrono::minutes(10));
  json::Reader reader;
  int code = 0;
  auto o = answered(inv, r, reader, &code);
  if (!o) return code;
  inv.emit_json(print_loaded(inv, *o, "it loaded").done());
  return text(*o, "rejected") == "0" ? 0 : 1;
}

std::optional<int> forward_scenario_sign(Invocation& inv, const fs::path& dir,
                                         const fs::path& key) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  auto r = ask(*socket, "scenario.sign",
               JsonWriter()
                   .str("dir", fs::absolute(dir).lexically_normal().string())
                   .str("key", fs::absolute(key).lexically_normal().string())
                   .done(),
               std::chrono::minutes(5));
  json::Reader reader;
  int code = 0;
  auto o = answered(inv, r, reader, &code);
  if (!o) return code;
  std::cout << text(*o, "lines") << "  recorded:  by the lab's daemon at seq " << text(*o, "seq")
            << " (" << inv.data_dir.string() << ")\n";
  inv.emit_json(text(*o, "json"));
  return 0;
}

std::optional<int> forward_setup(Invocation& inv, const std::vector<fs::path>& dirs,
                                 const std::function<Status()>& after) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  auto r = ask(*socket, "lab.setup", dirs_json(dirs), std::chrono::minutes(10));
  json::Reader reader;
  int code = 0;
  auto o = answered(inv, r, reader, &code);
  if (!o) return code;
  JsonWriter j = print_loaded(inv, *o, "it set the lab up");
  if (Status s = after(); !s.is_ok()) return inv.fail(s);
  j.raw("capabilities_seq", text(*o, "capabilities_seq"))
      .raw("lab_key_created", text(*o, "lab_key_created"))
      .str("lab_key", text(*o, "lab_key"))
      .raw("publisher_key_created", text(*o, "publisher_key_created"))
      .str("publisher", text(*o, "publisher"))
      .raw("signed", text(*o, "signed"))
      .raw("kept", text(*o, "kept"));
  inv.emit_json(j.done());
  return text(*o, "rejected") == "0" ? 0 : 1;
}

std::optional<DaemonSupervisor> daemon_supervisor(const Invocation& inv) {
  auto socket = running_daemon(inv);
  if (!socket) return std::nullopt;
  DaemonSupervisor d;
  d.reap = [socket = *socket]() -> Result<supervisor::ReapRecord> {
    std::string body;
    AURA_ASSIGN_OR_RETURN(body, ask(socket, "operator.reap", "{}", std::chrono::minutes(5)));
    json::Reader reader;
    json::Object o;
    AURA_ASSIGN_OR_RETURN(o, reader.parse_object(body));
    supervisor::ReapRecord r;
    uint64_t n = 0;
    AURA_ASSIGN_OR_RETURN(n, o.required_u64("runs"));
    r.runs_reaped = int(n);
    AURA_ASSIGN_OR_RETURN(n, o.required_u64("paths"));
    r.paths_removed = int(n);
    AURA_ASSIGN_OR_RETURN(n, o.required_u64("orphan_runs"));
    r.orphan_runs_reaped = int(n);
    AURA_ASSIGN_OR_RETURN(r.seq, o.required_u64("seq"));
    json::Value failures;
    AURA_ASSIGN_OR_RETURN(failures, o.value("failures"));
    json::Array list;
    AURA_ASSIGN_OR_RETURN(list, failures.as_array());
    for (const auto& f : list.elements()) {
      std::string_view text;
      AURA_ASSIGN_OR_RETURN(text, f.as_string());
      r.failures.emplace_back(text);
    }
    return r;
  };
  d.measure = [socket = *socket]() -> Result<PanelRecorded> {
    std::string body;
    AURA_ASSIGN_OR_RETURN(body, ask(socket, "operator.refresh", "{}", std::chrono::minutes(5)));
    json::Reader reader;
    json::Object o;
    AURA_ASSIGN_OR_RETURN(o, reader.parse_object(body));
    PanelRecorded p;
    AURA_ASSIGN_OR_RETURN(p.seq, o.required_u64("seq"));
    AURA_ASSIGN_OR_RETURN(p.available, o.required_u64("available"));
    AURA_ASSIGN_OR_RETURN(p.measured, o.required_u64("measured"));
    return p;
  };
  return d;
}

}  // namespace aura::cli
