#include "engine/cli/cli.h"

namespace aura::cli {

void register_bench_replay_commands(Registry& r) { (void)r; }

}  // namespace aura::cli
