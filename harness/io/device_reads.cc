// DeviceReads: the devices under a file set, found by st_dev, and their sectors read.
#include "feedbench/io/device_reads.h"

#include "feedbench/base/file_system.h"

#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace feedbench {
namespace {

namespace fs = std::filesystem;

// RETURNS: "tmpfs", "overlay", ... for the file system holding `path` ("" when not known).
std::string fs_type_name(const std::string& path) {
  struct statfs s {};
  if (::statfs(path.c_str(), &s) != 0) return "";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0x01021994: return "tmpfs";
    case 0x794c7630: return "overlay";
    case 0x6969: return "NFS";
    case 0x9123683e: return "btrfs";  // its st_dev is an anonymous device
    case 0x65735546: return "a FUSE file system";
    case 0xff534d42: return "CIFS";
    default: return "";
  }
}

}  // namespace

DeviceReads::DeviceReads(const FileSet& files) {
  std::vector<std::string> paths = {files.root()};
  // The root and files spread over the set: a set that spans devices (a partial cache: the cache
  // and the source) shows each, without a stat of every file of a large set.
  const std::size_t n = files.size(), step = std::max<std::size_t>(1, n / 64);
  for (std::size_t i = 0; i < n; i += step) paths.push_back(files.absolute_path(i));
  std::set<dev_t> devices;
  for (const std::string& p : paths) {
    struct stat st {};
    if (::stat(p.c_str(), &st) == 0) devices.insert(st.st_dev);
    if (devices.size() > kMaxDevices) break;
  }
  if (devices.empty()) {
    why_ = "none of its files could be examined (" + files.root() + ")";
    return;
  }
  for (const dev_t d : devices) {
    const std::string majmin = std::to_string(major(d)) + ":" + std::to_string(minor(d));
    const fs::path link = fs::path("/sys/dev/block") / majmin;
    std::error_code ec;
    const fs::path dir = fs::canonical(link, ec);
    if (ec || !fs::exists(dir / "stat", ec)) {
      const std::string type = fs_type_name(files.root());
      why_ = (type.empty() ? "its file system" : type) + " has no block device to count (" + files.root() +
             ", device " + majmin + ")";
      stat_files_.clear();
      names_.clear();
      return;
    }
    stat_files_.push_back((dir / "stat").string());
    names_.push_back(block_device_label(std::uint64_t(d)));
  }
}

DeviceReads::DeviceReads(std::vector<std::string> stat_files, std::vector<std::string> names)
    : stat_files_(std::move(stat_files)), names_(std::move(names)) {
  if (stat_files_.empty()) why_ = "no device given";
}

std::optional<std::uint64_t> DeviceReads::bytes_read() const {
  if (!available()) return std::nullopt;
  std::uint64_t total = 0;
  for (const std::string& f : stat_files_) {
    // Documented in the kernel's Documentation/block/stat.rst: reads completed, reads merged,
    // sectors read (of 512 bytes, whatever the device's block size), ...
    std::ifstream in(f);
    std::uint64_t ios = 0, merges = 0, sectors = 0;
    if (!(in >> ios >> merges >> sectors)) return std::nullopt;
    total += sectors * 512;
  }
  return total;
}

}  // namespace feedbench
