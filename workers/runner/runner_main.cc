// aura-runner OPJSON: performs one typed catalog call inside a world node and sends its output
// to the lab as exactly one evidence frame on the inherited writer socket (docs/RUNNER.md).
// It never writes to stdout. Exit 0: the op did what it was asked; 1: the world's state made it
// fail (the output says why); 2: a malformed call (stderr says why, nothing is sent); 3: no
// writer (the environment is missing or invalid, or a send failed); 4: it could not join the node;
// 5: the op refused its target before doing anything (the output says why).
// It is loaded on the host and joins the node itself before it reads anything of its call
// (workers/nsworld/join.h), so nothing the node holds influences which code runs here.
#include <fcntl.h>
#include <simdjson.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "engine/common/json_writer.h"
#include "engine/writer/frame.h"
#include "workers/nsworld/join.h"
#include "workers/runner/op.h"
#include "workers/runner/tool.h"

using namespace aura;
using namespace aura::runner;

namespace {

constexpr int kExitDone = 0;
constexpr int kExitWorld = 1;
constexpr int kExitUsage = 2;
constexpr int kExitNoWriter = 3;
constexpr int kExitNoJoin = 4;
constexpr int kExitRefused = 5;

struct Writer {
  int fd = -1;
  std::string token;
  std::string kind;  // probe.output | action.output
};

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

// The value of `name`, then wiped from the environment: the bytes where the kernel placed it
// (what /proc/PID/environ shows) are zeroed, and the variable is removed.
std::string take_env(std::string_view name) {
  std::string value;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.size() <= name.size() || !entry.starts_with(name) || entry[name.size()] != '=')
      continue;
    value = std::string(entry.substr(name.size() + 1));
    std::memset(*e + name.size() + 1, 0, entry.size() - name.size() - 1);
  }
  ::unsetenv(std::string(name).c_str());
  return value;
}

Result<Writer> writer_from_env(std::string token) {
  Writer w;
  const std::string fd_text = env("AURA_WRITER_FD");
  auto [end, ec] = std::from_chars(fd_text.data(), fd_text.data() + fd_text.size(), w.fd);
  if (fd_text.empty() || ec != std::errc() || end != fd_text.data() + fd_text.size() || w.fd < 0)
    return Status::invalid("AURA_WRITER_FD: not a descriptor number");
  int type = 0;
  socklen_t len = sizeof type;
  if (::getsockopt(w.fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0)
    return Status::invalid("AURA_WRITER_FD " + fd_text + ": " + file_io::errno_text(errno));
  if (type != SOCK_SEQPACKET)
    return Status::invalid("AURA_WRITER_FD " + fd_text + ": not a SOCK_SEQPACKET socket");
  // No tool the runner executes inherits the writer.
  if (::fcntl(w.fd, F_SETFD, FD_CLOEXEC) != 0) return Status::invalid("AURA_WRITER_FD: fcntl");
  w.token = std::move(token);
  if (w.token.size() != writer::kTokenHexDigits ||
      !std::all_of(w.token.begin(), w.token.end(),
                   [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }))
    return Status::invalid("AURA_WRITER_TOKEN: not 64 lowercase hex digits");
  w.kind = env("AURA_EVIDENCE_KIND");
  if (w.kind != "probe.output" && w.kind != "action.output")
    return Status::invalid("AURA_EVIDENCE_KIND: not probe.output or action.output");
  return w;
}

Context context_from_env() {
  Context ctx;
  if (auto v = env("AURA_JOURNAL_DIR"); !v.empty()) ctx.journal_dir = v;
  if (auto v = env("AURA_SVCMAN_STATE"); !v.empty()) ctx.svcman_state = v;
  if (auto v = env("AURA_SVCMAN_BIN"); !v.empty()) ctx.svcman_bin = v;
  if (auto v = env("AURA_ANSIBLE_PROJECT"); !v.empty()) ctx.ansible_project = v;
  return ctx;
}

// The object's members, refusing duplicates and names not in `allowed`.
Status check_members(simdjson::dom::object o, const std::vector<std::string_view>& allowed,
                     std::string_view where) {
  std::vector<std::string_view> seen;
  for (auto [key, value] : o) {
    (void)value;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      return Status::invalid(std::string(where) + ": unknown member \"" + std::string(key) + "\"");
    if (std::find(seen.begin(), seen.end(), key) != seen.end())
      return Status::invalid(std::string(where) + ": duplicate member \"" + std::string(key) +
                             "\"");
    seen.push_back(key);
  }
  return Status::ok();
}

struct Call {
  const OpSpec* spec = nullptr;
  Args args;
  size_t max_output = 0;
};

Result<Call> parse_call(std::string_view json, const std::vector<OpSpec>& table,
                        std::string_view kind) {
  if (json.size() > kMaxOpJsonBytes) return Status::invalid("OPJSON: larger than 64 KiB");
  simdjson::dom::parser parser;
  simdjson::dom::object o;
  if (parser.parse(simdjson::padded_string(json)).get_object().get(o))
    return Status::invalid("OPJSON: not a JSON object");
  AURA_RETURN_IF_ERROR(check_members(o, {"op", "args", "max_output"}, "OPJSON"));
  Call call;
  std::string_view op;
  if (o["op"].get_string().get(op)) return Status::invalid("OPJSON.op: missing or not a string");
  for (const OpSpec& s : table)
    if (s.name == op) call.spec = &s;
  if (call.spec == nullptr)
    return Status::invalid("OPJSON.op: unknown op \"" + std::string(op) + "\"");
  const bool probe = call.spec->cls == OpClass::kProbe;
  if (probe != (kind == "probe.output"))
    return Status::invalid("OPJSON.op: " + std::string(op) + " is " +
                           (probe ? "a probe" : "an action") + ", not allowed under " +
                           std::string(kind));
  uint64_t max_output = 0;
  if (o["max_output"].get_uint64().get(max_output) || max_output < 1 ||
      max_output > kMaxOutputBytes)
    return Status::invalid("OPJSON.max_output: must be an integer 1.." +
                           std::to_string(kMaxOutputBytes));
  call.max_output = size_t(max_output);
  simdjson::dom::object args;
  if (o["args"].get_object().get(args))
    return Status::invalid("OPJSON.args: missing or not an object");
  std::vector<std::string_view> names;
  for (const ArgSpec& a : call.spec->args) names.push_back(a.name);
  AURA_RETURN_IF_ERROR(check_members(args, names, "args of " + std::string(op)));
  for (const ArgSpec& a : call.spec->args) {
    auto v = args[a.name];
    if (v.error() == simdjson::NO_SUCH_FIELD) {
      if (a.required) return bad_arg(a.name, "missing");
      continue;
    }
    if (a.integer) {
      int64_t n = 0;
      if (v.get_int64().get(n)) return bad_arg(a.name, "not an integer");
      call.args.set_int(std::string(a.name), n);
    } else {
      std::string_view s;
      if (v.get_string().get(s)) return bad_arg(a.name, "not a string");
      call.args.set_str(std::string(a.name), std::string(s));
    }
  }
  return call;
}

// The output as one evidence frame: inline when the whole frame fits, else a sealed memfd.
Status send_evidence(const Writer& w, const Output& out) {
  const std::string fields =
      JsonWriter().str("stream", "stdout").boolean("truncated", out.truncated()).done();
  const std::string frame = writer::evidence_frame(w.kind, fields, out.bytes());
  if (frame.size() <= writer::kMaxFrameBytes) return writer::send_frame(w.fd, frame);
  int memfd = -1;
  AURA_ASSIGN_OR_RETURN(memfd, writer::sealed_memfd(out.bytes()));
  file_io::Fd guard(memfd);
  return writer::send_frame(w.fd, writer::evidence_memfd_frame(w.kind, fields), memfd);
}

int fail(int code, const Status& s) {
  std::fprintf(stderr, "aura-runner: %s\n", s.message().c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything else, and again inside join_node(): no process of the node may read this
  // one's memory, environment or descriptors.
  ::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  std::string token = take_env("AURA_WRITER_TOKEN");
  if (const char* join = std::getenv(nsworld::kJoinEnv); join != nullptr) {
    if (std::string_view(join) != "1")
      return fail(kExitNoJoin, Status::invalid(std::string(nsworld::kJoinEnv) + ": not 1"));
    // The writer is descriptor 3 (join.h); it returns in the process inside the node.
    nsworld::JoinFailure failed;
    nsworld::join_node(3, failed);
    if (failed.step != nullptr)
      return fail(kExitNoJoin, Status::io(std::string("join the node: ") + failed.step + ": " +
                                          file_io::errno_text(failed.err)));
  }
  auto writer = writer_from_env(std::move(token));
  if (!writer.ok()) return fail(kExitNoWriter, writer.status());
  if (argc != 2) return fail(kExitUsage, Status::invalid("usage: aura-runner OPJSON"));
  std::vector<OpSpec> table = file_ops();
  for (auto* part : {system_ops, net_ops, ansible_ops})
    for (OpSpec& s : part()) table.push_back(std::move(s));
  auto call = parse_call(argv[1], table, writer->kind);
  if (!call.ok()) return fail(kExitUsage, call.status());
  if (auto v = env("AURA_TOOL_DEADLINE_S"); !v.empty()) {
    int s = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), s);
    Status set = ec == std::errc() && end == v.data() + v.size()
                     ? set_tool_deadline(std::chrono::seconds(s))
                     : Status::invalid("not a number of seconds");
    if (!set.is_ok()) return fail(kExitUsage, set.with_context("AURA_TOOL_DEADLINE_S " + v));
  }

  if (Status s = writer::send_frame(writer->fd, writer::hello_frame(writer->token)); !s.is_ok())
    return fail(kExitNoWriter, s.with_context("hello"));
  Output out(call->max_output);
  const Status done = call->spec->run(call->args, context_from_env(), out);
  if (done.code() == ErrorCode::kInvalidArgument) return fail(kExitUsage, done);
  if (!done.is_ok() && !done.message().empty()) {
    out.clear();
    out.line("error: " + done.message());
  }
  if (Status s = send_evidence(*writer, out); !s.is_ok())
    return fail(kExitNoWriter, s.with_context("evidence"));
  if (done.is_ok()) return kExitDone;
  return out.refused() ? kExitRefused : kExitWorld;
}
