// io_uring (liburing): buffered or O_DIRECT, any queue depth. The slot buffers are registered
// once (read_fixed skips pinning pages on every read) and files are registered in a sparse
// table at open (the kernel skips the file-table lookup and reference count per read). Both
// fall back to plain reads when the kernel or RLIMIT_MEMLOCK refuses them.
//
// submit() only fills submission entries; they reach the kernel in reap(), in the same system
// call that waits for completions (io_uring_submit_and_wait) - one syscall per batch where
// fio's io_uring engine makes two (commit, then getevents).
#include <liburing.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <vector>

#include "engines.h"
#include "feedbench/error.h"

namespace feedbench::engines {
namespace {

constexpr unsigned kMaxRegisteredFiles = 1024;

class IoUringEngine final : public Engine {
 public:
  explicit IoUringEngine(const EngineOptions& options) : Engine(options) {
    io_uring_params params{};
    params.flags = IORING_SETUP_COOP_TASKRUN;  // no interrupting IPIs for task work (5.19+)
    int rc = io_uring_queue_init_params(options.queue_depth, &ring_, &params);
    if (rc == -EINVAL) {  // an older kernel: no flags
      params = io_uring_params{};
      rc = io_uring_queue_init_params(options.queue_depth, &ring_, &params);
    }
    if (rc < 0)
      throw RunError(errno_message("io_uring refused by the kernel or a sandbox (io_uring_setup)", -rc));
    register_buffers();
    register_file_table();
  }

  ~IoUringEngine() override {
    // Reads still in flight (an error cut the round short) are waited for by the kernel
    // when the ring goes; the buffers outlive it because the base class is destroyed later.
    io_uring_queue_exit(&ring_);
  }

  std::string_view name() const override { return "io_uring"; }

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
      io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
      if (!sqe) {  // cannot happen with at most queue_depth reads in flight; be safe anyway
        flush(0);
        sqe = io_uring_get_sqe(&ring_);
        FB_CHECK(sqe != nullptr, "io_uring submission queue full");
      }
      const int fixed = std::size_t(op.file) < fixed_index_.size() ? fixed_index_[std::size_t(op.file)] : -1;
      const int target = fixed >= 0 ? fixed : op.file;
      if (buffers_registered_)
        io_uring_prep_read_fixed(sqe, target, buffer(op.slot), op.length, op.offset, int(op.slot));
      else io_uring_prep_read(sqe, target, buffer(op.slot), op.length, op.offset);
      if (fixed >= 0) sqe->flags |= IOSQE_FIXED_FILE;
      io_uring_sqe_set_data64(sqe, op.slot);
    }
    pending_ += unsigned(ops.size());
    in_flight_ += unsigned(ops.size());
  }

  std::size_t collect(std::span<Completion> out, std::size_t min_complete) override {
    unsigned want = unsigned(std::min<std::size_t>({min_complete, out.size(), in_flight_}));
    if (pending_ > 0) {
      flush(want);
    } else if (want > 0 && io_uring_cq_ready(&ring_) < want) {
      io_uring_cqe* cqe = nullptr;
      int rc;
      do {
        rc = io_uring_wait_cqe_nr(&ring_, &cqe, want);
      } while (rc == -EINTR || rc == -EAGAIN);
      if (rc < 0) throw RunError(errno_message("io_uring: waiting for completions failed", -rc));
    }
    std::size_t n = 0;
    unsigned head;
    io_uring_cqe* cqe;
    io_uring_for_each_cqe(&ring_, head, cqe) {
      if (n == out.size()) break;
      out[n++] = Completion{std::uint32_t(io_uring_cqe_get_data64(cqe)), std::int64_t(cqe->res)};
    }
    io_uring_cq_advance(&ring_, unsigned(n));
    in_flight_ -= unsigned(n);
    return n;
  }

 private:
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

  void register_buffers() {
    std::vector<iovec> iov(options_.queue_depth);
    for (unsigned i = 0; i < options_.queue_depth; ++i) iov[i] = iovec{buffer(i), options_.block_size};
    buffers_registered_ = io_uring_register_buffers(&ring_, iov.data(), unsigned(iov.size())) == 0;
  }

  void register_file_table() {
    rlimit lim{};
    unsigned n = kMaxRegisteredFiles;
    if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < rlim_t(n) * 2) n = unsigned(lim.rlim_cur / 2);
    if (n == 0 || io_uring_register_files_sparse(&ring_, n) != 0) return;
    free_file_slots_.reserve(n);
    for (unsigned i = n; i-- > 0;) free_file_slots_.push_back(int(i));
  }

  io_uring ring_{};
  bool buffers_registered_ = false;
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
