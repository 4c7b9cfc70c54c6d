#include "app/serve/fair_share.h"

#include <algorithm>

namespace aura::serve {

size_t FairShare::held_by(const std::string& client) const {
  auto it = by_client_.find(client);
  return it == by_client_.end() ? 0 : it->second;
}

std::vector<std::string> FairShare::over_share(const std::string& client) const {
  const size_t mine = held_by(client);
  std::vector<std::pair<size_t, std::string>> heavy;
  for (const auto& [c, n] : by_client_) {
    if (c != client && n >= mine + 2) heavy.emplace_back(n, c);
  }
  std::sort(heavy.begin(), heavy.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::vector<std::string> out;
  out.reserve(heavy.size());
  for (auto& h : heavy) out.push_back(std::move(h.second));
  return out;
}

void FairShare::add(const std::string& client) {
  ++by_client_[client];
  ++held_;
}

void FairShare::remove(const std::string& client) {
  auto it = by_client_.find(client);
  if (it == by_client_.end()) return;
  if (--it->second == 0) by_client_.erase(it);
  --held_;
}

}  // namespace aura::serve
