// A nodes world's change set (docs/GATE.md, "Change set"): every node's writable layers read
// from the host through the descriptors its keeper holds (nsworld::Node::layers), compared
// with the same reading taken when the world was built. Nothing is read through a node's view.
#include <fcntl.h>

#include <algorithm>
#include <set>

#include "engine/common/file_io.h"
#include "engine/gate/change_set.h"
#include "workers/inspect/layer_read.h"
#include "workers/nodes/nodes_world.h"

namespace aura::workers::nodes {
namespace {

std::string layer_text(const inspect::LayerState& state) {
  std::string out;
  for (const auto& [path, entry] : state)
    out += gate::escape_change_path(path) + "\t" + entry + "\n";
  return out;
}

Result<inspect::LayerState> parse_layer_text(std::string_view text, const std::string& node) {
  inspect::LayerState out;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const size_t tab = text.find('\t', at);
    if (end == std::string_view::npos || tab == std::string_view::npos || tab > end)
      return Status::corruption("world.json: node " + node + ": a pristine entry is malformed");
    std::string path;
    AURA_ASSIGN_OR_RETURN(path, gate::unescape_change_path(text.substr(at, tab - at)));
    out[path] = std::string(text.substr(tab + 1, end - tab - 1));
    at = end + 1;
  }
  return out;
}

// The overlay whose mount covers `path`, or nullptr (the root tmpfs).
const nsworld::OverlayLayer* overlay_of(const nsworld::Node& node, const std::string& path) {
  for (const auto& o : node.overlays())
    if (path == o.inside || path.starts_with(o.inside + "/")) return &o;
  return nullptr;
}

}  // namespace

Result<inspect::LayerState> NodesWorld::read_layers(const LiveNode& n) const {
  auto opened = n.node->layers();
  if (!opened.ok()) return opened.status();
  const nsworld::Layers& layers = *opened;
  inspect::LayerRead r;
  r.uid_base = n.node->uid_base();
  inspect::LayerState state;
  Status s = inspect::read_layer(layers.root, "/", false, r, state);
  if (!s.is_ok()) return s.with_context("node " + n.spec->name + ": its root");
  for (const auto& o : n.node->overlays()) {
    const int upper =
        ::openat(layers.stage, o.upper.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (upper < 0) {
      return Status::io("node " + n.spec->name + ": the upper folder of " + o.inside + ": " +
                        file_io::errno_text(errno));
    }
    file_io::Fd guard(upper);
    s = inspect::read_layer(upper, o.inside, true, r, state);
    if (!s.is_ok()) return s.with_context("node " + n.spec->name + ": " + o.inside);
  }
  return state;
}

Status NodesWorld::record_pristine() {
  for (auto& n : nodes_) {
    inspect::LayerState state;
    AURA_ASSIGN_OR_RETURN(state, read_layers(n));
    n.pristine = layer_text(state);
  }
  return Status::ok();
}

Result<std::string> NodesWorld::changes() {
  AURA_RETURN_IF_ERROR(freeze_learner(true));
  auto text = [&]() -> Result<std::string> {
    std::vector<gate::Change> out;
    for (const auto& n : nodes_) {
      inspect::LayerState before, now;
      AURA_ASSIGN_OR_RETURN(before, parse_layer_text(n.pristine, n.spec->name));
      AURA_ASSIGN_OR_RETURN(now, read_layers(n));
      inspect::LayerRead lower;  // the image on the host: its own ids
      lower.uid_base = n.node->uid_base();
      // A path neither reading holds is as the image has it: for one under an overlay, what the
      // lower folder holds (a copy-up that changed nothing is no change).
      auto state_of = [&](const inspect::LayerState& s,
                          const std::string& path) -> Result<std::string> {
        if (auto it = s.find(path); it != s.end()) return it->second;
        const nsworld::OverlayLayer* o = overlay_of(*n.node, path);
        if (o == nullptr) return std::string(gate::kAbsent);
        return inspect::read_entry(o->lower + path.substr(o->inside.size()), lower);
      };
      std::set<std::string> paths;
      for (const auto& [p, e] : before) paths.insert(p);
      for (const auto& [p, e] : now) paths.insert(p);
      for (const std::string& p : paths) {
        std::string b, a;
        AURA_ASSIGN_OR_RETURN(b, state_of(before, p));
        AURA_ASSIGN_OR_RETURN(a, state_of(now, p));
        if (b != a) out.push_back({n.spec->name, p, std::move(b), std::move(a)});
        if (out.size() > gate::kMaxChanges)
          return Status::failed_precondition("the world changed more than " +
                                             std::to_string(gate::kMaxChanges) + " paths");
      }
    }
    return gate::change_set_text(std::move(out));
  }();
  Status thawed = freeze_learner(false);
  if (!text.ok()) return text.status();
  AURA_RETURN_IF_ERROR(thawed);
  return text;
}

}  // namespace aura::workers::nodes
