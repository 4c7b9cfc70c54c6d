#include "projections/lab/gate_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

Status GateProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE gate_results ("
      "attempt TEXT NOT NULL, gate INTEGER NOT NULL, property TEXT NOT NULL, "
      "status TEXT NOT NULL, reason TEXT NOT NULL, cited TEXT NOT NULL, seq INTEGER NOT NULL, "
      "UNIQUE(attempt, gate, property));"
      "CREATE TABLE gate_verdicts ("
      "attempt TEXT NOT NULL, gate INTEGER NOT NULL, verdict TEXT NOT NULL, "
      "recovered INTEGER NOT NULL, seq INTEGER NOT NULL, UNIQUE(attempt, gate))");
}

namespace {

// A gate.started seq that is not before the event naming it is malformed.
Status check_gate(const EventView& event, uint64_t gate) {
  if (gate < event.seq) return Status::ok();
  return Status::invalid(std::string(event.type) + ": member \"gate\": seq " +
                         std::to_string(gate) + " is not before this event");
}

std::string seqs_json(const std::vector<uint64_t>& seqs) {
  std::string out = "[";
  for (size_t i = 0; i < seqs.size(); ++i) out += (i ? "," : "") + std::to_string(seqs[i]);
  return out + "]";
}

}  // namespace

Status GateProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view type = event.type;
  if (type != ev::kGateProperty && type != ev::kGateVerdict) return Status::ok();
  LAB_TRY(id, attempt_of(event));
  if (id.empty()) return Status::ok();
  const auto seq = static_cast<int64_t>(event.seq);
  // Rows are written once: the first result for a key is kept.
  if (type == ev::kGateProperty) {
    LAB_TRY(p, ev::GateProperty::decode(reader_, event));
    AURA_RETURN_IF_ERROR(check_gate(event, p.gate));
    return exec_cached(db,
                       "INSERT INTO gate_results(attempt, gate, property, status, reason, cited, "
                       "seq) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                       "ON CONFLICT(attempt, gate, property) DO NOTHING",
                       id, sql_int(p.gate), p.property, p.status, p.reason, seqs_json(p.cited),
                       seq);
  }
  LAB_TRY(p, ev::GateVerdict::decode(reader_, event));
  AURA_RETURN_IF_ERROR(check_gate(event, p.gate));
  return exec_cached(db,
                     "INSERT INTO gate_verdicts(attempt, gate, verdict, recovered, seq) "
                     "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(attempt, gate) DO NOTHING",
                     id, sql_int(p.gate), p.verdict, p.recovered, seq);
}

}  // namespace aura::lab
