#include "projections/lab/capability_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

namespace {

using Requirements = ev::ScenarioLoaded::Requirements;

// How lab_requirements.requires names each state.
constexpr std::string_view kDeclared = "declared";
constexpr std::string_view kNotDeclared = "not declared";
constexpr std::string_view kNotRecorded = "not recorded";

std::string_view state_name(Requirements s) {
  switch (s) {
    case Requirements::kDeclared:
      return kDeclared;
    case Requirements::kNotDeclared:
      return kNotDeclared;
    case Requirements::kNotRecorded:
      return kNotRecorded;
  }
  return kNotRecorded;
}

Requirements state_of(std::string_view name) {
  if (name == kDeclared) return Requirements::kDeclared;
  if (name == kNotDeclared) return Requirements::kNotDeclared;
  return Requirements::kNotRecorded;
}

// Capability ids are [a-z0-9_-] (the event's decoder checks it), so a comma separates them.
std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const std::string& id : ids) out += (out.empty() ? "" : ",") + id;
  return out;
}

std::vector<std::string> split(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    out.emplace_back(text.substr(0, comma));
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
  }
  return out;
}

const CapabilityRow* find(const std::vector<CapabilityRow>& rows, std::string_view name) {
  for (const CapabilityRow& r : rows) {
    if (r.name == name) return &r;
  }
  return nullptr;
}

// "<name>: <reason>" for a capability measured unavailable, "<name> not measured" for one
// never measured; empty when it is available.
std::string why_missing(const std::vector<CapabilityRow>& rows, std::string_view name) {
  const CapabilityRow* r = find(rows, name);
  if (r == nullptr) return std::string(name) + " not measured";
  if (r->available) return "";
  return std::string(name) + ": " + r->reason;
}

Result<std::vector<CapabilityRow>> all_rows(SqliteDb& db) {
  auto st = db.cached("SELECT name, available, reason FROM capabilities ORDER BY name");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  std::vector<CapabilityRow> out;
  for (;;) {
    auto row = q.step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({q.column_text(0), q.column_int(1) != 0, q.column_text(2)});
  }
  return out;
}

// The labs follow from the capability and requirement rows now held (the same rows whatever
// order they were built in); each is written only if `seq` is newer than its row, and a lab
// whose scenario is no longer loaded goes, so an older event applied again changes nothing.
Status refresh_labs(SqliteDb& db, int64_t seq) {
  LAB_TRY(rows, all_rows(db));
  LAB_TRY(labs, read_lab_requirements(db));
  for (const LabAvailability& lab : derive_labs(labs, rows)) {
    AURA_RETURN_IF_ERROR(exec_cached(
        db,
        "INSERT INTO labs(dir, lab, title, available, reason, seq) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(dir) DO UPDATE SET lab = excluded.lab, "
        "title = excluded.title, available = excluded.available, reason = excluded.reason, "
        "seq = excluded.seq WHERE excluded.seq > labs.seq",
        lab.dir, lab.lab, lab.title, lab.available, lab.reason, seq));
  }
  return exec_cached(db,
                     "DELETE FROM labs WHERE seq < ?1 AND dir NOT IN "
                     "(SELECT dir FROM lab_requirements WHERE loaded = 1)",
                     seq);
}

}  // namespace

std::vector<LabAvailability> derive_labs(const std::vector<LabRequirement>& labs,
                                         const std::vector<CapabilityRow>& measured) {
  std::vector<LabAvailability> out;
  for (const LabRequirement& lab : labs) {
    LabAvailability a{lab.lab, lab.title, false, "", lab.dir};
    // Never assumed: a lab whose needs are unknown is not available.
    if (lab.state == Requirements::kNotDeclared) {
      a.reason = "its manifest declares no requirements (\"requires\")";
      out.push_back(std::move(a));
      continue;
    }
    if (lab.state == Requirements::kNotRecorded) {
      a.reason =
          "requirements not recorded (loaded by a lab that did not record them; load it again)";
      out.push_back(std::move(a));
      continue;
    }
    std::string missing, optional;
    for (const std::string& need : lab.required) {
      const std::string why = why_missing(measured, need);
      if (!why.empty()) missing += (missing.empty() ? "" : "; ") + why;
    }
    for (const std::string& nice : lab.optional) {
      const std::string why = why_missing(measured, nice);
      if (!why.empty()) optional += (optional.empty() ? "" : "; ") + why;
    }
    a.available = missing.empty();
    if (!missing.empty()) {
      a.reason = "missing " + missing;
    } else if (!optional.empty()) {
      a.reason = "without optional " + optional;
    }
    out.push_back(std::move(a));
  }
  return out;
}

Result<std::vector<LabRequirement>> read_lab_requirements(SqliteDb& db) {
  auto st = db.cached(
      "SELECT dir, lab, title, requires, required, optional FROM lab_requirements "
      "WHERE loaded = 1 ORDER BY dir");
  if (!st.ok()) return st.status();
  Statement& q = **st;
  std::vector<LabRequirement> out;
  for (;;) {
    auto row = q.step();
    if (!row.ok()) return row.status();
    if (!*row) break;
    out.push_back({q.column_text(0), q.column_text(1), q.column_text(2), state_of(q.column_text(3)),
                   split(q.column_text(4)), split(q.column_text(5))});
  }
  return out;
}

Status CapabilityProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE capabilities (name TEXT NOT NULL UNIQUE, available INTEGER NOT NULL, "
      "reason TEXT NOT NULL, host TEXT NOT NULL, kernel_release TEXT NOT NULL, "
      "seq INTEGER NOT NULL);"
      "CREATE TABLE lab_requirements (dir TEXT NOT NULL UNIQUE, loaded INTEGER NOT NULL, "
      "lab TEXT NOT NULL, title TEXT NOT NULL, requires TEXT NOT NULL, required TEXT NOT NULL, "
      "optional TEXT NOT NULL, seq INTEGER NOT NULL);"
      "CREATE TABLE labs (dir TEXT NOT NULL UNIQUE, lab TEXT NOT NULL, title TEXT NOT NULL, "
      "available INTEGER NOT NULL, reason TEXT NOT NULL, seq INTEGER NOT NULL)");
}

Status CapabilityProjection::apply(SqliteDb& db, const EventView& event) {
  const auto seq = static_cast<int64_t>(event.seq);
  // The newest event for a capability or a package folder wins; an older event (or this one
  // re-applied) changes nothing.
  constexpr std::string_view kUpsertRequirements =
      "INSERT INTO lab_requirements(dir, loaded, lab, title, requires, required, optional, seq) "
      "VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT(dir) DO UPDATE SET "
      "loaded = excluded.loaded, lab = excluded.lab, title = excluded.title, "
      "requires = excluded.requires, required = excluded.required, "
      "optional = excluded.optional, seq = excluded.seq WHERE excluded.seq > lab_requirements.seq";
  if (event.stream == kCapabilityStream && event.type == ev::kCapabilitiesMeasured) {
    LAB_TRY(p, ev::CapabilitiesMeasured::decode(reader_, event));
    for (const auto& cap : p.capabilities) {
      AURA_RETURN_IF_ERROR(exec_cached(
          db,
          "INSERT INTO capabilities(name, available, reason, host, kernel_release, seq) "
          "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(name) DO UPDATE SET "
          "available = excluded.available, reason = excluded.reason, host = excluded.host, "
          "kernel_release = excluded.kernel_release, seq = excluded.seq "
          "WHERE excluded.seq > capabilities.seq",
          cap.name, cap.available, cap.reason, p.host, p.kernel_release, seq));
    }
  } else if (event.stream == kScenarioStream && event.type == ev::kScenarioLoaded) {
    LAB_TRY(p, ev::ScenarioLoaded::decode(reader_, event));
    AURA_RETURN_IF_ERROR(exec_cached(db, kUpsertRequirements, p.dir, true, p.id, p.title,
                                     state_name(p.requirements), joined(p.required_capabilities),
                                     joined(p.optional_capabilities), seq));
  } else if (event.stream == kScenarioStream && event.type == ev::kScenarioRejected) {
    // A folder whose newest event is a rejection holds no loaded scenario: no lab.
    LAB_TRY(p, ev::ScenarioRejected::decode(reader_, event));
    const std::string_view none = "";
    AURA_RETURN_IF_ERROR(
        exec_cached(db, kUpsertRequirements, p.dir, false, none, none, none, none, none, seq));
  } else {
    return Status::ok();
  }
  return refresh_labs(db, seq);
}

}  // namespace aura::lab
