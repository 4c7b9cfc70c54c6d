// How the front reaches the daemon's socket whatever the folders above it allow: the socket's
// folder is opened (O_PATH) before the privilege drop, and every connection goes through that
// handle (/proc/self/fd/N/NAME), so after the drop only the folder itself (search) and the socket
// (write) must admit the front's user — the daemon makes them so (0750 root:<front's group>,
// 0660). A data folder under a 0700 parent (mktemp -d, /root) is then reachable however its path
// was spelled. The handle grants nothing else: anything reached from it by name is checked
// against the front's own uid as usual. docs/ARCHITECTURE.md, "Trust levels of the front".
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>

#include "engine/common/status.h"

namespace aura::serve {

class DaemonReach {
 public:
  // Opens the folder of `socket` (as the process is: root before its drop, or the front's user).
  // The error names the first folder on the way this process may not search.
  static Result<DaemonReach> open(const std::filesystem::path& socket);
  DaemonReach(DaemonReach&& o) noexcept;
  DaemonReach& operator=(DaemonReach&&) = delete;
  ~DaemonReach();

  const std::filesystem::path& socket() const { return socket_; }
  // The path to connect to: /proc/self/fd/N/NAME (valid while this object lives).
  std::filesystem::path connect_path() const;
  // What keeps this process (its effective uid and groups) from the socket: no search on the
  // folder, no write on the socket, or no socket there; empty when the modes admit it.
  std::string problem() const;

 private:
  DaemonReach(std::filesystem::path socket, int dir_fd) : socket_(std::move(socket)), fd_(dir_fd) {}
  std::filesystem::path socket_;
  int fd_ = -1;
};

// The first folder of `path`'s parents (from /) that this process may not search, described as
// "no search (x) permission on DIR (mode 0700, owner 0:0, this process uid 998 gid 998)"; empty
// when every one admits it.
std::string first_unsearchable(const std::filesystem::path& path);

}  // namespace aura::serve
