// mmap: the file is mapped read-only once at open; a read is a memcpy out of the mapping into
// the slot buffer, so page faults (and the kernel's fault-around and readahead) do the I/O, as
// for a loader that maps its data. Buffered only: a mapping cannot bypass the page cache.
//
// A file truncated while mapped raises SIGBUS on the pages past its new end. A benchmark must
// not die of a data set that changes under it: each copy runs under a thread-local recovery
// point (sigsetjmp without saving the signal mask: no system call per read); the handler jumps
// back with the faulting address, and the read comes back short, like a pread at end of file.
// SIGBUS anywhere else keeps its previous meaning.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <mutex>
#include <vector>

#include "engines.h"
#include "feedbench/base/error.h"

namespace feedbench::engines {
namespace {

thread_local sigjmp_buf* t_recover = nullptr;  // set only around a copy out of a mapping
thread_local const std::byte* t_fault = nullptr;
struct sigaction g_previous_sigbus {};
std::once_flag g_sigbus_installed;

void on_sigbus(int sig, siginfo_t* info, void* /*context*/) {
  if (t_recover) {
    t_fault = static_cast<const std::byte*>(info->si_addr);
    siglongjmp(*t_recover, 1);
  }
  // Not a copy of ours: put the previous disposition back. A fault then recurs under it when
  // the instruction restarts; a SIGBUS sent by someone is raised again.
  ::sigaction(SIGBUS, &g_previous_sigbus, nullptr);
  if (info->si_code <= 0) ::raise(sig);
}

void install_sigbus_handler() {
  std::call_once(g_sigbus_installed, [] {
    struct sigaction sa {};
    sa.sa_sigaction = on_sigbus;
    // SA_NODEFER: the handler leaves by siglongjmp, never by returning, so SIGBUS must not stay
    // blocked in the thread afterwards (a blocked synchronous fault kills the process).
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &g_previous_sigbus);
  });
}

// Copies n bytes out of a mapping. RETURNS: n, or the offset of the first page that faulted
// (the file ends before it); the bytes before that offset may not all have been copied.
[[gnu::noinline]] std::size_t try_copy(std::byte* dst, const std::byte* src, std::size_t n) {
  sigjmp_buf env;
  if (sigsetjmp(env, 0) != 0) {
    t_recover = nullptr;
    const auto page = std::uintptr_t(::sysconf(_SC_PAGESIZE));
    const std::uintptr_t fault_page = std::uintptr_t(t_fault) & ~(page - 1);
    if (fault_page <= std::uintptr_t(src)) return 0;
    return std::min<std::size_t>(n, std::size_t(fault_page - std::uintptr_t(src)));
  }
  // The fences keep the stores around the copy: to the compiler memcpy cannot read t_recover,
  // so at -O2 it dropped the first store as dead and a truncated file's SIGBUS killed the run.
  t_recover = &env;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  std::memcpy(dst, src, n);
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t_recover = nullptr;
  return n;
}

class MmapEngine final : public Engine {
 public:
  explicit MmapEngine(const EngineOptions& options) : Engine(options), done_(options.queue_depth) {
    install_sigbus_handler();
    // Room for as many open files as a runner worker keeps (RoundOptions::max_open_files), so
    // opening a file never allocates during a round.
    maps_.reserve(256);
  }

  ~MmapEngine() override {
    for (const Mapping& m : maps_)
      if (m.in_use && m.addr) ::munmap(m.addr, m.length);
  }

  std::string_view name() const override { return "mmap"; }

  FileHandle open(const std::string& path) override {
    int fd = open_for_read(path, false);
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      throw RunError(errno_message("cannot stat " + path, err));
    }
    // The size now, not the scan's: a file that shrank since is mapped as it is.
    Mapping m{nullptr, std::size_t(st.st_size), std::size_t(st.st_size), true};
    if (m.length > 0) {
      void* p = ::mmap(nullptr, m.length, PROT_READ, MAP_SHARED, fd, 0);
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
    if (m.addr) ::munmap(m.addr, m.length);
    m = Mapping{};
  }

  void submit(std::span<const ReadOp> ops) override {
    for (const ReadOp& op : ops) {
      Mapping& m = maps_[std::size_t(op.file)];
      std::size_t n = 0;
      if (op.offset < m.readable) {
        n = std::min<std::size_t>(op.length, m.readable - op.offset);
        // A fault shortens the read to the pages before it; the copy is redone over them so
        // the slot holds exactly the bytes reported (memcpy may copy in any order).
        for (std::size_t got; (got = try_copy(buffer(op.slot), m.addr + op.offset, n)) < n;) {
          n = got;
          m.readable = std::size_t(op.offset) + n;  // later reads stop there without faulting
        }
      }
      done_.push(op.slot, std::int64_t(n));  // short (or 0) at end of file, like pread
    }
  }

  std::size_t collect(std::span<Completion> out, std::size_t /*min_complete*/) override {
    return done_.pop_into(out);
  }

 private:
  struct Mapping {
    std::byte* addr = nullptr;
    std::size_t length = 0;    // mapped, for munmap
    std::size_t readable = 0;  // bytes known to be backed by the file (shrinks after a fault)
    bool in_use = false;
  };
  std::vector<Mapping> maps_;
  CompletionQueue done_;
};

}  // namespace

std::unique_ptr<Engine> make_mmap(const EngineOptions& options) {
  if (options.direct)
    throw InputError(
        "engine mmap cannot do O_DIRECT (a mapping always goes through the page "
        "cache); use psync, libaio or io_uring for direct reads");
  return std::make_unique<MmapEngine>(options);
}

}  // namespace feedbench::engines
