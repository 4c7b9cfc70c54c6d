// `aura projections rebuild|status`, `aura scenario list`, `aura attempt list|show`: the lab's
// SQLite read models (projections/lab/) in DATA/projections.sqlite. The log is opened
// read-only, so these work while another process holds the data folder for writing.
#include <chrono>
#include <iostream>

#include "app/cli/attempt_next.h"
#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/views.h"
#include "engine/attempt/attempt_state.h"
#include "engine/common/json_writer.h"
#include "engine/log/data_dir.h"
#include "engine/log/event_log.h"
#include "projections/lab/lab_projections.h"
#include "projections/lab/payload.h"

namespace aura::cli {
namespace fs = std::filesystem;
namespace {

using lab::LabProjections;
using lab::Rows;

struct Opened {
  std::unique_ptr<EventLog> log;
  std::unique_ptr<LabProjections> projections;  // declared last: closed first
};

// The log read-only (as `aura log verify` opens it) and the projections file in the data folder.
Result<Opened> open_projections(const Invocation& inv) {
  auto log = open_reader(inv);
  if (!log.ok()) return log.status();
  Opened out{std::move(log).value(), nullptr};
  auto p = LabProjections::open(*out.log, LabProjections::file_in(inv.data_dir));
  if (!p.ok()) return p.status();
  out.projections = std::move(p).value();
  return out;
}

Result<uint64_t> batch_flag(const Invocation& inv) {
  auto batch = inv.get_u64("batch", LabProjections::kRebuildBatch);
  if (!batch.ok()) return batch.status();
  if (*batch == 0 || *batch > 10000000) {
    return Status::invalid("--batch: must be 1..10000000 events per transaction");
  }
  return *batch;
}

// Opens and catches up every projection: what the read commands serve from.
Result<Opened> open_caught_up(const Invocation& inv) {
  auto opened = open_projections(inv);
  if (!opened.ok()) return opened.status();
  auto r = opened->projections->catch_up_all();
  if (!r.ok()) return r.status().with_context("catching up the projections");
  return opened;
}

std::string cell_text(const lab::Cell& c) {
  switch (c.kind) {
    case lab::Cell::Kind::kNull:
      return "-";
    case lab::Cell::Kind::kInt:
      return std::to_string(c.i);
    default:
      return c.s;
  }
}

// The cell of `column` in row `r` as text ("-" for NULL or an unknown column).
std::string col(const Rows& rows, size_t r, std::string_view column) {
  const lab::Cell* cell = rows.get(r, column);
  return cell != nullptr ? cell_text(*cell) : "-";
}

// "name=value ..." for every non-NULL column but the attempt's ID.
std::string row_text(const Rows& rows, size_t r) {
  std::string out;
  for (size_t c = 0; c < rows.columns.size(); ++c) {
    const lab::Cell& cell = rows.rows[r][c];
    if (cell.kind == lab::Cell::Kind::kNull || rows.columns[c] == "attempt") continue;
    out += (out.empty() ? "" : " ") + rows.columns[c] + "=" + cell_text(cell);
  }
  return out;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.resize(width, ' ');
  return s + " ";
}

std::string counts_json(const lab::ProjectionReport& r) {
  JsonWriter w;
  for (const auto& [table, n] : r.rows) w.num(table, n);
  return w.done();
}

// ---- projections ----

int projections_rebuild(Invocation& inv) {
  auto batch = batch_flag(inv);
  if (!batch.ok()) return inv.fail(batch.status(), 2);
  // A running daemon keeps the projections current: it rebuilds them (a rebuild from this
  // process would drop tables under it).
  if (auto forwarded = forward_operator(inv)) return *forwarded;
  auto opened = open_projections(inv);
  if (!opened.ok()) return inv.fail(opened.status());
  const auto t0 = std::chrono::steady_clock::now();
  auto reports = opened->projections->rebuild_all(*batch);
  if (!reports.ok()) return inv.fail(reports.status());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const uint64_t head = opened->log->head().seq;
  const double per_s = seconds > 0 ? double(head) / seconds : 0;
  std::cout << "rebuilt " << reports->size() << " projections from seq 1 to " << head << ": "
            << head << " events replayed in " << seconds << " s (" << uint64_t(per_s)
            << " events/s)\n";
  JsonArray items;
  for (const auto& r : *reports) {
    std::string counts;
    for (const auto& [table, n] : r.rows) counts += " " + table + "=" + std::to_string(n);
    std::cout << "  " << pad(r.name, 14) << r.events_applied << " events applied, rows:" << counts
              << "\n";
    items.raw(JsonWriter()
                  .str("name", r.name)
                  .num("events_applied", r.events_applied)
                  .raw("rows", counts_json(r))
                  .done());
  }
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .num("head_seq", head)
                    .real("seconds", seconds)
                    .real("events_per_s", per_s)
                    .raw("projections", items.done())
                    .done());
  return 0;
}

int projections_status(Invocation& inv) {
  auto dd = DataDir::open_reader(inv.data_dir);
  if (!dd.ok()) return inv.fail(dd.status());
  const fs::path file = LabProjections::file_in(dd->dir());
  std::error_code ec;
  if (!fs::exists(file, ec)) {
    // Not created by a status query: nothing was ever built.
    return inv.fail(Status::failed_precondition(
        file.string() +
        " does not exist: no projection has been built ('aura projections "
        "rebuild' builds them)"));
  }
  auto opened = open_projections(inv);
  if (!opened.ok()) return inv.fail(opened.status());
  bool all_serve = true;
  const uint64_t head = opened->log->head().seq;
  std::cout << "log head seq " << head << "; " << file.string() << "\n";
  JsonArray items;
  for (const lab::ProjectionState& s : opened->projections->states()) {
    all_serve = all_serve && s.serve.is_ok();
    const uint64_t at = s.position ? s.position->last_seq : 0;
    std::cout << "  " << pad(s.name, 14);
    if (s.position) {
      std::cout << "schema " << s.position->schema_version << ", at seq " << at;
      if (at <= head) std::cout << " (" << head - at << " behind)";
    } else {
      std::cout << "not built";
    }
    std::cout << ": " << (s.serve.is_ok() ? "serves" : "refuses: " + s.serve.message()) << "\n";
    JsonWriter w;
    w.str("name", s.name).num("schema_version", s.schema_version);
    if (s.position) {
      w.num("built_schema_version", s.position->schema_version)
          .num("last_seq", s.position->last_seq)
          .str("last_hash", to_hex(s.position->last_hash));
    } else {
      w.null("last_seq");
    }
    w.num("head_seq", s.head_seq).boolean("serves", s.serve.is_ok());
    if (!s.serve.is_ok()) w.str("refusal", s.serve.message());
    items.raw(w.done());
  }
  inv.emit_json(JsonWriter()
                    .boolean("ok", all_serve)
                    .num("head_seq", head)
                    .raw("projections", items.done())
                    .done());
  return all_serve ? 0 : 1;
}

// ---- scenarios and attempts ----

int scenario_list(Invocation& inv) {
  auto opened = open_caught_up(inv);
  if (!opened.ok()) return inv.fail(opened.status());
  auto rows = opened->projections->scenarios();
  if (!rows.ok()) return inv.fail(rows.status());
  std::cout << rows->rows.size() << " scenario package folder(s)\n";
  for (size_t r = 0; r < rows->rows.size(); ++r) {
    std::cout << "  " << pad(col(*rows, r, "status"), 8);
    if (col(*rows, r, "status") == "loaded") {
      std::cout << pad(col(*rows, r, "id") + "@" + col(*rows, r, "version"), 28)
                << pad(col(*rows, r, "publisher"), 20) << col(*rows, r, "dir") << "\n";
    } else {
      std::cout << col(*rows, r, "dir") << ": " << col(*rows, r, "reason") << "\n";
    }
  }
  inv.emit_json(JsonWriter().boolean("ok", true).raw("scenarios", lab::rows_json(*rows)).done());
  return 0;
}

int attempt_list(Invocation& inv) {
  auto opened = open_caught_up(inv);
  if (!opened.ok()) return inv.fail(opened.status());
  auto rows = opened->projections->attempts();
  if (!rows.ok()) return inv.fail(rows.status());
  std::cout << rows->rows.size() << " attempt(s)\n";
  for (size_t r = 0; r < rows->rows.size(); ++r) {
    std::cout << "  " << col(*rows, r, "attempt") << " "
              << pad(col(*rows, r, "scenario_id") + "@" + col(*rows, r, "scenario_version"), 24)
              << pad(col(*rows, r, "learner"), 14) << pad(col(*rows, r, "mode"), 6)
              << pad(col(*rows, r, "phase"), 14) << pad(col(*rows, r, "verdict"), 19) << "spent "
              << col(*rows, r, "spent") << "/" << col(*rows, r, "probe_budget") << "\n";
  }
  std::cout << "next: 'aura attempt show ID' gives an attempt's next step; 'aura attempt start "
               "SCENARIO' starts one ('aura scenario list' names the loaded scenarios)\n";
  inv.emit_json(JsonWriter().boolean("ok", true).raw("attempts", lab::rows_json(*rows)).done());
  return 0;
}

int attempt_show(Invocation& inv) {
  const std::string& id = inv.positional[0];
  const std::string stream = std::string(lab::kAttemptStreamPrefix) + id;
  if (lab::attempt_id_of_stream(stream).empty()) {
    return inv.fail(Status::invalid("'" + id + "' is not an attempt ID (16 lowercase hex digits)"),
                    2);
  }
  auto opened = open_caught_up(inv);
  if (!opened.ok()) return inv.fail(opened.status());
  auto detail = opened->projections->attempt(id);
  if (!detail.ok()) return inv.fail(detail.status());
  if (!detail->has_value()) return inv.fail(Status::not_found("no attempt " + id));
  const lab::AttemptDetail& d = **detail;
  std::cout << "attempt " << id << "\n  " << row_text(d.attempt, 0) << "\n";
  const std::pair<const char*, const Rows*> sections[] = {{"probes", &d.probes},
                                                          {"evidence", &d.evidence},
                                                          {"interventions", &d.interventions},
                                                          {"scripts", &d.scripts},
                                                          {"gate results", &d.gate_results},
                                                          {"gate verdicts", &d.gate_verdicts},
                                                          {"receipt", &d.receipt}};
  for (const auto& [title, rows] : sections) {
    std::cout << title << " (" << rows->rows.size() << ")\n";
    for (size_t r = 0; r < rows->rows.size(); ++r) std::cout << "  " << row_text(*rows, r) << "\n";
  }
  // The next step from the attempt's own events (the projections may not hold every member).
  auto st = attempt::replay_attempt(*opened->log, id);
  if (st.ok()) print_next(std::cout, *st, st->learner);
  if (inv.json) {
    std::string json = d.json();
    if (st.ok()) {
      const std::string next = JsonWriter().str("next", app::next_step(*st)).done();
      json.insert(json.size() - 1, "," + next.substr(1, next.size() - 2));
    }
    inv.emit_json("{\"ok\":true," + json.substr(1));
  }
  return 0;
}

}  // namespace

void register_projection_commands(CommandTable& r) {
  const Flag batch{
      "batch", "N",
      "events per transaction (default " + std::to_string(LabProjections::kRebuildBatch) + ")"};
  const std::string read_details =
      "Catches the projections in DATA/projections.sqlite up to the log's head first. The log is "
      "opened\nread-only, so this works while another process holds the data folder.";
  r.add({"projections rebuild",
         "",
         "drop every projection and rebuild it from seq 1",
         "Prints the events replayed, the time taken and each projection's row counts. The log is "
         "opened\nread-only; the projections live in DATA/projections.sqlite. When the lab's "
         "daemon holds --data,\nit rebuilds them (without --batch: it uses its own).",
         {batch},
         0,
         0,
         projections_rebuild});
  r.add({"projections status",
         "",
         "each projection's position against the log's head, and whether it serves",
         "Exit status 0 only when every projection serves (it may still lag the head); a refusal "
         "says\nwhich projection and why. Builds nothing.",
         {},
         0,
         0,
         projections_status});
  r.add({"scenario list",
         "",
         "the scenario registry: every package folder loaded or rejected, with reasons",
         read_details,
         {},
         0,
         0,
         scenario_list});
  r.add({"attempt list",
         "",
         "every attempt: scenario, learner, phase, verdict, probe spending",
         read_details,
         {},
         0,
         0,
         attempt_list});
  r.add({"attempt show",
         "ATTEMPT",
         "one attempt with its probes, evidence, interventions, gate results and receipt",
         read_details,
         {},
         1,
         1,
         attempt_show});
}

}  // namespace aura::cli
