// `aura attempt catalog` in words: the text is rendered from the catalog's JSON
// (app::attempt_catalog_json), the same document the API serves, so the terminal shows exactly
// what a browser is shown and nothing a learner may not see.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::cli {

// The catalog as a learner reads it at a terminal: the budget, hypotheses, probes and actions
// with each parameter's type and bounds, target terms and checks. Refuses JSON that is not a
// catalog (a bug, never a learner's doing).
Result<std::string> catalog_text(std::string_view catalog_json);

}  // namespace aura::cli
