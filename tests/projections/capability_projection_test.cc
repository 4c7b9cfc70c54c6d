// The capabilities projection (projections/lab/capability_projection.h): lab availability
// derived from what each loaded scenario requires (its scenario.loaded event), the newest
// measurement per capability, re-applied and older events changing nothing, malformed
// measurements refused by member.
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
using Requirements = aura::events::ScenarioLoaded::Requirements;

namespace {

// Loaded scenarios as the bundled packages and a kernel lab would declare them.
std::vector<lab::LabRequirement> declared_labs() {
  const std::vector<std::string> sandbox = {"ns_user", "ns_mount", "ns_pid",    "ns_net",
                                            "ns_ipc",  "ns_uts",   "overlayfs", "seccomp",
                                            "openat2", "cgroups"};
  auto with = [&](std::vector<std::string> more) {
    std::vector<std::string> all = sandbox;
    all.insert(all.end(), more.begin(), more.end());
    return all;
  };
  return {
      {"/s/o1",
       "o1-fleet-drift",
       "web fleet",
       Requirements::kDeclared,
       with({"tool_nginx", "tool_ansible-playbook", "tool_ssh", "tool_sshd"}),
       {}},
      {"/s/o2",
       "o2-service-chain",
       "service identity",
       Requirements::kDeclared,
       with({"tool_nginx"}),
       {}},
      {"/s/k1",
       "k1-kernel",
       "kernel lab",
       Requirements::kDeclared,
       {"bpf", "btf", "bpf_ringbuf", "cgroups"},
       {"sched_ext"}},
  };
}

// Every capability a lab names, measured available.
std::vector<lab::CapabilityRow> all_available() {
  std::vector<lab::CapabilityRow> rows;
  for (const lab::LabRequirement& r : declared_labs()) {
    for (const auto& list : {r.required, r.optional}) {
      for (const std::string& n : list) rows.push_back({n, true, "measured"});
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
  const auto labs = lab::derive_labs(declared_labs(), all_available());
  REQUIRE(labs.size() == declared_labs().size());
  for (size_t i = 0; i < labs.size(); ++i) {
    CAPTURE(labs[i].lab);
    CHECK(labs[i].lab == declared_labs()[i].lab);  // in the order given
    CHECK(labs[i].dir == declared_labs()[i].dir);
    CHECK(labs[i].title == declared_labs()[i].title);
    CHECK(labs[i].available);
    CHECK(labs[i].reason.empty());
  }
  CHECK(lab::derive_labs({}, all_available()).empty());  // no scenario loaded, no lab
}

TEST_CASE("capability labs: a missing capability makes each lab needing it unavailable, named") {
  auto rows = all_available();
  set(rows, "tool_ansible-playbook", false, "ansible-playbook not found on PATH (/usr/bin)");
  set(rows, "bpf_ringbuf", false, "bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF): EINVAL");
  const auto labs = lab::derive_labs(declared_labs(), rows);
  // O1 needs ansible-playbook; O2 does not.
  CHECK_FALSE(lab_of(labs, "o1-fleet-drift").available);
  CHECK(lab_of(labs, "o1-fleet-drift").reason ==
        "missing tool_ansible-playbook: ansible-playbook not found on PATH (/usr/bin)");
  CHECK(lab_of(labs, "o2-service-chain").available);
  CHECK_FALSE(lab_of(labs, "k1-kernel").available);
  CHECK(lab_of(labs, "k1-kernel").reason ==
        "missing bpf_ringbuf: bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF): EINVAL");
  // Two missing: both named, in the order the scenario lists them.
  set(rows, "tool_sshd", false, "sshd not found on PATH (/usr/bin)");
  CHECK(lab_of(lab::derive_labs(declared_labs(), rows), "o1-fleet-drift").reason ==
        "missing tool_ansible-playbook: ansible-playbook not found on PATH (/usr/bin); "
        "tool_sshd: sshd not found on PATH (/usr/bin)");
}

TEST_CASE("capability labs: an optional capability is reported but never required") {
  auto rows = all_available();
  set(rows, "sched_ext", false, "kernel has no sched_ext (no /sys/kernel/sched_ext)");
  const auto labs = lab::derive_labs(declared_labs(), rows);
  CHECK(lab_of(labs, "k1-kernel").available);
  CHECK(lab_of(labs, "k1-kernel").reason ==
        "without optional sched_ext: kernel has no sched_ext (no /sys/kernel/sched_ext)");
  CHECK(lab_of(labs, "o1-fleet-drift").reason.empty());
}

TEST_CASE("capability labs: a capability never measured is missing, never assumed") {
  std::vector<lab::CapabilityRow> rows = all_available();
  std::erase_if(rows, [](const lab::CapabilityRow& r) { return r.name == "cgroups"; });
  const auto labs = lab::derive_labs(declared_labs(), rows);
  for (const auto& l : labs) {
    CAPTURE(l.lab);
    CHECK_FALSE(l.available);
    CHECK(l.reason == "missing cgroups not measured");
  }
  CHECK_FALSE(lab::derive_labs(declared_labs(), {}).front().available);
}

TEST_CASE("capability labs: requirements undeclared or never recorded make a lab unavailable") {
  std::vector<lab::LabRequirement> labs = {
      {"/s/a", "a", "declares none", Requirements::kNotDeclared, {}, {}},
      {"/s/b", "b", "loaded before requirements were recorded", Requirements::kNotRecorded, {}, {}},
      {"/s/c", "c", "needs nothing", Requirements::kDeclared, {}, {}},
  };
  const auto derived = lab::derive_labs(labs, all_available());
  CHECK_FALSE(lab_of(derived, "a").available);
  CHECK(lab_of(derived, "a").reason == "its manifest declares no requirements (\"requires\")");
  CHECK_FALSE(lab_of(derived, "b").available);
  CHECK(lab_of(derived, "b").reason ==
        "requirements not recorded (loaded by a lab that did not record them; load it again)");
  // An empty declaration is a declaration: nothing to miss.
  CHECK(lab_of(derived, "c").available);
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

  // The story ends with perm-drift reloaded, declaring ns_user and tool_nginx (sched_ext
  // optional), and disk-full rejected: one lab, available without sched_ext.
  const lab::Rows labs = must(p->labs());
  REQUIRE(labs.rows.size() == 1);
  CHECK(cell(labs, 0, "lab") == "perm-drift");
  CHECK(cell(labs, 0, "dir") == "scenarios/perm");
  CHECK(cell(labs, 0, "title") == "Permissions drift");
  CHECK(cell(labs, 0, "available") == "1");
  CHECK(cell(labs, 0, "reason") == "without optional sched_ext: no /sys/kernel/sched_ext");
  CHECK(cell(labs, 0, "seq") == std::to_string(s.story.drafts.size()));  // disk-full's rejection
  const std::vector<lab::LabRequirement> reqs = must(p->lab_requirements());
  REQUIRE(reqs.size() == 1);
  CHECK(reqs[0] == lab::LabRequirement{"scenarios/perm",
                                       "perm-drift",
                                       "Permissions drift",
                                       Requirements::kDeclared,
                                       {"ns_user", "tool_nginx"},
                                       {"sched_ext"}});
}

TEST_CASE("capabilities projection: a lab per loaded scenario, as its event recorded its needs") {
  TempDir dir;
  StoryLog s(dir.path(), 1);
  // Up to the second measurement: perm-drift loaded by an event without "requires" (an older
  // lab's), disk-full with "requires": null; nothing loaded from scenarios/unsigned.
  const uint64_t measured = s.story.find("lab/capabilities", events::kCapabilitiesMeasured, 1);
  aura::testing::append_story(*s.log, s.story, 0, measured, 64);
  auto p = open_lab(*s.log, dir / "p.sqlite");
  must(p->catch_up_all());
  const lab::Rows labs = must(p->labs());
  REQUIRE(labs.rows.size() == 2);
  const size_t disk = row_of(labs, "lab", "disk-full");
  const size_t perm = row_of(labs, "lab", "perm-drift");
  CHECK(cell(labs, disk, "available") == "0");
  CHECK(cell(labs, disk, "reason") == "its manifest declares no requirements (\"requires\")");
  CHECK(cell(labs, perm, "available") == "0");
  CHECK(cell(labs, perm, "reason").starts_with("requirements not recorded"));
  CHECK(cell(labs, perm, "seq") == std::to_string(measured));

  // The rest: perm-drift's new event declares its needs, disk-full's rejection removes its lab;
  // catching up gives what a rebuild gives.
  aura::testing::append_story(*s.log, s.story, measured, s.story.drafts.size() - measured, 64);
  must(p->catch_up_all());
  const lab::Rows caught = must(p->labs());
  REQUIRE(caught.rows.size() == 1);
  CHECK(cell(caught, 0, "lab") == "perm-drift");
  CHECK(cell(caught, 0, "available") == "1");
  auto rebuilt = open_lab(*s.log, dir / "q.sqlite");
  must(rebuilt->rebuild_all());
  CHECK(lab::rows_json(must(rebuilt->labs())) == lab::rows_json(caught));
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
