// An Ansible vars file (group_vars/*.yml, host_vars/*.yml) as a flat mapping of scalars: the
// lines `key: value` at column 0. The runner's vars.set and vars.unset edit one key's line and
// keep every other byte; the supervisor's override selectors and checks read values and keys
// with these same functions (the one reader of the format). Anything else in the file
// (comments, `---`, nested values under a key) is kept and never interpreted, except that the
// indented lines under a key belong to that key.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/status.h"

namespace aura::runner {

// [A-Za-z_][A-Za-z0-9_]{0,63}
bool is_var_key(std::string_view key);
// A value vars.set writes unquoted: 1..256 bytes of [A-Za-z0-9_./:@+-], not starting with '-'.
bool is_plain_var_value(std::string_view value);

// The value of top-level `key`, without quotes ('…' or "…") or a trailing ` #comment`;
// nullopt when no line sets it (the last line wins when several do, as in YAML loaders that
// accept duplicates).
std::optional<std::string> vars_get(std::string_view text, std::string_view key);

// The top-level keys, in file order (duplicates kept). A line that cannot be read as one (a
// flow mapping, an anchor, a tag ...) is returned as "?LINE" (its first 64 bytes), so that a
// check comparing keys fails on it.
std::vector<std::string> vars_keys(std::string_view text);

// The text with `key`'s line (and the indented lines under it) removed; not found when absent.
Result<std::string> vars_unset(std::string_view text, std::string_view key);

// The text with `key: value` in place of `key`'s line (and the indented lines under it), or
// appended when the key is absent.
std::string vars_set(std::string_view text, std::string_view key, std::string_view value);

}  // namespace aura::runner
