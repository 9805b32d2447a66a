// The page cache, file by file: measure residency, evict, warm. Never a system-wide drop.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "feedbench/dataset/dataset.h"

namespace feedbench {

struct Residency {
  std::uint64_t resident_bytes = 0;
  std::uint64_t total_bytes = 0;
  double fraction() const { return total_bytes ? double(resident_bytes) / double(total_bytes) : 0.0; }
  std::string method;  // "cachestat" or "mincore"
};

// Called now and then with (files done, files total) during long passes, for progress.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

// Measures how much of the files is in the page cache (cachestat(2) where the kernel has it,
// else mmap + mincore(2)). Never reads file data and so never changes residency.
Residency measure_residency(const FileSet& files, const Progress& progress = {});

// RETURNS: how many bytes of [offset, offset + length) of the open file `fd` are in the page cache
// now (cachestat(2), else mincore(2); a page partly in the range counts its part): what a read
// of that range is about to be served from memory. Never reads file data. Throws RunError when
// neither method works.
std::uint64_t resident_bytes_in(int fd, std::uint64_t offset, std::uint64_t length);

// Evicts every file with page-aligned posix_fadvise(POSIX_FADV_DONTNEED) (dirty pages are
// written back first with fdatasync-free sync_file_range where needed).
// RETURNS: residency measured afterwards (the caller checks the 1% rule).
Residency evict(const FileSet& files, const Progress& progress = {});

// Reads every file once (untimed warm pass). RETURNS: residency measured afterwards.
Residency warm(const FileSet& files, const Progress& progress = {});

// RETURNS: empty when O_DIRECT reads work on the file system holding `path`, else the reason
// (e.g. "O_DIRECT refused by tmpfs at /dev/shm: Invalid argument").
std::string probe_direct_io(const std::string& path);

// RETURNS: false when O_DIRECT reads under `path` cannot reach a device because its file system
// has none (tmpfs, ramfs: newer kernels accept O_DIRECT there and serve it from memory), else
// true. Sets *fs (when given) to the file system's name.
bool direct_reaches_device(const std::string& path, std::string* fs = nullptr);

}  // namespace feedbench
