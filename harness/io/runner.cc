// One measured round: `workers` threads, each with its own engine, open-file cache, counters
// and histogram, reading what the Workload hands it, up to queue_depth reads in flight.
//
// Why the hot path (next item -> submit -> reap -> record) allocates nothing, takes no lock and
// makes no system call beyond the read itself: the harness must never be the bottleneck (issue
// 7). A cached 4 KiB pread takes about a microsecond; one malloc, one contended mutex or one
// extra syscall per read would be a visible share of that, and it would grow with the worker
// count, so the figures would measure feedbench instead of the storage. Hence:
//   - everything a worker needs (engine and its aligned slot buffers, op and completion arrays,
//     per-slot timestamps, the open-file cache's fixed tables, a path buffer, the histogram) is
//     allocated before the start barrier, and the clock starts only after every worker is ready;
//   - workers share nothing they write: each writes only its own cache-line-aligned Worker and
//     takes work from the Workload, whose per-worker state is cache-line-aligned too and whose
//     only shared write is one relaxed atomic add per file (sequential/shuffled);
//   - timestamps come from the latency clock (latency_clock.h: the CPU's time-stamp counter
//     where the kernel keeps time with it, else steady_clock through the vDSO), two per batch,
//     and none at all when latency recording is off;
//   - the only mutex is on the error path, after the worker has stopped measuring.
// Opening and closing files are system calls by nature; they happen as a data loader does them
// (per file, or on a miss of the open-file cache for random reads), never per read. Where the
// engine reads whole files in one request (io_uring's open -> read -> close chain), a file no
// larger than a block is read that way; one that does not come back whole (gone, shrunk, grown,
// not a regular file) is read again by open() and submit(), so it is reported as it always was.
#include "feedbench/io/runner.h"
#include "feedbench/base/clock.h"
#include "feedbench/base/cores.h"
#include "feedbench/base/latency_clock.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <latch>
#include <limits>
#include <mutex>
#include <thread>

#include "feedbench/base/error.h"
#include "feedbench/base/threads.h"
#include "feedbench/base/unique_fd.h"
#include "feedbench/base/units.h"

namespace feedbench {
namespace {

// A worker's open files: a fixed-capacity table keyed by FileSet index (open addressing,
// linear probing, backward-shift deletion) with a least-recently-used list for eviction.
// All storage is allocated by the constructor.
class OpenFiles {
 public:
  struct Entry {
    std::uint32_t file = 0;
    FileHandle handle = -1;
    std::uint32_t in_flight = 0;
    bool close_when_idle = false;
    int prev = -1, next = -1;  // LRU list (head = most recent) or free list (next only)
  };

  explicit OpenFiles(unsigned capacity)
      : entries_(capacity), table_(std::bit_ceil(std::size_t(capacity) * 2), -1) {
    mask_ = table_.size() - 1;
    for (unsigned i = 0; i < capacity; ++i) entries_[i].next = i + 1 < capacity ? int(i + 1) : -1;
    free_ = capacity > 0 ? 0 : -1;
  }

  Entry& at(int e) { return entries_[std::size_t(e)]; }
  bool full() const { return free_ < 0; }
  bool empty() const { return head_ < 0; }
  int lru_head() const { return head_; }

  // RETURNS: the entry of `file`, made most recent, or -1.
  int find(std::uint32_t file) {
    for (std::size_t i = home(file);; i = (i + 1) & mask_) {
      const int e = table_[i];
      if (e < 0) return -1;
      if (entries_[std::size_t(e)].file == file) {
        unlink(e);
        push_front(e);
        return e;
      }
    }
  }

  // REQUIRES: !full(), file not present.
  int insert(std::uint32_t file, FileHandle handle) {
    const int e = free_;
    free_ = entries_[std::size_t(e)].next;
    entries_[std::size_t(e)] = Entry{file, handle, 0, false, -1, -1};
    std::size_t i = home(file);
    while (table_[i] >= 0) i = (i + 1) & mask_;
    table_[i] = e;
    push_front(e);
    return e;
  }

  // RETURNS: the least recently used entry with no read in flight, or -1.
  int idle_victim() const {
    for (int e = tail_; e >= 0; e = entries_[std::size_t(e)].prev)
      if (entries_[std::size_t(e)].in_flight == 0) return e;
    return -1;
  }

  void remove(int e) {
    std::size_t i = home(entries_[std::size_t(e)].file);
    while (table_[i] != e) i = (i + 1) & mask_;
    // Backward-shift deletion keeps every probe chain unbroken without tombstones.
    for (std::size_t j = (i + 1) & mask_; table_[j] >= 0; j = (j + 1) & mask_) {
      const std::size_t k = home(entries_[std::size_t(table_[j])].file);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      table_[i] = table_[j];
      i = j;
    }
    table_[i] = -1;
    unlink(e);
    entries_[std::size_t(e)].next = free_;
    free_ = e;
  }

 private:
  std::size_t home(std::uint32_t file) const {
    return std::size_t((std::uint64_t(file) * 0x9E3779B97F4A7C15ull) >> 32) & mask_;
  }
  void unlink(int e) {
    Entry& x = entries_[std::size_t(e)];
    (x.prev >= 0 ? entries_[std::size_t(x.prev)].next : head_) = x.next;
    (x.next >= 0 ? entries_[std::size_t(x.next)].prev : tail_) = x.prev;
    x.prev = x.next = -1;
  }
  void push_front(int e) {
    Entry& x = entries_[std::size_t(e)];
    x.prev = -1;
    x.next = head_;
    if (head_ >= 0) entries_[std::size_t(head_)].prev = e;
    head_ = e;
    if (tail_ < 0) tail_ = e;
  }

  std::vector<Entry> entries_;
  std::vector<int> table_;
  std::size_t mask_ = 0;
  int free_ = -1, head_ = -1, tail_ = -1;
};

// What one worker writes during the round: on its own cache lines. The measured counters
// restart when the worker sees the end of ramp; `progress_*` never restart and are read by the
// monitor (relaxed: one plain store per completion, read every sample interval).
struct alignas(64) Worker {
  std::atomic<std::uint64_t> progress_bytes{0};
  std::atomic<std::uint64_t> progress_reads{0};
  std::uint64_t ramp_bytes = 0;
  std::uint64_t reads = 0;
  std::uint64_t files = 0;
  std::uint64_t whole = 0;  // files read by a whole-file chain
  // Bytes read and planned restart at the end of ramp; opens and shortfalls cover the round.
  // The first shortfall's text is written only when one happens.
  ReadTally read;
  std::int64_t end_ns = 0;
  std::int64_t cpu_ns = 0;        // this thread's CPU from the start signal to its last completion
  std::optional<SinkStats> sink;  // with a copy engine
  bool ready = false;             // engine created
  std::exception_ptr input_error;
  Histogram latency;
};

struct Shared {
  Shared(const FileSet& f, Workload& wl, const RoundOptions& o)
      : files(f), workload(wl), options(o), ready(std::ptrdiff_t(o.workers)) {}
  const FileSet& files;
  Workload& workload;
  const RoundOptions& options;
  std::latch ready;
  std::latch go{1};
  std::atomic<bool> abort{false};   // set before release when setup failed
  std::atomic<bool> failed{false};  // a worker hit an error: the others stop early
  std::mutex error_mutex;           // error path only
  std::string error;
  // Time-based rounds: set by the monitor (run_round's thread), read once per worker loop.
  alignas(64) std::atomic<bool> stop{false};  // runtime passed or steady state reached
  std::atomic<bool> ramp_over{false};         // the figures start now
  // Each worker says when it is done, so the monitor does not wait out a deadline for nothing.
  std::mutex done_mutex;
  std::condition_variable done_cv;
  unsigned done = 0;

  void worker_done() {
    {
      std::lock_guard lock(done_mutex);
      ++done;
    }
    done_cv.notify_one();
  }

  void fail(const std::string& message) {
    std::lock_guard lock(error_mutex);
    if (error.empty()) error = message;  // first error wins
    failed.store(true, std::memory_order_relaxed);
  }
};

// NOLINTNEXTLINE(readability-function-size): the hot loop: steps out of line measured slower (fio-parity.md)
void run_worker(Shared& shared, Worker& me, unsigned w) {
  const RoundOptions& options = shared.options;
  const FileSet& files = shared.files;
  const bool random = shared.workload.spec().pattern == Pattern::random;

  // Setup, before the clock.
  std::unique_ptr<Engine> engine;
  try {
    engine = make_engine(options.engine, options.engine_options);
  } catch (const InputError&) {
    me.input_error = std::current_exception();
  } catch (const std::exception& e) {
    shared.fail(e.what());
  }
  me.ready = engine != nullptr;
  const unsigned qd = engine ? engine->queue_depth() : 1;
  // The next hop of every read (sink gpu), set up before the clock like the engine.
  std::unique_ptr<CopyEngine> copier;
  std::unique_ptr<StagingRing> ring;
  if (engine && options.copy_engine) {
    std::string why;
    copier = options.copy_engine(w, &why);
    if (copier) {
      ring = std::make_unique<StagingRing>(*copier);
    } else {
      shared.fail(why);
      me.ready = false;
    }
  }
  // Random reads revisit files: keep up to max_open_files. Whole-file patterns close a file
  // after its last read, so at most one file per read in flight plus the next is open.
  const unsigned capacity = random ? std::max(options.max_open_files, qd + 1) : qd + 1;
  OpenFiles open_files(capacity);
  std::vector<ReadOp> ops(qd);
  // One completion per reap, and its slot refilled before the next: reaping every ready
  // completion and then refilling the whole batch let the device queue drain in bursts, and
  // random O_DIRECT reads at queue depth 32 ran at 0.84-0.90 of fio's rate (libaio and io_uring
  // alike); one at a time, as fio does, they run at 0.99 (tools/compare-fio, docs/fio-parity.md).
  // (io_uring hands back a completion already in its ring without a syscall.)
  Completion done[1];
  std::vector<std::uint32_t> free_slots(qd);
  for (unsigned s = 0; s < qd; ++s) free_slots[s] = qd - 1 - s;
  std::vector<std::int64_t> started(qd);
  std::vector<int> slot_entry(qd);
  std::vector<std::uint64_t> slot_offset(qd);
  std::vector<std::uint64_t> slot_planned(qd);
  std::string path;
  path.reserve(4096);
  const bool record = options.record_latency;
  const LatencyClock* clock = record ? &LatencyClock::get() : nullptr;  // made by run_round
  // Whole-file reads: a slot whose slot_entry is -1 holds a chain for slot_item; a chain that
  // did not read its file whole puts the item on `retry`, read next by open() and submit().
  const bool chain = engine && !random && engine->reads_whole_files();
  std::vector<WorkItem> slot_item(chain ? qd : 0);
  std::vector<WorkItem> retry(chain ? qd : 0);
  std::vector<std::uint32_t> chain_slots(chain ? qd : 0);  // submitted in this batch
  unsigned retry_n = 0;
  // Chains open files relative to the data set's root, opened once here: the kernel then walks
  // one path component per file instead of the whole absolute path (perf: the walk under
  // io_openat2 was 7% of a run over 32,768 files of 4 KiB). Absolute paths where it cannot be
  // opened.
  const UniqueFd root_dir = chain ? files.open_root() : UniqueFd();
  const int root_fd = root_dir.get();

  shared.ready.count_down();
  shared.go.wait();
  if (shared.abort.load() || !engine) return;
  std::int64_t cpu_start = thread_cpu_ns();
  // Ramp: everything up to the moment this worker sees ramp_over is moved out of the figures.
  bool in_ramp = options.ramp_ns > 0;
  auto end_ramp = [&] {
    in_ramp = false;
    me.ramp_bytes += me.read.bytes;
    me.read.bytes = me.reads = me.files = me.read.bytes_planned = me.whole = 0;
    me.latency.reset();
    if (ring) ring->reset_stats();
    cpu_start = thread_cpu_ns();
  };
  bool time_up = false;  // runtime passed or steady state reached: no new reads

  auto fail_file = [&](std::uint32_t file, const std::string& what) {
    shared.fail(what + " (" + files.absolute_path(file) + ")");
  };
  // What a read can return: up to the file's end as scanned.
  auto planned_of = [&](const WorkItem& it) -> std::uint64_t {
    const std::uint64_t size = files.file_size(it.file);
    return it.offset >= size ? 0 : std::min<std::uint64_t>(it.length, size - it.offset);
  };
  // Whole-file patterns hand a vanished file's remaining reads to the same worker: skip them.
  std::uint32_t vanished_file = UINT32_MAX;

  unsigned in_flight = 0;
  bool more = true;
  bool have_item = false;
  bool retrying = false;  // `item` came from `retry`: its planned bytes are counted already
  bool stopped = false;   // an error here or in another worker: no new reads
  WorkItem item;
  // A read that completed: its bytes, latency and next hop. Inlined: called out of line (GCC
  // did), every capture is a load through the closure, and latency recording cost 0.3 points
  // more (tools/measure-overhead, 3 alternating runs of 1,000 pairs each).
  auto count_read = [&](const Completion& c, std::uint32_t file, std::int64_t t)
      __attribute__((always_inline)) {
    me.read.bytes += std::uint64_t(c.result);  // short at end of file: planned so
    ++me.reads;
    me.progress_bytes.store(me.progress_bytes.load(std::memory_order_relaxed) + std::uint64_t(c.result),
                            std::memory_order_relaxed);
    me.progress_reads.store(me.progress_reads.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (std::uint64_t(c.result) < slot_planned[c.slot]) {
      if (me.read.short_reads++ == 0 && me.read.incomplete.empty())
        me.read.incomplete = files.absolute_path(file) + ": read " + std::to_string(c.result) + " of " +
                             std::to_string(slot_planned[c.slot]) + " bytes at offset " +
                             std::to_string(slot_offset[c.slot]) + " (it shrank since the scan)";
    }
    if (record) me.latency.record(clock->elapsed_ns(started[c.slot], t));
    // On to the device before the slot is reused; the ring waits when every staging slot
    // is busy, so a copy engine slower than storage slows the round.
    if (ring && !stopped) {
      try {
        ring->push(std::span<const std::byte>(engine->buffer(c.slot), std::size_t(c.result)));
      } catch (const std::exception& ex) {
        shared.fail(ex.what());
        stopped = true;
      }
    }
  };

  for (;;) {
    std::size_t n = 0;
    std::size_t chains = 0;
    if (!time_up && shared.stop.load(std::memory_order_relaxed)) time_up = true;
    // A retry finishes a file already begun, so it goes on after time is up.
    while (!stopped && in_flight + n < qd) {
      if (!have_item) {
        if (retry_n > 0) {
          item = retry[--retry_n];
          retrying = true;
        } else {
          if (time_up || !more) break;
          if (!shared.workload.next(w, item)) {
            more = false;
            break;
          }
          retrying = false;
        }
        have_item = true;
      } else if (time_up && !retrying) {
        have_item = false;  // never submitted, so never planned: dropped, and retries go on
        continue;
      }
      if (!random && item.file == vanished_file) {
        me.read.bytes_planned += planned_of(item);
        have_item = false;
        continue;
      }
      // Asked per file: the engine turns its chains off when a file system cannot take them.
      if (chain && !retrying && item.first_of_file && item.last_of_file) {
        const std::uint64_t planned = planned_of(item);
        if (engine->reads_whole(planned)) {
          std::string_view chain_path = files.relative_path(item.file);
          if (root_fd < 0) {
            path.assign(files.root());
            path += '/';
            path += chain_path;
            chain_path = path;
          }
          const std::uint32_t slot = free_slots[qd - 1 - in_flight - n];
          slot_entry[slot] = -1;
          slot_item[slot] = item;
          slot_offset[slot] = 0;
          slot_planned[slot] = planned;
          me.read.bytes_planned += planned;
          const WholeFileRead r{chain_path, slot, std::uint32_t(planned), root_fd < 0 ? AT_FDCWD : root_fd};
          engine->submit_whole_files(std::span<const WholeFileRead>(&r, 1));  // copies the path
          ++in_flight;
          chain_slots[chains++] = slot;
          have_item = false;
          continue;
        }
      }
      int e = open_files.find(item.file);
      if (e < 0) {
        if (open_files.full()) {
          const int victim = open_files.idle_victim();
          FB_CHECK(victim >= 0, "open-file cache holds only busy files");
          engine->close(open_files.at(victim).handle);
          open_files.remove(victim);
        }
        path.assign(files.root());
        path += '/';
        path += files.relative_path(item.file);
        FileHandle h;
        try {
          h = engine->open(path);
        } catch (const std::exception& ex) {
          if (::access(path.c_str(), F_OK) != 0 && errno == ENOENT) {
            // Removed since the scan: the round goes on without it, and is not complete.
            ++me.read.files_vanished;
            if (!retrying) me.read.bytes_planned += planned_of(item);
            if (me.read.incomplete.empty()) me.read.incomplete = path + ": removed since the scan";
            vanished_file = item.file;
            have_item = false;
            continue;
          }
          shared.fail(ex.what());
          stopped = true;
          break;
        }
        ++me.files;
        ++me.read.files_opened;
        e = open_files.insert(item.file, h);
      }
      OpenFiles::Entry& entry = open_files.at(e);
      if (!random && item.last_of_file) entry.close_when_idle = true;
      ++entry.in_flight;
      const std::uint32_t slot = free_slots[qd - 1 - in_flight - n];
      slot_entry[slot] = e;
      slot_offset[slot] = item.offset;
      slot_planned[slot] = planned_of(item);
      if (!retrying) me.read.bytes_planned += slot_planned[slot];
      ops[n++] = ReadOp{entry.handle, slot, item.length, item.offset};
      have_item = false;
    }
    if (record && n + chains > 0) {
      const std::int64_t t = clock->stamp();
      for (std::size_t i = 0; i < n; ++i) started[ops[i].slot] = t;
      for (std::size_t i = 0; i < chains; ++i) started[chain_slots[i]] = t;
    }
    if (n > 0) {
      engine->submit(std::span<const ReadOp>(ops.data(), n));
      in_flight += unsigned(n);
    }
    if (in_flight == 0 && (retry_n == 0 || stopped)) break;
    if (in_flight == 0) continue;  // the retries go in first

    std::size_t got;
    try {
      got = engine->reap(std::span<Completion>(done), 1);
    } catch (const std::exception& ex) {
      shared.fail(ex.what());
      break;  // the engine is unusable; its destructor cancels what is left
    }
    const std::int64_t t = record ? clock->stamp() : 0;
    // A completion seen after the end of ramp is measured.
    if (in_ramp && shared.ramp_over.load(std::memory_order_relaxed)) end_ramp();
    for (std::size_t i = 0; i < got; ++i) {
      const Completion& c = done[i];
      const int e = slot_entry[c.slot];
      if (e < 0) {  // a whole-file chain
        if (c.failed_step == ChainStep::none) {
          ++me.files;
          ++me.read.files_opened;
          ++me.whole;
          count_read(c, slot_item[c.slot].file, t);
        } else {
          retry[retry_n++] = slot_item[c.slot];  // not whole: open-then-read says what happened
        }
        --in_flight;
        free_slots[qd - 1 - in_flight] = c.slot;
        continue;
      }
      OpenFiles::Entry& entry = open_files.at(e);
      if (c.result < 0) {
        if (!stopped)
          fail_file(entry.file,
                    errno_message("read at offset " + std::to_string(slot_offset[c.slot]) + " failed",
                                  int(-c.result)));
        stopped = true;
      } else {
        count_read(c, entry.file, t);
      }
      --in_flight;
      free_slots[qd - 1 - in_flight] = c.slot;
      if (--entry.in_flight == 0 && entry.close_when_idle) {
        engine->close(entry.handle);
        open_files.remove(e);
      }
    }
    if (!stopped && shared.failed.load(std::memory_order_relaxed)) stopped = true;
  }
  if (ring) {
    try {
      ring->drain();  // the round ends when the last byte is on the device
    } catch (const std::exception& ex) {
      shared.fail(ex.what());
    }
  }
  me.end_ns = now_ns();
  me.cpu_ns = thread_cpu_ns() - cpu_start;
  if (in_ramp) {  // done before the figures started: all of it was ramp
    end_ramp();
    me.cpu_ns = 0;
  }
  if (ring) me.sink = ring->stats();
  me.read.noatime_opens = engine->open_counts().noatime;

  // Files a random round kept open (or an error left open) close after the clock. The kernel
  // keeps its own reference for a read still in flight after an engine failure.
  while (!open_files.empty()) {
    const int e = open_files.lru_head();
    engine->close(open_files.at(e).handle);
    open_files.remove(e);
  }
  engine.reset();  // chains in flight after an error end with the ring, before their directory
}

// The clock of a time-based round, on run_round's own thread while the workers read: it ends
// the ramp, samples throughput for the steady-state criterion, and stops the round at
// runtime or at steady state. It sleeps between events and wakes when every worker is done.
struct MonitorOutcome {
  std::int64_t measure_start = 0;  // 0: the ramp never ended (the workload ran out first)
  std::string stopped_by;
  std::optional<SteadyStateResult> steady_state;
};

MonitorOutcome monitor_round(Shared& shared, const std::vector<Worker>& workers, unsigned threads,
                             std::int64_t start, const RoundOptions& options) {
  using clock = std::chrono::steady_clock;
  constexpr std::int64_t never = std::numeric_limits<std::int64_t>::max();
  MonitorOutcome out;
  bool ramp_pending = options.ramp_ns > 0;
  if (!ramp_pending) out.measure_start = start;
  const std::int64_t ramp_end = start + options.ramp_ns;
  // Runtime counts from when the figures actually start (the monitor may wake late for the
  // end of ramp), so a round is never measured for less than its runtime.
  std::int64_t deadline = options.runtime_ns > 0 ? ramp_end + options.runtime_ns : never;
  std::optional<SteadyStateDetector> detector;
  std::int64_t interval = 0, next_sample = never, last_t = 0;
  std::uint64_t last_count = 0;
  const bool iops = options.steady_state && options.steady_state->metric == SteadyStateSpec::Metric::iops;
  auto progress = [&] {
    std::uint64_t sum = 0;
    for (const Worker& w : workers)
      sum += (iops ? w.progress_reads : w.progress_bytes).load(std::memory_order_relaxed);
    return sum;
  };
  auto begin_measuring = [&](std::int64_t now) {
    out.measure_start = now;
    if (options.runtime_ns > 0) deadline = now + options.runtime_ns;
    if (options.steady_state) {
      interval = std::max<std::int64_t>(1'000'000, options.steady_state->window_ns / 10);
      detector.emplace(*options.steady_state, interval);
      out.steady_state = SteadyStateResult{};
      out.steady_state->value_percent = std::nan("");
      next_sample = now + interval;
      last_t = now;
      last_count = progress();
    }
  };
  if (!ramp_pending) begin_measuring(start);

  std::unique_lock lock(shared.done_mutex);
  while (shared.done < threads) {
    const std::int64_t wake = std::min({ramp_pending ? ramp_end : never, deadline, next_sample});
    if (wake == never) {
      shared.done_cv.wait(lock);
      continue;
    }
    shared.done_cv.wait_until(lock, clock::time_point(std::chrono::nanoseconds(wake)));
    if (shared.done >= threads) break;
    const std::int64_t now = now_ns();
    if (ramp_pending && now >= ramp_end) {
      ramp_pending = false;
      shared.ramp_over.store(true, std::memory_order_relaxed);
      begin_measuring(now);
    }
    if (detector && now >= next_sample) {
      const std::uint64_t count = progress();
      const double rate = double(count - last_count) / (double(now - last_t) * 1e-9);
      last_count = count;
      last_t = now;
      next_sample += interval;
      if (next_sample <= now) next_sample = now + interval;  // the monitor was late: no burst of samples
      ++out.steady_state->samples;
      if (detector->add(rate)) {
        out.steady_state->reached = true;
        out.steady_state->reached_after_s = double(now - out.measure_start) * 1e-9;
        out.steady_state->value_percent = detector->last_value();
        out.steady_state->window_rate = detector->last_mean();
        out.stopped_by = kStoppedBySteadyState;
        shared.stop.store(true, std::memory_order_relaxed);
        break;
      }
      out.steady_state->value_percent = detector->last_value();
      out.steady_state->window_rate = detector->last_mean();
    }
    if (now >= deadline) {
      out.stopped_by = kStoppedByRuntime;
      shared.stop.store(true, std::memory_order_relaxed);
      break;
    }
  }
  return out;
}

}  // namespace

std::string format_steady_state(const SteadyStateSpec& spec) {
  char limit[32];
  std::snprintf(limit, sizeof limit, "%g", spec.limit_percent);
  return std::string(spec.metric == SteadyStateSpec::Metric::bw ? "bw" : "iops") + "_" +
         (spec.mode == SteadyStateSpec::Mode::slope ? "slope" : "spread") + ":" + limit +
         "%:" + format_duration_exact(spec.window_ns);
}

SteadyStateSpec parse_steady_state(const std::string& text) {
  auto bad = [&] {
    return InputError("steady_state: expected metric_mode:limit%:window such as bw_slope:2%:5s, got \"" +
                      text + "\"");
  };
  SteadyStateSpec s;
  const auto colon = text.find(':');
  const auto colon2 = colon == std::string::npos ? colon : text.find(':', colon + 1);
  if (colon2 == std::string::npos) throw bad();
  const std::string kind = text.substr(0, colon);
  if (kind == "bw_slope" || kind == "bw_spread") s.metric = SteadyStateSpec::Metric::bw;
  else if (kind == "iops_slope" || kind == "iops_spread") s.metric = SteadyStateSpec::Metric::iops;
  else throw bad();
  s.mode = kind.ends_with("slope") ? SteadyStateSpec::Mode::slope : SteadyStateSpec::Mode::spread;
  const std::string limit = text.substr(colon + 1, colon2 - colon - 1);
  char* end = nullptr;
  s.limit_percent = std::strtod(limit.c_str(), &end);
  if (end == limit.c_str() || std::string(end) != "%" || !(s.limit_percent > 0)) throw bad();
  s.window_ns = parse_duration_ns(text.substr(colon2 + 1), "steady_state window");
  if (s.window_ns <= 0) throw bad();
  return s;
}

SteadyStateDetector::SteadyStateDetector(const SteadyStateSpec& spec, std::int64_t interval_ns)
    : spec_(spec), interval_s_(double(interval_ns) * 1e-9), last_value_(std::nan("")) {
  FB_CHECK(interval_ns > 0, "a steady-state interval must be positive");
  window_ = std::size_t(std::max<std::int64_t>(2, (spec.window_ns + interval_ns / 2) / interval_ns));
  samples_.assign(window_, 0.0);
}

bool SteadyStateDetector::add(double rate) {
  samples_[next_] = rate;
  next_ = (next_ + 1) % window_;
  if (count_ < window_) ++count_;
  if (count_ < window_ || reached_) return reached_;
  double mean = 0;
  for (double x : samples_) mean += x;
  mean /= double(window_);
  last_mean_ = mean;
  if (!(mean > 0)) {  // nothing read in the window: not a steady rate
    last_value_ = std::nan("");
    return false;
  }
  if (spec_.mode == SteadyStateSpec::Mode::spread) {
    double worst = 0;
    for (double x : samples_) worst = std::max(worst, std::abs(x - mean));
    last_value_ = 100.0 * worst / mean;
  } else {
    // Least squares over (time, rate), oldest sample first.
    const double n = double(window_);
    const double tmean = (n - 1) / 2 * interval_s_;
    double sxy = 0, sxx = 0;
    for (std::size_t k = 0; k < window_; ++k) {
      const double x = double(k) * interval_s_ - tmean;
      sxy += x * (samples_[(next_ + k) % window_] - mean);
      sxx += x * x;
    }
    last_value_ = 100.0 * std::abs(sxy / sxx) / mean;
  }
  reached_ = last_value_ <= spec_.limit_percent;
  return reached_;
}

RoundStats run_round(const FileSet& files, Workload& workload, const RoundOptions& options) {
  FB_CHECK(options.workers >= 1, "a round needs at least one worker");
  FB_CHECK(options.workers == workload.spec().workers, "workload and round disagree on workers");

  // Made here, not first in a worker: its 5 ms calibration is done once, and a bad
  // FEEDBENCH_LATENCY_CLOCK is thrown to the caller rather than out of a thread.
  if (options.record_latency) (void)LatencyClock::get();
  RoundStats stats;
  std::vector<Worker> workers(options.workers);
  Shared shared(files, workload, options);
  std::vector<std::thread> threads;
  threads.reserve(options.workers);
  std::string refused;  // a worker the system would not start (pids limit): no round
  for (unsigned w = 0; w < options.workers && refused.empty(); ++w) {
    refused = start_thread(
        threads,
        [&shared, &workers, w] {
          run_worker(shared, workers[w], w);
          shared.worker_done();
        },
        "worker", w, options.workers);
    if (!refused.empty()) shared.ready.count_down(std::ptrdiff_t(options.workers - w));
  }

  shared.ready.wait();
  const bool setup_ok =
      refused.empty() && std::all_of(workers.begin(), workers.end(), [](const Worker& w) { return w.ready; });
  if (!setup_ok) shared.abort.store(true);

  std::int64_t start = now_ns();
  shared.go.count_down();
  MonitorOutcome timing;
  timing.measure_start = start;
  if (setup_ok && (options.runtime_ns > 0 || options.ramp_ns > 0))
    timing = monitor_round(shared, workers, unsigned(threads.size()), start, options);
  for (auto& t : threads) t.join();

  for (const Worker& w : workers)
    if (w.input_error) std::rethrow_exception(w.input_error);
  if (!setup_ok) {
    stats.error = refused.empty() ? shared.error : refused;
    return stats;
  }

  std::int64_t end = start;
  for (const Worker& w : workers) {
    stats.ramp_bytes += w.ramp_bytes;
    stats.merge(w.read);
    stats.reads += w.reads;
    stats.files += w.files;
    stats.whole_file_reads += w.whole;
    stats.latency.merge(w.latency);
    if (w.sink) {
      if (!stats.sink) stats.sink.emplace();
      stats.sink->merge(*w.sink);
    }
    end = std::max(end, w.end_ns);
    stats.cpu_seconds += double(w.cpu_ns) * 1e-9;
  }
  stats.stopped_by = timing.stopped_by;
  stats.steady_state = timing.steady_state;
  if (options.ramp_ns > 0 && timing.measure_start == 0) {
    if (shared.error.empty())
      stats.error = "the round read everything it was to read (" + format_size(double(stats.ramp_bytes)) +
                    ") within ramp_time " + format_duration_exact(options.ramp_ns) +
                    ": nothing was measured (shorten ramp_time or read more)";
    else stats.error = shared.error;
    return stats;
  }
  stats.ramp_elapsed_ns = timing.measure_start - start;
  start = timing.measure_start;
  stats.start_ns = start;
  stats.elapsed_ns = std::max<std::int64_t>(0, end - start);
  if (stats.elapsed_ns > 0) stats.cpu_util = stats.cpu_seconds / (stats.seconds() * usable_cores());
  stats.error = shared.error;
  return stats;
}

}  // namespace feedbench
