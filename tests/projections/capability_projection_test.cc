// The capabilities projection (projections/lab/capability_projection.h): lab availability
// derived from the declared requirements table, the newest measurement per capability, re-applied
// and older events changing nothing, malformed measurements refused by member.
#include "projections/lab/capability_projection.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "engine/events/event_types.h"
#include "projections/core/projector.h"
#include "tests/projections/lab_test_util.h"
#include "tests/support/temp_dir.h"

using namespace aura;
using aura::testing::must;
using aura::testing::open_lab;
using aura::testing::StoryLog;
using aura::testing::TempDir;

namespace {

// Every capability a lab of the table names, measured available.
std::vector<lab::CapabilityRow> all_available() {
  std::vector<lab::CapabilityRow> rows;
  for (const lab::LabRequirement& r : lab::lab_requirements()) {
    for (auto list : {r.required, r.optional}) {
      for (std::string_view n : list) rows.push_back({std::string(n), true, "measured"});
    }
  }
  return rows;
}

void set(std::vector<lab::CapabilityRow>& rows, std::string_view name, bool available,
         std::string reason) {
  for (auto& r : rows) {
    if (r.name == name) {
      r.available = available;
      r.reason = reason;
    }
  }
}

const lab::LabAvailability& lab_of(const std::vector<lab::LabAvailability>& labs,
                                   std::string_view id) {
  for (const auto& l : labs) {
    if (l.lab == id) return l;
  }
  FAIL("no lab " << id);
  throw;
}

std::string cell(const lab::Rows& rows, size_t r, std::string_view column) {
  const lab::Cell* c = rows.get(r, column);
  REQUIRE(c != nullptr);
  return c->kind == lab::Cell::Kind::kInt ? std::to_string(c->i) : c->s;
}

size_t row_of(const lab::Rows& rows, std::string_view column, std::string_view value) {
  for (size_t r = 0; r < rows.rows.size(); ++r) {
    if (cell(rows, r, column) == value) return r;
  }
  FAIL("no row with " << column << " = " << value);
  return 0;
}

}  // namespace

TEST_CASE("capability labs: every lab is available when every capability it needs is") {
  const auto labs = lab::derive_labs(all_available());
  REQUIRE(labs.size() == lab::lab_requirements().size());
  for (const auto& l : labs) {
    CAPTURE(l.lab);
    CHECK(l.available);
    CHECK(l.reason.empty());
  }
}

TEST_CASE("capability labs: a missing capability makes each lab needing it unavailable, named") {
  auto rows = all_available();
  set(rows, "tool_ansible-playbook", false, "ansible-playbook not found on PATH (/usr/bin)");
  set(rows, "bpf_ringbuf", false, "bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF): EINVAL");
  const auto labs = lab::derive_labs(rows);
  // O1 needs ansible-playbook; O2 does not.
  CHECK_FALSE(lab_of(labs, "O1").available);
  CHECK(lab_of(labs, "O1").reason ==
        "missing tool_ansible-playbook: ansible-playbook not found on PATH (/usr/bin)");
  CHECK(lab_of(labs, "O2").available);
  for (const char* k : {"K1", "K2"}) {
    CAPTURE(k);
    CHECK_FALSE(lab_of(labs, k).available);
    CHECK(lab_of(labs, k).reason ==
          "missing bpf_ringbuf: bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF): EINVAL");
  }
}

TEST_CASE("capability labs: an optional capability is reported but never required") {
  auto rows = all_available();
  set(rows, "sched_ext", false, "kernel has no sched_ext (no /sys/kernel/sched_ext)");
  const auto labs = lab::derive_labs(rows);
  CHECK(lab_of(labs, "K1").available);
  CHECK(lab_of(labs, "K1").reason ==
        "without optional sched_ext: kernel has no sched_ext (no /sys/kernel/sched_ext)");
  CHECK(lab_of(labs, "O1").reason.empty());
}

TEST_CASE("capability labs: a capability never measured is missing, never assumed") {
  std::vector<lab::CapabilityRow> rows = all_available();
  std::erase_if(rows, [](const lab::CapabilityRow& r) { return r.name == "cgroups"; });
  const auto labs = lab::derive_labs(rows);
  for (const auto& l : labs) {
    CAPTURE(l.lab);
    CHECK_FALSE(l.available);
    CHECK(l.reason == "missing cgroups not measured");
  }
  CHECK_FALSE(lab::derive_labs({}).front().available);
}

TEST_CASE("capabilities projection: the newest measurement per name wins; labs follow from it") {
  TempDir dir;
  StoryLog s(dir.path(), 1);
  s.append_all_of_story();
  auto p = open_lab(*s.log, dir / "p.sqlite");
  must(p->rebuild_all());
  const lab::Rows caps = must(p->capabilities());
  REQUIRE(caps.rows.size() == 3);
  const size_t nginx = row_of(caps, "name", "tool_nginx");
  // The story's second lab/capabilities event found nginx; the lab/other one is ignored.
  CHECK(cell(caps, nginx, "available") == "1");
  CHECK(cell(caps, nginx, "reason") == "nginx/1.22.1");
  CHECK(cell(caps, nginx, "seq") ==
        std::to_string(s.story.find("lab/capabilities", events::kCapabilitiesMeasured, 1)));
  CHECK(cell(caps, row_of(caps, "name", "sched_ext"), "available") == "0");
  CHECK(cell(caps, nginx, "host") == "story");

  const lab::Rows labs = must(p->labs());
  REQUIRE(labs.rows.size() == lab::lab_requirements().size());
  // The story measured only three capabilities: every lab misses something, and says what.
  const size_t o2 = row_of(labs, "lab", "O2");
  CHECK(cell(labs, o2, "available") == "0");
  CHECK(cell(labs, o2, "reason").starts_with("missing ns_mount not measured; ns_pid not measured"));
  CHECK(cell(labs, o2, "reason").find("tool_nginx") == std::string::npos);
}

TEST_CASE("capabilities projection: an older measurement or one re-applied changes nothing") {
  TempDir dir;
  StoryLog s(dir.path(), 1);
  s.append_all_of_story();
  auto p = open_lab(*s.log, dir / "p.sqlite");
  must(p->rebuild_all());
  lab::CapabilityProjection& caps =
      dynamic_cast<lab::CapabilityProjection&>(*p->projections().back());
  const std::string before = must(canonical_dump(p->db(), caps));
  for (int nth : {0, 1, 0}) {
    const uint64_t seq = s.story.find("lab/capabilities", events::kCapabilitiesMeasured, nth);
    REQUIRE(p->db().begin().is_ok());
    REQUIRE(s.log
                ->read_range(seq, seq,
                             [&](const EventView& e) {
                               CHECK(caps.apply(p->db(), e).is_ok());
                               return true;
                             })
                .is_ok());
    REQUIRE(p->db().commit().is_ok());
    CHECK(must(canonical_dump(p->db(), caps)) == before);
  }
}

TEST_CASE("capabilities projection: a malformed measurement names the member and is refused") {
  TempDir dir;
  auto db = must(SqliteDb::open(dir / "m.sqlite"));
  lab::CapabilityProjection caps;
  REQUIRE(db->begin().is_ok());
  REQUIRE(caps.create_schema(*db).is_ok());
  struct Bad {
    const char* payload;
    const char* says;
  };
  const Bad bad[] = {
      {R"({"v":1,"host":"h","kernel_release":"k"})", "member \"capabilities\""},
      {R"({"v":1,"host":"h","kernel_release":"k","capabilities":[{"name":"x","reason":"r"}]})",
       "member \"capabilities[0].available\""},
      {R"({"v":1,"host":"h","kernel_release":"k","capabilities":[{"name":"","available":true,)"
       R"("reason":"r"}]})",
       "member \"capabilities[0].name\": empty"},
      {R"({"v":1,"host":"h","kernel_release":"k","capabilities":[7]})",
       "member \"capabilities[0]\": not an object"},
      {R"({"v":1,"kernel_release":"k","capabilities":[]})", "member \"host\""},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.payload);
    const EventView e{
        1, {}, 0, "lab/capabilities", events::kCapabilitiesMeasured, "supervisor", b.payload, {}};
    const Status st = caps.apply(*db, e);
    REQUIRE_FALSE(st.is_ok());
    CHECK(st.message().find(b.says) != std::string::npos);
    CHECK(st.message().find(events::kCapabilitiesMeasured) != std::string::npos);
  }
}
