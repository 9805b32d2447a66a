#include "feedbench/base/open_beneath.h"

#include <atomic>
#include <cerrno>
#include <cstdint>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#if __has_include(<linux/openat2.h>)
#include <linux/openat2.h>
#endif

#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"
#include "feedbench/base/unique_fd.h"

namespace feedbench {
namespace {

#if defined(SYS_openat2) && defined(RESOLVE_BENEATH)
constexpr bool kHaveOpenat2 = true;
// Beneath the folder, no symbolic link anywhere (nor /proc's magic links, which NO_SYMLINKS
// implies: named for the reader).
constexpr std::uint64_t kResolveBeneath = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

long call_openat2(int dir_fd, const char* path, int flags, std::uint64_t resolve) {
  open_how how{};
  how.flags = std::uint64_t(unsigned(flags));
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dir_fd, path, &how, sizeof how);
}
#else  // headers older than Linux 5.6: the walk only
constexpr bool kHaveOpenat2 = false;
constexpr std::uint64_t kResolveBeneath = 0;

long call_openat2(int, const char*, int, std::uint64_t) {
  errno = ENOSYS;
  return -1;
}
#endif

// With O_PATH and O_NOFOLLOW a symbolic link at the end opens as the link itself (openat2 with
// RESOLVE_NO_SYMLINKS too): refused like any other link. RETURNS: fd, or -1 with ELOOP.
int refuse_link_itself(int fd, int flags) {
  if (fd < 0 || !(flags & O_PATH)) return fd;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
    ::close(fd);
    errno = ELOOP;
    return -1;
  }
  return fd;
}

int open_by_openat2(int root_fd, const std::string& relative, int flags) {
  long fd = -1;
  // EAGAIN: the kernel could not rule out a rename racing the lookup; it asks for a retry.
  for (int attempt = 0; attempt < 8; ++attempt) {
    fd = call_openat2(root_fd, relative.c_str(), flags | O_NOFOLLOW, kResolveBeneath);
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return refuse_link_itself(int(fd), flags);
}

// One openat per component: each folder with O_PATH | O_DIRECTORY | O_NOFOLLOW from the one
// before it, the file with O_NOFOLLOW. REQUIRES: beneath_path_problem(relative) == "".
int open_by_walk(int root_fd, const std::string& relative, int flags) {
  UniqueFd folder;  // the folder reached so far; none: root_fd
  std::size_t start = 0;
  while (true) {
    const int at = folder ? folder.get() : root_fd;
    const std::size_t slash = relative.find('/', start);
    const std::string name = relative.substr(start, slash == std::string::npos ? slash : slash - start);
    if (slash == std::string::npos)
      return refuse_link_itself(::openat(at, name.c_str(), flags | O_NOFOLLOW), flags);
    UniqueFd next(::openat(at, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next) {
      // A link where a folder goes answers ENOTDIR here; openat2 answers ELOOP: so do we.
      const int err = errno;
      struct stat st {};
      const bool link =
          err == ENOTDIR && ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
      errno = link ? ELOOP : err;
      return -1;
    }
    folder = std::move(next);
    start = slash + 1;
  }
}

// -1 not probed yet, 1 works, 0 missing.
std::atomic<int> g_openat2_works{-1};

}  // namespace

std::string beneath_path_problem(std::string_view relative) {
  if (relative.empty()) return "is empty";
  if (relative.find('\0') != std::string_view::npos) return "holds a NUL byte";
  if (relative.front() == '/') return "is absolute";
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = relative.find('/', start);
    const std::string_view name =
        relative.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (name.empty()) return "has an empty component";
    if (name == ".") return "has a '.' component";
    if (name == "..") return "has a '..' component";
    if (slash == std::string_view::npos) return "";
    start = slash + 1;
  }
}

bool openat2_available() {
  int works = g_openat2_works.load(std::memory_order_relaxed);
  if (works < 0) {
    // Any answer but "no such call" (ENOSYS) or a seccomp filter's refusal (EPERM: O_PATH of
    // "/" needs no permission) means the kernel has it.
    const long fd = call_openat2(AT_FDCWD, "/", O_PATH | O_CLOEXEC, 0);
    works = fd >= 0 || (errno != ENOSYS && errno != EPERM) ? 1 : 0;
    if (fd >= 0) ::close(int(fd));
    g_openat2_works.store(works, std::memory_order_relaxed);
  }
  return kHaveOpenat2 && works == 1;
}

int open_beneath(int root_fd, const std::string& relative, int flags, BeneathMethod method) {
  FB_CHECK(!(flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE, "open_beneath opens, never creates");
  if (!beneath_path_problem(relative).empty()) {
    errno = EXDEV;
    return -1;
  }
  if (method == BeneathMethod::kSetting)
    method =
        !open_beneath_walk_setting() && openat2_available() ? BeneathMethod::kOpenat2 : BeneathMethod::kWalk;
  if (method == BeneathMethod::kOpenat2) return open_by_openat2(root_fd, relative, flags);
  return open_by_walk(root_fd, relative, flags);
}

}  // namespace feedbench
