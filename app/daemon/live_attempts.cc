#include "app/daemon/live_attempts.h"

#include <algorithm>
#include <set>

#include "engine/common/memory.h"

namespace aura::daemon {
namespace {

uint32_t seconds_until(SteadyClock::time_point t, SteadyClock::time_point now) {
  if (t <= now) return 1;
  auto s = std::chrono::duration_cast<std::chrono::seconds>(t - now).count() + 1;
  return uint32_t(std::min<int64_t>(s, 86400));
}

}  // namespace

void LiveAttempts::sync_locked(const std::vector<std::string>& held, SteadyClock::time_point now) {
  const std::set<std::string> h(held.begin(), held.end());
  for (auto it = live_.begin(); it != live_.end();) {
    it = h.count(it->first) ? std::next(it) : live_.erase(it);
  }
  for (const auto& a : held) live_.try_emplace(a, Entry{"", now});
}

uint32_t LiveAttempts::next_free_s_locked(const std::string* client,
                                          SteadyClock::time_point now) const {
  std::optional<SteadyClock::time_point> oldest;
  for (const auto& [a, e] : live_) {
    if (client && e.client != *client) continue;
    if (!oldest || e.last < *oldest) oldest = e.last;
  }
  if (!oldest) return 60;  // only starts under way: a minute
  return seconds_until(*oldest + limits_.idle, now);
}

std::optional<LiveRefusal> LiveAttempts::reserve(const std::string& client,
                                                 const std::vector<std::string>& held,
                                                 SteadyClock::time_point now) {
  std::lock_guard lock(mu_);
  sync_locked(held, now);
  size_t starting = 0;
  for (const auto& [c, n] : starting_) starting += n;
  if (!client.empty()) {
    size_t mine = starting_.count(client) ? starting_.at(client) : 0;
    for (const auto& [a, e] : live_) mine += e.client == client ? 1 : 0;
    if (mine >= limits_.per_client) {
      return LiveRefusal{429,
                         "your address has " + std::to_string(mine) + " live attempts, its most (" +
                             std::to_string(limits_.per_client) +
                             "): finish or abandon one, or wait until an idle one is ended",
                         next_free_s_locked(&client, now)};
    }
  }
  if (live_.size() + starting >= limits_.total) {
    return LiveRefusal{503,
                       "the lab holds " + std::to_string(limits_.total) +
                           " live attempts, as many as this machine runs; try again later",
                       next_free_s_locked(nullptr, now)};
  }
  ++starting_[client];
  return std::nullopt;
}

void LiveAttempts::unreserve(const std::string& client) {
  std::lock_guard lock(mu_);
  auto it = starting_.find(client);
  if (it == starting_.end()) return;
  if (--it->second == 0) starting_.erase(it);
}

void LiveAttempts::bind(const std::string& client, const std::string& attempt,
                        SteadyClock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = starting_.find(client);
  if (it != starting_.end() && --it->second == 0) starting_.erase(it);
  live_[attempt] = Entry{client, now};
}

void LiveAttempts::touch(const std::string& attempt, SteadyClock::time_point now) {
  std::lock_guard lock(mu_);
  auto it = live_.find(attempt);
  if (it != live_.end()) it->second.last = now;
}

std::vector<std::string> LiveAttempts::expired(const std::vector<std::string>& held,
                                               SteadyClock::time_point now) {
  std::lock_guard lock(mu_);
  sync_locked(held, now);
  std::vector<std::pair<SteadyClock::time_point, std::string>> idle;
  for (const auto& [a, e] : live_) {
    if (now - e.last >= limits_.idle) idle.emplace_back(e.last, a);
  }
  std::sort(idle.begin(), idle.end());
  std::vector<std::string> out;
  for (auto& i : idle) out.push_back(std::move(i.second));
  return out;
}

std::string LiveAttempts::client_of(const std::string& attempt) const {
  std::lock_guard lock(mu_);
  auto it = live_.find(attempt);
  return it == live_.end() ? "" : it->second.client;
}

size_t LiveAttempts::live() const {
  std::lock_guard lock(mu_);
  return live_.size();
}

size_t LiveAttempts::total_for_machine(uint64_t world_bytes, uint64_t open_files,
                                       uint64_t files_per_world) {
  const uint64_t by_memory = world_bytes ? meminfo_bytes("MemTotal") / 2 / world_bytes : 0;
  uint64_t by_files =
      files_per_world && open_files > 1024 ? (open_files - 1024) / files_per_world : 0;
  return size_t(std::max<uint64_t>(2, std::min(by_memory, by_files)));
}

}  // namespace aura::daemon
