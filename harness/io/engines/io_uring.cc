// io_uring (liburing): buffered or O_DIRECT, any queue depth; reads, and writes from the
// caller's memory (submit_writes). The slot buffers are registered
// once (read_fixed skips pinning pages on every read) and files are registered in a sparse
// table at open (the kernel skips the file-table lookup and reference count per read). Both
// fall back to plain reads when the kernel or RLIMIT_MEMLOCK refuses them.
//
// submit() only fills submission entries; they reach the kernel in reap(), in the same system
// call that waits for completions (io_uring_submit_and_wait) - one syscall per batch where
// fio's io_uring engine makes two (commit, then getevents).
//
// Whole-file reads (issue 20): a small file costs an open, a read and a close, two of them
// system calls the worker would make one after another. Here they are one linked chain,
// OPENAT into a direct descriptor -> READ from it -> CLOSE of it, so up to queue_depth files
// are in flight with no system call per file. The open is non-blocking, but io_uring still
// waits for data from a FIFO that has a writer (it polls a pipe instead of failing with
// EAGAIN), so a watchdog cancels reads that wait too long: one timer per ring (not a link
// timeout per read, which cost one worker 4-7% of its files a second, docs/fio-parity.md) ticks
// every kWatchdogTickNs while chains are in flight, and a chain's read still waiting at the
// third tick after its submission (2-3 s) is cancelled; the caller's open-then-read then says
// what the file is. Buffer slot s owns direct descriptor s
// (the first queue_depth entries of the sparse file table; open() registers files after them), so a slot is
// never shared: a chain whose close did not run leaves its file in the entry, and the next open into that
// entry replaces and closes it (io_uring_prep_openat_direct(3)).
#include <fcntl.h>
#include <liburing.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "engines.h"
#include "feedbench/base/env_settings.h"
#include "feedbench/base/error.h"

namespace feedbench::engines {
namespace {

constexpr unsigned kMaxRegisteredFiles = 1024;
constexpr std::size_t kPathMax = PATH_MAX;
// A chain's read still waiting kWatchdogTicks ticks after its submission (2-3 s: far beyond any
// read of one block from a working device) is cancelled; a file cancelled so is only read again
// (open-then-read), never miscounted.
constexpr long long kWatchdogTickNs = 1'000'000'000;
constexpr unsigned kWatchdogTicks = 3;
constexpr unsigned kChainEntries = 3;                      // open, read, close
constexpr unsigned kAllSteps = (1u << kChainEntries) - 1;  // Chain::seen when every entry is in
// user_data steps that are not a ChainStep: the watchdog's timer and its cancellations.
constexpr unsigned kWatchdogStep = 4;
constexpr unsigned kCancelStep = 5;
static_assert(WholeFileRead{}.dir_fd == AT_FDCWD);

// user_data: a plain read is its slot; a chain step sets the top bit and its step above the slot.
constexpr std::uint64_t kChainBit = std::uint64_t(1) << 63;
std::uint64_t chain_tag(std::uint32_t slot, unsigned step) {
  return kChainBit | (std::uint64_t(step) << 32) | slot;
}
std::uint64_t chain_tag(std::uint32_t slot, ChainStep step) { return chain_tag(slot, unsigned(step)); }

class IoUringEngine final : public Engine {
 public:
  explicit IoUringEngine(const EngineOptions& options) : Engine(options) {
    const bool want_chain = options.whole_file_chain && io_uring_chain_setting();
    // A chain takes three submission entries (and completions): room for queue_depth chains, and
    // the watchdog's timer and cancellations (at most one per chain).
    const unsigned entries = want_chain ? options.queue_depth * (kChainEntries + 1) + 1 : options.queue_depth;
    io_uring_params params{};
    params.flags = IORING_SETUP_COOP_TASKRUN;  // no interrupting IPIs for task work (5.19+)
    int rc = io_uring_queue_init_params(entries, &ring_, &params);
    if (rc == -EINVAL) {  // an older kernel: no flags
      params = io_uring_params{};
      rc = io_uring_queue_init_params(entries, &ring_, &params);
    }
    if (rc < 0)
      throw RunError(errno_message("io_uring refused by the kernel or a sandbox (io_uring_setup)", -rc));
    register_buffers();
    // Before 5.18 a linked request's fixed file was looked up at submission, so the chain's
    // READ found its slot still empty (the OPENAT before it had not run) and every chain failed
    // with EBADF: each file opened twice, silently. IORING_FEAT_LINKED_FILE says the lookup
    // waits for the link; without it no direct-descriptor request is sent at all (a kernel
    // that ignores the slot would close descriptor 0 in the probe).
    register_file_table(want_chain && (params.features & IORING_FEAT_LINKED_FILE) != 0);
    if (chain_) {
      paths_ = std::make_unique_for_overwrite<char[]>(kPathMax * options.queue_depth);
      chains_ = std::make_unique<Chain[]>(options.queue_depth);
      ready_ = std::make_unique<Completion[]>(options.queue_depth);
    }
  }

  ~IoUringEngine() override {
    // Reads still in flight (an error cut the round short) are waited for by the kernel
    // when the ring goes; the buffers outlive it because the base class is destroyed later.
    io_uring_queue_exit(&ring_);
  }

  std::string_view name() const override { return "io_uring"; }

  bool reads_whole_files() const override { return chain_; }

  void submit_whole_files(std::span<const WholeFileRead> files) override {
    if (!chain_) Engine::submit_whole_files(files);  // throws
    const int flags =
        O_RDONLY | O_NONBLOCK | (options_.direct ? O_DIRECT : 0) | (try_noatime() ? O_NOATIME : 0);
    for (const WholeFileRead& f : files) {
      Chain& c = chains_[f.slot];
      c = Chain{};
      c.expect = f.expect;
      c.noatime = (flags & O_NOATIME) != 0;
      if (f.path.size() >= kPathMax) {  // the kernel would refuse it: no need to ask
        ++in_flight_;
        ready_[ready_count_++] = Completion{f.slot, -ENAMETOOLONG, ChainStep::open};
        continue;
      }
      char* path = paths_.get() + std::size_t(f.slot) * kPathMax;
      std::memcpy(path, f.path.data(), f.path.size());
      path[f.path.size()] = '\0';
      // A chain is never split over two submits.
      if (io_uring_sq_space_left(&ring_) < kChainEntries + 1) flush(0);
      arm_watchdog();
      c.tick = ticks_;
      c.active = true;
      const unsigned index = f.slot;  // slot s owns direct descriptor s
      io_uring_sqe* open = io_uring_get_sqe(&ring_);
      io_uring_sqe* read = io_uring_get_sqe(&ring_);
      io_uring_sqe* close = io_uring_get_sqe(&ring_);
      FB_CHECK(open && read && close, "io_uring submission queue full");
      io_uring_prep_openat_direct(open, f.dir_fd, path, flags, 0, index);
      open->flags |= IOSQE_IO_LINK;
      io_uring_sqe_set_data64(open, chain_tag(f.slot, ChainStep::open));
      const auto length = unsigned(options_.block_size);
      prep_read(read, int(index), f.slot, length, 0);
      // A hard link: the close runs even when the read fails, is short or is cancelled (a soft
      // link would cancel it, leaving the file in its descriptor slot).
      read->flags |= IOSQE_FIXED_FILE | IOSQE_IO_HARDLINK;
      io_uring_sqe_set_data64(read, chain_tag(f.slot, ChainStep::read));
      io_uring_prep_close_direct(close, index);
      io_uring_sqe_set_data64(close, chain_tag(f.slot, ChainStep::close));
      pending_ += kChainEntries;
      ++in_flight_;  // only now: a throw above leaves no chain counted that will never complete
      ++chains_in_flight_;
    }
  }

  FileHandle open(const std::string& path) override {
    int fd = open_for_read(path, options_.direct);
    if (!free_file_slots_.empty()) {
      int index = free_file_slots_.back();
      if (io_uring_register_files_update(&ring_, unsigned(index), &fd, 1) == 1) {
        free_file_slots_.pop_back();
        if (std::size_t(fd) >= fixed_index_.size()) fixed_index_.resize(std::size_t(fd) + 1, -1);
        fixed_index_[std::size_t(fd)] = index;
      }
    }
    return fd;
  }

  int descriptor(FileHandle file) const override { return file; }

  void close(FileHandle file) override {
    // The registered entry keeps a reference to the file until the slot is reused by a later
    // open; not unregistering saves a system call per file.
    if (std::size_t(file) < fixed_index_.size() && fixed_index_[std::size_t(file)] >= 0) {
      free_file_slots_.push_back(fixed_index_[std::size_t(file)]);
      fixed_index_[std::size_t(file)] = -1;
    }
    ::close(file);
  }

  void submit(std::span<const ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      io_uring_sqe* sqe = next_sqe();
      const int fixed = std::size_t(op.file) < fixed_index_.size() ? fixed_index_[std::size_t(op.file)] : -1;
      const int target = fixed >= 0 ? fixed : op.file;
      prep_read(sqe, target, op.slot, op.length, op.offset);
      if (fixed >= 0) sqe->flags |= IOSQE_FIXED_FILE;
      io_uring_sqe_set_data64(sqe, op.slot);
    }
    pending_ += unsigned(ops.size());
    in_flight_ += unsigned(ops.size());
  }

  // Writes go through the caller's descriptor as it is (not registered: a checkpoint writes each
  // file once) from the caller's memory (not the registered slot buffers).
  void submit_writes(std::span<const WriteOp> ops) override {
    for (const WriteOp& op : ops) {
      io_uring_sqe* sqe = next_sqe();
      io_uring_prep_write(sqe, op.fd, op.data, op.length, op.offset);
      io_uring_sqe_set_data64(sqe, op.slot);
    }
    pending_ += unsigned(ops.size());
    in_flight_ += unsigned(ops.size());
  }

  std::size_t collect(std::span<Completion> out, std::size_t min_complete) override {
    const std::size_t want = std::min<std::size_t>({min_complete, out.size(), in_flight_});
    std::size_t n = 0;
    while (ready_count_ > 0 && n < out.size()) {  // chains that never reached the kernel
      out[n++] = ready_[--ready_count_];
      --in_flight_;
    }
    // A chain completes with its last completion entry, so one wait may not be enough. Each
    // item still in flight has at least one entry to come: waiting for (want - n) never hangs.
    for (;;) {
      const unsigned need = unsigned(n < want ? want - n : 0);
      if (pending_ > 0) {
        flush(need);
      } else if (need > 0 && io_uring_cq_ready(&ring_) < need) {
        io_uring_cqe* cqe = nullptr;
        int rc;
        do {
          rc = io_uring_wait_cqe_nr(&ring_, &cqe, need);
        } while (rc == -EINTR || rc == -EAGAIN);
        if (rc < 0) throw RunError(errno_message("io_uring: waiting for completions failed", -rc));
      }
      n += drain(out.subspan(n));
      if (n >= want) return n;
    }
  }

 private:
  // RETURNS: a free submission entry, handing the prepared ones to the kernel first when none is
  // left (which cannot happen with at most queue_depth requests in flight; safe anyway).
  io_uring_sqe* next_sqe() {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (!sqe) {
      flush(0);
      sqe = io_uring_get_sqe(&ring_);
      FB_CHECK(sqe != nullptr, "io_uring submission queue full");
    }
    return sqe;
  }

  // A read of `length` bytes at `offset` of `file` into buffer slot `slot`: from the registered
  // buffer where the kernel took the buffers.
  void prep_read(io_uring_sqe* sqe, int file, std::uint32_t slot, unsigned length, std::uint64_t offset) {
    if (buffers_registered_) io_uring_prep_read_fixed(sqe, file, buffer(slot), length, offset, int(slot));
    else io_uring_prep_read(sqe, file, buffer(slot), length, offset);
  }

  // Hands the prepared entries to the kernel and waits for `wait` completions, in one call.
  void flush(unsigned wait) {
    while (pending_ > 0) {
      int rc = io_uring_submit_and_wait(&ring_, wait);
      if (rc == -EINTR || rc == -EAGAIN || rc == -EBUSY) continue;
      if (rc < 0) throw RunError(errno_message("io_uring: submit failed", -rc));
      pending_ -= std::min(pending_, unsigned(rc));
      if (rc == 0 && pending_ > 0) throw RunError("io_uring: the kernel took no submissions");
    }
  }

  // Starts the watchdog's timer unless it is running: a plain timeout (no count), one per ring.
  void arm_watchdog() {
    if (watchdog_armed_) return;
    io_uring_sqe* sqe = next_sqe();
    io_uring_prep_timeout(sqe, &watchdog_tick_, 0, 0);
    io_uring_sqe_set_data64(sqe, chain_tag(0, kWatchdogStep));
    ++pending_;
    watchdog_armed_ = true;
  }

  // A tick: every chain whose read has waited kWatchdogTicks ticks is cancelled (its read
  // completes with -ECANCELED, its close still runs), and the timer runs on while chains are in
  // flight. Called from drain(): the entries prepared here leave with the next submit.
  void watchdog_fired() {
    watchdog_armed_ = false;
    ++ticks_;
    for (unsigned s = 0; s < options_.queue_depth; ++s) {
      Chain& c = chains_[s];
      if (!c.active || c.cancelled || ticks_ - c.tick < kWatchdogTicks) continue;
      io_uring_sqe* sqe = next_sqe();
      io_uring_prep_cancel64(sqe, chain_tag(s, ChainStep::read), 0);
      io_uring_sqe_set_data64(sqe, chain_tag(s, kCancelStep));
      ++pending_;
      c.cancelled = true;
    }
    if (chains_in_flight_ > 0) arm_watchdog();
  }

  void register_buffers() {
    if (!options_.slot_buffers) return;  // writes only: nothing of the engine's to register
    std::vector<iovec> iov(options_.queue_depth);
    for (unsigned i = 0; i < options_.queue_depth; ++i) iov[i] = iovec{buffer(i), options_.block_size};
    buffers_registered_ = io_uring_register_buffers(&ring_, iov.data(), unsigned(iov.size())) == 0;
  }

  // Completion entries ready now, into `out` (until it is full). RETURNS: completions written.
  std::size_t drain(std::span<Completion> out) {
    std::size_t n = 0;
    unsigned seen = 0, head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == out.size()) break;
      ++seen;
      const std::uint64_t data = io_uring_cqe_get_data64(cqe);
      if ((data & kChainBit) == 0) {
        out[n++] = Completion{std::uint32_t(data), std::int64_t(cqe->res)};
        --in_flight_;
      } else if (const unsigned step = unsigned((data >> 32) & 0xff); step == kWatchdogStep) {
        watchdog_fired();
      } else if (step == kCancelStep) {
        // the cancellation's own result: the read's completion says what became of it
      } else if (chain_step_done(data, cqe->res, out[n])) {
        ++n;
        --in_flight_;
        --chains_in_flight_;
      }
    }
    io_uring_cq_advance(&ring_, seen);
    return n;
  }

  // Records one step's completion. RETURNS: true when it was the chain's last, with the file's
  // Completion in `out`. All three entries post a completion (a failed open cancels the rest:
  // -ECANCELED), in an order not relied on.
  bool chain_step_done(std::uint64_t data, int res, Completion& out) {
    const auto slot = std::uint32_t(data);
    const auto step = unsigned((data >> 32) & 0xff);
    Chain& c = chains_[slot];
    c.result[step - 1] = res;
    c.seen |= 1u << (step - 1);
    if (c.seen != kAllSteps) return false;
    c.active = false;
    const int open = c.result[0], read = c.result[1], close = c.result[2];
    if (open < 0) out = Completion{slot, open, ChainStep::open};
    else if (read < 0 || std::uint32_t(read) != c.expect) {
      // A file system that cannot read without blocking (no FMODE_NOWAIT: NFS, FUSE, some
      // overlays) answers the O_NONBLOCK chain's read with EAGAIN every time: chains off for
      // this engine, so each later file is opened and read once rather than twice.
      if (read == -EAGAIN) chain_ = false;
      out = Completion{slot, read, ChainStep::read};
    } else if (close < 0) out = Completion{slot, close, ChainStep::close};
    else {
      out = Completion{slot, read, ChainStep::none};
      count_open(c.noatime);  // counted as open() counts, only for a file read whole
    }
    return true;
  }

  // The sparse file table: with chains, one direct descriptor per buffer slot at [0, qd), then
  // files registered by open(). Chains are off where the kernel lacks direct opens and closes.
  void register_file_table(bool want_chain) {
    rlimit lim{};
    unsigned n = kMaxRegisteredFiles;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < rlim_t(n) * 2) n = unsigned(lim.rlim_cur / 2);
    unsigned base = want_chain ? options_.queue_depth : 0;
    if (base > 0 && io_uring_register_files_sparse(&ring_, base + n) != 0) base = 0;
    if (base == 0 && (n == 0 || io_uring_register_files_sparse(&ring_, n) != 0)) return;
    chain_ = base > 0 && direct_open_works();
    free_file_slots_.reserve(n);
    for (unsigned i = base + n; i-- > base;) free_file_slots_.push_back(int(i));
  }

  // RETURNS: true when this kernel opens into and closes a direct descriptor (5.15+): tried
  // once, on "/", before any measured read. Kernels before 5.15 ignore the slot and return an
  // ordinary fd, which is closed again.
  bool direct_open_works() {
    io_uring_probe* probe = io_uring_get_probe_ring(&ring_);
    const bool ops = probe && io_uring_opcode_supported(probe, IORING_OP_OPENAT) &&
                     io_uring_opcode_supported(probe, IORING_OP_CLOSE) &&
                     io_uring_opcode_supported(probe, IORING_OP_READ) &&
                     io_uring_opcode_supported(probe, IORING_OP_LINK_TIMEOUT);
    if (probe) io_uring_free_probe(probe);
    if (!ops) return false;
    io_uring_sqe* open = io_uring_get_sqe(&ring_);
    io_uring_sqe* close = io_uring_get_sqe(&ring_);
    if (!open || !close) return false;
    io_uring_prep_openat_direct(open, AT_FDCWD, "/", O_RDONLY | O_DIRECTORY, 0, 0);
    open->flags |= IOSQE_IO_LINK;
    io_uring_sqe_set_data64(open, 0);
    io_uring_prep_close_direct(close, 0);
    io_uring_sqe_set_data64(close, 1);
    int rc;
    do {
      rc = io_uring_submit_and_wait(&ring_, 2);
    } while (rc == -EINTR);
    if (rc < 0) return false;  // entries stay unsubmitted only on a refusal: no chains then
    int res[2] = {-1, -1};
    for (int i = 0; i < 2; ++i) {
      io_uring_cqe* cqe = nullptr;
      if (io_uring_wait_cqe(&ring_, &cqe) != 0) return false;
      const std::uint64_t d = io_uring_cqe_get_data64(cqe);
      if (d < 2) res[d] = cqe->res;
      io_uring_cqe_seen(&ring_, cqe);
    }
    if (res[0] > 0) ::close(res[0]);  // an old kernel opened an ordinary descriptor
    return res[0] == 0 && res[1] == 0;
  }

  // A whole-file read in flight: the results of its steps (open, read, close) as they come.
  struct Chain {
    int result[kChainEntries] = {0, 0, 0};  // open, read, close
    unsigned seen = 0;                      // bit (step - 1) per completion seen
    std::uint32_t expect = 0;
    unsigned tick = 0;  // the watchdog's ticks_ at submission
    bool noatime = false;
    bool active = false;     // submitted, not every completion in
    bool cancelled = false;  // the watchdog asked for its read's cancellation
  };

  io_uring ring_{};
  bool buffers_registered_ = false;
  bool chain_ = false;  // whole-file reads on
  __kernel_timespec watchdog_tick_{kWatchdogTickNs / 1'000'000'000, kWatchdogTickNs % 1'000'000'000};
  bool watchdog_armed_ = false;
  unsigned ticks_ = 0;                   // the watchdog's ticks so far
  unsigned chains_in_flight_ = 0;        // chains submitted, not yet complete
  std::unique_ptr<char[]> paths_;        // per slot, the path of its chain (the kernel reads it at submit)
  std::unique_ptr<Chain[]> chains_;      // per slot
  std::unique_ptr<Completion[]> ready_;  // completions of chains never submitted (path too long)
  unsigned ready_count_ = 0;
  std::vector<int> free_file_slots_;  // unused indexes of the registered file table
  std::vector<int> fixed_index_;      // fd -> registered index, or -1
  unsigned pending_ = 0;              // prepared, not yet handed to the kernel
  unsigned in_flight_ = 0;            // submitted (or pending), not yet reaped
};

}  // namespace

std::unique_ptr<Engine> make_io_uring(const EngineOptions& options) {
  if (options.direct && options.block_size % 512 != 0)
    throw InputError("engine io_uring with O_DIRECT: block_size must be a multiple of 512 (got " +
                     std::to_string(options.block_size) + ")");
  return std::make_unique<IoUringEngine>(options);
}

}  // namespace feedbench::engines
