// The run's network: a fresh network namespace whose only interface is `lo`, brought up, with no
// route anywhere else (no veth, no default route), so nothing leaves the run.
#pragma once

namespace aura::sandbox {

// Child side, no allocation: sets IFF_UP on lo. Returns 0 or errno.
// REQUIRES: CAP_NET_ADMIN in the namespace's owning user namespace.
int bring_loopback_up();

}  // namespace aura::sandbox
