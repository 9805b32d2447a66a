#include "feedbench/io/scratch_folder.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "feedbench/base/error.h"

namespace feedbench {
namespace {

constexpr std::string_view kMarkerText = "feedbench scratch folder: removed by feedbench after its case\n";

// RETURNS: 0, or the errno of the write that failed.
int write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : ENOSPC;
    text.remove_prefix(std::size_t(n));
  }
  return 0;
}

}  // namespace

ScratchFolder::ScratchFolder(const std::string& root, const std::string& prefix) : root_(root) {
  root_fd_ = UniqueFd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!root_fd_) throw RunError(errno_message("cannot open the scratch folder " + root, errno));
  for (int n = 0; n < 1000 && name_.empty(); ++n) {
    const std::string name = prefix + "-" + std::to_string(::getpid()) + "-" + std::to_string(n);
    if (::mkdirat(root_fd_.get(), name.c_str(), 0700) == 0) name_ = name;
    else if (errno != EEXIST) throw RunError(errno_message("cannot create a folder in " + root, errno));
  }
  if (name_.empty()) throw RunError("cannot create a folder in " + root + ": 1000 names taken");
  path_ = root + "/" + name_;
  dir_ = UniqueFd(::openat(root_fd_.get(), name_.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  const int open_err = errno;
  int err = dir_ ? 0 : open_err;
  if (!err) {
    UniqueFd marker(
        ::openat(dir_.get(), kMarker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    err = marker ? write_all(marker.get(), kMarkerText) : errno;
  }
  if (err) {
    const std::string why = remove_all();
    throw RunError(errno_message("cannot mark " + path_ + " as feedbench's", err) +
                   (why.empty() ? "" : "; " + why));
  }
}

ScratchFolder::~ScratchFolder() { remove_all(); }

int ScratchFolder::create(const std::string& name, int extra_flags) {
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == ".." || name == kMarker) {
    errno = EINVAL;
    return -1;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const int fd = ::openat(dir_.get(), name.c_str(),
                          O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | extra_flags, 0600);
  if (fd >= 0) files_.push_back(name);
  return fd;
}

std::vector<std::string> ScratchFolder::files() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return files_;
}

std::string ScratchFolder::remove_files_locked() {
  std::string left;
  if (!dir_) return left;
  for (const std::string& f : files_)
    if (::unlinkat(dir_.get(), f.c_str(), 0) != 0 && errno != ENOENT)
      left += (left.empty() ? "" : "; ") + errno_message("cannot remove " + path_ + "/" + f, errno);
  files_.clear();
  return left;
}

std::string ScratchFolder::remove_files() {
  std::lock_guard<std::mutex> lock(mutex_);
  return remove_files_locked();
}

std::string ScratchFolder::remove_all() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (removed_ || !root_fd_ || name_.empty()) return "";
  std::string left = remove_files_locked();
  if (dir_) {
    if (::unlinkat(dir_.get(), kMarker, 0) != 0 && errno != ENOENT)
      left += (left.empty() ? "" : "; ") + errno_message("cannot remove its marker", errno);
  }
  if (::unlinkat(root_fd_.get(), name_.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
    left += (left.empty() ? "" : "; ") +
            errno_message("left the folder " + path_ +
                              (errno == ENOTEMPTY ? " (it holds files feedbench did not write)" : ""),
                          errno);
  removed_ = left.empty();
  return left;
}

std::string ScratchFolder::why_not_ours(const std::string& folder) {
  UniqueFd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!dir) return errno_message("cannot open " + folder, errno);
  UniqueFd marker(::openat(dir.get(), kMarker, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!marker) return std::string("no ") + kMarker + " marker in " + folder;
  char buf[128] = {};
  const ssize_t n = ::read(marker.get(), buf, sizeof buf - 1);
  if (n < 0 || std::string_view(buf, std::size_t(n)) != kMarkerText)
    return std::string("the ") + kMarker + " marker in " + folder + " was not written by feedbench";
  return "";
}

}  // namespace feedbench
