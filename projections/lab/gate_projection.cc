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

Status GateProjection::apply(SqliteDb& db, const EventView& event) {
  const std::string_view type = event.type;
  if (type != "gate.property" && type != "gate.verdict") return Status::ok();
  const std::string_view id = attempt_id_of_stream(event.stream);
  if (id.empty()) return Status::ok();
  AURA_RETURN_IF_ERROR(payload_.parse(event));
  const Members& m = payload_.members();
  LAB_TRY(gate, m.count("gate"));
  if (static_cast<uint64_t>(gate) >= event.seq) {
    return m.error("gate", "seq " + std::to_string(gate) + " is not before this event");
  }
  const auto seq = static_cast<int64_t>(event.seq);
  // Rows are written once: the first result for a key is kept.
  if (type == "gate.property") {
    LAB_TRY(property, m.one_of("property", {"primary", "twin", "control", "repeat", "reversal"}));
    LAB_TRY(status, m.one_of("status", {"pass", "fail", "not_run"}));
    LAB_TRY(reason, m.str("reason"));
    LAB_TRY(cited, m.u64_array_json("cited"));
    return exec_cached(db,
                       "INSERT INTO gate_results(attempt, gate, property, status, reason, cited, "
                       "seq) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7) "
                       "ON CONFLICT(attempt, gate, property) DO NOTHING",
                       id, gate, property, status, reason, cited, seq);
  }
  LAB_TRY(verdict, m.one_of("verdict", {"NOT_RECOVERED", "RECOVERED_UNPROVEN", "VERIFIED"}));
  LAB_TRY(recovered, m.boolean("recovered"));
  return exec_cached(db,
                     "INSERT INTO gate_verdicts(attempt, gate, verdict, recovered, seq) "
                     "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(attempt, gate) DO NOTHING",
                     id, gate, verdict, recovered, seq);
}

}  // namespace aura::lab
