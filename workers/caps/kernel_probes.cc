// Kernel features a lab needs, each tried for real: an overlay mounted in a private mount
// namespace, openat2's resolve flags, a seccomp filter installed and obeyed, a BPF program
// loaded, a ring buffer map created, BTF read, sched_ext looked up, a KVM VM created.
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/bpf.h>
#include <linux/filter.h>
#include <linux/kvm.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "workers/caps/probe_child.h"
#include "workers/caps/probes.h"

namespace aura::caps {

namespace {

#if defined(__x86_64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the seccomp probe knows x86_64 and aarch64"
#endif

// Paths the overlay probe uses, fixed before fork (the child does not allocate).
struct OverlayPaths {
  char root[64];
  char lower[96], upper[96], work[96], merged[96];
  char lower_file[128], merged_new[128], upper_new[128], merged_lower_file[128];
  char options[512];
};

StepResult overlay_step(const OverlayPaths& p) {
  if (::unshare(CLONE_NEWNS) != 0) return {errno, "unshare(CLONE_NEWNS)"};
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    return {errno, "mount --make-rprivate /"};
  }
  // A tmpfs of its own: the upper layer is a fresh tmpfs in the sandbox too, and an overlay
  // upper cannot sit on every filesystem /tmp may be.
  if (::mount("tmpfs", p.root, "tmpfs", 0, "size=1m,mode=0700") != 0) {
    return {errno, "mount tmpfs on the probe folder"};
  }
  for (const char* d : {p.lower, p.upper, p.work, p.merged}) {
    if (::mkdir(d, 0700) != 0) return {errno, "mkdir a layer"};
  }
  int fd = ::open(p.lower_file, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return {errno, "create a file in the lower layer"};
  ::close(fd);
  if (::mount("overlay", p.merged, "overlay", 0, p.options) != 0) {
    return {errno, "mount -t overlay"};
  }
  if (::access(p.merged_lower_file, F_OK) != 0) return {errno, "lower file seen through overlay"};
  fd = ::open(p.merged_new, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return {errno, "create a file through the overlay"};
  ::close(fd);
  if (::access(p.upper_new, F_OK) != 0) return {errno, "the new file in the upper layer"};
  return {};  // the mounts die with this child's mount namespace
}

Capability overlayfs() {
  char root[] = "/tmp/aura-caps-XXXXXX";
  if (::mkdtemp(root) == nullptr) {
    return {"overlayfs", false, "mkdtemp /tmp/aura-caps-XXXXXX: " + errno_text(errno)};
  }
  OverlayPaths p{};
  std::snprintf(p.root, sizeof(p.root), "%s", root);
  std::snprintf(p.lower, sizeof(p.lower), "%s/lower", root);
  std::snprintf(p.upper, sizeof(p.upper), "%s/upper", root);
  std::snprintf(p.work, sizeof(p.work), "%s/work", root);
  std::snprintf(p.merged, sizeof(p.merged), "%s/merged", root);
  std::snprintf(p.lower_file, sizeof(p.lower_file), "%s/lower/seen", root);
  std::snprintf(p.merged_lower_file, sizeof(p.merged_lower_file), "%s/merged/seen", root);
  std::snprintf(p.merged_new, sizeof(p.merged_new), "%s/merged/new", root);
  std::snprintf(p.upper_new, sizeof(p.upper_new), "%s/upper/new", root);
  std::snprintf(p.options, sizeof(p.options), "lowerdir=%s,upperdir=%s,workdir=%s", p.lower,
                p.upper, p.work);
  const ChildOutcome o = run_in_child([&p] { return overlay_step(p); });
  std::error_code ec;
  std::filesystem::remove_all(root, ec);  // empty: everything was inside the child's tmpfs
  if (!o.ok) return {"overlayfs", false, o.reason};
  if (ec)
    return {"overlayfs", false,
            "remove the probe folder " + std::string(root) + ": " + ec.message()};
  return {"overlayfs", true,
          "overlay (lower, tmpfs upper) mounted in a child's private mount namespace; a write "
          "landed in the upper layer"};
}

StepResult openat2_step() {
  const int root = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) return {errno, "open /"};
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, root, "etc", &how, sizeof(how));
  if (fd < 0) return {errno, "openat2(RESOLVE_IN_ROOT)"};
  ::close(int(fd));
  how.resolve = RESOLVE_BENEATH;
  fd = ::syscall(SYS_openat2, root, "..", &how, sizeof(how));
  if (fd >= 0) return {-1, "openat2(RESOLVE_BENEATH) followed \"..\" out of its root"};
  if (errno != EXDEV) return {errno, "openat2(RESOLVE_BENEATH, \"..\") (expected EXDEV)"};
  return {};
}

StepResult seccomp_step() {
  // getppid() fails with EHWPOISON under the filter; everything else is allowed.
  sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kAuditArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getppid, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EHWPOISON & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  sock_fprog prog{static_cast<unsigned short>(sizeof(filter) / sizeof(filter[0])), filter};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return {errno, "prctl(PR_SET_NO_NEW_PRIVS)"};
  if (::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    return {errno, "seccomp(SECCOMP_SET_MODE_FILTER)"};
  }
  errno = 0;
  if (::syscall(SYS_getppid) != -1 || errno != EHWPOISON) {
    return {-1, "the installed seccomp filter did not deny getppid"};
  }
  return {};
}

long bpf(int cmd, bpf_attr& attr) { return ::syscall(SYS_bpf, cmd, &attr, sizeof(attr)); }

StepResult bpf_prog_step() {
  // r0 = 0; exit: a socket filter that accepts nothing.
  bpf_insn insns[2] = {};
  insns[0].code = BPF_ALU64 | BPF_MOV | BPF_K;
  insns[1].code = BPF_JMP | BPF_EXIT;
  static constexpr char kLicense[] = "GPL";
  bpf_attr attr{};
  attr.prog_type = BPF_PROG_TYPE_SOCKET_FILTER;
  attr.insn_cnt = 2;
  attr.insns = reinterpret_cast<uint64_t>(insns);
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  const long fd = bpf(BPF_PROG_LOAD, attr);
  if (fd < 0) return {errno, "bpf(BPF_PROG_LOAD, socket filter)"};
  ::close(int(fd));
  return {};
}

StepResult ringbuf_step(uint32_t bytes) {
  bpf_attr attr{};
  attr.map_type = BPF_MAP_TYPE_RINGBUF;
  attr.max_entries = bytes;
  const long fd = bpf(BPF_MAP_CREATE, attr);
  if (fd < 0) return {errno, "bpf(BPF_MAP_CREATE, BPF_MAP_TYPE_RINGBUF)"};
  ::close(int(fd));
  return {};
}

Capability btf() {
  static constexpr char kPath[] = "/sys/kernel/btf/vmlinux";
  std::ifstream in(kPath, std::ios::binary);
  if (!in) {
    const int e = errno;
    return {"btf", false, std::string("open ") + kPath + ": " + errno_text(e)};
  }
  unsigned char magic[2] = {};
  in.read(reinterpret_cast<char*>(magic), 2);
  if (in.gcount() != 2 || magic[0] != 0x9f || magic[1] != 0xeb) {
    return {"btf", false, std::string(kPath) + " does not start with the BTF magic 0xeb9f"};
  }
  std::error_code ec;
  const auto size = std::filesystem::file_size(kPath, ec);
  return {"btf", true,
          std::string(kPath) + " present (BTF magic 0xeb9f" +
              (ec ? std::string() : ", " + std::to_string(size) + " bytes") + ")"};
}

Capability sched_ext() {
  static constexpr char kDir[] = "/sys/kernel/sched_ext";
  std::error_code ec;
  if (!std::filesystem::is_directory(kDir, ec)) {
    return {"sched_ext", false, "kernel has no sched_ext (no /sys/kernel/sched_ext)"};
  }
  std::ifstream in(std::string(kDir) + "/state");
  std::string state;
  if (!in || !std::getline(in, state)) {
    return {"sched_ext", false, std::string(kDir) + "/state: cannot be read"};
  }
  return {"sched_ext", true, std::string(kDir) + " present, state: " + state};
}

StepResult kvm_step() {
  const int kvm = ::open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) return {errno, "open /dev/kvm O_RDWR"};
  const int version = ::ioctl(kvm, KVM_GET_API_VERSION, 0);
  if (version < 0) return {errno, "ioctl(KVM_GET_API_VERSION)"};
  if (version != KVM_API_VERSION) return {-1, "KVM_GET_API_VERSION is not 12"};
  const int vm = ::ioctl(kvm, KVM_CREATE_VM, 0);
  if (vm < 0) return {errno, "ioctl(KVM_CREATE_VM)"};
  ::close(vm);
  ::close(kvm);
  return {};
}

Capability from_child(const char* name, const std::function<StepResult()>& step, const char* done) {
  const ChildOutcome o = run_in_child(step);
  return {name, o.ok, o.ok ? done : o.reason};
}

}  // namespace

std::vector<Capability> measure_kernel_features() {
  const long page = ::sysconf(_SC_PAGESIZE);
  const uint32_t ring_bytes = uint32_t(page > 0 ? page : 4096);
  std::vector<Capability> out;
  out.push_back(overlayfs());
  out.push_back(from_child("openat2", openat2_step,
                           "openat2 resolves with RESOLVE_IN_ROOT and refuses \"..\" with "
                           "RESOLVE_BENEATH (EXDEV)"));
  out.push_back(from_child("seccomp", seccomp_step,
                           "a filter installed in a child (no_new_privs) denied getppid"));
  out.push_back(
      from_child("bpf", bpf_prog_step, "bpf(BPF_PROG_LOAD) of a socket filter succeeded"));
  out.push_back(btf());
  out.push_back(from_child(
      "bpf_ringbuf", [ring_bytes] { return ringbuf_step(ring_bytes); },
      "bpf(BPF_MAP_CREATE) of a BPF_MAP_TYPE_RINGBUF map succeeded"));
  out.push_back(sched_ext());
  out.push_back(from_child("kvm", kvm_step, "/dev/kvm opened O_RDWR; KVM_CREATE_VM succeeded"));
  return out;
}

}  // namespace aura::caps
