// What the block devices under a data set have read: the kernel's own count for each device
// (/sys/dev/block/MAJ:MIN/stat, sectors read), so that a read the page cache served is not in it.
// Around a loader round it says how many of the bytes the round read came from the device and how
// many from memory, re-reads of a hot file included, without touching a file. The count is the
// device's: another program reading the same device adds to it (a share is then an upper bound on
// the device's part), and read-ahead past what a program asked for counts too.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "feedbench/dataset/dataset.h"

namespace feedbench {

class DeviceReads {
 public:
  // The devices holding `files` (its root's and a sample of its files', at most kMaxDevices).
  // Never throws: where a file system has no block device (tmpfs, overlay, NFS) or sysfs cannot
  // be read, available() is false and why() says so.
  explicit DeviceReads(const FileSet& files);
  // For tests: the given counter files (/sys/dev/block/MAJ:MIN/stat or files like them).
  DeviceReads(std::vector<std::string> stat_files, std::vector<std::string> names);

  bool available() const { return why_.empty(); }
  // RETURNS: why no count is kept ("" when available): "tmpfs has no block device (/data)".
  const std::string& why() const { return why_; }
  // RETURNS: the devices counted, "7:0 (loop0)".
  const std::vector<std::string>& names() const { return names_; }
  // RETURNS: the bytes every device has read since boot, or nullopt when not available or a
  // counter could not be read now.
  std::optional<std::uint64_t> bytes_read() const;

  static constexpr std::size_t kMaxDevices = 8;

 private:
  std::vector<std::string> stat_files_;
  std::vector<std::string> names_;
  std::string why_;
};

}  // namespace feedbench
