#include "workers/drivers.h"

#include "workers/filetree/filetree_driver.h"
#include "workers/nodes/nodes_driver.h"

namespace aura::workers {

std::unique_ptr<world::WorldDriver> make_driver(std::string_view name) {
  if (name == filetree::kDriverName) return std::make_unique<filetree::FiletreeDriver>();
  if (name == nodes::kDriverName) return std::make_unique<nodes::NodesDriver>();
  return nullptr;
}

std::unique_ptr<world::WorldDriver> make_driver(std::string_view name,
                                                const world::WorldHost& host) {
  auto d = make_driver(name);
  if (d) d->configure(host);
  return d;
}

std::vector<std::string> driver_names() {
  return {std::string(filetree::kDriverName), std::string(nodes::kDriverName)};
}

}  // namespace aura::workers
