// Staging and verification of a local cache. One read of each source file feeds both the
// SHA-256 and the write; the copy is flushed, read back from the device (O_DIRECT, or evicted
// first where O_DIRECT is refused) and re-hashed before it takes its real name. The manifest
// is written last, only when every file is in place.
#include "feedbench/stager.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <functional>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unordered_map>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "feedbench/aligned_buffer.h"
#include "feedbench/clock.h"
#include "feedbench/cores.h"
#include "feedbench/data_file.h"
#include "feedbench/build_info.h"
#include "feedbench/environment.h"
#include "feedbench/error.h"
#include "feedbench/threads.h"
#include "feedbench/throttle.h"
#include "feedbench/manifest.h"
#include "feedbench/sha256.h"
#include "feedbench/unique_fd.h"
#include "feedbench/units.h"

#include "stage_io.h"
#include "stage_verify.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBatchFiles = 32;               // flushed together: writeback overlaps
constexpr std::uint64_t kBatchBytes = 64ull << 20;

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// --- Same folder or not, by identity: a symlink or a bind mount of the source is the source.

struct FolderId {
  dev_t dev;
  ino_t ino;
  bool operator==(const FolderId& o) const { return dev == o.dev && ino == o.ino; }
};

FolderId id_of(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw InputError(errno_message("cannot stat a folder", errno));
  return {st.st_dev, st.st_ino};
}

// RETURNS: the identities of folder `fd` and of every folder above it up to "/", found by
// walking "..": the kernel's parents, whatever path (symlink, bind mount) named the folder.
std::vector<FolderId> folder_and_parents(int fd) {
  std::vector<FolderId> chain{id_of(fd)};
  UniqueFd here(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
  for (int depth = 0; depth < 4096 && here; ++depth) {
    UniqueFd up(::openat(here.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up) break;
    FolderId id = id_of(up.get());
    if (id == chain.back()) break;  // "/" is its own parent
    chain.push_back(id);
    here = std::move(up);
  }
  return chain;
}

// Opens `path` (a folder) or, when it does not exist yet, its deepest existing ancestor.
// RETURNS: an O_PATH descriptor; *exists tells which. Throws InputError (naming `option`) when
// the path or an ancestor is not a folder or cannot be reached.
UniqueFd open_folder_or_ancestor(const std::string& option, const std::string& path, bool* exists) {
  std::error_code ec;
  std::string p = fs::absolute(path, ec).string();
  if (ec) throw InputError(option + " " + path + ": " + ec.message());
  *exists = true;
  while (true) {
    UniqueFd fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (fd) return fd;
    if (errno != ENOENT || p == "/")
      throw InputError(errno_message(option + " " + path + (p == path ? "" : ": " + p), errno));
    *exists = false;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    std::size_t slash = p.find_last_of('/');
    p = slash == 0 ? "/" : p.substr(0, slash);
  }
}

// Where a folder lies inside its file system: the device ("major:minor") and the path from the
// file system's root, read from mountinfo. A bind mount of a sub-folder is found here: its
// parents by ".." are the mount point's, not the source's. RETURNS: false when unknown.
bool place_in_file_system(int fd, std::string* device, std::string* path) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0 || !(stx.stx_mask & STATX_MNT_ID))
    return false;
  char real[PATH_MAX];
  const std::string self = "/proc/self/fd/" + std::to_string(fd);
  ssize_t n = ::readlink(self.c_str(), real, sizeof real - 1);
  if (n <= 0) return false;
  real[n] = 0;
  // mountinfo escapes space, tab, newline and backslash as \ooo.
  auto unescape = [](const std::string& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 3 < s.size() && std::isdigit(static_cast<unsigned char>(s[i + 1]))) {
        out += char(std::stoi(s.substr(i + 1, 3), nullptr, 8));
        i += 3;
      } else {
        out += s[i];
      }
    }
    return out;
  };
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::uint64_t id = 0, parent = 0;
    std::string dev, root, mount_point;
    if (!(fields >> id >> parent >> dev >> root >> mount_point) || id != stx.stx_mnt_id) continue;
    root = unescape(root);
    mount_point = unescape(mount_point);
    const std::string r(real);
    if (!is_within(r, mount_point)) return false;
    std::string rest = mount_point == "/" ? r : r.substr(mount_point.size());
    *device = dev;
    *path = root == "/" ? (rest.empty() ? "/" : rest) : root + rest;
    return true;
  }
  return false;
}

// Refuses a cache that is the source, lies inside it or holds it, by identity (device and inode
// walking up both paths, and each folder's place in its file system), not by path strings.
void refuse_overlap(int source_fd, const std::string& source, int cache_fd, bool cache_exists,
                    const std::string& cache) {
  const std::vector<FolderId> up_from_source = folder_and_parents(source_fd);
  const std::vector<FolderId> up_from_cache = folder_and_parents(cache_fd);
  auto holds = [](const std::vector<FolderId>& chain, const FolderId& id) {
    return std::find(chain.begin(), chain.end(), id) != chain.end();
  };
  bool same = cache_exists && up_from_cache.front() == up_from_source.front();
  bool cache_inside = holds(up_from_cache, up_from_source.front());
  bool source_inside = cache_exists && holds(up_from_source, up_from_cache.front());
  std::string sdev, spath, cdev, cpath;
  if (place_in_file_system(source_fd, &sdev, &spath) && place_in_file_system(cache_fd, &cdev, &cpath) &&
      sdev == cdev) {
    same = same || (cache_exists && spath == cpath);
    cache_inside = cache_inside || is_within(cpath, spath);
    source_inside = source_inside || (cache_exists && is_within(spath, cpath));
  }
  const std::string how = " (compared by device and inode, so symlinks and bind mounts count)";
  if (same)
    throw InputError("the cache " + cache + " and the source " + source + " are the same folder" + how +
                     ": staging would remove or overwrite source files");
  if (cache_inside)
    throw InputError("the cache " + cache + " is inside the source " + source + how +
                     ": choose a cache folder outside the source");
  if (source_inside)
    throw InputError("the source " + source + " is inside the cache " + cache + how +
                     ": staging would remove or overwrite source files");
}


// Reads sha256sum lines, ignoring any that do not parse (a journal cut short by kill -9).
std::map<std::string, std::string> read_sums_lenient(const std::string& path) {
  std::map<std::string, std::string> out;
  std::ifstream in(path, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    try {
      for (ManifestEntry& e : parse_sums(line + "\n", path)) out[e.path] = e.sha256;
    } catch (const InputError&) {
    }
  }
  return out;
}

// Removes empty folders from `dir` up to (not including) `root`.
void prune_empty_parents(fs::path dir, const fs::path& root) {
  while (dir != root && dir.string().size() > root.string().size()) {
    if (::rmdir(dir.c_str()) != 0) break;
    dir = dir.parent_path();
  }
}

// Refuses a selection holding a symlink that leads out of the source root. scan_dataset never
// follows symlinks (it lists them in left_out()); this makes the refusal explicit instead of
// silently dropping the data behind them.
void refuse_symlinks_out_of(const FileSet& selection) {
  const std::string& root = selection.root();
  for (const FileSet::LeftOut& e : selection.left_out()) {
    if (e.kind != "symlink") continue;
    const fs::path link = fs::path(root) / e.path;
    std::error_code ec;
    fs::path target = fs::weakly_canonical(link, ec);
    std::string t = ec ? fs::read_symlink(link, ec).string() : target.string();
    if (ec || !is_within(t, root))
      throw InputError("source symlink '" + e.path + "' leads to '" + t + "', outside the source root " +
                       root + ": refusing to stage (feedbench never follows links out of the source;"
                       " copy that data into the source or narrow --include)");
  }
}

std::uint64_t free_bytes(const std::string& path, std::uint64_t* fs_size = nullptr,
                         std::uint64_t* block = nullptr) {
  struct statvfs sv {};
  if (::statvfs(path.c_str(), &sv) != 0) return UINT64_MAX;
  if (fs_size) *fs_size = std::uint64_t(sv.f_blocks) * sv.f_frsize;
  if (block) *block = sv.f_frsize ? sv.f_frsize : 4096;
  return std::uint64_t(sv.f_bavail) * sv.f_frsize;
}

void sleep_for_test_hook(int ms, const std::atomic<int>* stop) {
  auto until = StageClock::now() + std::chrono::milliseconds(ms);
  while (StageClock::now() < until && !(stop && stop->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Shared state of one stage: the work list, counters, the journal, errors.
class StageRun {
 public:
  StageRun(const StageOptions& o, const FileSet& sel, std::vector<std::size_t> todo,
           std::uint64_t todo_bytes)
      : opt_(o), sel_(sel), todo_(std::move(todo)), todo_bytes_(todo_bytes) {
    if (const char* d = std::getenv("FEEDBENCH_STAGE_TEST_DELAY_MS")) delay_ms_ = std::atoi(d);
    hashes_.resize(sel_.size());
  }

  void open_journal() {
    journal_ = UniqueFd(::open((opt_.cache_root + "/" + kStageJournalName).c_str(),
                         O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644));
  }

  void run(int workers, StageResult& result) {
    auto start = StageClock::now();
    {
      ProgressTicker ticker(opt_.progress, [&] { print_progress(seconds_since(start)); });
      std::vector<std::thread> threads;
      for (int w = 0; w < workers; ++w) {
        const std::string refused = start_thread(threads, [this] { worker(); }, "worker", w, workers);
        if (!refused.empty()) {  // a pids limit: those started stop, nothing is half-written
          fatal(refused);
          break;
        }
      }
      for (auto& t : threads) t.join();
    }
    result.files_copied = files_done_.load();
    result.bytes_copied = bytes_done_.load();
    std::lock_guard lock(mutex_);
    for (auto& e : errors_) result.errors.push_back(e);
  }

  const std::string& hash_of(std::size_t i) const { return hashes_[i]; }
  bool aborted() const { return abort_.load(); }

 private:
  struct Pending {
    std::size_t index;
    std::string tmp, dst;
    UniqueFd src;  // opened and read ahead when the batch is claimed
    std::string open_error;
    UniqueFd readback;  // the copy, evicted and being re-read from the device
    UniqueFd fd;
    std::string source_hash;
    struct stat source_stat;
  };

  bool stopping() const { return abort_.load() || (opt_.stop && opt_.stop->load()); }

  void add_error(const std::string& e) {
    std::lock_guard lock(mutex_);
    errors_.push_back(e);
  }

  // A failure that makes finishing impossible (the disk is full): every worker stops.
  void fatal(const std::string& e) {
    std::lock_guard lock(mutex_);
    if (!abort_.exchange(true)) errors_.push_back(e);
  }

  void print_progress(double elapsed) {
    std::uint64_t b = bytes_done_.load();
    double rate = elapsed > 0 ? double(b) / elapsed : 0;
    std::string eta = rate > 0 ? format_duration_ns(double(todo_bytes_ - std::min(b, todo_bytes_)) / rate * 1e9)
                               : "?";
    std::fprintf(stderr, "\r\033[Kstaging  %zu/%zu files  %s/%s  %s  ETA %s", files_done_.load(),
                 todo_.size(), format_size(double(b)).c_str(), format_size(double(todo_bytes_)).c_str(),
                 format_rate(rate).c_str(), eta.c_str());
    std::fflush(stderr);
  }

  void ensure_parent(const std::string& dst) {
    fs::path parent = fs::path(dst).parent_path();
    {
      std::lock_guard lock(mutex_);
      if (made_dirs_.count(parent.string())) return;
    }
    std::error_code ec;
    fs::create_directories(parent, ec);
    std::lock_guard lock(mutex_);
    made_dirs_.insert(parent.string());
  }

  // RETURNS: whether `e` means the cache cannot take more bytes: a full file system, a quota,
  // or the process's file-size limit (EFBIG; SIGXFSZ is ignored so a write reports it).
  static bool out_of_space(int e) { return e == ENOSPC || e == EDQUOT || e == EFBIG; }

  std::string no_space_message(const std::string& dst, std::uint64_t file_size, int e = ENOSPC) {
    if (e == EFBIG)
      return "the file size limit (ulimit -f) was reached while writing " + dst + " (" +
             format_size(double(file_size)) + "); raise the limit and re-run feedbench stage " +
             "(files already copied are kept)";
    std::uint64_t remaining = todo_bytes_ - std::min(bytes_done_.load(), todo_bytes_);
    std::uint64_t free_now = free_bytes(opt_.cache_root);
    return "no space left on the cache file system while writing " + dst + " (" +
           format_size(double(file_size)) + "): " + format_size(double(remaining)) +
           " still to copy, " + format_size(double(free_now)) + " free; free at least " +
           format_size(double(remaining > free_now ? remaining - free_now : file_size)) +
           " and re-run feedbench stage (files already copied are kept)";
  }

  // Copies one file to its temporary name, hashing the same bytes. RETURNS: false on failure
  // (recorded; the temporary removed).
  bool copy_to_temp(AlignedBuffer& buf, Pending& p) {
    const std::size_t i = p.index;
    const std::string src = sel_.absolute_path(i);
    const std::string rel(sel_.relative_path(i));
    p.dst = opt_.cache_root + "/" + rel;
    p.tmp = stage_temporary_path(p.dst);
    UniqueFd in = std::move(p.src);
    if (!in) return add_error("source: " + p.open_error), false;
    if (::fstat(in.get(), &p.source_stat) != 0)
      return add_error(errno_message("cannot stat " + src, errno)), false;
    const std::int64_t mtime = std::int64_t(p.source_stat.st_mtim.tv_sec) * 1000000000 +
                               p.source_stat.st_mtim.tv_nsec;
    if (std::uint64_t(p.source_stat.st_size) != sel_.file_size(i) || mtime != sel_.mtime_ns(i))
      return add_error("source " + src + " changed since it was scanned; re-run feedbench stage"),
             false;
    ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    ensure_parent(p.dst);
    p.fd = UniqueFd(::open(p.tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!p.fd) {
      int e = errno;
      if (out_of_space(e)) return fatal(no_space_message(p.dst, sel_.file_size(i), e)), false;
      return add_error(errno_message("cannot create " + p.tmp, e)), false;
    }
    auto fail = [&](const std::string& why, bool is_fatal) { return abandon(p, why, is_fatal); };
    // Reserve the space up front: a full disk is found before any byte is written.
    if (sel_.file_size(i) > 0 && ::fallocate(p.fd.get(), 0, 0, off_t(sel_.file_size(i))) != 0) {
      if (out_of_space(errno)) return fail(no_space_message(p.dst, sel_.file_size(i), errno), true);
    }
    Sha256 hash;
    std::uint64_t total = 0;
    while (true) {
      if (stopping()) return fail("", false);
      ssize_t n = ::read(in.get(), buf.bytes(), kStageChunk);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return fail(errno_message("cannot read source " + src, errno), false);
      if (n == 0) break;
      // Paced by what was read (a chunk is larger than most files).
      if (opt_.source_throttle) opt_.source_throttle->acquire(std::uint64_t(n));
      hash.update(buf.bytes(), std::size_t(n));
      for (ssize_t off = 0; off < n;) {
        ssize_t w = ::write(p.fd.get(), buf.bytes() + off, std::size_t(n - off));
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && out_of_space(errno))
          return fail(no_space_message(p.dst, sel_.file_size(i), errno), true);
        if (w < 0) return fail(errno_message("cannot write " + p.tmp, errno), false);
        off += w;
      }
      total += std::uint64_t(n);
    }
    struct stat after {};
    ::fstat(in.get(), &after);
    if (total != sel_.file_size(i) || after.st_mtim.tv_sec != p.source_stat.st_mtim.tv_sec ||
        after.st_mtim.tv_nsec != p.source_stat.st_mtim.tv_nsec)
      return fail("source " + src + " changed while it was copied; re-run feedbench stage", false);
    p.source_hash = hash.hex_digest();
    // Start writeback now so the flush of the batch mostly waits on I/O already under way.
    ::sync_file_range(p.fd.get(), 0, 0, SYNC_FILE_RANGE_WRITE);
    return true;
  }

  // Gives up on one copy: closes and removes its temporary file and records `why` (a fatal
  // reason stops the whole stage; an empty one records nothing). RETURNS: false.
  bool abandon(Pending& p, const std::string& why, bool is_fatal) {
    p.fd.reset();
    ::unlink(p.tmp.c_str());
    if (is_fatal) fatal(why);
    else if (!why.empty()) add_error(why);
    return false;
  }

  // Flushes, proves and renames one copied file. RETURNS: false on failure (recorded).
  bool finish(Pending& p, AlignedBuffer& buf, bool synced) {
    auto fail = [&](const std::string& why, bool is_fatal) { return abandon(p, why, is_fatal); };
    if (stopping()) return fail("", false);
    const std::uint64_t size = sel_.file_size(p.index);
    if (!synced && ::fdatasync(p.fd.get()) != 0) {
      int e = errno;
      if (out_of_space(e)) return fail(no_space_message(p.dst, size, e), true);
      return fail(errno_message("cannot flush " + p.tmp, e), false);
    }
    if (opt_.verify) {
      std::uint64_t got = 0;
      int err = 0;
      std::string back = hash_readback(p, buf, &got, &err);
      if (err == EINTR) return fail("", false);
      if (err) return fail(errno_message("cannot read back " + p.tmp, err), false);
      if (got != size || back != p.source_hash)
        return fail("copy of " + std::string(sel_.relative_path(p.index)) +
                        " read back from the cache device differs from the source (sha256 " +
                        back + ", expected " + p.source_hash + "); the device or file system " +
                        "may be faulty", false);
    }
    // Same mode bits (without set-id bits) and times as the source, as cp -a does.
    ::fchmod(p.fd.get(), p.source_stat.st_mode & 0777);
    timespec times[2] = {p.source_stat.st_atim, p.source_stat.st_mtim};
    if (::futimens(p.fd.get(), times) != 0)
      return fail(errno_message("cannot set the time of " + p.tmp, errno), false);
    p.fd.reset();
    if (::rename(p.tmp.c_str(), p.dst.c_str()) != 0)
      return fail(errno_message("cannot rename " + p.tmp + " to " + p.dst, errno), false);
    hashes_[p.index] = p.source_hash;
    if (journal_) {
      Manifest line;
      line.files = {{std::string(sel_.relative_path(p.index)), p.source_hash}};
      std::string text = line.sums_text();
      // One O_APPEND write per line keeps lines whole between workers; a lost line only
      // means a re-copy on resume.
      if (::write(journal_.get(), text.data(), text.size()) < 0) {
      }
    }
    files_done_.fetch_add(1);
    bytes_done_.fetch_add(size);
    if (delay_ms_ > 0) sleep_for_test_hook(delay_ms_, opt_.stop);
    return true;
  }

  // Hashes the flushed copy as the device returns it: its clean pages were evicted and
  // re-read ahead (flush_batch), so the bytes come from the device, not from the page cache
  // that held what we wrote.
  std::string hash_readback(Pending& p, AlignedBuffer& buf, std::uint64_t* got, int* err) {
    *got = 0;
    *err = 0;
    if (!p.readback) return hash_from_device(p.tmp, buf, direct_ok_, got, err, opt_.stop);
    std::string digest;
    *err = hash_whole_file(p.readback.get(), buf, [this] { return stopping(); }, &digest, got);
    return *err == 0 ? digest : "";
  }

  // Flushes a batch with one syncfs (falling back to fdatasync per file), evicts every copy's
  // pages and starts re-reading them from the device all at once, then proves and renames each.
  void flush_batch(std::vector<Pending>& batch, AlignedBuffer& buf) {
    int any = -1;
    for (Pending& p : batch)
      if (p.fd) any = p.fd.get();
    bool synced = any >= 0 && ::syncfs(any) == 0;
    if (opt_.verify && synced) {
      for (Pending& p : batch) {
        if (!p.fd) continue;
        p.readback = UniqueFd(open_source(p.tmp));
        if (!p.readback) continue;
        ::posix_fadvise(p.readback.get(), 0, 0, POSIX_FADV_DONTNEED);
      }
      for (Pending& p : batch)
        if (p.readback) ::posix_fadvise(p.readback.get(), 0, 0, POSIX_FADV_WILLNEED);
    }
    for (Pending& p : batch)
      if (p.fd) finish(p, buf, synced);
    batch.clear();
  }

  // Claims the next files (up to a batch) and opens them with read-ahead, so their reads
  // overlap the flush and read-back of the batch before.
  void claim(std::vector<Pending>& batch) {
    batch.clear();
    std::uint64_t bytes = 0;
    const std::size_t most = delay_ms_ > 0 ? 1 : kBatchFiles;
    while (batch.size() < most && bytes < kBatchBytes && !stopping()) {
      std::size_t k = next_.fetch_add(1);
      if (k >= todo_.size()) break;
      Pending p;
      p.index = todo_[k];
      p.src = UniqueFd(open_source(sel_.absolute_path(p.index), &p.open_error));
      if (p.src) ::posix_fadvise(p.src.get(), 0, 0, POSIX_FADV_WILLNEED);
      bytes += sel_.file_size(p.index);
      batch.push_back(std::move(p));
    }
  }

  void worker() {
    AlignedBuffer buf(kStageChunk);
    std::vector<Pending> current, upcoming;
    try {
      claim(current);
      while (!current.empty() && !stopping()) {
        for (Pending& p : current)
          if (!copy_to_temp(buf, p)) p.fd.reset();
        claim(upcoming);
        flush_batch(current, buf);
        current.swap(upcoming);
      }
    } catch (const std::exception& e) {
      fatal(std::string("staging failed: ") + e.what());
    }
    for (Pending& p : current) {
      if (!p.fd) continue;
      p.fd.reset();
      ::unlink(p.tmp.c_str());
    }
  }

  const StageOptions& opt_;
  const FileSet& sel_;
  std::vector<std::size_t> todo_;
  std::uint64_t todo_bytes_;
  int delay_ms_ = 0;
  std::atomic<std::size_t> next_{0};
  std::atomic<std::size_t> files_done_{0};
  std::atomic<std::uint64_t> bytes_done_{0};
  std::atomic<bool> abort_{false};
  std::atomic<bool> direct_ok_{true};
  std::vector<std::string> hashes_;  // by selection index; each slot written by one worker
  std::mutex mutex_;
  std::vector<std::string> errors_;
  std::set<std::string> made_dirs_;
  UniqueFd journal_;
};

// Holds an exclusive lock on the cache folder for the duration of a stage.
UniqueFd lock_cache(const std::string& cache_root) {
  UniqueFd fd(::open(cache_root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!fd) throw InputError(errno_message("cannot open cache folder " + cache_root, errno));
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)
    throw InputError("another feedbench stage is writing " + cache_root + " right now");
  return fd;
}

// RETURNS: true when `cache_root` holds nothing but lost+found and feedbench temporaries (a
// benchmark's scratch staging, say).
bool folder_is_empty(const std::string& cache_root) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(cache_root, ec)) {
    std::string name = e.path().filename().string();
    if (name == "lost+found" || ends_with(name, kStageTmpSuffix)) continue;
    return false;
  }
  return true;
}

// What a cache folder proves feedbench wrote: the files its complete manifest lists, and the
// files the journal of an interrupted stage lists (the journal wins: it is newer). Nothing else
// in the folder is feedbench's.
struct Ownership {
  std::optional<Manifest> manifest;
  std::string why_no_manifest;
  bool journal = false;
  std::map<std::string, std::string> files;  // relative path -> sha256
  bool is_cache() const { return manifest.has_value() || journal; }
};

Ownership read_ownership(const std::string& cache_root) {
  Ownership own;
  own.manifest = read_manifest(cache_root, &own.why_no_manifest);
  if (own.manifest)
    for (const ManifestEntry& e : own.manifest->files) own.files[e.path] = e.sha256;
  const std::string journal = cache_root + "/" + kStageJournalName;
  struct stat st {};
  own.journal = ::lstat(journal.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (own.journal)
    for (auto& [path, hash] : read_sums_lenient(journal)) own.files[path] = hash;
  return own;
}

// RETURNS: up to `shown` of `names`, comma-separated, then "and N more".
std::string name_some(const std::vector<std::string>& names, std::size_t shown = 10) {
  std::string out;
  for (std::size_t i = 0; i < names.size() && i < shown; ++i) out += (i ? ", " : "") + names[i];
  if (names.size() > shown) out += " and " + std::to_string(names.size() - shown) + " more";
  return out;
}

std::string plural(std::size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string stage_temporary_path(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "" : path.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  return folder + ".fb-" + sha256_hex(name).substr(0, 16) + kStageTmpSuffix;
}

int StageResult::exit_code() const {
  if (stopped_by_signal) return 128 + stopped_by_signal;
  return errors.empty() && manifest_written ? 0 : 1;
}

int default_workers(const std::string& path) {
  try {
    PathInfo info = describe_path("cache", path);
    // A spinning disk seeks between parallel copies: one worker. Virtual disks (virtio "vd*",
    // Xen "xvd*") report rotational by default whatever backs them, and copies in parallel
    // measured faster on one here, so they count as solid state.
    const bool is_virtual = info.device.rfind("vd", 0) == 0 || info.device.rfind("xvd", 0) == 0;
    if (info.device_info.contains("rotational") && info.device_info["rotational"].is_boolean() &&
        info.device_info["rotational"].get<bool>() && !is_virtual)
      return 1;
  } catch (const std::exception&) {
  }
  return 4;
}

StageResult stage(const StageOptions& options) {
  const auto start = StageClock::now();
  const double cpu_start = process_cpu_seconds();
  StageResult result;
  auto log = [&](const std::string& line) {
    if (!options.quiet) std::fprintf(stderr, "feedbench stage: %s\n", line.c_str());
  };

  // --- Refusals: nothing is changed when one applies.
  if (options.source_root.empty()) throw InputError("--from: the source folder is required");
  if (options.cache_root.empty()) throw InputError("--to: the cache folder is required");
  char buf[PATH_MAX];
  if (!::realpath(options.source_root.c_str(), buf))
    throw InputError(errno_message("--from " + options.source_root, errno));
  const std::string source = buf;
  if (!fs::is_directory(source)) throw InputError("--from " + options.source_root + ": not a folder");
  const std::string cache = resolve_maybe_missing(options.cache_root);
  {
    bool source_exists = false, cache_exists = false;
    UniqueFd source_fd = open_folder_or_ancestor("--from", source, &source_exists);
    UniqueFd cache_fd = open_folder_or_ancestor("--to", options.cache_root, &cache_exists);
    refuse_overlap(source_fd.get(), source, cache_fd.get(), cache_exists, cache);
  }

  FileSet selection = scan_dataset(source, options.include);
  if (selection.empty()) {
    if (options.include.empty())
      throw InputError("--from " + source + ": the source holds no regular files: nothing to stage");
    std::string globs;
    for (const std::string& g : options.include) globs += (globs.empty() ? "'" : ", '") + g + "'";
    throw InputError("--include " + globs + ": no file of the source " + source +
                     " matches (a typo?): nothing staged, nothing removed");
  }
  refuse_symlinks_out_of(selection);
  result.files_selected = selection.size();
  result.bytes_selected = selection.total_bytes();
  result.source_fingerprint = selection.fingerprint();
  result.label = options.label.empty() ? "fp-" + result.source_fingerprint.substr(0, 12) : options.label;

  std::error_code ec;
  fs::create_directories(cache, ec);
  if (ec) throw InputError("cannot create the cache folder " + cache + ": " + ec.message());
  UniqueFd lock = lock_cache(cache);
  StageOptions opt = options;
  opt.cache_root = cache;
  opt.source_root = source;

  // --- Whose files are these? Only what our manifest or journal lists is ours.
  Ownership own = read_ownership(cache);
  if (!own.is_cache()) {
    if (!options.force && !folder_is_empty(cache))
      throw InputError("the cache folder " + cache + " is not empty and is not a feedbench cache (" +
                       own.why_no_manifest + ", and no journal of an interrupted stage): refusing to " +
                       "stage into it; choose a new or empty folder, or add --force to stage beside " +
                       "its files (feedbench never removes or overwrites a file it did not write)");
    for (const char* name : {kManifestSumsName, kManifestJsonName}) {
      struct stat st {};
      if (::lstat((cache + "/" + name).c_str(), &st) == 0)
        throw InputError("the cache folder " + cache + " holds a " + name + " that is not part of a " +
                         "complete feedbench manifest (" + own.why_no_manifest + "): refusing to " +
                         "replace it, even with --force; move it away");
    }
  }

  FileSet existing = scan_dataset(cache);
  std::unordered_map<std::string_view, std::size_t> in_cache;
  for (std::size_t i = 0; i < existing.size(); ++i) in_cache.emplace(existing.relative_path(i), i);
  std::set<std::string> not_files;  // symlinks, FIFOs and the like in the cache
  for (const FileSet::LeftOut& e : existing.left_out())
    if (e.kind != "feedbench temporary" && e.kind != "feedbench manifest") not_files.insert(e.path);
  std::set<std::string_view> selected;
  for (std::size_t i = 0; i < selection.size(); ++i) selected.insert(selection.relative_path(i));

  // Where the selection goes: never through a link, never over a file that is not ours unless
  // it holds the source's very bytes (then it is adopted: e.g. a copy of ours whose journal
  // line a kill -9 lost).
  {
    std::vector<std::string> not_folders, in_the_way;
    std::set<std::string_view> parents_checked;
    AlignedBuffer hash_buf(kStageChunk);
    for (std::size_t i = 0; i < selection.size(); ++i) {
      std::string_view rel = selection.relative_path(i);
      for (std::size_t k = rel.find('/'); k != std::string_view::npos; k = rel.find('/', k + 1)) {
        std::string_view parent = rel.substr(0, k);
        if (!parents_checked.insert(parent).second) continue;
        if (in_cache.count(parent) || not_files.count(std::string(parent))) not_folders.emplace_back(parent);
      }
      const std::string r(rel);
      if (not_files.count(r)) not_folders.push_back(r);
      if (!in_cache.count(rel) || own.files.count(r)) continue;
      const std::string here = hash_of_file(cache + "/" + r, hash_buf);
      if (!here.empty() && here == hash_of_file(selection.absolute_path(i), hash_buf)) own.files[r] = here;
      else in_the_way.push_back(r);
    }
    if (!not_folders.empty())
      throw InputError("in the cache folder " + cache + ", " + name_some(not_folders) + ": a symlink " +
                       "or other non-folder where the selection needs a folder or a file: move it " +
                       "away (feedbench writes only into real folders of the cache)");
    if (!in_the_way.empty())
      throw InputError("the cache folder " + cache + " holds " + plural(in_the_way.size(), "file", "files") +
                       " that feedbench did not write where the selection goes, unlike the source: " +
                       name_some(in_the_way) + "; move them away (feedbench never overwrites a " +
                       "file it did not write)");
  }

  // What has to go: files of ours that left the selection; nothing else.
  std::vector<std::string> to_remove, left_alone;
  std::size_t ours_present = 0;
  for (std::size_t i = 0; i < existing.size(); ++i) {
    std::string_view rel = existing.relative_path(i);
    const bool ours = own.files.count(std::string(rel)) > 0;
    ours_present += ours;
    if (selected.count(rel)) continue;
    (ours ? to_remove : left_alone).emplace_back(rel);
  }
  if (!to_remove.empty() && !options.prune &&
      double(to_remove.size()) > kPruneShare * double(ours_present))
    throw InputError("staging this selection would remove " + std::to_string(to_remove.size()) + " of " +
                     plural(ours_present, "file", "files") + " from the cache " + cache +
                     " (more than " + std::to_string(int(kPruneShare * 100)) + "%: " +
                     name_some(to_remove, 3) + "): add --prune to remove them, or check --include; " +
                     "nothing was removed");

  if (std::string note = left_out_note(selection); !note.empty()) {
    result.notes.push_back(note);
    log("note: " + note);
  }
  if (!left_alone.empty()) {
    result.notes.push_back("left alone " + plural(left_alone.size(), "file", "files") +
                           " feedbench did not write (listed in no manifest of ours): " +
                           name_some(left_alone));
    log("note: " + result.notes.back());
  }

  // Temporaries of an interrupted stage: only the names we would have written.
  std::vector<std::string> temporaries;
  for (const FileSet::LeftOut& e : existing.left_out())
    if (e.kind == "feedbench temporary" && e.path != kStageJournalName) temporaries.push_back(e.path);
  if (!temporaries.empty()) {
    std::set<std::string> ours_tmp;
    for (std::size_t i = 0; i < selection.size(); ++i)
      ours_tmp.insert(stage_temporary_path(std::string(selection.relative_path(i))));
    for (const auto& [path, hash] : own.files) ours_tmp.insert(stage_temporary_path(path));
    std::size_t n = 0;
    for (const std::string& t : temporaries)
      if (ours_tmp.count(t) && ::unlink((cache + "/" + t).c_str()) == 0) ++n;
    if (n) log("removed " + plural(n, "temporary file", "temporary files") + " left by an interrupted stage");
  }

  try {
    PathInfo s = describe_path("source", source), c = describe_path("cache", cache);
    if (same_device(s, c)) {
      result.warnings.push_back("source and cache are on the same device" +
                                (c.device.empty() ? std::string() : " (" + c.device + ")") +
                                ": reads from the cache will not be faster, and the copy competes "
                                "with itself");
      log("warning: " + result.warnings.back());
    }
  } catch (const std::exception&) {
  }

  // --- What is already in place (resume).
  const std::string journal_path = cache + "/" + kStageJournalName;
  const std::optional<Manifest>& old = own.manifest;
  const std::map<std::string, std::string>& known = own.files;

  std::vector<std::size_t> todo;
  std::uint64_t todo_bytes = 0, todo_alloc = 0;
  std::uint64_t fs_size = 0, block = 4096;
  const std::uint64_t free_now = free_bytes(cache, &fs_size, &block);
  std::vector<std::string> hashes(selection.size());
  for (std::size_t i = 0; i < selection.size(); ++i) {
    std::string_view rel = selection.relative_path(i);
    auto c = in_cache.find(rel);
    auto k = known.find(std::string(rel));
    if (c != in_cache.end() && k != known.end() && existing.file_size(c->second) == selection.file_size(i) &&
        existing.mtime_ns(c->second) == selection.mtime_ns(i)) {
      hashes[i] = k->second;
      ++result.files_skipped;
      continue;
    }
    todo.push_back(i);
    todo_bytes += selection.file_size(i);
    todo_alloc += (selection.file_size(i) + block - 1) / block * block;
  }

  // Free space: the copies plus a margin (2% and up to 64 MiB, at most 5% of the file system).
  const std::uint64_t margin = todo_alloc / 50 + std::min<std::uint64_t>(64ull << 20, fs_size / 20);
  if (!todo.empty() && free_now != UINT64_MAX && free_now < todo_alloc + margin) {
    result.errors.push_back("not enough space in " + cache + ": " + std::to_string(todo.size()) +
                            " file(s) to copy need " + format_size(double(todo_alloc)) + " plus a margin of " +
                            format_size(double(margin)) + ", the file system has " +
                            format_size(double(free_now)) + " free: short by " +
                            format_size(double(todo_alloc + margin - free_now)));
    result.seconds = seconds_since(start);
    return result;
  }

  const bool changes = !todo.empty() || !to_remove.empty();
  if (changes) {
    // The journal first, then the manifest goes: from here until the end the cache is,
    // correctly, not a cache. The journal lists every file of ours (those about to be removed
    // too): it holds every hash resume needs and proves what is ours until the new manifest.
    std::string journal_text;
    {
      Manifest j;
      for (const auto& [path, hash] : known) j.files.push_back({path, hash});
      journal_text = j.sums_text();
    }
    const std::string journal_tmp = cache + "/feedbench-journal.new.fbtmp";
    {
      std::ofstream out(journal_tmp, std::ios::binary | std::ios::trunc);
      out << journal_text;
      out.flush();
      if (!out) {
        result.errors.push_back("cannot write " + journal_tmp + " (is the cache full?)");
        ::unlink(journal_tmp.c_str());
        result.seconds = seconds_since(start);
        return result;
      }
    }
    if (::rename(journal_tmp.c_str(), journal_path.c_str()) != 0)
      throw RunError(errno_message("cannot rename " + journal_tmp, errno));
    remove_manifest(cache);
    for (const std::string& rel : to_remove) {
      const std::string path = cache + "/" + rel;
      if (::unlink(path.c_str()) != 0) {
        result.errors.push_back(errno_message("cannot remove " + path, errno));
        continue;
      }
      prune_empty_parents(fs::path(path).parent_path(), fs::path(cache));
      result.removed.push_back(rel);
      ++result.files_removed;
    }
  }

  if (!todo.empty()) {
    int workers = options.workers > 0 ? options.workers : default_workers(cache);
    workers = int(std::min<std::size_t>(std::size_t(workers), todo.size()));
    StageRun run(opt, selection, std::move(todo), todo_bytes);
    run.open_journal();
    run.run(workers, result);
    for (std::size_t i = 0; i < selection.size(); ++i)
      if (hashes[i].empty()) hashes[i] = run.hash_of(i);
  }
  if (options.stop && options.stop->load()) result.stopped_by_signal = options.stop->load();

  if (!result.stopped_by_signal && result.errors.empty()) {
    Manifest m;
    m.label = result.label;
    m.source_root = source;
    m.source_fingerprint = result.source_fingerprint;
    m.include = options.include;
    m.total_bytes = selection.total_bytes();
    m.created_utc = utc_timestamp();
    m.feedbench_version = build::kVersion;
    for (std::size_t i = 0; i < selection.size(); ++i) {
      FB_CHECK(!hashes[i].empty(), "a staged file without a hash");
      m.files.push_back({std::string(selection.relative_path(i)), hashes[i]});
    }
    bool unchanged = !changes && old && old->source_fingerprint == m.source_fingerprint &&
                     old->label == m.label && old->include == m.include && old->sums_text() == m.sums_text();
    if (options.write_manifest && !unchanged) {
      try {
        write_manifest(cache, m);
      } catch (const RunError& e) {
        result.errors.push_back(std::string(e.what()) + " (the cache has no manifest; free space and re-run)");
      }
    }
    if (result.errors.empty()) {
      result.manifest_written = true;
      ::unlink(journal_path.c_str());
    }
  }
  result.seconds = seconds_since(start);
  result.cpu_seconds = process_cpu_seconds() - cpu_start;
  return result;
}

std::string check_cache(const std::string& cache_root, const FileSet& source_selection) {
  std::string why;
  const std::optional<Manifest> m = read_manifest(cache_root, &why);
  return check_cache(cache_root, source_selection, m, why);
}

std::string check_cache(const std::string& cache_root, const FileSet& source_selection,
                        const std::optional<Manifest>& m, const std::string& why,
                        const std::vector<std::string>* run_include) {
  if (!m)
    return "the cache " + cache_root + " has no complete manifest (" + why + "): run `" +
           stage_command(source_selection.root(), cache_root, run_include ? *run_include : std::vector<std::string>{}, "") +
           "`";
  // Staged with other globs than the run reads: staging again with the manifest's globs would
  // change nothing, so the command stages the run's selection (keeping the label).
  if (run_include && *run_include != m->include)
    return "the cache " + cache_root + " holds another selection than this run reads (the cache: " +
           include_text(m->include) + ", label " + m->label + "; the run: " + include_text(*run_include) +
           "): to cache the run's selection, run `" +
           stage_command(source_selection.root(), cache_root, *run_include, m->label, true) + "`";
  if (m->source_fingerprint != source_selection.fingerprint())
    return "the cache " + cache_root + " does not match the source selection (manifest fingerprint " +
           m->source_fingerprint.substr(0, 12) + ", source now " +
           source_selection.fingerprint().substr(0, 12) + "): the source changed since staging; run `" +
           stage_command(source_selection.root(), cache_root, m->include, m->label) + "`";
  return "";
}

std::string shell_quote(const std::string& word) {
  if (!word.empty() && word.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                               "0123456789_/.,:=+-@%") == std::string::npos)
    return word;
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string include_text(const std::vector<std::string>& include) {
  if (include.empty()) return "every file";
  std::string out = "include ";
  for (std::size_t i = 0; i < include.size(); ++i) out += (i ? ", '" : "'") + include[i] + "'";
  return out;
}

std::string stage_command(const std::string& source_root, const std::string& cache_root,
                          const std::vector<std::string>& include, const std::string& label, bool prune) {
  std::string cmd = "feedbench stage --from " + shell_quote(source_root) + " --to " + shell_quote(cache_root);
  for (const std::string& g : include) cmd += " --include " + shell_quote(g);
  // A label of the data version is kept; the default one names the old fingerprint and is not.
  if (!label.empty() && label.rfind("fp-", 0) != 0) cmd += " --label " + shell_quote(label);
  if (prune) cmd += " --prune";
  return cmd;
}

std::optional<nlohmann::json> read_manifest_json(const std::string& cache_root) {
  std::optional<Manifest> m = read_manifest(cache_root);
  if (!m) return std::nullopt;
  return nlohmann::json(m->to_json());
}

}  // namespace feedbench
