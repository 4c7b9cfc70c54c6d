// Commands that go to the lab's daemon when one holds the data folder: instead of failing with
// "data folder ... is in use by pid N", `aura judge` queues its run on the daemon (the same queue
// as Judge Mode in the browser) and follows it to its verdicts.
#include "app/cli/daemon_forward.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <thread>

#include "app/daemon/daemon.h"
#include "app/rpc/client.h"
#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/json/json_reader.h"
#include "engine/log/snapshot.h"

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

}  // namespace aura::cli
