#include "app/cli/cli.h"
#include "engine/crypto/ed25519.h"

int main(int argc, char** argv) {
  aura::crypto_init();
  aura::cli::Registry registry;
  aura::cli::register_log_commands(registry);
  aura::cli::register_bench_commands(registry);
  aura::cli::register_scenario_commands(registry);
  aura::cli::register_attempt_commands(registry);
  aura::cli::register_receipt_commands(registry);
  aura::cli::register_projection_commands(registry);
  aura::cli::register_bench_replay_commands(registry);
  aura::cli::register_caps_commands(registry);
  aura::cli::register_sandbox_commands(registry);
  aura::cli::register_worker_commands(registry);
  aura::cli::register_bench_worlds_commands(registry);
  aura::cli::register_bench_sandbox_commands(registry);
  return registry.main(argc, argv);
}
