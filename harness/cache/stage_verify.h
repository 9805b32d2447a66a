// Verification: the SHA-256 of files as the device returns them (the copy's read-back check,
// `feedbench verify`) and as the page cache serves them, and the record of a verified stage
// (its manifest). Private to the harness; verify_cache itself is declared in
// feedbench/cache/stager.h.
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include <unistd.h>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/sha256.h"
#include "feedbench/cache/stager.h"
#include "stage_io.h"
#include "stage_plan.h"

namespace feedbench {

// Reads `fd` from its start to its end in kStageChunk pieces, hashing what it reads; polls
// `stopped` between pieces. RETURNS: 0 with *digest and *bytes set, or the errno that ended it
// (EINTR when asked to stop; with O_DIRECT, EINVAL and *bytes == 0 mean the refusal of O_DIRECT).
template <class Stopped>
int hash_whole_file(int fd, AlignedBuffer& buf, const Stopped& stopped, std::string* digest,
                    std::uint64_t* bytes) {
  Sha256 hash;
  std::uint64_t off = 0;
  *bytes = 0;
  while (true) {
    if (stopped()) return EINTR;
    ssize_t n = ::pread(fd, buf.bytes(), kStageChunk, off_t(off));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    hash.update(buf.bytes(), std::size_t(n));
    off += std::uint64_t(n);
    *bytes = off;
  }
  *digest = hash.hex_digest();
  return 0;
}

// SHA-256 of a file read from the device: O_DIRECT where the file system allows it, else the
// file's pages are evicted first. `direct_ok` is cleared (for later files too) when O_DIRECT is
// refused. RETURNS: the hex digest; sets *err (errno) and returns "" on failure.
std::string hash_from_device(const std::string& path, AlignedBuffer& buf, std::atomic<bool>& direct_ok,
                             std::uint64_t* bytes, int* err, const std::atomic<int>* stop);
// The same for `relative`, a path the manifest lists, opened beneath the cache folder `cache_fd`
// (open_cached): *err is ELOOP for a symbolic link on the way, ENXIO for a file not regular.
std::string hash_from_device(int cache_fd, const std::string& relative, AlignedBuffer& buf,
                             std::atomic<bool>& direct_ok, std::uint64_t* bytes, int* err,
                             const std::atomic<int>* stop);

// RETURNS: the SHA-256 of a file as the page cache serves it, or "" when it cannot be read.
std::string hash_of_file(const std::string& path, AlignedBuffer& buf);

// Records a finished stage: writes the manifest of plan.selection with `hashes` (unless
// options.write_manifest is false, or the cache's manifest already says the same), then removes
// the journal.
// REQUIRES: every hashes[i] is set (a bug otherwise); the stage stopped on no error or signal.
// RETURNS: through result.manifest_written whether the cache is complete; a manifest that
// cannot be written is an error in result.errors (and the journal is kept).
void record_stage(const StageOptions& options, const StagePlan& plan, const std::vector<std::string>& hashes,
                  StageResult& result);

}  // namespace feedbench
