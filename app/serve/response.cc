#include "app/serve/response.h"

#include <algorithm>
#include <cctype>

#include "engine/json/json_reader.h"

namespace aura::serve {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool is_event_type(std::string_view s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

}  // namespace

void Response::set(std::string name, std::string value) {
  for (auto& [n, v] : headers) {
    if (iequals(n, name)) {
      v = std::move(value);
      return;
    }
  }
  headers.emplace_back(std::move(name), std::move(value));
}

const std::string* Response::find(std::string_view name) const {
  for (const auto& [n, v] : headers) {
    if (iequals(n, name)) return &v;
  }
  return nullptr;
}

std::vector<std::pair<std::string, std::string>> security_headers(bool api) {
  std::vector<std::pair<std::string, std::string>> h = {
      {"Content-Security-Policy", std::string(kContentSecurityPolicy)},
      {"X-Content-Type-Options", "nosniff"},
      {"Referrer-Policy", "no-referrer"},
      {"X-Frame-Options", "DENY"},
  };
  h.emplace_back("Cache-Control", api ? "no-store" : "no-cache");
  return h;
}

Response error_response(const rpc::ApiError& e, std::string_view allow) {
  Response r;
  r.status = e.status;
  r.body = e.body();
  if (!allow.empty()) r.set("Allow", std::string(allow));
  if (e.retry_after_s > 0) r.set("Retry-After", std::to_string(e.retry_after_s));
  return r;
}

Response reply_response(const rpc::Reply& reply) {
  if (reply.error) {
    rpc::ApiError e = *reply.error;
    e.status = reply.status;
    return error_response(e);
  }
  Response r;
  r.status = reply.status;
  r.body = reply.body_json.empty() ? "{}" : reply.body_json;
  return r;
}

std::string token_cookie(std::string_view attempt, std::string_view token, bool tls) {
  if (!rpc::is_hex(attempt, 16) || !rpc::is_hex(token, rpc::kTokenHexBytes)) return "";
  std::string c = "aura_token_" + std::string(attempt) + "=" + std::string(token) +
                  "; Path=/api/v1/attempts/" + std::string(attempt) + "; HttpOnly; SameSite=Strict";
  if (tls) c += "; Secure";
  return c;
}

std::optional<std::pair<std::string, std::string>> reply_token(const rpc::Reply& reply,
                                                               std::string_view attempt) {
  if (reply.error || reply.status >= 300) return std::nullopt;
  json::Reader reader;
  auto o = reader.parse_object(reply.body_json);
  if (!o.ok()) return std::nullopt;
  auto cap = o->optional_string("token", 64);
  auto id = o->optional_string("attempt", 16);
  if (!cap.ok() || !*cap || !id.ok()) return std::nullopt;
  std::string a = *id && !(**id).empty() ? std::string(**id) : std::string(attempt);
  if (!rpc::is_hex(a, 16) || !rpc::is_hex(**cap, rpc::kTokenHexBytes)) return std::nullopt;
  return std::pair{a, std::string(**cap)};
}

Result<std::string> sse_event(std::string_view frame_body) {
  json::Limits l;
  l.max_bytes = size_t(1) << 20;
  l.prefix = "stream event: ";
  json::Reader reader(l);
  auto o = reader.parse_object(frame_body);
  if (!o.ok()) return o.status();
  auto seq = o->required_u64("seq");
  if (!seq.ok()) return seq.status();
  auto type = o->required_string("type", 64);
  if (!type.ok()) return type.status();
  if (!is_event_type(*type)) return o->error("type", "not an event type");
  auto data = o->value("data");
  if (!data.ok()) return data.status();
  // The event's time is the daemon's to show inside data; the SSE frame carries id and type.
  if (auto ts = o->optional_u64("ts_us"); !ts.ok()) return ts.status();
  if (Status s = o->done(); !s.is_ok()) return s;
  // Minified JSON holds no raw newline, so the data is one line.
  return "id: " + std::to_string(*seq) + "\nevent: " + std::string(*type) +
         "\ndata: " + data->minified() + "\n\n";
}

Response ui_missing_page() {
  Response r;
  r.content_type = "text/html; charset=utf-8";
  r.body =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<title>AURA lab</title></head><body>\n"
      "<h1>AURA lab</h1>\n"
      "<p>The lab is running, but the browser lab is not built.</p>\n"
      "<p>Build it into <code>ui/dist</code> (in <code>ui/</code>: <code>npm ci</code>, then "
      "<code>npm run build</code>) and restart <code>aura serve</code>, or pass "
      "<code>--ui DIR</code> to serve a build from elsewhere.</p>\n"
      "<p>The JSON API answers meanwhile: <a href=\"/api/v1/health\">/api/v1/health</a> "
      "(docs/api/openapi.yaml).</p>\n"
      "</body></html>\n";
  return r;
}

}  // namespace aura::serve
