#include "app/lab/access.h"

#include <sodium.h>

#include <array>

#include "engine/attempt/attempt_state.h"
#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/events/access_events.h"

namespace aura::app {

NewToken new_token() {
  std::array<uint8_t, 32> b{};
  random_bytes(b);
  NewToken c;
  c.token = to_hex(b);
  c.sha256 = to_hex(sha256(c.token));
  sodium_memzero(b.data(), b.size());
  return c;
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status grant_access(EventLog& log, std::string_view attempt, std::string_view token_sha256) {
  events::AttemptAccess a{std::string(attempt), std::string(token_sha256)};
  EventDraft d;
  d.stream = attempt::stream_of(attempt);
  d.type = events::kAttemptAccess;
  d.actor = "engine";
  d.payload = a.encode();
  auto r = log.append(d);
  return r.ok() ? Status::ok() : r.status();
}

Status check_access(const EventLog& log, std::string_view attempt, std::string_view token) {
  if (!attempt::is_valid_attempt_id(attempt)) return Status::invalid("not an attempt id");
  std::string current;
  bool any = false;
  Status bad;
  events::PayloadReader reader;
  Status s = log.read_stream(attempt::stream_of(attempt), 0, [&](const EventView& e) {
    any = true;
    if (e.type != events::kAttemptAccess) return true;
    auto a = events::AttemptAccess::decode(reader, e);
    if (!a.ok()) {
      bad = a.status();
      return false;
    }
    current = a->token_sha256;
    return true;
  });
  if (!s.is_ok()) return s;
  if (!bad.is_ok()) return bad;
  if (!any) return Status::not_found("no attempt " + std::string(attempt));
  if (current.empty() || !equal_constant_time(to_hex(sha256(token)), current)) {
    return Status::failed_precondition("unauthorized");
  }
  return Status::ok();
}

Result<attempt::AttemptState> AttemptCache::open(std::string_view attempt, std::string_view token) {
  auto e = fold(attempt);
  if (!e.ok()) return e.status();
  if (e->token_sha256.empty() || !equal_constant_time(to_hex(sha256(token)), e->token_sha256)) {
    return Status::failed_precondition("unauthorized");
  }
  return std::move(e->state);
}

Result<attempt::AttemptState> AttemptCache::state(std::string_view attempt) {
  auto e = fold(attempt);
  if (!e.ok()) return e.status();
  return std::move(e->state);
}

Result<AttemptCache::Entry> AttemptCache::fold(std::string_view attempt) {
  if (!attempt::is_valid_attempt_id(attempt)) return Status::invalid("not an attempt id");
  std::lock_guard lock(mu_);
  auto it = entries_.find(attempt);
  Entry e = it == entries_.end() ? Entry{} : it->second;
  Status folded = Status::ok();
  events::PayloadReader reader;
  Status read = log_.read_stream(attempt::stream_of(attempt), e.next_seq, [&](const EventView& v) {
    if (v.type == events::kAttemptAccess) {
      auto a = events::AttemptAccess::decode(reader, v);
      if (!a.ok()) {
        folded = a.status();
        return false;
      }
      e.token_sha256 = a->token_sha256;
    }
    folded = attempt::fold_event(e.state, v);
    e.next_seq = v.seq + 1;
    return folded.is_ok();
  });
  AURA_RETURN_IF_ERROR(read);
  AURA_RETURN_IF_ERROR(folded.with_context("attempt " + std::string(attempt)));
  if (e.state.events == 0) return Status::not_found("no attempt " + std::string(attempt));
  if (entries_.size() >= max_ && it == entries_.end()) entries_.clear();
  entries_.insert_or_assign(std::string(attempt), e);
  return e;
}

}  // namespace aura::app
