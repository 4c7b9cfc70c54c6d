// `aura serve`: the HTTP front (docs/SERVE.md). Parses its flags and runs app/serve; the lines a
// person reads go to stdout, the request log (JSON lines) to stderr.
#include <iostream>

#include "app/cli/cli.h"
#include "app/lab/front_user.h"
#include "app/serve/serve.h"

namespace aura::cli {
namespace {

int serve_main(Invocation& inv) {
  serve::ServeOptions o;
  o.data = inv.data_dir;
  o.keys = inv.keys_dir;
  o.socket = inv.get("socket");
  o.listen = inv.get("listen", o.listen);
  auto port = inv.get_u64("port", 8080);
  if (!port.ok()) return inv.fail(port.status(), 2);
  if (*port > 65535) return inv.fail(Status::invalid("--port must be 0..65535"), 2);
  o.port = uint16_t(*port);
  o.user = inv.get("user", app::default_front_user());
  o.ui = inv.get("ui");
  o.tls_cert = inv.get("tls-cert");
  o.tls_key = inv.get("tls-key");
  o.operator_token_file = inv.get("operator-token-file");
  o.scenarios = inv.get("scenarios");
  if (inv.has("origin")) o.origins.push_back(inv.get("origin"));
  o.start_daemon = !inv.has("no-daemon");
  auto threads = inv.get_u64("threads", 0);
  if (!threads.ok()) return inv.fail(threads.status(), 2);
  if (*threads > 64) return inv.fail(Status::invalid("--threads must be 0..64"), 2);
  o.threads = size_t(*threads);
  auto grace = inv.get_u64("drain-grace", 10);
  if (!grace.ok()) return inv.fail(grace.status(), 2);
  if (*grace > 600) return inv.fail(Status::invalid("--drain-grace must be 0..600 seconds"), 2);
  o.drain_grace = std::chrono::seconds(*grace);
  Status s = serve::run(o, [](std::string_view line) { std::cout << line << std::endl; });
  if (!s.is_ok()) return inv.fail(s);
  return 0;
}

}  // namespace

void register_serve_commands(CommandTable& r) {
  r.add({"serve",
         "",
         "serve the lab over HTTP: the JSON API under /api/v1 and the browser lab",
         "Binds its port as root, then drops to --user (made when missing: no capabilities,\n"
         "no_new_privs, a seccomp filter) and reaches the lab only through the engine daemon's\n"
         "socket, through its folder opened before the drop. When no daemon\n"
         "answers there, starts one ('aura daemon') on --data and --keys and stops it on exit.\n"
         "Started as --user itself (a service manager's User=) it binds a port of 1024 or more,\n"
         "starts no daemon and only sets no_new_privs and its filter. Serves beyond loopback only\n"
         "with --tls-cert and --tls-key. Prints the URL once the daemon answered it as --user\n"
         "(or exits naming the path and permission it lacks). SIGINT or SIGTERM drains: no new\n"
         "requests, the answers under way finished (up to --drain-grace), then it stops; a second\n"
         "signal stops at once. Request log: JSON lines on stderr. docs/SERVE.md.",
         {{"socket", "PATH", "the daemon's socket (default DATA/../run/daemon.sock)"},
          {"listen", "ADDR", "the address to listen on (default 127.0.0.1)"},
          {"port", "P", "the port (default 8080; 0: any free port)"},
          {"user", "NAME",
           "the unprivileged user to drop to, made when missing (default $AURA_FRONT_USER, else "
           "aura-web)"},
          {"ui", "DIR",
           "the built browser lab (default: PREFIX/share/aura/ui installed, the source tree's "
           "ui/dist when built)"},
          {"tls-cert", "FILE", "TLS certificate chain (PEM); with --tls-key"},
          {"tls-key", "FILE", "TLS private key (PEM); with --tls-cert"},
          {"operator-token-file", "FILE",
           "the operator token file, passed to a daemon this command starts"},
          {"scenarios", "DIR",
           "the packages a daemon this command starts sets a new lab up with (its default: the "
           "bundled ones)"},
          {"origin", "URL", "one more origin allowed to POST (a public name for the server)"},
          {"no-daemon", "", "fail instead of starting a daemon when none answers"},
          {"threads", "N", "event loops, a thread each (1..64; default: one per core)"},
          {"drain-grace", "S",
           "seconds a stop waits for the answers under way (0..600, default 10)"}},
         0,
         0,
         serve_main});
}

}  // namespace aura::cli
