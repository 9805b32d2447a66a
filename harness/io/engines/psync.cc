// psync: one pread per read, synchronous (fio's psync). The baseline every other engine is
// compared with; buffered or O_DIRECT. Writes are one pwrite each, as fio's psync writes.
#include <unistd.h>
#include <cerrno>

#include "engines.h"
#include "feedbench/base/error.h"

namespace feedbench::engines {
namespace {

class PsyncEngine final : public Engine {
 public:
  explicit PsyncEngine(const EngineOptions& options) : Engine(options), done_(options.queue_depth) {}

  std::string_view name() const override { return "psync"; }

  FileHandle open(const std::string& path) override { return open_for_read(path, options_.direct); }
  void close(FileHandle file) override { ::close(file); }
  int descriptor(FileHandle file) const override { return file; }

  void submit(std::span<const ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      ssize_t n = ::pread(op.file, buffer(op.slot), op.length, off_t(op.offset));
      done_.push(op.slot, n < 0 ? -std::int64_t(errno) : std::int64_t(n));
    }
  }

  void submit_writes(std::span<const WriteOp> ops) override {
    for (const WriteOp& op : ops) {
      ssize_t n;
      do {
        n = ::pwrite(op.fd, op.data, op.length, off_t(op.offset));
      } while (n < 0 && errno == EINTR);  // a signal before any byte was written: nothing happened
      done_.push(op.slot, n < 0 ? -std::int64_t(errno) : std::int64_t(n));
    }
  }

  std::size_t collect(std::span<Completion> out, std::size_t /*min_complete*/) override {
    return done_.pop_into(out);  // every submitted read is already complete
  }

 private:
  CompletionQueue done_;
};

}  // namespace

std::unique_ptr<Engine> make_psync(const EngineOptions& options) {
  if (options.queue_depth != 1)
    throw InputError("engine psync is synchronous: queue_depth must be 1 (got " +
                     std::to_string(options.queue_depth) + "); use libaio or io_uring for more");
  return std::make_unique<PsyncEngine>(options);
}

}  // namespace feedbench::engines
