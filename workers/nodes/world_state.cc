// A nodes world's state file (world.json): written after the build, read back by reopen.
#include <signal.h>
#include <simdjson.h>
#include <unistd.h>

#include <map>

#include "engine/common/file_io.h"
#include "engine/common/json_writer.h"
#include "engine/scenario/call_dom.h"
#include "workers/inspect/node_view.h"
#include "workers/nodes/nodes_world.h"
#include "workers/nodes/stage.h"
#include "workers/nodes/world_parts.h"

namespace aura::workers::nodes {

namespace fs = std::filesystem;

namespace {

std::string mount_ids(const std::set<uint64_t>& ids) {
  JsonArray a;
  for (uint64_t id : ids) a.raw(std::to_string(id));
  return a.done();
}

// A node's image overlays, one "<inside>\t<upper>\t<lower>" line each (plan_mounts refuses
// whitespace in the paths).
std::string overlays_text(const std::vector<nsworld::OverlayLayer>& overlays) {
  std::string out;
  for (const auto& o : overlays) out += o.inside + "\t" + o.upper + "\t" + o.lower + "\n";
  return out;
}

Result<std::vector<nsworld::OverlayLayer>> parse_overlays(std::string_view text,
                                                          std::string_view node) {
  std::vector<nsworld::OverlayLayer> out;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\n', at);
    const std::string_view line = text.substr(at, end == text.npos ? text.npos : end - at);
    const size_t t1 = line.find('\t'), t2 = t1 == line.npos ? t1 : line.find('\t', t1 + 1);
    if (end == text.npos || t2 == line.npos || line.find('\t', t2 + 1) != line.npos ||
        line.substr(0, 1) != "/" || line.substr(t2 + 1, 1) != "/" ||
        line.substr(t1 + 1, t2 - t1 - 1).find("..") != line.npos) {
      return Status::corruption("world.json: node " + std::string(node) +
                                ": an overlay entry is malformed");
    }
    out.push_back({std::string(line.substr(0, t1)), std::string(line.substr(t1 + 1, t2 - t1 - 1)),
                   std::string(line.substr(t2 + 1))});
    at = end + 1;
  }
  return out;
}

std::string state_json(const std::string& scenario, const std::string& version,
                       const std::string& world, uint64_t seed, const Holder& h,
                       const std::string& tag, const std::vector<LiveNode>& nodes,
                       const std::map<std::string, std::string>& binaries) {
  JsonArray ns;
  for (const auto& n : nodes) {
    const nsworld::NodeState st = n.node->state();
    ns.raw(JsonWriter()
               .str("name", n.spec->name)
               .str("id", st.id)
               .num("init_pid", int64_t(st.init_pid))
               .str("init_start", st.init_start)
               .str("stage", st.stage.string())
               .num("uid_base", uint64_t(st.uid_base))
               .str("passwd", n.passwd)
               .str("group", n.group)
               .str("built", n.built)
               .raw("image_mounts", mount_ids(n.image_mounts))
               .str("overlays", overlays_text(st.overlays))
               .str("pristine", n.pristine)
               .done());
  }
  JsonWriter bins;
  for (const auto& [path, digest] : binaries) bins.str(path, digest);
  return JsonWriter()
      .str("magic", kStateMagic)
      .str("scenario", scenario)
      .str("version", version)
      .str("world", world)
      .num("seed", seed)
      .num("holder_pid", int64_t(h.pid))
      .str("holder_owner", h.owner)
      .str("net", tag)
      .raw("nodes", ns.done())
      .raw("binaries", bins.done())
      .done();
}

}  // namespace

Status NodesWorld::write_state() const {
  return file_io::replace_file_durably(work_dir_, work_dir_ / std::string(kStateFile),
                                       state_json(scenario_, version_, world_id_, seed_, holder_,
                                                  net_ ? net_->tag() : "", nodes_, binaries_),
                                       0600);
}

Status NodesWorld::reopen(const scenario::Manifest& manifest, std::string_view world_id,
                          const fs::path& work_dir) {
  work_dir_ = work_dir;
  std::string text;
  AURA_ASSIGN_OR_RETURN(
      text, file_io::read_regular_file(work_dir / std::string(kStateFile), "world.json", 1 << 20));
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(text).get(root) != simdjson::SUCCESS)
    return Status::corruption(work_dir.string() + "/world.json does not parse");
  auto str = [&](const char* key) -> std::string {
    std::string_view v;
    return root[key].get_string().get(v) == simdjson::SUCCESS ? std::string(v) : std::string();
  };
  if (str("magic") != kStateMagic || str("scenario") != manifest.id ||
      str("version") != manifest.version || str("world") != world_id) {
    return Status::failed_precondition(work_dir.string() + " holds another world");
  }
  uint64_t seed = 0;
  int64_t hp = 0;
  if (root["seed"].get_uint64().get(seed) != simdjson::SUCCESS ||
      root["holder_pid"].get_int64().get(hp) != simdjson::SUCCESS)
    return Status::corruption(work_dir.string() + "/world.json: seed or holder missing");
  AURA_RETURN_IF_ERROR(load_spec(manifest, world_id, seed));
  seed_ = seed;
  holder_.pid = pid_t(hp);
  holder_.owner = str("holder_owner");
  if (!sandbox::LeakLedger::owner_alive(holder_.owner)) {
    return Status::failed_precondition("world " + world_id_ + " in " + work_dir.string() +
                                       " is gone (its holder process exited)");
  }
  ledger_ = std::make_unique<sandbox::LeakLedger>(host_.state_dir, holder_.owner);
  std::vector<std::string> names;
  for (const auto& n : spec_.nodes) names.push_back(n.name);
  netns::WorldNetwork net;
  AURA_ASSIGN_OR_RETURN(net, netns::WorldNetwork::adopt(str("net"), names, ledger_.get()));
  net_ = std::make_unique<netns::WorldNetwork>(std::move(net));
  simdjson::dom::array arr;
  if (root["nodes"].get_array().get(arr) != simdjson::SUCCESS)
    return Status::corruption("world.json: nodes");
  for (simdjson::dom::element e : arr) {
    std::string_view name, id, start, stage;
    int64_t pid = 0;
    uint64_t base = 0;
    std::string_view passwd, group, built, overlays, pristine;
    if (e["name"].get_string().get(name) || e["id"].get_string().get(id) ||
        e["init_start"].get_string().get(start) || e["stage"].get_string().get(stage) ||
        e["init_pid"].get_int64().get(pid) || e["uid_base"].get_uint64().get(base) ||
        e["passwd"].get_string().get(passwd) || e["group"].get_string().get(group) ||
        e["built"].get_string().get(built) || e["overlays"].get_string().get(overlays) ||
        e["pristine"].get_string().get(pristine)) {
      return Status::corruption("world.json: a node entry is incomplete");
    }
    const NodeSpec* ns = spec_.find(name);
    if (ns == nullptr) return Status::corruption("world.json: unknown node " + std::string(name));
    nsworld::NodeState st;
    st.id = std::string(id);
    st.init_pid = pid_t(pid);
    st.init_start = std::string(start);
    st.stage = std::string(stage);
    st.state_dir = host_.state_dir;
    st.uid_base = uint32_t(base);
    st.owner = holder_.owner;
    AURA_ASSIGN_OR_RETURN(st.overlays, parse_overlays(overlays, name));
    LiveNode live;
    live.spec = ns;
    live.address = net_->address(ns->name);
    live.passwd = std::string(passwd);
    live.group = std::string(group);
    live.built = std::string(built);
    live.pristine = std::string(pristine);
    simdjson::dom::array mounts;
    if (e["image_mounts"].get_array().get(mounts) != simdjson::SUCCESS)
      return Status::corruption("world.json: node " + std::string(name) + ": image_mounts");
    for (simdjson::dom::element m : mounts) {
      uint64_t id = 0;
      if (m.get_uint64().get(id) != simdjson::SUCCESS)
        return Status::corruption("world.json: node " + std::string(name) + ": image_mounts");
      live.image_mounts.insert(id);
    }
    AURA_ASSIGN_OR_RETURN(live.node, nsworld::Node::attach(st, *tree_));
    nodes_.push_back(std::move(live));
  }
  if (nodes_.size() != spec_.nodes.size()) return Status::corruption("world.json: nodes missing");
  simdjson::dom::object bins;
  if (root["binaries"].get_object().get(bins) != simdjson::SUCCESS)
    return Status::corruption("world.json: binaries");
  for (auto field : bins) {
    std::string_view digest;
    if (field.value.get_string().get(digest) != simdjson::SUCCESS)
      return Status::corruption("world.json: binaries." + std::string(field.key));
    binaries_[std::string(field.key)] = std::string(digest);
  }
  return Status::ok();
}

}  // namespace aura::workers::nodes
