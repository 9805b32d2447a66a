// feedbench watch's read recorder: a library put on a watched job's LD_PRELOAD (inherited by its
// DataLoader workers, forked or spawned) that records every regular file each process opened and
// read. It wraps the C library's open, read and close calls (close_range and closefrom too, and
// stdio's fopen/fread/fclose); on each close it appends one line to a file of its own,
// $FEEDBENCH_WATCH_DIR/reads-PID.txt:
//
//   F pid image tid open_ns first_ns last_ns bytes reads size dev_major dev_minor inode path
//
// (times CLOCK_MONOTONIC ns, first/last 0 when never read; `image` tells apart the process images
// one pid ran (a launcher that execs the job); the path as the kernel resolved it, /proc/self/fd,
// each byte outside '!'..'~' and '%' written %XX). With $FEEDBENCH_WATCH_TRACE set, also each
// open and each read, for `watch --trace`:
//
//   O pid image serial open_ns size path
//   R pid image tid serial t0_ns t1_ns offset bytes
//
// The format is feedbench's (harness/watch/include/feedbench/watch/read_log.h), version 2.
//
// What it guarantees the job (docs/watch.md):
// - No descriptor of its own outlives a call: the record file is opened, written and closed at
//   each flush (a job that closes every descriptor and opens its own output never gets records).
// - Every path it wraps is async-signal-safe: no mutex, no malloc, no stdio, no function-local
//   static. A call made while this thread is already inside the recorder (a signal handler's) is
//   forwarded unrecorded and counted; other threads wait on a spin lock only for a thread that
//   is running. Paths live in pages of their own (mmap), numbers are written by hand.
// - Records it cannot write (a full file system, a job that changed user) are counted by reason
//   in the counters file the watcher made (guest_counters.h), which watch reports.
// Memory is bounded: a fixed table per open descriptor (below kMaxFd), a page per descriptor
// number tracked, one output buffer per process. Without $FEEDBENCH_WATCH_DIR it does nothing
// but forward the calls. Built without sanitizers: it runs inside programs that have none.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

#include "feedbench/watch/guest_counters.h"

namespace {

namespace gc = feedbench::guest_counters;

constexpr int kMaxFd = 1 << 16;
constexpr std::size_t kBufferBytes = 1 << 16;
constexpr std::size_t kPathBytes = 4096;  // PATH_MAX, its NUL included
// The longest line: the numbers, a space, every byte of a PATH_MAX path %XX-encoded, a newline.
constexpr std::size_t kMaxLine = 256 + 3 * kPathBytes;
static_assert(kMaxLine < kBufferBytes);

// The real functions, by index. Resolved in the constructor; a call that comes before it (another
// library's constructor) resolves its own through the atomic: no function-local static, whose
// guard a signal handler could meet half-initialised.
enum Fn : int {
  kOpen,
  kOpen64,
  kOpenat,
  kOpenat64,
  kOpen2,
  kOpen64_2,
  kOpenat2,
  kOpenat64_2,
  kRead,
  kPread,
  kPread64,
  kReadv,
  kPreadv,
  kPreadv64,
  kLseek,
  kLseek64,
  kClose,
  kCloseRange,
  kCloseFrom,
  kDup,
  kFcntl,
  kFcntl64,
  kDup2,
  kDup3,
  kFopen,
  kFopen64,
  kFread,
  kFclose,
  kExit,
  kExit2,
  kExecve,
  kExecv,
  kExecvp,
  kExecvpe,
  kFexecve,
  kFnCount
};
constexpr const char* kFnNames[kFnCount] = {
    "open",         "open64",  "openat", "openat64",    "__open_2",  "__open64_2", "__openat_2",
    "__openat64_2", "read",    "pread",  "pread64",     "readv",     "preadv",     "preadv64",
    "lseek",        "lseek64", "close",  "close_range", "closefrom", "dup",        "fcntl",
    "fcntl64",      "dup2",    "dup3",   "fopen",       "fopen64",   "fread",      "fclose",
    "_exit",        "_Exit",   "execve", "execv",       "execvp",    "execvpe",    "fexecve"};
std::atomic<void*> g_real[kFnCount];

template <class F>
F real(Fn f) {
  void* p = g_real[f].load(std::memory_order_acquire);
  if (p == nullptr) {
    p = dlsym(RTLD_NEXT, kFnNames[f]);
    g_real[f].store(p, std::memory_order_release);
  }
  return reinterpret_cast<F>(p);
}

using OpenFn = int (*)(const char*, int, ...);
using OpenatFn = int (*)(int, const char*, int, ...);
using Open2Fn = int (*)(const char*, int);
using Openat2Fn = int (*)(int, const char*, int);
using ReadFn = ssize_t (*)(int, void*, size_t);
using PreadFn = ssize_t (*)(int, void*, size_t, off_t);
using ReadvFn = ssize_t (*)(int, const iovec*, int);
using PreadvFn = ssize_t (*)(int, const iovec*, int, off_t);
using LseekFn = off_t (*)(int, off_t, int);
using CloseFn = int (*)(int);
using CloseRangeFn = int (*)(unsigned, unsigned, int);
using CloseFromFn = void (*)(int);
using DupFn = int (*)(int);
using FcntlFn = int (*)(int, int, ...);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);
using FopenFn = FILE* (*)(const char*, const char*);
using FreadFn = size_t (*)(void*, size_t, size_t, FILE*);
using FcloseFn = int (*)(FILE*);
using ExitFn = void (*)(int);
using ExecveFn = int (*)(const char*, char* const*, char* const*);
using ExecvFn = int (*)(const char*, char* const*);
using FexecveFn = int (*)(int, char* const*, char* const*);

// One open regular file. The reading thread updates its counts; two threads reading one
// descriptor at once (rare) still add up, through atomics. `path` is a page of its own, mapped on
// the slot's first use and kept (no malloc on any wrapped path).
struct Slot {
  std::atomic<std::uint64_t> serial{0};  // 0: not tracked
  char* path = nullptr;
  std::int64_t open_ns = 0;
  std::atomic<std::int64_t> first_ns{0}, last_ns{0};
  std::atomic<std::uint64_t> bytes{0}, reads{0};
  std::atomic<std::int64_t> pos{0};
  std::uint64_t size = 0, dev = 0, ino = 0;
  pid_t tid = 0;
};

Slot g_slots[kMaxFd];
std::atomic<std::uint64_t> g_serial{0};
// The output buffer, under a spin lock between threads. A signal handler never waits on it: a
// call made while its thread is inside the recorder is forwarded unrecorded (t_inside).
std::atomic<int> g_lock{0};
char g_buffer[kBufferBytes];
std::size_t g_used = 0;     // bytes in g_buffer
std::uint64_t g_lines = 0;  // whole lines in g_buffer (what a failed flush loses)
char g_out_name[kPathBytes + 64];
pid_t g_out_pid = 0;  // the pid g_out_name was made for
pid_t g_pid = 0;
std::int64_t g_image = 0;
bool g_on = false, g_trace = false;
char g_dir[kPathBytes];
std::size_t g_dir_size = 0;
std::uint64_t* g_counters = nullptr;  // the watcher's counters (guest_counters.h), or none

__attribute__((tls_model("initial-exec"))) thread_local volatile sig_atomic_t t_inside = 0;

void count(std::size_t word, std::uint64_t n = 1) {
  if (g_counters != nullptr && n > 0) __atomic_fetch_add(&g_counters[word], n, __ATOMIC_RELAXED);
}

// Marks this thread inside the recorder for its lifetime. ok false: it already was (a signal
// handler interrupted the recorder): the caller must forward the call unrecorded.
class Inside {
 public:
  Inside() : ok_(t_inside == 0) {
    if (ok_) {
      t_inside = 1;
      std::atomic_signal_fence(std::memory_order_seq_cst);
    } else {
      count(gc::kUnrecorded);
    }
  }
  ~Inside() {
    if (ok_) {
      std::atomic_signal_fence(std::memory_order_seq_cst);
      t_inside = 0;
    }
  }
  Inside(const Inside&) = delete;
  Inside& operator=(const Inside&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_;
};

void lock() {
  for (int spins = 0; g_lock.exchange(1, std::memory_order_acquire) != 0; ++spins)
    if (spins > 64) sched_yield();
}
void unlock() { g_lock.store(0, std::memory_order_release); }

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The calling thread's id, asked of the kernel once per thread (and again in a forked child,
// where the thread has a new one): a traced read must not cost a system call more.
std::atomic<unsigned> g_fork_generation{0};
__attribute__((tls_model("initial-exec"))) thread_local pid_t t_tid = 0;
__attribute__((tls_model("initial-exec"))) thread_local unsigned t_generation = 0;
pid_t this_tid() {
  const unsigned g = g_fork_generation.load(std::memory_order_relaxed);
  if (t_tid == 0 || t_generation != g) {
    t_tid = pid_t(syscall(SYS_gettid));
    t_generation = g;
  }
  return t_tid;
}

// Appends `v` in decimal at `at`, after a space when `space`. RETURNS: past the last digit.
// (snprintf is neither async-signal-safe nor cheap: its cost per traced read was most of the
// recorder's.)
char* put(char* at, std::int64_t v, bool space = true) {
  if (space) *at++ = ' ';
  std::uint64_t u = std::uint64_t(v);
  if (v < 0) {
    *at++ = '-';
    u = 0 - u;
  }
  char digits[24];
  int n = 0;
  do {
    digits[n++] = char('0' + u % 10);
    u /= 10;
  } while (u > 0);
  while (n > 0) *at++ = digits[--n];
  return at;
}

char* put_text(char* at, const char* text) {
  while (*text) *at++ = *text++;
  return at;
}

// RETURNS: whether this process may touch the recorder's state: not a vfork child (posix_spawn,
// Python's subprocess), which shares the parent's memory until it execs or exits and runs no
// fork handler, so still carries the parent's g_pid. One getpid a call: only on open, close, dup.
bool ours() { return g_on && getpid() == g_pid; }

gc::Reason reason_of(int e) {
  if (e == ENOSPC || e == EDQUOT) return gc::kNoSpace;
  if (e == EACCES || e == EPERM || e == EROFS) return gc::kRefused;
  return gc::kOther;
}

void lost(int e, std::uint64_t lines) {
  const gc::Reason r = reason_of(e);
  count(gc::kRecorderLost + r, lines);
  if (r == gc::kRefused && g_counters != nullptr)
    __atomic_store_n(&g_counters[gc::kRefusedUid], std::uint64_t(geteuid()) + 1, __ATOMIC_RELAXED);
}

std::uint64_t lines_in(const char* from, const char* to) {
  std::uint64_t n = 0;
  for (; from < to; ++from) n += *from == '\n';
  return n;
}

// Writes the buffer to this process's record file: opened, written and closed here, so that no
// descriptor of the recorder's outlives the call (a job that closes every descriptor it did not
// open, then opens its own output, must never get the records). A write cut short (a full file
// system) is cut back to its last whole line. Residual: a job thread that closes descriptors it
// never opened (close_range) at the very moment another thread's flush holds the record file open,
// then opens a file of its own that gets the same number before the flush's write, would get
// that write: the window is one open-write-close per 64 KiB of records.
// REQUIRES: g_lock held, this thread inside.
void flush_locked() {
  if (g_used == 0) return;
  const pid_t pid = getpid();
  if (g_out_pid != pid) {
    char* at = g_out_name;
    memcpy(at, g_dir, g_dir_size);
    at = put_text(at + g_dir_size, "/reads-");
    at = put(at, pid, false);
    at = put_text(at, ".txt");
    *at = '\0';
    g_out_pid = pid;
  }
  const int fd =
      real<OpenFn>(kOpen)(g_out_name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    lost(errno, g_lines);
  } else {
    std::size_t done = 0;
    while (done < g_used) {
      const ssize_t n = write(fd, g_buffer + done, g_used - done);
      if (n > 0) {
        done += std::size_t(n);
        continue;
      }
      // A full disk costs the records, never the job: counted, and the file cut back to its last
      // whole line, so that later flushes (once there is room) append whole lines to whole lines.
      const int e = n < 0 ? errno : ENOSPC;
      std::size_t keep = done;
      while (keep > 0 && g_buffer[keep - 1] != '\n') --keep;
      if (keep < done) {
        const off_t end = real<LseekFn>(kLseek)(fd, 0, SEEK_END);
        if (end >= off_t(done - keep)) (void)ftruncate(fd, end - off_t(done - keep));
      }
      lost(e, lines_in(g_buffer + keep, g_buffer + g_used));
      break;
    }
    real<CloseFn>(kClose)(fd);
  }
  g_used = 0;
  g_lines = 0;
}

// REQUIRES: this thread inside.
void flush() {
  if (!g_on) return;
  lock();
  flush_locked();
  unlock();
}

// One record, written straight into the buffer under the lock (no line buffer on the stack: a
// signal handler may run on a small alternate stack).
class Line {
 public:
  // REQUIRES: this thread inside.
  explicit Line(char kind) {
    lock();
    if (g_used + kMaxLine > kBufferBytes) flush_locked();
    at_ = g_buffer + g_used;
    *at_++ = kind;
  }
  ~Line() {
    *at_++ = '\n';
    g_used = std::size_t(at_ - g_buffer);
    ++g_lines;
    unlock();
  }
  Line(const Line&) = delete;
  Line& operator=(const Line&) = delete;
  Line& operator<<(std::int64_t v) {
    at_ = put(at_, v);
    return *this;
  }
  // The path, %XX-encoded (at most kPathBytes - 1 bytes of it: what readlink gave).
  void path(const char* p) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    *at_++ = ' ';
    std::size_t n = 0;
    for (const unsigned char* c = reinterpret_cast<const unsigned char*>(p); *c && n < kPathBytes; ++c, ++n) {
      if (*c > ' ' && *c <= '~' && *c != '%') {
        *at_++ = char(*c);
      } else {
        *at_++ = '%';
        *at_++ = kHex[*c >> 4];
        *at_++ = kHex[*c & 15];
      }
    }
  }

 private:
  char* at_;
};

void emit_open(const Slot& s, std::uint64_t serial, pid_t pid) {
  Line l('O');
  l << pid << g_image << std::int64_t(serial) << s.open_ns << std::int64_t(s.size);
  l.path(s.path);
}

// RETURNS: the slot's page for its path, mapped on first use; nullptr when none can be had.
char* page_of(Slot& s) {
  if (s.path == nullptr) {
    void* p = mmap(nullptr, kPathBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) s.path = static_cast<char*>(p);
  }
  return s.path;
}

// Starts tracking `fd`, a regular file whose resolved path is in its slot's page already.
void track(int fd, std::uint64_t size, std::uint64_t dev, std::uint64_t ino) {
  Slot& s = g_slots[fd];
  s.open_ns = now_ns();
  s.first_ns = 0;
  s.last_ns = 0;
  s.bytes = 0;
  s.reads = 0;
  s.pos = 0;
  s.size = size;
  s.dev = dev;
  s.ino = ino;
  s.tid = this_tid();
  const std::uint64_t serial = ++g_serial;
  if (g_trace) emit_open(s, serial, g_pid);
  s.serial.store(serial, std::memory_order_release);
}

// The file record of `fd`, written when it closes (or the process ends or execs with it open).
// REQUIRES: this thread inside.
void closed(int fd) {
  if (fd < 0 || fd >= kMaxFd) return;
  Slot& s = g_slots[fd];
  if (s.serial.exchange(0) == 0) return;
  Line l('F');
  l << g_pid << g_image << s.tid << s.open_ns << s.first_ns.load() << s.last_ns.load()
    << std::int64_t(s.bytes.load()) << std::int64_t(s.reads.load()) << std::int64_t(s.size)
    << std::int64_t(major(dev_t(s.dev))) << std::int64_t(minor(dev_t(s.dev))) << std::int64_t(s.ino);
  l.path(s.path);
}

// A descriptor closed while this thread was inside the recorder (a signal handler's close): its
// record cannot be written now; it is forgotten (one atomic exchange) and counted lost.
void forget(int fd) {
  if (fd >= 0 && fd < kMaxFd && g_slots[fd].serial.exchange(0) != 0) count(gc::kRecorderLost + gc::kOther);
}

// After a successful open of `fd` with `flags`: tracked when it is a regular file opened to read.
// Whatever the slot held before is over: the kernel gave the number again, so that file was closed
// by a call the recorder did not see (a raw system call).
void opened(int fd, int flags) {
  if (fd < 0 || fd >= kMaxFd || !ours()) return;
  const Inside in;
  if (!in.ok()) return;
  closed(fd);
  if ((flags & O_ACCMODE) == O_WRONLY || (flags & O_PATH) != 0) return;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  Slot& s = g_slots[fd];
  char* path = page_of(s);
  if (path == nullptr) return;
  char link[32];
  *put(put_text(link, "/proc/self/fd/"), fd, false) = '\0';
  const ssize_t n = readlink(link, path, kPathBytes - 1);
  if (n <= 0) return;
  path[n] = '\0';
  // The record files themselves (and the counters) are not the job's reads.
  if (strncmp(path, g_dir, g_dir_size) == 0 && (path[g_dir_size] == '/' || path[g_dir_size] == '\0')) return;
  track(fd, std::uint64_t(st.st_size), st.st_dev, st.st_ino);
}

// After `to` became a copy of `from` (dup, dup2, dup3): its reads are recorded as another open of
// the same file, from its position (a program that opens, dup2s to 0 and reads stdin, as dd does).
void duplicated(int from, int to) {
  if (to < 0 || to >= kMaxFd || from == to || !ours()) return;
  const Inside in;
  if (!in.ok()) return;
  closed(to);  // dup2 closed what `to` was
  if (from < 0 || from >= kMaxFd) return;
  Slot& f = g_slots[from];
  Slot& t = g_slots[to];
  if (f.serial.load(std::memory_order_acquire) == 0 || f.path == nullptr || page_of(t) == nullptr) return;
  memcpy(t.path, f.path, strnlen(f.path, kPathBytes - 1) + 1);
  track(to, f.size, f.dev, f.ino);
  t.pos = f.pos.load();
}

// The descriptors from `first` to `last` were closed (close_range, closefrom): their slots forget
// them, so that a number the job opens again is never read as the old file.
void closed_range(unsigned first, unsigned last) {
  if (!ours()) return;
  const Inside in;
  for (unsigned fd = first; fd <= last && fd < unsigned(kMaxFd); ++fd) {
    if (g_slots[fd].serial.load(std::memory_order_relaxed) == 0) continue;
    if (in.ok()) closed(int(fd));
    else forget(int(fd));
  }
}

// After a read of `n` bytes at `offset` (-1: the file position) that began at `t0`.
void did_read(int fd, ssize_t n, std::int64_t offset, std::int64_t t0) {
  if (!g_on || fd < 0 || fd >= kMaxFd || n < 0) return;
  Slot& s = g_slots[fd];
  const std::uint64_t serial = s.serial.load(std::memory_order_acquire);
  if (serial == 0) return;
  const Inside in;
  if (!in.ok()) return;
  const std::int64_t t1 = now_ns();
  std::int64_t zero = 0;
  s.first_ns.compare_exchange_strong(zero, t0);
  s.last_ns.store(t1);
  s.bytes += std::uint64_t(n);
  ++s.reads;
  const std::int64_t at = offset >= 0 ? offset : s.pos.fetch_add(n);
  if (g_trace) {
    Line l('R');
    l << g_pid << g_image << this_tid() << std::int64_t(serial) << t0 << t1 << at << std::int64_t(n);
  }
}

// Files still open when the process ends are recorded as if closed then.
// REQUIRES: this thread inside.
void close_all_and_flush() {
  for (int fd = 0; fd < kMaxFd; ++fd)
    if (g_slots[fd].serial.load(std::memory_order_relaxed) != 0) closed(fd);
  flush();
}

void at_exit() {
  if (!ours()) return;
  const Inside in;
  if (in.ok()) close_all_and_flush();
}

// On _exit, which a signal handler may call (PyTorch's workers do on SIGTERM): when the handler
// interrupted this thread inside the recorder, the buffer is half-written and is given up
// (counted); when another thread holds the lock, it is waited for a moment only, never for good.
void flush_on_exit() {
  if (!ours()) return;
  const Inside in;
  if (!in.ok()) {
    count(gc::kRecorderLost + gc::kOther, g_lines);
    return;
  }
  for (int tries = 0; tries < 100; ++tries) {
    int free_ = 0;
    if (g_lock.compare_exchange_strong(free_, 1, std::memory_order_acquire)) {
      unlock();
      close_all_and_flush();
      return;
    }
    const timespec pause{0, 100'000};
    nanosleep(&pause, nullptr);
  }
  count(gc::kRecorderLost + gc::kOther, g_lines);
}

// Before an exec replaces this process image: its files' records so far and the buffer written
// (an exec runs no atexit handler). The descriptors stay tracked, their counts from zero: if the
// exec fails, what follows is recorded as a further open of each.
void before_exec() {
  if (!ours()) return;
  const Inside in;
  if (!in.ok()) return;
  for (int fd = 0; fd < kMaxFd; ++fd) {
    Slot& s = g_slots[fd];
    const std::uint64_t serial = s.serial.load(std::memory_order_relaxed);
    if (serial == 0) continue;
    closed(fd);
    s.first_ns = 0;
    s.last_ns = 0;
    s.bytes = 0;
    s.reads = 0;
    s.serial.store(serial, std::memory_order_release);
  }
  flush();
}

// A fork from a signal handler that interrupted this thread inside the recorder (holding the
// lock) must not wait on it: the records of that moment may then be lost or doubled, never hung.
__attribute__((tls_model("initial-exec"))) thread_local bool t_fork_locked = false;
void before_fork() {
  t_fork_locked = t_inside == 0;
  if (!t_fork_locked) return;
  t_inside = 1;  // the fork's handlers touch the recorder's state
  lock();
}
void after_fork_parent() {
  if (!t_fork_locked) return;
  unlock();
  t_inside = 0;
}
void after_fork_child() {
  // The parent writes what it buffered; the child starts empty, with a file of its own. The
  // descriptors it inherited stay tracked: its own reads of them are its records.
  g_used = 0;
  g_lines = 0;
  g_pid = getpid();
  ++g_fork_generation;  // every thread id cached before the fork is the parent's
  unlock();
  if (!t_fork_locked) return;  // inside the recorder still: the interrupted call finishes
  // What the parent read of them is the parent's record, not this one's; with a trace, each is
  // opened again under this pid, so that this process's reads of it name an open of its own.
  for (Slot& s : g_slots) {
    const std::uint64_t serial = s.serial.load(std::memory_order_relaxed);
    if (serial == 0) continue;
    s.first_ns = 0;
    s.last_ns = 0;
    s.bytes = 0;
    s.reads = 0;
    if (g_trace && s.path != nullptr) emit_open(s, serial, g_pid);
  }
  if (t_fork_locked) t_inside = 0;
}

// RETURNS: the watcher's counters file mapped, or nullptr: by its path, else (this process
// cannot open it: the job changed user before it exec'd) through the descriptor the watcher left
// the job, used only when the file's first word is the token named beside it.
std::uint64_t* map_counters() {
  const char* spec = getenv("FEEDBENCH_WATCH_COUNTERS");
  if (spec == nullptr) return nullptr;
  char* end = nullptr;
  const long inherited = strtol(spec, &end, 10);
  if (end == spec || *end != ':') return nullptr;
  const std::uint64_t token = strtoull(end + 1, nullptr, 16);
  if (token == 0) return nullptr;
  char name[kPathBytes + 64];
  memcpy(name, g_dir, g_dir_size);
  name[g_dir_size] = '/';
  strcpy(name + g_dir_size + 1, gc::kFileName);
  int fd = real<OpenFn>(kOpen)(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
  const bool own = fd >= 0;
  if (!own) fd = int(inherited);
  struct stat st {};
  void* p = MAP_FAILED;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == off_t(gc::kBytes))
    p = mmap(nullptr, gc::kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (own) real<CloseFn>(kClose)(fd);
  if (p == MAP_FAILED) return nullptr;
  auto* words = static_cast<std::uint64_t*>(p);
  if (__atomic_load_n(&words[gc::kToken], __ATOMIC_RELAXED) != token) {
    munmap(p, gc::kBytes);
    return nullptr;
  }
  return words;
}

__attribute__((constructor)) void start_recording() {
  for (int f = 0; f < kFnCount; ++f) (void)real<void*>(Fn(f));
  const char* dir = getenv("FEEDBENCH_WATCH_DIR");
  if (dir == nullptr || *dir == '\0' || strlen(dir) >= kPathBytes) return;
  g_dir_size = strlen(dir);
  memcpy(g_dir, dir, g_dir_size + 1);
  g_trace = getenv("FEEDBENCH_WATCH_TRACE") != nullptr;
  g_pid = getpid();
  g_counters = map_counters();
  // Each process image its own number: a launcher's opens and the exec'd job's, under one pid,
  // are told apart. Without the counters, the start time (one pid's images run one after another).
  g_image = g_counters != nullptr
                ? std::int64_t(__atomic_add_fetch(&g_counters[gc::kImages], 1, __ATOMIC_RELAXED))
                : now_ns();
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  atexit(at_exit);
  g_on = true;
}

// After fcntl returned `r`: F_DUPFD and F_DUPFD_CLOEXEC made a copy, as dup does. RETURNS: r.
int after_fcntl(int fd, int cmd, int r) {
  if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC)) duplicated(fd, r);
  return r;
}

int mode_of(int flags, va_list ap) {
  return (flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

std::int64_t start_ns() { return g_on ? now_ns() : 0; }

}  // namespace

extern "C" {

// NOLINTBEGIN(readability-inconsistent-declaration-parameter-name,bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp):
// the C library's names, its reserved ones included.
__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real<OpenFn>(kOpen)(path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real<OpenFn>(kOpen64)(path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real<OpenatFn>(kOpenat)(dir, path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int openat64(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real<OpenatFn>(kOpenat64)(dir, path, flags, mode);
  opened(fd, flags);
  return fd;
}

// The fortified entry points (_FORTIFY_SOURCE) a program compiled with it calls instead.
__attribute__((visibility("default"))) int __open_2(const char* path, int flags) {
  const int fd = real<Open2Fn>(kOpen2)(path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __open64_2(const char* path, int flags) {
  const int fd = real<Open2Fn>(kOpen64_2)(path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __openat_2(int dir, const char* path, int flags) {
  const int fd = real<Openat2Fn>(kOpenat2)(dir, path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __openat64_2(int dir, const char* path, int flags) {
  const int fd = real<Openat2Fn>(kOpenat64_2)(dir, path, flags);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t count) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<ReadFn>(kRead)(fd, buf, count);
  did_read(fd, n, -1, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<PreadFn>(kPread)(fd, buf, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t pread64(int fd, void* buf, size_t count, off_t offset) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<PreadFn>(kPread64)(fd, buf, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t readv(int fd, const iovec* iov, int count) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<ReadvFn>(kReadv)(fd, iov, count);
  did_read(fd, n, -1, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t preadv(int fd, const iovec* iov, int count, off_t offset) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<PreadvFn>(kPreadv)(fd, iov, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t preadv64(int fd, const iovec* iov, int count, off_t offset) {
  const std::int64_t t0 = start_ns();
  const ssize_t n = real<PreadvFn>(kPreadv64)(fd, iov, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

// A seek moves the position reads are recorded at.
__attribute__((visibility("default"))) off_t lseek(int fd, off_t offset, int whence) {
  const off_t at = real<LseekFn>(kLseek)(fd, offset, whence);
  if (g_on && at >= 0 && fd >= 0 && fd < kMaxFd) g_slots[fd].pos = at;
  return at;
}

__attribute__((visibility("default"))) off_t lseek64(int fd, off_t offset, int whence) {
  const off_t at = real<LseekFn>(kLseek64)(fd, offset, whence);
  if (g_on && at >= 0 && fd >= 0 && fd < kMaxFd) g_slots[fd].pos = at;
  return at;
}

__attribute__((visibility("default"))) int close(int fd) {
  if (ours()) {
    const Inside in;
    if (in.ok()) closed(fd);
    else forget(fd);
  }
  return real<CloseFn>(kClose)(fd);
}

// close_range(2) (os.closerange in Python 3.10 and later): the closed descriptors' slots forget
// them; CLOSE_RANGE_CLOEXEC closes nothing now. A C library without it: the system call.
__attribute__((visibility("default"))) int close_range(unsigned first, unsigned last, int flags) {
  const auto fn = real<CloseRangeFn>(kCloseRange);
  const int r = fn != nullptr ? fn(first, last, flags) : int(syscall(SYS_close_range, first, last, flags));
  constexpr int kCloseRangeCloexec = 1 << 2;  // CLOSE_RANGE_CLOEXEC: marks them, closes nothing now
  if (r == 0 && (flags & kCloseRangeCloexec) == 0) closed_range(first, last);
  return r;
}

__attribute__((visibility("default"))) void closefrom(int lowfd) {
  const auto fn = real<CloseFromFn>(kCloseFrom);
  if (fn != nullptr) fn(lowfd);
  else (void)syscall(SYS_close_range, unsigned(lowfd), ~0U, 0);
  if (lowfd >= 0) closed_range(unsigned(lowfd), ~0U);
}

// fcntl's third argument is read as the C library itself reads it (a pointer-sized word), and
// passed on; F_DUPFD and F_DUPFD_CLOEXEC make a copy as dup does (Python's os.dup).
__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return after_fcntl(fd, cmd, real<FcntlFn>(kFcntl)(fd, cmd, arg));
}

__attribute__((visibility("default"))) int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  const auto fn = real<FcntlFn>(kFcntl64);
  return after_fcntl(fd, cmd, (fn != nullptr ? fn : real<FcntlFn>(kFcntl))(fd, cmd, arg));
}

__attribute__((visibility("default"))) int dup(int fd) {
  const int to = real<DupFn>(kDup)(fd);
  if (to >= 0) duplicated(fd, to);
  return to;
}

__attribute__((visibility("default"))) int dup2(int fd, int to) {
  const int r = real<Dup2Fn>(kDup2)(fd, to);
  if (r >= 0) duplicated(fd, r);
  return r;
}

__attribute__((visibility("default"))) int dup3(int fd, int to, int flags) {
  const int r = real<Dup3Fn>(kDup3)(fd, to, flags);
  if (r >= 0) duplicated(fd, r);
  return r;
}

__attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  FILE* f = real<FopenFn>(kFopen)(path, mode);
  if (f != nullptr) opened(fileno(f), mode[0] == 'r' || strchr(mode, '+') != nullptr ? O_RDONLY : O_WRONLY);
  return f;
}

__attribute__((visibility("default"))) FILE* fopen64(const char* path, const char* mode) {
  FILE* f = real<FopenFn>(kFopen64)(path, mode);
  if (f != nullptr) opened(fileno(f), mode[0] == 'r' || strchr(mode, '+') != nullptr ? O_RDONLY : O_WRONLY);
  return f;
}

// stdio reads through the C library's own read, which these wrappers do not see: counted here,
// as what fread returned (its buffering's reads ahead are not).
__attribute__((visibility("default"))) size_t fread(void* buf, size_t size, size_t count, FILE* f) {
  const std::int64_t t0 = start_ns();
  const size_t n = real<FreadFn>(kFread)(buf, size, count, f);
  if (f != nullptr) did_read(fileno(f), ssize_t(n * size), -1, t0);
  return n;
}

__attribute__((visibility("default"))) int fclose(FILE* f) {
  if (f != nullptr && ours()) {
    const Inside in;
    if (in.ok()) closed(fileno(f));
    else forget(fileno(f));
  }
  return real<FcloseFn>(kFclose)(f);
}

// A process that ends with _exit (Python's os._exit, as DataLoader workers end) runs no atexit
// handler: its records are written here first.
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  flush_on_exit();
  real<ExitFn>(kExit)(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  flush_on_exit();
  real<ExitFn>(kExit2)(status);
  __builtin_unreachable();
}

// The exec family: the C library's execv, execvp and execl* reach its own execve without these
// wrappers, so each is wrapped (a launcher that execs the job: python's os.execv is execv).
__attribute__((visibility("default"))) int execve(const char* path, char* const argv[], char* const envp[]) {
  before_exec();
  return real<ExecveFn>(kExecve)(path, argv, envp);
}

__attribute__((visibility("default"))) int execv(const char* path, char* const argv[]) {
  before_exec();
  return real<ExecvFn>(kExecv)(path, argv);
}

__attribute__((visibility("default"))) int execvp(const char* file, char* const argv[]) {
  before_exec();
  return real<ExecvFn>(kExecvp)(file, argv);
}

__attribute__((visibility("default"))) int execvpe(const char* file, char* const argv[], char* const envp[]) {
  before_exec();
  return real<ExecveFn>(kExecvpe)(file, argv, envp);
}

__attribute__((visibility("default"))) int fexecve(int fd, char* const argv[], char* const envp[]) {
  before_exec();
  return real<FexecveFn>(kFexecve)(fd, argv, envp);
}

// execl, execlp, execle: their arguments gathered on the stack, as the C library does, and
// passed to the wrapped execv, execvp, execve. RETURNS: false when there are more than fit.
constexpr int kMaxExeclArgs = 1024;
static bool gather(const char* first, va_list& ap, char** argv) {
  int argc = 0;
  argv[argc++] = const_cast<char*>(first);
  while (argv[argc - 1] != nullptr) {
    if (argc == kMaxExeclArgs) {
      errno = E2BIG;
      return false;
    }
    argv[argc++] = va_arg(ap, char*);
  }
  return true;
}

__attribute__((visibility("default"))) int execl(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char* argv[kMaxExeclArgs];
  const bool ok = gather(arg, ap, argv);
  va_end(ap);
  return ok ? execv(path, argv) : -1;
}

__attribute__((visibility("default"))) int execlp(const char* file, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char* argv[kMaxExeclArgs];
  const bool ok = gather(arg, ap, argv);
  va_end(ap);
  return ok ? execvp(file, argv) : -1;
}

__attribute__((visibility("default"))) int execle(const char* path, const char* arg, ...) {
  va_list ap;
  va_start(ap, arg);
  char* argv[kMaxExeclArgs];
  const bool ok = gather(arg, ap, argv);
  char* const* envp = ok ? va_arg(ap, char* const*) : nullptr;
  va_end(ap);
  return ok ? execve(path, argv, envp) : -1;
}
// NOLINTEND(readability-inconsistent-declaration-parameter-name,bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)

}  // extern "C"
