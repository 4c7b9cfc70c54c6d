#include "app/rpc/message.h"

#include <array>

#include "app/rpc/frame.h"
#include "engine/common/json_writer.h"
#include "engine/crypto/ed25519.h"
#include "engine/crypto/sha256.h"
#include "engine/json/json_reader.h"

namespace aura::rpc {
namespace {

json::Limits limits_for(size_t max_bytes, std::string prefix) {
  json::Limits l;
  l.max_bytes = max_bytes;
  l.max_depth = 32;
  l.max_members = 1024;
  l.prefix = std::move(prefix);
  return l;
}

bool is_op_name(std::string_view s) {
  if (s.empty() || s.size() > 48 || s[0] < 'a' || s[0] > 'z') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || c == '.')) return false;
  }
  return true;
}

std::string json_string(std::string_view s) {
  std::string out;
  json_append_string(out, s);
  return out;
}

// The body's object, its first member "v":1.
Result<json::Object> open_versioned(json::Reader& reader, std::string_view body) {
  auto root = reader.parse_object(body);
  if (!root.ok()) return root.status();
  if (root->first_name() != "v") return root->error("v", "must be the first member");
  auto v = root->required_u64("v");
  if (!v.ok()) return v.status();
  if (*v != 1) return root->error("v", "version " + std::to_string(*v) + " is not supported");
  return root;
}

}  // namespace

bool is_hex(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

std::string new_request_id() {
  // Drawn from a per-thread store of random bytes filled 4 KiB at a time: a request id names a
  // request in the logs and needs no secrecy, and a busy front makes tens of thousands a second
  // (a system call each otherwise).
  thread_local std::array<uint8_t, 4096> store{};
  thread_local size_t used = store.size();
  if (used + 8 > store.size()) {
    random_bytes(store);
    used = 0;
  }
  std::string id = to_hex(std::span<const uint8_t>(store.data() + used, 8));
  used += 8;
  return id;
}

std::string ApiError::json() const {
  std::string out = "{\"status\":" + std::to_string(status) + ",\"code\":" + json_string(code) +
                    ",\"message\":" + json_string(message);
  if (!path.empty()) out += ",\"path\":" + json_string(path);
  if (!phase.empty()) out += ",\"phase\":" + json_string(phase);
  if (!expected.empty()) {
    out += ",\"expected\":[";
    for (size_t i = 0; i < expected.size(); ++i) {
      if (i) out += ',';
      out += json_string(expected[i]);
    }
    out += ']';
  }
  if (!next.empty()) out += ",\"next\":" + json_string(next);
  if (retry_after_s > 0) out += ",\"retry_after_s\":" + std::to_string(retry_after_s);
  out += '}';
  return out;
}

ApiError api_error(int status, std::string_view code, std::string message) {
  ApiError e;
  e.status = status;
  e.code = std::string(code);
  e.message = std::move(message);
  return e;
}

namespace {

// The API error for a status's code.
ApiError api_error_by_code(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      return api_error(400, "malformed", s.message());
    case ErrorCode::kNotFound:
      return api_error(404, "not_found", s.message());
    case ErrorCode::kFailedPrecondition:
      return api_error(409, "refused", s.message());
    case ErrorCode::kBusy:
      return api_error(429, "too_many_requests", s.message());
    case ErrorCode::kUnavailable:
      return api_error(503, "unavailable", s.message());
    default:
      return api_error(500, "internal", s.message());
  }
}

}  // namespace

ApiError api_error_from(const Status& s) {
  ApiError e = api_error_by_code(s);
  e.expected = s.expected();  // the valid names, when the error is an unknown one
  return e;
}

std::string Request::encode() const {
  std::string out =
      "{\"v\":1,\"op\":" + json_string(op) + ",\"request_id\":" + json_string(request_id);
  if (auth == AuthKind::kToken) out += ",\"auth\":{\"token\":" + json_string(secret) + "}";
  if (auth == AuthKind::kOperator) out += ",\"auth\":{\"operator\":" + json_string(secret) + "}";
  out += ",\"args\":" + (args_json.empty() ? std::string("{}") : args_json) + "}";
  return out;
}

bool is_quick_op(std::string_view op) {
  return op == "health" || op == "attempt.state" || op == "judge.list" || op == "judge.get" ||
         op == "lab.key";
}

Result<Request> parse_request(std::string_view body, std::string* request_id_seen) {
  json::Reader reader(limits_for(kMaxRequestBytes, "request: "));
  auto root = open_versioned(reader, body);
  if (!root.ok()) return root.status();
  Request r;
  auto id = root->required_string("request_id", 16);
  if (!id.ok()) return id.status();
  if (!is_hex(*id, 16)) return root->error("request_id", "must be 16 lowercase hex digits");
  r.request_id = std::string(*id);
  if (request_id_seen) *request_id_seen = r.request_id;
  auto op = root->required_string("op", 48);
  if (!op.ok()) return op.status();
  if (!is_op_name(*op)) return root->error("op", "not an operation name");
  r.op = std::string(*op);
  auto auth = root->optional_object("auth");
  if (!auth.ok()) return auth.status();
  if (auth->has_value()) {
    const json::Object& a = **auth;
    if (a.size() != 1) return a.error("", "must have exactly one of token, operator");
    if (a.has("token")) {
      auto c = a.required_string("token", kTokenHexBytes);
      if (!c.ok()) return c.status();
      if (!is_hex(*c, kTokenHexBytes)) {
        return a.error("token", "must be 64 lowercase hex digits");
      }
      r.auth = AuthKind::kToken;
      r.secret = std::string(*c);
    } else {
      auto t = a.required_string("operator", kMaxOperatorTokenBytes);
      if (!t.ok()) return t.status();
      r.auth = AuthKind::kOperator;
      r.secret = std::string(*t);
    }
    if (Status s = a.done(); !s.is_ok()) return s;
  }
  auto args = root->optional_value("args");
  if (args) {
    auto o = args->as_object();
    if (!o.ok()) return o.status();
    r.args_json = args->minified();
  } else {
    r.args_json = "{}";
  }
  if (Status s = root->done(); !s.is_ok()) return s;
  return r;
}

std::string Reply::encode() const {
  std::string out = "{\"v\":1,\"request_id\":" + json_string(request_id) +
                    ",\"status\":" + std::to_string(status);
  if (error) {
    out += ",\"error\":" + error->json();
  } else {
    out += ",\"body\":" + (body_json.empty() ? std::string("{}") : body_json);
  }
  out += '}';
  return out;
}

Result<Reply> parse_reply(std::string_view body) {
  json::Reader reader(limits_for(kMaxReplyBytes, "reply: "));
  auto root = open_versioned(reader, body);
  if (!root.ok()) return root.status();
  Reply r;
  auto id = root->required_string("request_id", 16);
  if (!id.ok()) return id.status();
  r.request_id = std::string(*id);
  auto st = root->required_u64("status");
  if (!st.ok()) return st.status();
  if (*st < 100 || *st > 599) return root->error("status", "not an HTTP status");
  r.status = int(*st);
  if (r.status >= 400) {
    auto e = root->object("error");
    if (!e.ok()) return e.status();
    ApiError err;
    err.status = r.status;
    auto code = e->required_string("code", 64);
    auto msg = e->required_string("message", 65536);
    auto est = e->required_u64("status");
    if (!code.ok()) return code.status();
    if (!msg.ok()) return msg.status();
    if (!est.ok()) return est.status();
    err.code = std::string(*code);
    err.message = std::string(*msg);
    for (auto [name, field] : {std::pair{"path", &err.path}, std::pair{"phase", &err.phase},
                               std::pair{"next", &err.next}}) {
      auto x = e->optional_string(name, 4096);
      if (!x.ok()) return x.status();
      if (*x) *field = std::string(**x);
    }
    auto ex = e->optional_array("expected", 1024);
    if (!ex.ok()) return ex.status();
    if (*ex) {
      auto names = (*ex)->strings(256);
      if (!names.ok()) return names.status();
      for (auto n : *names) err.expected.emplace_back(n);
    }
    auto retry = e->optional_u64("retry_after_s");
    if (!retry.ok()) return retry.status();
    if (*retry) {
      if (**retry > kMaxRetryAfterS) return e->error("retry_after_s", "more than a day");
      err.retry_after_s = uint32_t(**retry);
    }
    if (Status s = e->done(); !s.is_ok()) return s;
    r.error = std::move(err);
  } else {
    auto b = root->value("body");
    if (!b.ok()) return b.status();
    r.body_json = b->minified();
  }
  if (Status s = root->done(); !s.is_ok()) return s;
  return r;
}

}  // namespace aura::rpc
