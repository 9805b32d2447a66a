// Opening a data set's file for reading. A file can change between the scan and the read: it
// can vanish, or be replaced by a FIFO or a device, whose open() would block forever (a FIFO
// without a writer) and no signal handler that only sets a flag could end that wait. Every
// read of a data file (engines, eviction and warming, fingerprints, staging, verification)
// opens through here.
#pragma once

#include <string>

namespace feedbench {

struct DataFileOptions {
  bool direct = false;  // O_DIRECT
  bool noatime = true;  // try O_NOATIME first (the kernel allows it to the owner only)
  // `path` is one another program wrote (a manifest's line): opened with open_beneath, so
  // beneath dir_fd and through no symbolic link (error EXDEV or ELOOP), never out of it.
  bool beneath = false;
};

struct DataFile {
  int fd = -1;                 // owned by the caller; -1 when refused
  int error = 0;               // errno of the failed open or fstat; 0 when opened or not regular
  const char* kind = nullptr;  // what it was instead of a regular file ("a FIFO"), or null
  bool noatime = false;        // opened with O_NOATIME
  bool ok() const { return fd >= 0; }
  // RETURNS: "<path> is a FIFO, not a regular file" or "cannot open <path>: <strerror>".
  std::string reason(const std::string& path) const;
};

// Opens `path` (relative to `dir_fd`, or AT_FDCWD; with `beneath`, beneath it) read-only with
// O_CLOEXEC and O_NONBLOCK, O_NOATIME when asked and allowed (retried without it on EPERM),
// O_DIRECT when asked; then refuses anything that is not a regular file and clears O_NONBLOCK.
// RETURNS: the opened file, or fd -1 with `error` or `kind` saying why.
DataFile open_data_file(int dir_fd, const std::string& path, const DataFileOptions& options = {});

}  // namespace feedbench
