// The next step of an attempt as the command line shows it after every `aura attempt` command,
// run or refused: app::next_step's words (the API's `next`) and the command that takes it.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "app/cli/cli.h"
#include "engine/attempt/attempt_state.h"
#include "engine/common/status.h"

namespace aura::cli {

// The learner of `aura attempt` commands without --learner.
inline constexpr std::string_view kDefaultLearner = "local";

// The commands that take the attempt on from its phase, as `learner` types them
// ("aura attempt probe ID '{...}'"); --learner is added unless it is the default.
std::vector<std::string> next_commands(const attempt::AttemptState& s, std::string_view learner);

// "next: <words>" and the commands, one line each.
void print_next(std::ostream& o, const attempt::AttemptState& s, std::string_view learner);

// The attempt's state read from the log read-only (works while another process writes it), or
// why it cannot be read.
Result<attempt::AttemptState> read_attempt_state(const Invocation& inv, std::string_view id);

// Reports `s` as Invocation::fail does ("aura <command>: <message>" on stderr), then the
// attempt's next step on stderr (when its state is unknown: how to find or start one); with --json
// the last line is
// {"ok":false,"error":..,"phase":..,"next":..}. Returns `exit_code`.
int fail_with_next(const Invocation& inv, const Status& s, const attempt::AttemptState* st,
                   std::string_view learner, int exit_code);

}  // namespace aura::cli
