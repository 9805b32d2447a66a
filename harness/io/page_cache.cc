// The page cache, file by file: residency (cachestat(2), else mmap + mincore(2)), eviction
// (posix_fadvise DONTNEED after writing back dirty pages), warming (one read pass).
//
// A million files make each of these a few million syscalls, so the passes run on a few
// threads, open files relative to one root fd with a reused path buffer (no per-file
// allocation), and report progress from the calling thread only.
#include "feedbench/io/page_cache.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/dataset/data_file.h"

namespace feedbench {
namespace {

// cachestat(2), Linux 6.5; older libc headers lack it.
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif
struct CachestatRange {
  std::uint64_t off;
  std::uint64_t len;  // 0: to the end of the file
};
struct Cachestat {
  std::uint64_t nr_cache;
  std::uint64_t nr_dirty;
  std::uint64_t nr_writeback;
  std::uint64_t nr_evicted;
  std::uint64_t nr_recently_evicted;
};

std::uint64_t page_size() {
  static const std::uint64_t size = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return size;
}

// -1 unknown, 1 works, 0 missing (ENOSYS, or a seccomp filter that answers EPERM).
std::atomic<int> g_cachestat_works{-1};
// FEEDBENCH_RESIDENCY_METHOD=mincore forces the fallback: to cross-check the two methods,
// and to test the fallback on kernels that have cachestat.
std::atomic<bool> g_force_mincore{false};

void read_method_override() { g_force_mincore.store(residency_mincore_setting()); }

bool use_cachestat() {
  return !g_force_mincore.load(std::memory_order_relaxed) &&
         g_cachestat_works.load(std::memory_order_relaxed) != 0;
}

// Per-thread scratch for mincore: reused across files.
struct Scratch {
  std::vector<unsigned char> pages;
  char* read_buffer = nullptr;
  ~Scratch() { std::free(read_buffer); }
};

constexpr std::uint64_t kMincoreWindow = 1ull << 30;  // map at most 1 GiB at a time
constexpr std::size_t kReadBuffer = 1 << 20;

// RETURNS: resident bytes of [offset, offset + length) of the open file `fd` (a page partly in
// the range counts the range's part of it at most: the whole range when every page is
// resident); sets `method`. Throws RunError (without the path: the callers add it) when neither
// method works.
std::uint64_t resident_range(int fd, std::uint64_t offset, std::uint64_t length, Scratch& scratch,
                             const char*& method, std::uint64_t* dirty_pages = nullptr) {
  if (dirty_pages) *dirty_pages = 0;
  if (length == 0) {
    method = use_cachestat() ? "cachestat" : "mincore";
    return 0;
  }
  if (use_cachestat()) {
    CachestatRange range{offset, length};
    Cachestat cs{};
    if (::syscall(SYS_cachestat, fd, &range, &cs, 0) == 0) {
      g_cachestat_works.store(1, std::memory_order_relaxed);
      method = "cachestat";
      if (dirty_pages) *dirty_pages = cs.nr_dirty;
      return std::min(length, cs.nr_cache * page_size());
    }
    if (errno != ENOSYS && errno != EPERM) throw RunError(errno_message("cachestat", errno));
    g_cachestat_works.store(0, std::memory_order_relaxed);
  }
  method = "mincore";
  if (dirty_pages) *dirty_pages = 1;  // unknown: the caller writes back to be safe
  std::uint64_t resident = 0;
  const std::uint64_t ps = page_size();
  const std::uint64_t end = offset + length;
  // mmap maps from a page boundary: the windows start at the page holding `offset`.
  for (std::uint64_t off = offset / ps * ps; off < end; off += kMincoreWindow) {
    std::uint64_t len = std::min(kMincoreWindow, end - off);
    void* map = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(off));
    if (map == MAP_FAILED) throw RunError(errno_message("mmap for mincore", errno));
    std::size_t pages = static_cast<std::size_t>((len + ps - 1) / ps);
    if (scratch.pages.size() < pages) scratch.pages.resize(pages);
    int rc = ::mincore(map, len, scratch.pages.data());
    int err = errno;
    ::munmap(map, len);
    if (rc != 0) throw RunError(errno_message("mincore", err));
    for (std::size_t i = 0; i < pages; ++i) {
      if (!(scratch.pages[i] & 1)) continue;
      const std::uint64_t page = off + i * ps;  // this page's part of the range
      resident += std::min(end, page + ps) - std::max(offset, page);
    }
  }
  return resident;
}

// RETURNS: resident bytes of the open file `fd` of `size` bytes; sets `method`.
std::uint64_t resident_bytes(int fd, std::uint64_t size, Scratch& scratch, const char*& method,
                             std::uint64_t* dirty_pages = nullptr) {
  return resident_range(fd, 0, size, scratch, method, dirty_pages);
}

// Runs `fn(fd, index, scratch)` on every file of `files`, each file opened read-only, on up
// to a few threads; accumulates nothing itself. Progress is reported from this thread.
// Throws the first RunError a worker hit (after all workers stop).
template <class Fn>
void for_each_file(const FileSet& files, const Progress& progress, Fn fn) {
  read_method_override();
  const std::size_t total = files.size();
  if (total == 0) {
    if (progress) progress(0, 0);
    return;
  }
  const UniqueFd root = files.open_root();
  if (root.get() < 0) throw RunError(errno_message("open data set root '" + files.root() + "'", errno));
  const int root_fd = root.get();

  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> done{0};
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;

  auto worker = [&] {
    Scratch scratch;
    std::string rel;
    rel.reserve(4096);
    constexpr std::size_t kChunk = 64;  // claim files in chunks: fewer contended atomics
    while (!failed.load(std::memory_order_relaxed)) {
      std::size_t begin = next.fetch_add(kChunk, std::memory_order_relaxed);
      if (begin >= total) break;
      std::size_t end = std::min(total, begin + kChunk);
      for (std::size_t i = begin; i < end; ++i) {
        rel.assign(files.relative_path(i));  // reuses capacity: no allocation per file
        // Beneath the root, through no link: a folder of the set swapped for a link since the
        // scan leads no eviction, warming or residency check outside it.
        const DataFile f = open_data_file(root_fd, rel, {.beneath = true});
        const int fd = f.fd;
        try {
          if (fd < 0)
            throw RunError(f.kind ? "it is " + std::string(f.kind) + ", not a regular file"
                                  : errno_message("open", f.error));
          fn(fd, i, scratch);
          ::close(fd);
        } catch (const RunError& e) {
          if (fd >= 0) ::close(fd);
          std::lock_guard<std::mutex> lock(error_mutex);
          if (error.empty()) error = "'" + files.absolute_path(i) + "': " + e.what();
          failed.store(true);
          break;
        }
      }
      done.fetch_add(end - begin, std::memory_order_relaxed);
    }
  };

  std::size_t threads = std::min<std::size_t>({usable_cores(), 8, (total + 1023) / 1024});
  std::vector<std::thread> pool;
  // Helpers the system refuses (a pids limit) are done without: this thread works too.
  auto start_helpers = [&](std::size_t from) {
    for (std::size_t t = from; t < threads; ++t)
      if (!start_thread(pool, worker, "page cache helper", t, threads).empty()) break;
  };
  start_helpers(progress ? 0 : 1);
  if (!progress || pool.empty()) {
    worker();  // without progress, or when no helper could start
  } else {
    // With progress, this thread only reports: every ~1% or 10,000 files, whichever is less.
    std::size_t step = std::max<std::size_t>(1, std::min<std::size_t>(10000, total / 100));
    std::size_t reported = 0;
    progress(0, total);
    while (true) {
      std::size_t now = done.load(std::memory_order_relaxed);
      if (now >= total || failed.load()) break;
      if (now >= reported + step) {
        progress(now, total);
        reported = now;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  for (std::thread& t : pool) t.join();
  if (!error.empty()) throw RunError(error);
  if (progress) progress(total, total);
}

// Sums per-file resident bytes from workers without sharing a written cache line per file.
struct Totals {
  std::atomic<std::uint64_t> resident{0};
  std::atomic<int> used_mincore{0};
};

Residency finish(const FileSet& files, const Totals& totals) {
  Residency r;
  r.total_bytes = files.total_bytes();
  r.resident_bytes = totals.resident.load();
  r.method = totals.used_mincore.load() || !use_cachestat() ? "mincore" : "cachestat";
  return r;
}

// RETURNS: a readable regular file at or under `path` (the first one found, shallow first), or "".
std::string find_probe_file(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return "";
  if (S_ISREG(st.st_mode)) return path;
  if (!S_ISDIR(st.st_mode)) return "";
  std::vector<std::string> queue{path};
  std::size_t looked = 0;
  for (std::size_t q = 0; q < queue.size() && looked < 100000; ++q) {
    DIR* dir = ::opendir(queue[q].c_str());
    if (!dir) continue;
    std::string fallback;  // an empty file proves only that open works; prefer a non-empty one
    while (struct dirent* d = ::readdir(dir)) {
      ++looked;
      std::string_view name = d->d_name;
      if (name == "." || name == "..") continue;
      std::string full = queue[q] + "/" + d->d_name;
      if (::lstat(full.c_str(), &st) != 0) continue;
      if (S_ISDIR(st.st_mode)) {
        queue.push_back(full);
      } else if (S_ISREG(st.st_mode)) {
        if (st.st_size > 0) {
          ::closedir(dir);
          return full;
        }
        if (fallback.empty()) fallback = full;
      }
    }
    ::closedir(dir);
    if (!fallback.empty()) return fallback;
  }
  return "";
}

}  // namespace

Residency measure_residency(const FileSet& files, const Progress& progress) {
  Totals totals;
  for_each_file(files, progress, [&](int fd, std::size_t i, Scratch& scratch) {
    const char* method = "";
    std::uint64_t r = resident_bytes(fd, files.file_size(i), scratch, method);
    totals.resident.fetch_add(r, std::memory_order_relaxed);
    if (method[0] == 'm') totals.used_mincore.store(1, std::memory_order_relaxed);
  });
  return finish(files, totals);
}

std::uint64_t resident_bytes_in(int fd, std::uint64_t offset, std::uint64_t length) {
  thread_local Scratch scratch;
  read_method_override();
  const char* method = "";
  return resident_range(fd, offset, length, scratch, method);
}

Residency evict(const FileSet& files, const Progress& progress) {
  Totals totals;
  for_each_file(files, progress, [&](int fd, std::size_t i, Scratch& scratch) {
    const std::uint64_t size = files.file_size(i);
    if (size == 0) return;
    const char* method = "";
    // Offset 0 and length 0 (the whole file) are page-aligned by construction.
    int rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    if (rc != 0) throw RunError(errno_message("posix_fadvise(DONTNEED)", rc));
    std::uint64_t dirty = 0;
    std::uint64_t r = resident_bytes(fd, size, scratch, method, &dirty);
    if (r > 0 && dirty > 0) {
      // DONTNEED skips dirty pages (a freshly written file): write them back, then again.
      // Only then: the common clean file costs one syscall less.
      ::sync_file_range(fd, 0, 0,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      rc = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      if (rc != 0) throw RunError(errno_message("posix_fadvise(DONTNEED)", rc));
      r = resident_bytes(fd, size, scratch, method);
    }
    if (r > 0) {
      // Pages still dirty or under writeback (mincore cannot tell us which) are not dropped:
      // wait for writeback of the whole file, then ask again.
      ::sync_file_range(fd, 0, 0,
                        SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      r = resident_bytes(fd, size, scratch, method);
    }
    totals.resident.fetch_add(r, std::memory_order_relaxed);
    if (method[0] == 'm') totals.used_mincore.store(1, std::memory_order_relaxed);
  });
  return finish(files, totals);
}

Residency warm(const FileSet& files, const Progress& progress) {
  for_each_file(files, progress, [&](int fd, std::size_t, Scratch& scratch) {
    if (!scratch.read_buffer) {
      if (::posix_memalign(reinterpret_cast<void**>(&scratch.read_buffer), 4096, kReadBuffer) != 0)
        throw RunError("warm: out of memory for a read buffer");
    }
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);  // a hint: larger readahead
    while (true) {
      ssize_t n = ::read(fd, scratch.read_buffer, kReadBuffer);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        throw RunError(errno_message("warm: read", errno));
      }
    }
  });
  // Measured after the whole pass: a selection larger than memory pushes out its own start.
  return measure_residency(files);
}

std::string probe_direct_io(const std::string& path) {
  std::string file = find_probe_file(path);
  if (file.empty()) return "no readable regular file at or under '" + path + "' to probe O_DIRECT with";
  const std::string fs = file_system_at(file);
  const DataFile f = open_data_file(AT_FDCWD, file, {.direct = true});
  const int fd = f.fd;
  if (fd < 0) {
    if (f.kind) return f.reason(file);
    return errno_message("O_DIRECT open refused by " + fs + " at " + file, f.error);
  }
  // 4 KiB alignment and length satisfy every logical block size up to 4 KiB.
  constexpr std::size_t kBlock = 4096;
  const UniqueFd owned(fd);
  const AlignedBuffer buf(kBlock, kBlock);
  const ssize_t n = ::pread(fd, buf.get(), kBlock, 0);
  const int err = errno;
  if (n < 0) return errno_message("O_DIRECT read refused by " + fs + " at " + file, err);
  return "";
}

bool direct_reaches_device(const std::string& path, std::string* fs) {
  struct statfs sfs;
  if (::statfs(path.c_str(), &sfs) != 0) return true;  // unknown: not flagged
  const std::string name = file_system_name(sfs.f_type);
  if (fs) *fs = name;
  return name != "tmpfs" && name != "ramfs";
}

}  // namespace feedbench
