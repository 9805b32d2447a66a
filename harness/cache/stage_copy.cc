// Copying, the phase of a stage that changes the cache (see stage_copy.h). One read of each
// source file feeds both the SHA-256 and the write; the copy is flushed, read back from the
// device (O_DIRECT, or evicted first where O_DIRECT is refused) and re-hashed before it takes
// its real name.
#include "stage_copy.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <thread>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "feedbench/base/aligned_buffer.h"
#include "feedbench/base/error.h"
#include "feedbench/base/file_system.h"
#include "feedbench/base/sha256.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"
#include "feedbench/cache/manifest.h"
#include "feedbench/io/throttle.h"
#include "stage_io.h"
#include "stage_verify.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBatchFiles = 32;  // flushed together: writeback overlaps
constexpr std::uint64_t kBatchBytes = 64ull << 20;

// Removes empty folders from `dir` up to (not including) `root`.
void prune_empty_parents(fs::path dir, const fs::path& root) {
  while (dir != root && dir.string().size() > root.string().size()) {
    if (::rmdir(dir.c_str()) != 0) break;
    dir = dir.parent_path();
  }
}

void sleep_for_test_hook(int ms, const std::atomic<int>* stop) {
  auto until = StageClock::now() + std::chrono::milliseconds(ms);
  while (StageClock::now() < until && !(stop && stop->load()))
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
}

// Shared state of one stage: the work list, counters, the journal, errors.
class StageRun {
 public:
  StageRun(const StageOptions& o, const StagePlan& plan)
      : opt_(o), cache_(plan.cache), sel_(plan.selection), todo_(plan.to_copy),
        todo_bytes_(plan.bytes_to_copy) {
    if (const char* d = std::getenv("FEEDBENCH_STAGE_TEST_DELAY_MS")) delay_ms_ = std::atoi(d);
    hashes_.resize(sel_.size());
  }

  void open_journal() {
    // The journal begin_changes just renamed into place: opened, never created, and never
    // anything but a regular file (O_NONBLOCK: a FIFO swapped in does not block the open).
    journal_ = UniqueFd(::open((cache_ + "/" + kStageJournalName).c_str(),
                               O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
    struct stat st {};
    if (journal_ && (::fstat(journal_.get(), &st) != 0 || !S_ISREG(st.st_mode))) journal_.reset();
  }

  void run(int workers, StageResult& result) {
    auto start = StageClock::now();
    {
      ProgressTicker ticker(opt_.progress, [&] { print_progress(seconds_since(start)); });
      std::vector<std::thread> threads;
      for (int w = 0; w < workers; ++w) {
        const std::string refused = start_thread(
            threads, [this] { worker(); }, "worker", w, workers);
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
    std::string eta =
        rate > 0 ? format_duration_ns(double(todo_bytes_ - std::min(b, todo_bytes_)) / rate * 1e9) : "?";
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
    std::uint64_t free_now = cache_space(cache_).free;
    return "no space left on the cache file system while writing " + dst + " (" +
           format_size(double(file_size)) + "): " + format_size(double(remaining)) + " still to copy, " +
           format_size(double(free_now)) + " free; free at least " +
           format_size(double(remaining > free_now ? remaining - free_now : file_size)) +
           " and re-run feedbench stage (files already copied are kept)";
  }

  // Copies one file to its temporary name, hashing the same bytes. RETURNS: false on failure
  // (recorded; the temporary removed).
  bool copy_to_temp(AlignedBuffer& buf, Pending& p) {
    const std::size_t i = p.index;
    const std::string src = sel_.absolute_path(i);
    const std::string rel(sel_.relative_path(i));
    p.dst = cache_ + "/" + rel;
    p.tmp = stage_temporary_path(p.dst);
    UniqueFd in = std::move(p.src);
    if (!in) return add_error("source: " + p.open_error), false;
    if (::fstat(in.get(), &p.source_stat) != 0)
      return add_error(errno_message("cannot stat " + src, errno)), false;
    const std::int64_t mtime =
        std::int64_t(p.source_stat.st_mtim.tv_sec) * 1000000000 + p.source_stat.st_mtim.tv_nsec;
    if (std::uint64_t(p.source_stat.st_size) != sel_.file_size(i) || mtime != sel_.mtime_ns(i))
      return add_error("source " + src + " changed since it was scanned; re-run feedbench stage"), false;
    ::posix_fadvise(in.get(), 0, 0, POSIX_FADV_SEQUENTIAL);
    ensure_parent(p.dst);
    // Created exclusively: a file, link or FIFO planted at the temporary name is never opened.
    p.fd = UniqueFd(create_temporary(AT_FDCWD, p.tmp, 0600));
    if (!p.fd) {
      int e = errno;
      if (out_of_space(e)) return fatal(no_space_message(p.dst, sel_.file_size(i), e)), false;
      return add_error(temporary_refusal(p.tmp, e)), false;
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
                        " read back from the cache device differs from the source (sha256 " + back +
                        ", expected " + p.source_hash + "); the device or file system " + "may be faulty",
                    false);
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
    *err = hash_whole_file(
        p.readback.get(), buf, [this] { return stopping(); }, &digest, got);
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
  const std::string& cache_;  // resolved
  const FileSet& sel_;
  const std::vector<std::size_t>& todo_;
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

}  // namespace

std::size_t remove_stale_temporaries(const StagePlan& plan) {
  std::size_t n = 0;
  for (const std::string& t : plan.stale_temporaries)
    if (::unlink((plan.cache + "/" + t).c_str()) == 0) ++n;
  return n;
}

bool begin_changes(const StagePlan& plan, StageResult& result) {
  // From here until the end the cache is, correctly, not a cache. The journal lists every file
  // of ours (those about to be removed too): it holds every hash resume needs and proves what
  // is ours until the new manifest.
  std::string journal_text;
  {
    Manifest j;
    for (const auto& [path, hash] : plan.owned) j.files.push_back({path, hash});
    journal_text = j.sums_text();
  }
  const std::string journal_tmp = plan.cache + "/feedbench-journal.new.fbtmp";
  {
    // Created exclusively, as every temporary of the cache is: nothing planted there is opened.
    UniqueFd out(create_temporary(AT_FDCWD, journal_tmp, 0644));
    const int create_error = out ? 0 : errno;
    std::size_t done = 0;
    while (out && done < journal_text.size()) {
      const ssize_t n = ::write(out.get(), journal_text.data() + done, journal_text.size() - done);
      if (n <= 0) break;
      done += std::size_t(n);
    }
    if (create_error == EEXIST) {
      result.errors.push_back(temporary_refusal(journal_tmp, create_error));
      return false;
    }
    if (!out || done < journal_text.size()) {
      result.errors.push_back("cannot write " + journal_tmp + " (is the cache full?)");
      ::unlink(journal_tmp.c_str());
      return false;
    }
  }
  const std::string journal_path = plan.cache + "/" + kStageJournalName;
  if (::rename(journal_tmp.c_str(), journal_path.c_str()) != 0)
    throw RunError(errno_message("cannot rename " + journal_tmp, errno));
  remove_manifest(plan.cache);
  for (const std::string& rel : plan.to_remove) {
    const std::string path = plan.cache + "/" + rel;
    if (::unlink(path.c_str()) != 0) {
      result.errors.push_back(errno_message("cannot remove " + path, errno));
      continue;
    }
    prune_empty_parents(fs::path(path).parent_path(), fs::path(plan.cache));
    result.removed.push_back(rel);
    ++result.files_removed;
  }
  return true;
}

void copy_files(const StageOptions& options, const StagePlan& plan, std::vector<std::string>& hashes,
                StageResult& result) {
  int workers = options.workers > 0 ? options.workers : default_workers(plan.cache);
  workers = int(std::min<std::size_t>(std::size_t(workers), plan.to_copy.size()));
  StageRun run(options, plan);
  run.open_journal();
  run.run(workers, result);
  for (std::size_t i = 0; i < plan.selection.size(); ++i)
    if (hashes[i].empty()) hashes[i] = run.hash_of(i);
}

}  // namespace feedbench
