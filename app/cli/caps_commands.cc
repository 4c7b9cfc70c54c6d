// `aura caps`: measures the capability panel on this machine (workers/caps), prints it with the
// labs it allows, and records it as one `capabilities.measured` event; `aura caps show`: the
// panel as the capabilities projection holds it (docs/CAPABILITIES.md).
#include <iomanip>
#include <iostream>
#include <optional>

#include "app/cli/cli.h"
#include "app/cli/cli_support.h"
#include "app/cli/daemon_forward.h"
#include "app/lab/capabilities.h"
#include "engine/common/json_writer.h"
#include "projections/lab/capability_projection.h"
#include "projections/lab/lab_projections.h"
#include "workers/caps/capability.h"

namespace aura::cli {
namespace {

void print_table(const std::vector<lab::CapabilityRow>& caps) {
  size_t width = 10;
  for (const auto& c : caps) width = std::max(width, c.name.size());
  std::cout << std::left << std::setw(int(width)) << "capability"
            << "  state        reason\n";
  for (const auto& c : caps) {
    std::cout << std::left << std::setw(int(width)) << c.name << "  "
              << (c.available ? "available  " : "UNAVAILABLE") << "  " << c.reason << "\n";
  }
}

// One line per loaded scenario (its id, whether it can run here, its title), and the reason
// under it when something is missing.
void print_labs(const std::vector<lab::LabAvailability>& labs) {
  std::cout << "\nlabs (the scenarios loaded in --data)\n";
  if (labs.empty()) std::cout << "  no scenario loaded (aura setup, aura scenario load)\n";
  size_t width = 3;
  for (const auto& l : labs) width = std::max(width, l.lab.size());
  for (const auto& l : labs) {
    std::cout << "  " << std::left << std::setw(int(width)) << l.lab << "  "
              << (l.available ? "available  " : "UNAVAILABLE") << "  " << l.title << "\n";
    if (!l.reason.empty()) {
      std::cout << "  " << std::string(width, ' ') << "  " << l.reason << "\n";
    }
  }
}

// What the scenarios loaded in `log` require, as its projections hold it (caught up first).
Result<std::vector<lab::LabRequirement>> loaded_requirements(const EventLog& log,
                                                             const std::filesystem::path& data) {
  auto p = lab::LabProjections::open(log, lab::LabProjections::file_in(data));
  if (!p.ok()) return p.status();
  auto caught = (*p)->catch_up_all();
  if (!caught.ok()) return caught.status().with_context("catch up");
  return (*p)->lab_requirements();
}

int caps_measure(Invocation& inv) {
  // Recorded unless --no-record: the writer is opened first, so nothing is measured for a
  // record that could not be made.
  if (!inv.has("no-record")) {
    if (auto forwarded = forward_operator(inv)) return *forwarded;
  }
  std::optional<Writer> w;
  if (!inv.has("no-record")) {
    auto opened = open_writer(inv);
    if (!opened.ok()) return inv.fail(opened.status().with_context("record the measurement"));
    w.emplace(std::move(opened).value());
  }
  app::RecordedMeasurement recorded;
  if (w) {
    auto r = app::measure_and_record(*w->log);
    if (!r.ok()) return inv.fail(r.status());
    recorded = std::move(r).value();
  } else {
    recorded.measurement = caps::measure_capabilities();
  }
  const caps::Measurement& m = recorded.measurement;
  std::vector<lab::CapabilityRow> rows;
  for (const auto& c : m.capabilities) rows.push_back({c.name, c.available, c.reason});

  // The labs are the scenarios loaded in --data, judged against this measurement. Without
  // --data's log (--no-record on a fresh folder) there is none to judge.
  std::unique_ptr<EventLog> reader;
  const EventLog* log = w ? w->log.get() : nullptr;
  if (log == nullptr && std::filesystem::exists(inv.data_dir)) {
    auto opened = open_reader(inv);
    if (opened.ok()) reader = std::move(opened).value();
    log = reader.get();
  }
  std::vector<lab::LabRequirement> labs;
  if (log != nullptr) {
    auto loaded = loaded_requirements(*log, inv.data_dir);
    if (!loaded.ok()) return inv.fail(loaded.status().with_context("the loaded scenarios"));
    labs = std::move(loaded).value();
  }

  std::cout << "capability panel of " << m.host << " (kernel " << m.kernel_release
            << "), measured now\n";
  print_table(rows);
  print_labs(lab::derive_labs(labs, rows));
  if (w) {
    std::cout << "recorded as seq " << recorded.seq << " (" << caps::kCapabilityEventType
              << ", stream " << caps::kCapabilityStream << ")\n";
  }
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .raw("capabilities", caps::capabilities_json(m.capabilities))
                    .done());
  return 0;
}

int caps_show(Invocation& inv) {
  auto log = open_reader(inv);
  if (!log.ok()) return inv.fail(log.status());
  auto p = lab::LabProjections::open(**log, lab::LabProjections::file_in(inv.data_dir));
  if (!p.ok()) return inv.fail(p.status());
  auto caught = (*p)->catch_up_all();
  if (!caught.ok()) return inv.fail(caught.status().with_context("catch up"));
  auto caps = (*p)->capabilities();
  if (!caps.ok()) return inv.fail(caps.status());
  auto labs = (*p)->labs();
  if (!labs.ok()) return inv.fail(labs.status());
  if (caps->rows.empty()) {
    std::cout << "no capability measurement recorded yet (run 'aura caps')\n";
  } else {
    std::vector<lab::CapabilityRow> rows;
    for (size_t i = 0; i < caps->rows.size(); ++i) {
      rows.push_back(
          {caps->get(i, "name")->s, caps->get(i, "available")->i != 0, caps->get(i, "reason")->s});
    }
    std::cout << "capability panel as recorded (host " << caps->get(0, "host")->s << ")\n";
    print_table(rows);
    std::vector<lab::LabAvailability> l;
    for (size_t i = 0; i < labs->rows.size(); ++i) {
      l.push_back({labs->get(i, "lab")->s, labs->get(i, "title")->s,
                   labs->get(i, "available")->i != 0, labs->get(i, "reason")->s,
                   labs->get(i, "dir")->s});
    }
    print_labs(l);
  }
  inv.emit_json(JsonWriter()
                    .boolean("ok", true)
                    .raw("capabilities", lab::rows_json(*caps))
                    .raw("labs", lab::rows_json(*labs))
                    .done());
  return 0;
}

}  // namespace

void register_caps_commands(CommandTable& r) {
  r.add({"caps",
         "",
         "measure this machine's capability panel and record it",
         "Tries each capability for real (docs/CAPABILITIES.md): every namespace kind unshared in "
         "a child,\n"
         "an overlay mount, openat2, a seccomp filter, BPF program and ring buffer, BTF, "
         "sched_ext, /dev/kvm,\n"
         "cgroup v1 and v2 hierarchies, and the tools scenarios need (nginx, ansible-playbook, "
         "bwrap, ssh, sshd).\n"
         "Prints each capability (available or UNAVAILABLE with the reason) and, for each "
         "scenario loaded in --data,\n"
         "whether this measurement lets it run (what its manifest's \"requires\" names),\n"
         "then appends one capabilities.measured event (stream lab/capabilities, actor "
         "supervisor) to the log\n"
         "in --data. With --json the last line is "
         "{\"ok\":true,\"capabilities\":[{name,available,reason},...]}.",
         {{"no-record", "", "only measure and print; append nothing"}},
         0,
         0,
         caps_measure});
  r.add({"caps show",
         "",
         "the capability panel and lab availability as recorded in the log",
         "Catches up the capabilities projection (DATA/projections.sqlite) and prints the newest "
         "measurement\n"
         "of each capability and each loaded scenario's availability (a lab) with the reason. "
         "Opens the log read-only.\n"
         "With --json: {\"ok\":true,\"capabilities\":[...],\"labs\":[...]}.",
         {},
         0,
         0,
         caps_show});
}

}  // namespace aura::cli
