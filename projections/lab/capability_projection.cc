#include "projections/lab/capability_projection.h"

#include "projections/lab/sql.h"

namespace aura::lab {

namespace {

// The runner sandbox every O lab's worlds run in (docs/SANDBOX.md).
constexpr std::string_view kO1Required[] = {
    "ns_user",   "ns_mount", "ns_pid",  "ns_net",  "ns_ipc",     "ns_uts",
    "overlayfs", "seccomp",  "openat2", "cgroups", "tool_nginx", "tool_ansible-playbook"};
constexpr std::string_view kO2Required[] = {"ns_user", "ns_mount", "ns_pid",    "ns_net",
                                            "ns_ipc",  "ns_uts",   "overlayfs", "seccomp",
                                            "openat2", "cgroups",  "tool_nginx"};
constexpr std::string_view kKernelRequired[] = {"bpf", "btf", "bpf_ringbuf", "cgroups"};
constexpr std::string_view kKernelOptional[] = {"sched_ext"};

constexpr LabRequirement kLabs[] = {
    {"O1", "web fleet", kO1Required, {}},
    {"O2", "service identity", kO2Required, {}},
    {"K1", "kernel lab", kKernelRequired, kKernelOptional},
    {"K2", "kernel lab", kKernelRequired, kKernelOptional},
};

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

}  // namespace

std::span<const LabRequirement> lab_requirements() { return kLabs; }

std::vector<LabAvailability> derive_labs(const std::vector<CapabilityRow>& measured) {
  std::vector<LabAvailability> out;
  for (const LabRequirement& lab : kLabs) {
    std::string missing, optional;
    for (std::string_view need : lab.required) {
      const std::string why = why_missing(measured, need);
      if (!why.empty()) missing += (missing.empty() ? "" : "; ") + why;
    }
    for (std::string_view nice : lab.optional) {
      const std::string why = why_missing(measured, nice);
      if (!why.empty()) optional += (optional.empty() ? "" : "; ") + why;
    }
    LabAvailability a{std::string(lab.lab), std::string(lab.title), missing.empty(), ""};
    if (!missing.empty()) {
      a.reason = "missing " + missing;
    } else if (!optional.empty()) {
      a.reason = "without optional " + optional;
    }
    out.push_back(std::move(a));
  }
  return out;
}

Status CapabilityProjection::create_schema(SqliteDb& db) {
  return db.exec(
      "CREATE TABLE capabilities (name TEXT NOT NULL UNIQUE, available INTEGER NOT NULL, "
      "reason TEXT NOT NULL, host TEXT NOT NULL, kernel_release TEXT NOT NULL, "
      "seq INTEGER NOT NULL);"
      "CREATE TABLE labs (lab TEXT NOT NULL UNIQUE, title TEXT NOT NULL, "
      "available INTEGER NOT NULL, reason TEXT NOT NULL, seq INTEGER NOT NULL)");
}

Status CapabilityProjection::apply(SqliteDb& db, const EventView& event) {
  if (event.type != ev::kCapabilitiesMeasured || event.stream != kCapabilityStream) {
    return Status::ok();
  }
  LAB_TRY(p, ev::CapabilitiesMeasured::decode(reader_, event));
  const auto seq = static_cast<int64_t>(event.seq);
  for (const auto& cap : p.capabilities) {
    // The newest measurement of each capability wins; an older event (or this one re-applied)
    // changes nothing.
    AURA_RETURN_IF_ERROR(exec_cached(
        db,
        "INSERT INTO capabilities(name, available, reason, host, kernel_release, seq) "
        "VALUES(?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT(name) DO UPDATE SET "
        "available = excluded.available, reason = excluded.reason, host = excluded.host, "
        "kernel_release = excluded.kernel_release, seq = excluded.seq "
        "WHERE excluded.seq > capabilities.seq",
        cap.name, cap.available, cap.reason, p.host, p.kernel_release, seq));
  }
  // The labs follow from the rows now held (the same rows whatever order they were built in).
  LAB_TRY(rows, all_rows(db));
  for (const LabAvailability& lab : derive_labs(rows)) {
    AURA_RETURN_IF_ERROR(exec_cached(
        db,
        "INSERT INTO labs(lab, title, available, reason, seq) VALUES(?1, ?2, ?3, ?4, ?5) "
        "ON CONFLICT(lab) DO UPDATE SET title = excluded.title, available = excluded.available, "
        "reason = excluded.reason, seq = excluded.seq WHERE excluded.seq > labs.seq",
        lab.lab, lab.title, lab.available, lab.reason, seq));
  }
  return Status::ok();
}

}  // namespace aura::lab
