// Preflight: output paths and O_DIRECT block sizes checked before the first case runs.
#include "feedbench/plan/preflight.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

// RETURNS: "" when a new file can be made in the deepest folder of `dir` that exists, else why.
// `named`: `dir` itself was named as a folder (an option's value), so a file there is "it".
// The probe is a hidden temporary file, removed at once; no folder is created.
std::string deepest_folder_takes_files(fs::path dir, bool named) {
  if (dir.empty()) dir = ".";
  fs::path at = dir;
  struct stat st {};
  while (::stat(at.c_str(), &st) != 0) {
    const int err = errno;
    // Missing, or under a file: the folder above decides (ENOTDIR names the file when reached).
    if (err != ENOENT && err != ENOTDIR) return errno_message("cannot look at " + at.string(), err);
    fs::path up = at.parent_path();
    if (up.empty()) up = ".";
    if (up == at) return errno_message("cannot look at " + at.string(), err);
    at = up;
  }
  if (!S_ISDIR(st.st_mode)) {
    if (named && at == dir) return "it is a file, expected a folder";
    return at.string() + " is not a folder";
  }
  std::string probe = (at / ".feedbench-preflight-XXXXXX").string();
  const int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) return errno_message("cannot create a file in " + at.string(), errno);
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

// RETURNS: the number in a sysfs file, or 0.
std::uint64_t read_sysfs_number(const std::string& path) {
  std::ifstream in(path);
  std::uint64_t v = 0;
  return in >> v ? v : 0;
}

}  // namespace

std::string why_file_not_writable(const std::string& path) {
  if (path.empty()) return "expected a file name";
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return "it is a folder, expected a file name";
  return deepest_folder_takes_files(fs::path(path).parent_path(), false);
}

std::string why_folder_not_writable(const std::string& dir) {
  if (dir.empty()) return "expected a folder";
  return deepest_folder_takes_files(fs::path(dir), true);
}

void require_writable_file(const std::string& option, const std::string& path) {
  if (std::string why = why_file_not_writable(path); !why.empty())
    throw InputError(option + ": cannot write " + path + ": " + why);
}

void require_writable_folder(const std::string& option, const std::string& dir) {
  if (std::string why = why_folder_not_writable(dir); !why.empty())
    throw InputError(option + ": cannot write into " + dir + ": " + why);
}

DirectAlignment direct_io_alignment(const std::string& path) {
  DirectAlignment a;
  struct statx sx {};
  if (::statx(AT_FDCWD, path.c_str(), 0, STATX_BASIC_STATS | STATX_DIOALIGN, &sx) != 0) {
    a.assumed = true;
    a.how = errno_message("cannot statx " + path, errno) + "; 512 bytes assumed";
    return a;
  }
  // Linux 6.1 and later say what the file system needs for this file (ext4, xfs, btrfs do for
  // regular files). A file system that cannot do O_DIRECT here reports 0: the block device's
  // size is still the best guess, and the round's own probe will say why it cannot run.
  if ((sx.stx_mask & STATX_DIOALIGN) && sx.stx_dio_offset_align > 0) {
    a.bytes = sx.stx_dio_offset_align;
    a.how = "statx stx_dio_offset_align of " + path;
    return a;
  }
  const std::string dev = std::to_string(sx.stx_dev_major) + ":" + std::to_string(sx.stx_dev_minor);
  // sysfs needs no permission; a partition's queue/ is its disk's.
  for (const char* rel : {"/queue/logical_block_size", "/../queue/logical_block_size"}) {
    if (std::uint64_t v = read_sysfs_number("/sys/dev/block/" + dev + rel); v > 0) {
      a.bytes = v;
      a.how = "logical block size of block device " + dev;
      return a;
    }
  }
  const std::string node = "/dev/block/" + dev;
  if (int fd = ::open(node.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK); fd >= 0) {
    int size = 0;
    const bool ok = ::ioctl(fd, BLKSSZGET, &size) == 0 && size > 0;
    ::close(fd);
    if (ok) {
      a.bytes = std::uint64_t(size);
      a.how = "logical block size of " + node + " (BLKSSZGET)";
      return a;
    }
  }
  a.assumed = true;
  a.how = "neither statx nor a block device gives the O_DIRECT alignment of " + path + " (device " + dev +
          "); 512 bytes assumed";
  return a;
}

bool reads_direct(const Case& c) {
  if (c.family != "file_read") return false;
  return c.file_read().cache_state == "direct" || c.file_read().engine == "libaio";
}

void check_direct_block_sizes(const Plan& plan, const std::string& config_file,
                              const std::function<DirectAlignment(const std::string& role)>& alignment_of) {
  std::map<std::string, DirectAlignment> known;
  for (const Case& c : plan.cases) {
    if (!reads_direct(c)) continue;
    const std::string& role = c.file_read().path;
    auto it = known.find(role);
    if (it == known.end()) it = known.emplace(role, alignment_of(role)).first;
    const DirectAlignment& a = it->second;
    const std::uint64_t bs = c.file_read().block_size;
    if (a.bytes == 0 || bs % a.bytes == 0) continue;
    auto where = c.origin.find("block_size");
    const std::string align = std::to_string(a.bytes);
    throw InputError(
        config_file + ": " + (where != c.origin.end() ? where->second : std::string("/families")) +
        ": block_size " + std::to_string(bs) + " of case " + c.name() + " is not a multiple of " + align +
        " bytes, the O_DIRECT alignment of " + role + " (" + a.how + "); expected a multiple of " + align);
  }
}

}  // namespace feedbench
