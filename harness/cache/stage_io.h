// The file primitives every phase of a stage uses (planning, copying, verification): opening a
// source file without touching it, comparing resolved paths, a progress line on a terminal.
// Private to the harness: the stage's public face is feedbench/cache/stager.h.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace feedbench {

using StageClock = std::chrono::steady_clock;

inline constexpr std::size_t kStageChunk = std::size_t(1) << 20;  // large reads: one syscall per MiB
inline constexpr const char* kStageTmpSuffix = ".fbtmp";

// RETURNS: seconds of StageClock since `start`.
double seconds_since(StageClock::time_point start);

// RETURNS: whether `inner` is `outer` or lies below it (both absolute, resolved).
bool is_within(const std::string& inner, const std::string& outer);

// RETURNS: realpath of `path`, or for a path that does not exist yet, realpath of its deepest
// existing ancestor with the rest appended (so a cache about to be created is compared
// correctly). Throws InputError when the path cannot be resolved.
std::string resolve_maybe_missing(const std::string& path);

// Opens a file read-only without updating its access time where the kernel lets us
// (O_NOATIME needs ownership): staging must not change the source, not even its atime.
// A file that is not regular (a FIFO swapped in after the scan) is refused with errno ENXIO;
// `why`, when given, receives the reason. RETURNS: the descriptor, or -1 with errno set.
int open_source(const std::string& path, std::string* why = nullptr, bool direct = false);

// Opens `relative`, a path a manifest lists, as open_source does, beneath the cache folder
// `cache_fd` (open_beneath): never out of the cache, never through a symbolic link.
// RETURNS: the descriptor, or -1 with errno set (ELOOP: a symbolic link on the way; ENXIO: not
// a regular file).
int open_cached(int cache_fd, const std::string& relative, bool direct = false);

// While alive, calls `print` every 250 ms on its own thread (a progress line on a terminal);
// on destruction stops the thread and clears the line. Inactive when `enabled` is false.
class ProgressTicker {
 public:
  ProgressTicker(bool enabled, std::function<void()> print);
  ~ProgressTicker();
  ProgressTicker(const ProgressTicker&) = delete;
  ProgressTicker& operator=(const ProgressTicker&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace feedbench
