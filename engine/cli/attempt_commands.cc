#include "engine/cli/cli.h"

namespace aura::cli {

void register_attempt_commands(Registry& r) { (void)r; }

}  // namespace aura::cli
