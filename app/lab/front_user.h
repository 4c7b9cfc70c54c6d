// The unprivileged user the HTTP front runs as (default aura-web): a system user with its own
// group, no home and no login shell, created by set-up when missing. The daemon serves this
// user's uid besides root; the socket's folder belongs to its group.
#pragma once

#include <string>
#include <string_view>

#include "engine/common/status.h"

namespace aura::app {

inline constexpr std::string_view kDefaultFrontUser = "aura-web";

// The front's user when no flag names it: $AURA_FRONT_USER when set and not empty (the systemd
// units' setting, and how a test names a user the machine does not have), else aura-web.
std::string default_front_user();

// Creates the user (useradd --system) unless it exists. `created`, when given, says which.
// Refuses a name that is not [a-z_][a-z0-9_-]{0,31} and a user that exists with uid 0.
Status ensure_front_user(std::string_view name, bool* created = nullptr);

}  // namespace aura::app
