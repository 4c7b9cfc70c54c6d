// Capabilities cut to the profile: the bounding set keeps only the profile's bits, so the
// command (root in its user namespace) gets no more than those at execve, and none by default.
#pragma once

#include <cstdint>

namespace aura::sandbox {

// Child side, no allocation: drops every capability not in `keep` (bit n = CAP n) from the
// bounding, ambient, inheritable, permitted and effective sets (effective/permitted only
// at the end, since earlier steps need CAP_SETPCAP), and sets PR_SET_NO_NEW_PRIVS.
// Returns 0 or errno.
int drop_linux_caps(uint64_t keep);

}  // namespace aura::sandbox
