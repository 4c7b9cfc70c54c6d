// A capped resource shared by clients (the front's connections, its event streams), counted by
// client address, with the rule that decides who gives a place up when it is full: a newcomer
// is let in by taking a place back from the heaviest holder, as long as that holder would still
// hold more than the newcomer (max-min fairness). One client, or a few, can then fill the
// resource only while nobody else asks. Not thread-safe: its owner holds a lock.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace aura::serve {

class FairShare {
 public:
  FairShare(size_t cap, size_t per_client) : cap_(cap), per_client_(per_client) {}

  size_t cap() const { return cap_; }
  size_t per_client() const { return per_client_; }
  size_t held() const { return held_; }
  size_t held_by(const std::string& client) const;
  bool full() const { return held_ >= cap_; }
  bool client_full(const std::string& client) const { return held_by(client) >= per_client_; }

  // The clients a full resource may take a place back from for `client`: each holds at least
  // two more than `client` does now (so after the move it still holds at least as many),
  // heaviest first; ties by address, for a stable order.
  std::vector<std::string> over_share(const std::string& client) const;

  void add(const std::string& client);
  void remove(const std::string& client);

 private:
  size_t cap_, per_client_;
  size_t held_ = 0;
  std::map<std::string, size_t> by_client_;
};

}  // namespace aura::serve
