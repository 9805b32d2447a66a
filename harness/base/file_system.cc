#include "feedbench/base/file_system.h"
#include "feedbench/base/error.h"
#include "feedbench/base/text.h"

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace feedbench {

std::string file_system_name(long f_type) {
  // Magic numbers from <linux/magic.h> and the file systems' own headers.
  switch (static_cast<unsigned long>(f_type)) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0xF2F52010: return "f2fs";
    case 0x2fc12fc1: return "zfs";
    case 0x01021994: return "tmpfs";
    case 0x858458f6: return "ramfs";
    case 0x6969: return "nfs";
    case 0xFF534D42: return "cifs";
    case 0xfe534d42: return "smb2";
    case 0x65735546: return "fuse";
    case 0x794c7630: return "overlayfs";
    case 0x01021997: return "9p";
    case 0x00c36400: return "ceph";
    case 0x0BD00BD0: return "lustre";
    case 0x47504653: return "gpfs";
    case 0x01161970: return "gfs2";
    case 0x73717368: return "squashfs";
    default: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "fs type 0x%lx", static_cast<unsigned long>(f_type));
      return buf;
    }
  }
}

std::string file_system_at(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "an unknown file system";
  return file_system_name(s.f_type);
}

std::string block_device_label(std::uint64_t dev) {
  const std::string majmin = std::to_string(major(dev_t(dev))) + ":" + std::to_string(minor(dev_t(dev)));
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::canonical("/sys/dev/block/" + majmin, ec);
  return ec ? majmin : majmin + " (" + dir.filename().string() + ")";
}

std::string folder_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

std::string common_folder(const std::string& a, const std::string& b) {
  std::size_t last = 0;
  for (std::size_t n = 0; n < a.size() && n < b.size() && a[n] == b[n];) {
    ++n;
    if ((n == a.size() || a[n] == '/') && (n == b.size() || b[n] == '/')) last = n;
  }
  return last == 0 ? "/" : a.substr(0, last);
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return {};
  return trim_space(std::move(line));
}

int read_to_end(int fd, std::string* out) {
  out->clear();
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) out->reserve(std::size_t(st.st_size));
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return 0;
    out->append(buf, std::size_t(n));
  }
}

std::uint64_t meminfo_bytes(const std::string& field) {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::uint64_t value = 0;
  std::string unit;
  while (in >> key >> value) {
    std::getline(in, unit);
    if (key == field + ":") return value * 1024;  // the kernel writes kB meaning KiB
  }
  return 0;
}

std::uint64_t available_memory_bytes() {
  if (std::uint64_t bytes = meminfo_bytes("MemAvailable")) return bytes;
  long pages = ::sysconf(_SC_AVPHYS_PAGES);
  return pages > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE))
                   : 0;
}

std::uint64_t total_memory_bytes() { return meminfo_bytes("MemTotal"); }

int create_temporary(int dir_fd, const std::string& name, unsigned mode) {
  constexpr int kFlags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW;
  int fd = ::openat(dir_fd, name.c_str(), kFlags, mode);
  if (fd >= 0 || errno != EEXIST) return fd;
  // Ours from an interrupted run (a regular file, this user's): removed, the name made anew.
  // Anything else is not touched; unlinking a name never changes what it named.
  struct stat st {};
  if (::fstatat(dir_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    errno = EEXIST;
    return -1;
  }
  if (::unlinkat(dir_fd, name.c_str(), 0) != 0 && errno != ENOENT) {
    errno = EEXIST;
    return -1;
  }
  return ::openat(dir_fd, name.c_str(), kFlags, mode);
}

std::string temporary_refusal(const std::string& shown, int err) {
  if (err != EEXIST) return errno_message(shown + ": cannot create", err);
  return shown +
         ": cannot create: the name is taken by a file, link or FIFO this user did not write "
         "(left unopened): remove it";
}

namespace {

// RETURNS: 8 random hex digits, for a temporary name nobody can plant ahead of us.
std::string random_hex() {
  std::uint32_t r = 0;
  if (::getrandom(&r, sizeof r, GRND_NONBLOCK) != sizeof r)
    r = std::uint32_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
        std::uint32_t(::getpid());
  char buf[16];
  std::snprintf(buf, sizeof buf, "%08x", r);
  return buf;
}

// RETURNS: `path` with "-N" before its extension: "a/h-T.json" -> "a/h-T-2.json".
std::string numbered(const std::string& path, int n) {
  const std::size_t slash = path.find_last_of('/');
  const std::size_t dot = path.find_last_of('.');
  const bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::size_t at = has_ext ? dot : path.size();
  return path.substr(0, at) + "-" + std::to_string(n) + path.substr(at);
}

}  // namespace

AtomicFile::AtomicFile(std::string path, Existing existing) : path_(std::move(path)), existing_(existing) {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path_).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw RunError(path_ + ": cannot create folder " + parent.string() + ": " + ec.message());
  }
  // Created exclusively, through no link: a file another user made at the name would own our
  // output, a FIFO would block the open. Taken, another name is drawn; never the planted one.
  const std::string base = path_ + ".tmp." + std::to_string(::getpid());
  tmp_ = base;
  constexpr int kTries = 16;
  for (int i = 0; i < kTries; ++i) {
    if (i > 0) tmp_ = base + "." + random_hex();
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
    if (fd_ >= 0 || errno != EEXIST) break;
  }
  if (fd_ < 0 && errno == EEXIST)
    throw RunError(base + ": cannot create a temporary: " + std::to_string(kTries) +
                   " names beside it are all taken (by files this run did not write)");
  if (fd_ < 0) throw RunError(errno_message(tmp_ + ": cannot create", errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

void AtomicFile::give_up(const std::string& what, int err) {
  ::close(fd_);
  fd_ = -1;
  ::unlink(tmp_.c_str());
  throw RunError(errno_message(tmp_ + ": " + what, err));
}

void AtomicFile::flush() {
  std::string_view rest = buffer_;
  while (!rest.empty()) {
    const ssize_t w = ::write(fd_, rest.data(), rest.size());
    if (w < 0) {
      if (errno == EINTR) continue;
      give_up("cannot write", errno);
    }
    rest.remove_prefix(std::size_t(w));
  }
  buffer_.clear();
}

void AtomicFile::place_without_replacing() {
  // The final name claimed in one step that fails when it exists: renameat2's RENAME_NOREPLACE,
  // or where a file system has no such rename (NFS, some FUSE), a hard link then the unlink.
  const std::string asked = path_;
  constexpr int kNames = 1000;
  for (int n = 1; n <= kNames; ++n) {
    path_ = n == 1 ? asked : numbered(asked, n);
    if (::renameat2(AT_FDCWD, tmp_.c_str(), AT_FDCWD, path_.c_str(), RENAME_NOREPLACE) == 0) return;
    int err = errno;
    if (err == EINVAL || err == ENOSYS || err == ENOTSUP) {
      if (::link(tmp_.c_str(), path_.c_str()) == 0) {
        ::unlink(tmp_.c_str());
        return;
      }
      err = errno;
    }
    if (err == EEXIST) continue;
    ::unlink(tmp_.c_str());
    throw RunError(errno_message(path_ + ": cannot rename " + tmp_ + " into place", err));
  }
  ::unlink(tmp_.c_str());
  path_ = asked;
  throw RunError(asked + ": cannot write: it and " + std::to_string(kNames - 1) +
                 " numbered names beside it (-2 to -" + std::to_string(kNames) + ") all exist");
}

void AtomicFile::write(std::string_view text) {
  FB_CHECK(fd_ >= 0, "AtomicFile written after commit");
  buffer_ += text;
  if (buffer_.size() >= (1u << 20)) flush();
}

void AtomicFile::commit() {
  FB_CHECK(fd_ >= 0, "AtomicFile committed twice");
  flush();
  // Data on disk before the rename, so a crash leaves the old file or the whole new one.
  if (::fsync(fd_) != 0) give_up("cannot sync", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    throw RunError(errno_message(tmp_ + ": cannot close", err));
  }
  if (existing_ == Existing::kNeverReplace) {
    place_without_replacing();
  } else if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    throw RunError(errno_message(path_ + ": cannot rename " + tmp_ + " into place", err));
  }
  // Make the rename itself durable; a failure here loses nothing already written.
  const std::string parent = std::filesystem::path(path_).parent_path().string();
  const int dir = ::open(parent.empty() ? "." : parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

std::int64_t free_bytes_at(const std::string& path) {
  struct statvfs sv {};
  if (::statvfs(path.c_str(), &sv) != 0) return -1;
  const unsigned __int128 bytes = static_cast<unsigned __int128>(sv.f_bavail) * sv.f_frsize;
  return bytes > static_cast<unsigned __int128>(INT64_MAX) ? INT64_MAX : std::int64_t(bytes);
}

}  // namespace feedbench
