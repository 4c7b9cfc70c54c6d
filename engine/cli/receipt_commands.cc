#include "engine/cli/cli.h"

namespace aura::cli {

void register_receipt_commands(Registry& r) { (void)r; }

}  // namespace aura::cli
