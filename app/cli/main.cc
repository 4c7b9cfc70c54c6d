#include "app/cli/cli.h"
#include "engine/crypto/ed25519.h"

int main(int argc, char** argv) {
  aura::crypto_init();
  aura::cli::CommandTable commands;
  aura::cli::register_log_commands(commands);
  aura::cli::register_bench_commands(commands);
  aura::cli::register_scenario_commands(commands);
  aura::cli::register_attempt_commands(commands);
  aura::cli::register_receipt_commands(commands);
  aura::cli::register_projection_commands(commands);
  aura::cli::register_bench_replay_commands(commands);
  aura::cli::register_caps_commands(commands);
  aura::cli::register_sandbox_commands(commands);
  aura::cli::register_worker_commands(commands);
  aura::cli::register_bench_worlds_commands(commands);
  aura::cli::register_bench_sandbox_commands(commands);
  aura::cli::register_daemon_commands(commands);
  aura::cli::register_bench_serve_commands(commands);
  aura::cli::register_bench_learners_commands(commands);
  aura::cli::register_serve_commands(commands);
  return commands.main(argc, argv);
}
