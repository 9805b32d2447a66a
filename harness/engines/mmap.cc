// mmap: the file is mapped read-only once at open; a read is a memcpy out of the mapping into
// the slot buffer, so page faults (and the kernel's fault-around and readahead) do the I/O, as
// for a loader that maps its data. Buffered only: a mapping cannot bypass the page cache.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

#include "engines.h"
#include "feedbench/error.h"

namespace feedbench::engines {
namespace {

class MmapEngine final : public Engine {
 public:
  explicit MmapEngine(const EngineOptions& options) : Engine(options), done_(options.queue_depth) {
    // Room for as many open files as a runner worker keeps (RoundOptions::max_open_files), so
    // opening a file never allocates during a round.
    maps_.reserve(256);
  }

  ~MmapEngine() override {
    for (const Mapping& m : maps_)
      if (m.in_use && m.addr) ::munmap(m.addr, m.size);
  }

  std::string_view name() const override { return "mmap"; }

  FileHandle open(const std::string& path) override {
    int fd = open_for_read(path, false);
    struct stat st{};
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw RunError(errno_message("cannot stat " + path, err));
    }
    Mapping m{nullptr, std::size_t(st.st_size), true};
    if (m.size > 0) {
      void* p = ::mmap(nullptr, m.size, PROT_READ, MAP_SHARED, fd, 0);
      if (p == MAP_FAILED) {
        int err = errno;
        ::close(fd);
        throw RunError(errno_message("cannot map " + path, err));
      }
      m.addr = static_cast<std::byte*>(p);
    }
    ::close(fd);  // the mapping keeps the file
    // Reuse a free handle; the table only grows to the most files open at once.
    for (std::size_t i = 0; i < maps_.size(); ++i) {
      if (!maps_[i].in_use) {
        maps_[i] = m;
        return FileHandle(i);
      }
    }
    maps_.push_back(m);
    return FileHandle(maps_.size() - 1);
  }

  void close(FileHandle file) override {
    Mapping& m = maps_[std::size_t(file)];
    if (m.addr) ::munmap(m.addr, m.size);
    m = Mapping{};
  }

  void submit(std::span<const ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      const Mapping& m = maps_[std::size_t(op.file)];
      std::int64_t n = 0;
      if (op.offset < m.size) {
        n = std::int64_t(std::min<std::uint64_t>(op.length, m.size - op.offset));
        std::memcpy(buffer(op.slot), m.addr + op.offset, std::size_t(n));
      }
      done_.push(op.slot, n);  // short (or 0) at end of file, like pread
    }
  }

  std::size_t reap(std::span<Completion> out, std::size_t /*min_complete*/) override {
    return done_.pop_into(out);
  }

 private:
  struct Mapping {
    std::byte* addr = nullptr;
    std::size_t size = 0;
    bool in_use = false;
  };
  std::vector<Mapping> maps_;
  CompletionQueue done_;
};

}  // namespace

std::unique_ptr<Engine> make_mmap(const EngineOptions& options) {
  if (options.direct)
    throw InputError("engine mmap cannot do O_DIRECT (a mapping always goes through the page "
                     "cache); use psync, libaio or io_uring for direct reads");
  return std::make_unique<MmapEngine>(options);
}

}  // namespace feedbench::engines
