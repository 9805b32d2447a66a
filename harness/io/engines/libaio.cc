// libaio: Linux native AIO (fio's libaio). Always O_DIRECT: with buffered files io_submit
// performs the read synchronously, so a queue depth would be a fiction. Writes (submit_writes)
// go through the caller's descriptor, which the plan asks to be O_DIRECT for the same reason.
#include <libaio.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <vector>

#include "engines.h"
#include "feedbench/base/error.h"

namespace feedbench::engines {
namespace {

class LibaioEngine final : public Engine {
 public:
  explicit LibaioEngine(const EngineOptions& options)
      : Engine(options), iocbs_(options.queue_depth), batch_(options.queue_depth),
        events_(options.queue_depth), failed_(options.queue_depth) {
    int rc = ::io_setup(int(options.queue_depth), &ctx_);
    if (rc < 0) throw RunError(errno_message("libaio: io_setup refused", -rc));
  }

  ~LibaioEngine() override { ::io_destroy(ctx_); }

  std::string_view name() const override { return "libaio"; }

  FileHandle open(const std::string& path) override { return open_for_read(path, true); }
  void close(FileHandle file) override { ::close(file); }
  int descriptor(FileHandle file) const override { return file; }

  void submit(std::span<const ReadOp> ops) override {
    std::size_t n = 0;
    for (const ReadOp& op : ops) {
      iocb* cb = &iocbs_[op.slot];
      ::io_prep_pread(cb, op.file, buffer(op.slot), op.length, (long long)op.offset);
      batch_[n++] = tagged(cb, op.slot);
    }
    submit_batch(n);
  }

  void submit_writes(std::span<const WriteOp> ops) override {
    std::size_t n = 0;
    for (const WriteOp& op : ops) {
      iocb* cb = &iocbs_[op.slot];
      // io_prep_pwrite takes a void*; the kernel only reads from it.
      ::io_prep_pwrite(cb, op.fd, const_cast<std::byte*>(op.data), op.length, (long long)op.offset);
      batch_[n++] = tagged(cb, op.slot);
    }
    submit_batch(n);
  }

  std::size_t collect(std::span<Completion> out, std::size_t min_complete) override {
    std::size_t n = failed_.pop_into(out);
    if (n == out.size() || in_kernel_ == 0) return n;
    long want_min = long(min_complete > n ? min_complete - n : 0);
    long want_max = long(std::min<std::size_t>(out.size() - n, in_kernel_));
    if (want_min > want_max) want_min = want_max;
    int got;
    do {
      got = ::io_getevents(ctx_, want_min, want_max, events_.data(), nullptr);
    } while (got == -EINTR);
    if (got < 0) throw RunError(errno_message("libaio: io_getevents failed", -got));
    for (int i = 0; i < got; ++i) {
      const io_event& ev = events_[std::size_t(i)];
      const auto slot = std::uint32_t(reinterpret_cast<std::uintptr_t>(ev.data));
      // res is the byte count or -errno (res2 is unused for reads and writes).
      out[n++] = Completion{slot, std::int64_t(static_cast<long>(ev.res))};
    }
    in_kernel_ -= unsigned(got);
    return n;
  }

 private:
  // RETURNS: `cb`, carrying its slot number back through io_getevents (not a pointer).
  static iocb* tagged(iocb* cb, std::uint32_t slot) {
    cb->data = reinterpret_cast<void*>(std::uintptr_t(slot));  // NOLINT(performance-no-int-to-ptr)
    return cb;
  }

  // Hands batch_[0, n) to the kernel.
  void submit_batch(std::size_t n) {
    std::size_t done = 0;
    while (done < n) {
      int rc = ::io_submit(ctx_, long(n - done), batch_.data() + done);
      if (rc == -EAGAIN || rc == -EINTR) continue;
      if (rc <= 0) {
        // The kernel took none of the rest: they complete here with the error, so the
        // caller sees each request fail instead of waiting for it forever.
        for (std::size_t i = done; i < n; ++i)
          failed_.push(std::uint32_t(std::uintptr_t(batch_[i]->data)), rc < 0 ? rc : -EIO);
        break;
      }
      done += std::size_t(rc);
      in_kernel_ += unsigned(rc);
    }
  }

  io_context_t ctx_ = nullptr;
  std::vector<iocb> iocbs_;   // one per slot
  std::vector<iocb*> batch_;  // submission array, reused
  std::vector<io_event> events_;
  CompletionQueue failed_;  // requests the kernel refused at submit
  unsigned in_kernel_ = 0;
};

}  // namespace

std::unique_ptr<Engine> make_libaio(const EngineOptions& options) {
  if (options.block_size % 512 != 0)
    throw InputError(
        "engine libaio reads with O_DIRECT: block_size must be a multiple of 512 "
        "(got " +
        std::to_string(options.block_size) + ")");
  return std::make_unique<LibaioEngine>(options);
}

}  // namespace feedbench::engines
