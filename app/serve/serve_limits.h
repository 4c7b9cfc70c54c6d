// The HTTP front's named limits (docs/SERVE.md, "Limits"): what one request, one connection and
// one client address may take. One place, a default on every field, so the server, the tests and
// the docs read the same numbers.
#pragma once

#include <chrono>
#include <cstddef>

namespace aura::serve {

struct Limits {
  size_t header_bytes = 16 * 1024;    // the request line and header block (431 past it)
  size_t header_fields = 64;          // header fields of one request (431 past it)
  size_t body_bytes = 64 * 1024;      // a request body (413 past it)...
  size_t ir_body_bytes = 256 * 1024;  // ...but an InterventionIR (submit, validate)...
  // ...and a receipt to verify: an O2 receipt is about 140 KiB and one with more worlds, facts
  // and events is larger (the format allows 16 MiB; `aura receipt verify` reads those).
  size_t receipt_body_bytes = 1024 * 1024;
  // Request bodies the front holds at once, all connections together (503 past it): what
  // bounds its memory under a flood of large bodies. Each is held in several copies on its
  // way (the read buffer, the request, the parsed JSON, the daemon's args and frame): about
  // seven times this at the peak.
  size_t bodies_in_flight_bytes = size_t(16) << 20;
  size_t json_depth = 32;                            // nesting of a JSON body (400 past it)
  std::chrono::milliseconds header_timeout{10'000};  // from waiting for a request to its headers
  std::chrono::milliseconds body_timeout{30'000};    // from the headers to the whole body
  std::chrono::milliseconds write_timeout{30'000};   // one response (or one event) to the client
  // Open client connections; when all are open, a newcomer takes an idle one back from the
  // client holding most (429 when none is idle or nobody holds more than it).
  size_t max_connections = 1024;
  size_t max_connections_per_address = 256;  // ...from one client address (429 past it)
  // Daemon connections: the daemon serves 128 at once (docs/formats/daemon-protocol.md), so
  // calls and streams together stay below it, leaving room for the command line.
  size_t max_daemon_calls = 64;        // concurrent request/reply calls (the rest wait their turn)
  size_t max_streams = 48;             // open event streams (shared as the connections are)...
  size_t max_streams_per_address = 8;  // ...and from one client address (429 past it)
  size_t max_idle_daemon_connections = 64;              // kept for reuse after a call
  std::chrono::milliseconds daemon_idle_reuse{60'000};  // the daemon closes idle ones at 120 s
  // An event stream with no frame from the daemon for this long is closed (it sends a
  // keep-alive every 15 s).
  std::chrono::milliseconds stream_silence{45'000};
};

}  // namespace aura::serve
