#include "workers/sandbox/mounts.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <set>

#include "engine/common/file_io.h"

namespace aura::sandbox {
namespace {

namespace fs = std::filesystem;

bool is_within(const fs::path& inner, const fs::path& outer) {
  auto o = outer.begin();
  auto i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (i == inner.end() || *i != *o) return false;
  }
  return true;
}

// A forbidden folder as given (for the message) and resolved once per plan.
struct Forbidden {
  fs::path given;
  fs::path real;
};

std::vector<Forbidden> resolve(const std::vector<fs::path>& forbidden) {
  std::vector<Forbidden> out;
  for (const fs::path& f : forbidden) {
    std::error_code ec;
    out.push_back({f, fs::weakly_canonical(f, ec)});
  }
  return out;
}

Status check_path(const std::string& p, const std::vector<Forbidden>& forbidden) {
  if (p.empty() || p[0] != '/') return Status::invalid("lower path '" + p + "': not absolute");
  if (p == "/") return Status::invalid("lower path '/': the host root is never a lower layer");
  if (fs::path(p).lexically_normal().string() != p || p.back() == '/')
    return Status::invalid("lower path '" + p + "': not normalised");
  for (char c : p) {
    if (c == ',' || c == ':' || c == '\\' || c == ' ' || c == '\t' || c == '\n')
      return Status::invalid("lower path '" + p + "': has a character overlayfs options forbid");
  }
  if (forbidden.empty()) return Status::ok();
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(p, ec);
  for (const Forbidden& f : forbidden) {
    if (is_within(real, f.real) || is_within(f.real, real))
      return Status::invalid("lower path '" + p + "': overlaps forbidden folder " +
                             f.given.string());
  }
  return Status::ok();
}

unsigned long keep_flags(const char* host_path) {
  struct statvfs sv;
  if (::statvfs(host_path, &sv) != 0) return MS_NOSUID | MS_NODEV;
  unsigned long flags = MS_NOSUID | MS_NODEV;
  if (sv.f_flag & ST_NOEXEC) flags |= MS_NOEXEC;
  if (sv.f_flag & ST_NOATIME) flags |= MS_NOATIME;
  if (sv.f_flag & ST_NODIRATIME) flags |= MS_NODIRATIME;
  if (sv.f_flag & ST_RELATIME) flags |= MS_RELATIME;
  return flags;
}

class Planner {
 public:
  void mkdirs(const fs::path& inside) {  // "root" + inside, parents first
    fs::path cur = "root";
    for (const auto& part : inside.relative_path()) {
      cur /= part;
      if (made_.insert(cur.string()).second)
        plan_.steps.push_back({MountStepKind::kMkdir, "", cur.string(), "", 0, 0755});
    }
  }
  void add(MountStep s) { plan_.steps.push_back(std::move(s)); }
  int next_overlay() { return overlays_++; }
  MountPlan take() { return std::move(plan_); }

 private:
  MountPlan plan_;
  std::set<std::string> made_;
  int overlays_ = 0;
};

// The run reads its lower layers as an unprivileged uid (overlayfs uses the mounter's
// credentials), so every folder above `host` must be searchable and `host` readable by others.
// Checked here so the failure names the path instead of an EACCES during setup.
Status check_others_can_read(const std::string& host, const struct stat& st) {
  for (fs::path dir = fs::path(host).parent_path(); !dir.empty(); dir = dir.parent_path()) {
    struct stat ds;
    if (::stat(dir.c_str(), &ds) != 0)
      return Status::io("stat " + dir.string() + ": " + file_io::errno_text(errno));
    if ((ds.st_mode & S_IXOTH) == 0)
      return Status::invalid("lower path '" + host + "': folder " + dir.string() +
                             " is not searchable by others (the run's uid)");
    if (dir == dir.root_path()) break;
  }
  const mode_t need = S_ISDIR(st.st_mode) ? (S_IROTH | S_IXOTH) : S_IROTH;
  if (!S_ISLNK(st.st_mode) && (st.st_mode & need) != need)
    return Status::invalid("lower path '" + host + "': not readable by others (the run's uid)");
  return Status::ok();
}

Status plan_one(Planner& planner, const std::string& host, const std::string& inside) {
  struct stat st;
  if (::lstat(host.c_str(), &st) != 0) {
    if (errno == ENOENT) return Status::ok();  // e.g. /lib32 on a machine without it
    return Status::io("lstat " + host + ": " + file_io::errno_text(errno));
  }
  AURA_RETURN_IF_ERROR(check_others_can_read(host, st));
  const fs::path in(inside);
  const std::string target = "root" + inside;
  if (S_ISLNK(st.st_mode)) {
    char buf[4096];
    const ssize_t n = ::readlink(host.c_str(), buf, sizeof buf - 1);
    if (n < 0) return Status::io("readlink " + host + ": " + file_io::errno_text(errno));
    planner.mkdirs(in.parent_path());
    planner.add({MountStepKind::kSymlink, std::string(buf, static_cast<size_t>(n)), target});
  } else if (S_ISDIR(st.st_mode)) {
    planner.mkdirs(in);
    const std::string ovl = "ovl/" + std::to_string(planner.next_overlay());
    planner.add({MountStepKind::kMkdir, "", ovl, "", 0, 0755});
    planner.add({MountStepKind::kMkdir, "", ovl + "/u", "", 0, 0755});
    planner.add({MountStepKind::kMkdir, "", ovl + "/w", "", 0, 0755});
    planner.add({MountStepKind::kOverlay, host, target,
                 "lowerdir=" + host + ",upperdir=" + ovl + "/u,workdir=" + ovl + "/w"});
  } else if (S_ISREG(st.st_mode)) {
    planner.mkdirs(in.parent_path());
    planner.add({MountStepKind::kTouch, "", target, "", 0, 0644});
    planner.add({MountStepKind::kBindRo, host, target, "", keep_flags(host.c_str())});
  } else {
    return Status::invalid("lower path '" + host + "': not a file, folder or symlink");
  }
  return Status::ok();
}

}  // namespace

std::string MountStep::describe() const {
  switch (kind) {
    case MountStepKind::kMkdir:
      return "mkdir " + target;
    case MountStepKind::kTmpfs:
      return "mount tmpfs at " + target;
    case MountStepKind::kOverlay:
      return "mount overlay at " + target + " (" + data + ")";
    case MountStepKind::kBindRo:
      return "bind " + source + " read-only at " + target;
    case MountStepKind::kBindDev:
      return "bind device " + source + " at " + target;
    case MountStepKind::kTouch:
      return "create " + target;
    case MountStepKind::kSymlink:
      return "symlink " + target + " -> " + source;
    case MountStepKind::kProc:
      return "mount proc at " + target;
  }
  return "step";
}

Result<MountPlan> plan_mounts(const std::vector<std::string>& lower_paths,
                              const std::vector<PackageMount>& packages, uint64_t tmpfs_bytes,
                              const std::vector<fs::path>& forbidden) {
  const std::vector<Forbidden> forbidden_real = resolve(forbidden);
  Planner planner;
  planner.add({MountStepKind::kMkdir, "", "root", "", 0, 0755});
  planner.add({MountStepKind::kTmpfs, "tmpfs", "root",
               "size=" + std::to_string(tmpfs_bytes) + ",mode=0755"});
  planner.add({MountStepKind::kMkdir, "", "ovl", "", 0, 0700});
  for (const std::string& p : lower_paths) {
    AURA_RETURN_IF_ERROR(check_path(p, forbidden_real));
    AURA_RETURN_IF_ERROR(plan_one(planner, p, p));
  }
  for (const PackageMount& m : packages) {
    AURA_RETURN_IF_ERROR(check_path(m.host, forbidden_real));
    Status inside = check_path(m.inside, {});
    if (!inside.is_ok()) return inside.with_context("package mount inside path");
    struct stat st;
    if (::lstat(m.host.c_str(), &st) != 0)
      return Status::not_found("package path " + m.host + ": " + file_io::errno_text(errno));
    AURA_RETURN_IF_ERROR(plan_one(planner, m.host, m.inside));
  }
  // A minimal /dev: a tmpfs with the harmless character devices bound in from the host.
  planner.mkdirs("/dev");
  planner.add({MountStepKind::kTmpfs, "tmpfs", "root/dev", "size=65536,mode=0755"});
  for (const char* dev : {"null", "zero", "full", "random", "urandom"}) {
    const std::string target = std::string("root/dev/") + dev;
    planner.add({MountStepKind::kTouch, "", target, "", 0, 0666});
    planner.add({MountStepKind::kBindDev, std::string("/dev/") + dev, target});
  }
  planner.add({MountStepKind::kSymlink, "/proc/self/fd", "root/dev/fd"});
  planner.add({MountStepKind::kSymlink, "/proc/self/fd/0", "root/dev/stdin"});
  planner.add({MountStepKind::kSymlink, "/proc/self/fd/1", "root/dev/stdout"});
  planner.add({MountStepKind::kSymlink, "/proc/self/fd/2", "root/dev/stderr"});
  planner.mkdirs("/proc");
  planner.add({MountStepKind::kProc, "proc", "root/proc"});
  planner.add({MountStepKind::kMkdir, "", "root/tmp", "", 0, 01777});
  planner.add({MountStepKind::kMkdir, "", "root/root", "", 0, 0700});
  return planner.take();
}

int apply_mount_plan(const MountPlan& plan, int* err) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const MountStep& s = plan.steps[i];
    const char* t = s.target.c_str();
    int rc = 0;
    switch (s.kind) {
      case MountStepKind::kMkdir:
        rc = ::mkdir(t, s.mode);
        if (rc != 0 && errno == EEXIST) rc = 0;
        break;
      case MountStepKind::kTmpfs:
        rc = ::mount("tmpfs", t, "tmpfs", MS_NOSUID | MS_NODEV, s.data.c_str());
        break;
      case MountStepKind::kOverlay:
        rc = ::mount("overlay", t, "overlay", MS_NOSUID | MS_NODEV, s.data.c_str());
        break;
      case MountStepKind::kBindRo:
        rc = ::mount(s.source.c_str(), t, nullptr, MS_BIND, nullptr);
        if (rc == 0)
          rc = ::mount(nullptr, t, nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY | s.flags, nullptr);
        break;
      case MountStepKind::kBindDev:
        rc = ::mount(s.source.c_str(), t, nullptr, MS_BIND, nullptr);
        break;
      case MountStepKind::kTouch: {
        const int fd = ::open(t, O_WRONLY | O_CREAT | O_CLOEXEC, s.mode);
        rc = fd < 0 ? -1 : ::close(fd);
        break;
      }
      case MountStepKind::kSymlink:
        rc = ::symlink(s.source.c_str(), t);
        break;
      case MountStepKind::kProc:
        rc = ::mount("proc", t, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr);
        break;
    }
    if (rc != 0) {
      *err = errno;
      return static_cast<int>(i);
    }
  }
  return -1;
}

}  // namespace aura::sandbox
