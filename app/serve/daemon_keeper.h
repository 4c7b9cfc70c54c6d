// The embedded default's engine daemon: `aura daemon` started as the grandchild of the front
// through a small keeper process that stays root. The front drops its privileges and so can no
// longer signal a root daemon; it holds the write end of a pipe instead. When that pipe closes
// (the front stops, or dies), the keeper sends the daemon SIGTERM, waits for it (it reaps its
// worlds) and exits. The daemon runs in its own process group, so a terminal's Ctrl-C reaches
// the front alone and the daemon is stopped once, by the keeper.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>

#include "engine/common/status.h"

namespace aura::serve {

struct DaemonCommand {
  std::filesystem::path exe = "/proc/self/exe";
  std::filesystem::path data;
  std::filesystem::path keys;
  std::filesystem::path socket;
  std::string front_user;
  std::filesystem::path operator_token_file;  // passed on when given
  std::filesystem::path scenarios;            // --scenarios, passed on when given
  // How long the keeper waits for the daemon after SIGTERM before SIGKILL.
  std::chrono::seconds stop_grace{120};
};

class DaemonKeeper {
 public:
  // Forks the keeper, which forks and execs the daemon. REQUIRES: the process has one thread
  // and is root (before the privileges are dropped).
  static Result<DaemonKeeper> start(const DaemonCommand& command);
  DaemonKeeper(DaemonKeeper&& o) noexcept;
  DaemonKeeper& operator=(DaemonKeeper&&) = delete;
  ~DaemonKeeper();  // stop()

  // Whether the keeper (and so the daemon) has exited; its status in `*exit_status`.
  bool exited(int* exit_status = nullptr);
  // Asks the keeper to stop the daemon and waits for both. Idempotent.
  Status stop();

  pid_t keeper_pid() const { return keeper_; }

 private:
  DaemonKeeper(pid_t keeper, int pipe_fd) : keeper_(keeper), pipe_fd_(pipe_fd) {}
  pid_t keeper_ = -1;
  int pipe_fd_ = -1;
  std::optional<int> status_;
};

}  // namespace aura::serve
