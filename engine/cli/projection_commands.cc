#include "engine/cli/cli.h"

namespace aura::cli {

void register_projection_commands(Registry& r) { (void)r; }

}  // namespace aura::cli
