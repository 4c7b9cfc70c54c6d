#include "app/cli/attempt_next.h"

#include <iostream>

#include "app/cli/cli_support.h"
#include "app/lab/views.h"
#include "engine/common/json_writer.h"

namespace aura::cli {

using attempt::Phase;

std::vector<std::string> next_commands(const attempt::AttemptState& s, std::string_view learner) {
  const std::string as = learner == kDefaultLearner ? "" : " --learner " + std::string(learner);
  const std::string id = s.id;
  const std::string catalog = "aura attempt catalog " + id +
                              "   (probes, actions, target terms, "
                              "checks, the budget left)";
  switch (s.phase) {
    case Phase::kObserve:
    case Phase::kPredict:
      return {"aura attempt predict " + id + as +
                  " --hypothesis ID --expect TEXT [--confidence 0..100]",
              catalog};
    case Phase::kInspect: {
      std::vector<std::string> out;
      if (s.spent < s.probe_budget) {
        out.push_back("aura attempt probe " + id + as + " '{\"call\":NAME,\"params\":{...}}'");
      }
      out.push_back("aura attempt submit " + id + as +
                    " IR_FILE   (docs/formats/intervention-ir.md)");
      out.push_back(catalog);
      return out;
    }
    case Phase::kContract:
      for (const auto& [sha, status] : s.scripts) {
        if (status == attempt::ScriptStatus::kPendingFeedback) {
          return {"aura attempt authorize " + id + as + " " + sha,
                  "aura attempt submit " + id + as + " IR_FILE"};
        }
      }
      return {"aura attempt apply " + id + as, "aura attempt submit " + id + as + " IR_FILE"};
    case Phase::kApply:
    case Phase::kAck:
      if (s.readback_seq != 0) {
        return {"aura attempt ack " + id + as + " --readback " + std::to_string(s.readback_seq) +
                    " [--note TEXT]   (the readback apply printed)",
                "aura attempt reset " + id + as + " [--reason TEXT]"};
      }
      return {"aura attempt ack " + id + as + " [--note TEXT]",
              "aura attempt reset " + id + as + " [--reason TEXT]"};
    case Phase::kVerify:
      return {"aura attempt verify " + id + as};
    case Phase::kTransferGate:
      return {"aura attempt gate " + id + as};
    case Phase::kReceipt:
      return {"aura attempt receipt " + id + as + " --out FILE"};
    case Phase::kReflect:
      return {"aura attempt reflect " + id + as + " --text TEXT"};
    case Phase::kDone:
      return {"aura attempt start " + s.scenario_id + as};
  }
  return {};
}

void print_next(std::ostream& o, const attempt::AttemptState& s, std::string_view learner) {
  o << "next: " << app::next_step(s) << "\n";
  for (const std::string& command : next_commands(s, learner)) o << "  " << command << "\n";
}

Result<attempt::AttemptState> read_attempt_state(const Invocation& inv, std::string_view id) {
  if (!attempt::is_valid_attempt_id(id)) {
    return Status::invalid("'" + std::string(id) + "' is not an attempt ID");
  }
  auto log = open_reader(inv);
  if (!log.ok()) return log.status();
  return attempt::replay_attempt(**log, id);
}

int fail_with_next(const Invocation& inv, const Status& s, const attempt::AttemptState* st,
                   std::string_view learner, int exit_code) {
  std::cerr << "aura " << inv.command->path << ": " << s.message() << "\n";
  if (st != nullptr) {
    print_next(std::cerr, *st, learner);
  } else {
    // No attempt to go on with (an unknown id, a lab that cannot be opened): where to find one.
    std::cerr << "next: find the attempt, or start one\n  aura attempt list\n"
              << "  aura attempt start SCENARIO   (aura scenario list names the loaded ones)\n";
  }
  if (inv.json) {
    JsonWriter j;
    j.boolean("ok", false).str("error", s.message());
    if (st != nullptr) {
      j.str("phase", attempt::phase_name(st->phase)).str("next", app::next_step(*st));
    }
    std::cout << j.done() << std::endl;
  }
  return exit_code;
}

}  // namespace aura::cli
