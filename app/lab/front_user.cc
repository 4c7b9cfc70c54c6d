#include "app/lab/front_user.h"

#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace aura::app {
namespace {

bool valid_name(std::string_view n) {
  if (n.empty() || n.size() > 32) return false;
  if (!((n[0] >= 'a' && n[0] <= 'z') || n[0] == '_')) return false;
  for (char c : n) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  }
  return true;
}

}  // namespace

std::string default_front_user() {
  const char* env = std::getenv("AURA_FRONT_USER");
  return env != nullptr && *env != '\0' ? std::string(env) : std::string(kDefaultFrontUser);
}

Status ensure_front_user(std::string_view name, bool* created) {
  if (created) *created = false;
  if (!valid_name(name)) {
    return Status::invalid("front user '" + std::string(name) +
                           "' is not a user name ([a-z_][a-z0-9_-]{0,31})");
  }
  const std::string n(name);
  if (const passwd* pw = ::getpwnam(n.c_str())) {
    if (pw->pw_uid == 0) return Status::invalid("front user " + n + " has uid 0: not served");
    return Status::ok();
  }
  if (::geteuid() != 0)
    return Status::failed_precondition("no user " + n + " and not root to create it");
  pid_t pid = ::fork();
  if (pid < 0) return Status::io("fork for useradd");
  if (pid == 0) {
    const char* argv[] = {"useradd",    "--system",     "--user-group", "--no-create-home",
                          "--home-dir", "/nonexistent", "--shell",      "/usr/sbin/nologin",
                          n.c_str(),    nullptr};
    ::execv("/usr/sbin/useradd", const_cast<char* const*>(argv));
    ::_exit(127);
  }
  int st = 0;
  while (::waitpid(pid, &st, 0) < 0) {
  }
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || ::getpwnam(n.c_str()) == nullptr) {
    return Status::io("useradd " + n + " failed (status " + std::to_string(st) + ")");
  }
  if (created) *created = true;
  return Status::ok();
}

}  // namespace aura::app
