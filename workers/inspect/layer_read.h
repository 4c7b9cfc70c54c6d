// A node's writable layers as the host reads them: every entry of its root tmpfs and of each
// image overlay's upper folder, through descriptors the host holds (nsworld::Node::layers),
// never through the node's own view. What each entry is (type, mode, owner, group, links,
// extended attributes and content digest) is written as gate::EntryState text, so two readings
// compare entry by entry (the change set, docs/GATE.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "engine/common/status.h"

namespace aura::inspect {

// Path inside the node -> gate::entry_text of what is there.
using LayerState = std::map<std::string, std::string>;

struct LayerRead {
  uint32_t uid_base = 0;       // the node's uid 0 and gid 0 on the host
  uint32_t id_count = 65'536;  // ids the node maps; one outside shows as 65534, as inside
  size_t max_entries = 200'000;
  size_t entries = 0;  // read so far, against max_entries
};

// Adds every entry below folder `dir` (an O_PATH host descriptor; its path in the node is
// `inside`) to `out`, recursively; the folder itself is not added. An entry on another
// filesystem (a mount point) is left out with everything below it. With `upper` (an overlay's
// upper folder): a whiteout is "absent", a folder that hides the lower one's entries has content
// "opaque", and the overlay's own extended attributes are not part of any entry. More than
// r.max_entries entries, deeper than 64 levels or a file over 64 MiB is kFailedPrecondition.
Status read_layer(int dir, const std::string& inside, bool upper, LayerRead& r, LayerState& out);

// The entry text of host path `path` (what an image overlay's lower folder holds), as
// read_layer records it: "absent" when there is nothing.
Result<std::string> read_entry(const std::string& path, LayerRead& r);

}  // namespace aura::inspect
