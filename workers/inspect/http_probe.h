// HTTP requests the supervisor makes from inside a world's network, never from the host's: a
// forked child joins only the network namespace of a node process, connects, sends one HTTP/1.0
// GET and streams at most `cap` response bytes back over a pipe. The parent kills it at the
// timeout, so a world's server can make a probe slow but never make the host wait longer.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::inspect {

// The process that listened on a unix socket the probe connected to, as the kernel recorded it
// at listen(2) (SO_PEERCRED), its pid, uid and gid numbered in the supervisor's namespaces (the
// host's ids, not the node's): who answers, whatever name or link led to the socket.
struct PeerCred {
  pid_t pid = 0;
  uint32_t uid = 0, gid = 0;
};

struct HttpResult {
  bool connected = false;        // the connection was made
  std::optional<PeerCred> peer;  // unix sockets: the listener's credentials, once connected
  int status = 0;                // the status line's code; 0 when there is none
  std::string headers;           // the header lines after the status line, CRLFs kept
  std::string body;
  bool truncated = false;  // the response was longer than `cap` (only `cap` bytes were kept)
  std::string error;       // empty on a well-formed response: what went wrong otherwise
};

// GET http://<ipv4>:<port><path> with "Host: <host>", from the network namespace of process
// `netns_pid` (/proc/<pid>/ns/net, opened before fork). Connection refused, a timeout and a
// malformed response are in HttpResult::error; a bad argument is kInvalidArgument, a process
// that is gone kFailedPrecondition, a host failure (fork, pipe) kIo.
Result<HttpResult> http_get_tcp(pid_t netns_pid, std::string_view ipv4, uint16_t port,
                                std::string_view path, std::string_view host,
                                std::chrono::milliseconds timeout, size_t cap);

// GET <path> over the unix socket at `socket_path` inside node `init_pid`, from the node's
// network namespace. The socket is opened O_PATH inside the node's root (RESOLVE_IN_ROOT, the
// final name not followed) and must be a socket (else HttpResult::error names its type); the
// child connects through /proc/self/fd/<that descriptor>, so no path is resolved again, and
// reads the listener's credentials (HttpResult::peer) from the connection.
Result<HttpResult> http_get_unix(pid_t init_pid, std::string_view socket_path,
                                 std::string_view path, std::chrono::milliseconds timeout,
                                 size_t cap);

}  // namespace aura::inspect
