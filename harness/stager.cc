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
#include "stage_plan.h"
#include "stage_verify.h"

namespace feedbench {
namespace {

namespace fs = std::filesystem;

constexpr std::size_t kBatchFiles = 32;               // flushed together: writeback overlaps
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
      : opt_(o), cache_(plan.cache), sel_(plan.selection), todo_(plan.to_copy), todo_bytes_(plan.bytes_to_copy) {
    if (const char* d = std::getenv("FEEDBENCH_STAGE_TEST_DELAY_MS")) delay_ms_ = std::atoi(d);
    hashes_.resize(sel_.size());
  }

  void open_journal() {
    journal_ = UniqueFd(::open((cache_ + "/" + kStageJournalName).c_str(),
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
    std::uint64_t free_now = cache_space(cache_).free;
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
    p.dst = cache_ + "/" + rel;
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

// Removes the temporaries an interrupted stage left (the plan names only ours).
// RETURNS: how many went.
std::size_t remove_stale_temporaries(const StagePlan& plan) {
  std::size_t n = 0;
  for (const std::string& t : plan.stale_temporaries)
    if (::unlink((plan.cache + "/" + t).c_str()) == 0) ++n;
  return n;
}

// Starts changing the cache: the journal first, then the manifest goes, then the files of ours
// that left the selection (each recorded in `result`).
// RETURNS: false when the journal could not be written (result.errors says why; the cache is
// unchanged).
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
    std::ofstream out(journal_tmp, std::ios::binary | std::ios::trunc);
    out << journal_text;
    out.flush();
    if (!out) {
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

// Copies plan.to_copy into the cache (workers: options.workers, else by the cache's device),
// appending each verified copy to the journal. Sets hashes[i] of each file copied, and
// result's files_copied, bytes_copied and errors.
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

// Records a finished stage: the manifest of the selection with every file's hash (not
// rewritten when nothing changed), then the journal goes. A manifest that cannot be written is
// an error in `result`; result.manifest_written says whether the cache is complete.
void record_stage(const StageOptions& options, const StagePlan& plan, const std::vector<std::string>& hashes,
                  StageResult& result) {
  Manifest m;
  m.label = plan.label;
  m.source_root = plan.source;
  m.source_fingerprint = plan.source_fingerprint;
  m.include = options.include;
  m.total_bytes = plan.selection.total_bytes();
  m.created_utc = utc_timestamp();
  m.feedbench_version = build::kVersion;
  for (std::size_t i = 0; i < plan.selection.size(); ++i) {
    FB_CHECK(!hashes[i].empty(), "a staged file without a hash");
    m.files.push_back({std::string(plan.selection.relative_path(i)), hashes[i]});
  }
  const std::optional<Manifest>& old = plan.old_manifest;
  bool unchanged = !plan.changes() && old && old->source_fingerprint == m.source_fingerprint &&
                   old->label == m.label && old->include == m.include && old->sums_text() == m.sums_text();
  if (options.write_manifest && !unchanged) {
    try {
      write_manifest(plan.cache, m);
    } catch (const RunError& e) {
      result.errors.push_back(std::string(e.what()) + " (the cache has no manifest; free space and re-run)");
    }
  }
  if (result.errors.empty()) {
    result.manifest_written = true;
    ::unlink((plan.cache + "/" + kStageJournalName).c_str());
  }
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
  auto log = [&](const std::string& line) {
    if (!options.quiet) std::fprintf(stderr, "feedbench stage: %s\n", line.c_str());
  };

  // Planning: every refusal is thrown there, before the cache changes; the plan holds its lock.
  const StagePlan plan = plan_stage(options);
  StageResult result;
  result.files_selected = plan.selection.size();
  result.bytes_selected = plan.selection.total_bytes();
  result.files_skipped = plan.files_kept();
  result.source_fingerprint = plan.source_fingerprint;
  result.label = plan.label;
  for (const std::string& note : plan.notes) {
    result.notes.push_back(note);
    log("note: " + note);
  }
  if (std::size_t n = remove_stale_temporaries(plan))
    log("removed " + plural(n, "temporary file", "temporary files") + " left by an interrupted stage");
  for (const std::string& warning : plan.warnings) {
    result.warnings.push_back(warning);
    log("warning: " + warning);
  }
  // Measured once the temporaries are gone: they may hold a large file's reserved blocks.
  if (std::string refusal = space_refusal(plan, cache_space(plan.cache)); !refusal.empty()) {
    result.errors.push_back(refusal);
    result.seconds = seconds_since(start);
    return result;
  }

  // Copying: removals first, then each copy proved by its read-back and journalled.
  std::vector<std::string> hashes = plan.hashes;
  if (plan.changes() && !begin_changes(plan, result)) {
    result.seconds = seconds_since(start);
    return result;
  }
  if (!plan.to_copy.empty()) copy_files(options, plan, hashes, result);
  if (options.stop && options.stop->load()) result.stopped_by_signal = options.stop->load();

  // Recording: the manifest goes last, only when every file is in place.
  if (!result.stopped_by_signal && result.errors.empty()) record_stage(options, plan, hashes, result);
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
