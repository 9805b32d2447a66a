#include "feedbench/dataset/data_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>

#include "feedbench/base/error.h"
#include "feedbench/base/open_beneath.h"

namespace feedbench {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

std::string DataFile::reason(const std::string& path) const {
  if (kind) return path + " is " + std::string(kind) + ", not a regular file";
  return errno_message("cannot open " + path, error);
}

DataFile open_data_file(int dir_fd, const std::string& path, const DataFileOptions& options) {
  DataFile f;
  // O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting for one.
  const int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | (options.direct ? O_DIRECT : 0);
  auto open_with = [&](int with) {
    return options.beneath ? open_beneath(dir_fd, path, with) : ::openat(dir_fd, path.c_str(), with);
  };
  if (options.noatime) {
    f.fd = open_with(flags | O_NOATIME);
    f.noatime = f.fd >= 0;
  }
  if (f.fd < 0 && (!options.noatime || errno == EPERM)) f.fd = open_with(flags);
  if (f.fd < 0) {
    f.error = errno;
    f.noatime = false;
    return f;
  }
  struct stat st;
  const bool stated = ::fstat(f.fd, &st) == 0;
  if (!stated || !S_ISREG(st.st_mode)) {
    if (stated) f.kind = kind_of(st.st_mode);
    else f.error = errno;
    ::close(f.fd);
    f.fd = -1;
    f.noatime = false;
    return f;
  }
  // Reads of a regular file ignore O_NONBLOCK today; cleared so they keep ignoring it.
  const int fl = ::fcntl(f.fd, F_GETFL);
  if (fl >= 0) ::fcntl(f.fd, F_SETFL, fl & ~O_NONBLOCK);
  return f;
}

}  // namespace feedbench
