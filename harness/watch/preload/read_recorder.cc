// feedbench watch's read recorder: a library put on a watched job's LD_PRELOAD (inherited by its
// DataLoader workers, forked or spawned) that records every regular file each process opened and
// read. It wraps the C library's open, read and close calls (and stdio's fopen/fread/fclose); on
// each close it appends one line to a file of its own, $FEEDBENCH_WATCH_DIR/reads-PID.txt:
//
//   F pid tid open_ns first_ns last_ns bytes reads size dev_major dev_minor inode path
//
// (times CLOCK_MONOTONIC ns, first/last 0 when never read; the path as the kernel resolved it,
// /proc/self/fd, each byte outside '!'..'~' and '%' written %XX). With $FEEDBENCH_WATCH_TRACE set,
// also each open and each read, for `watch --trace`:
//
//   O pid serial open_ns size path
//   R pid tid serial t0_ns t1_ns offset bytes
//
// The format is feedbench's (harness/watch/include/feedbench/watch/read_log.h), version 1.
// Memory is bounded: a fixed table per open descriptor (below kMaxFd) and one output buffer per
// process; the records go to the file, not to memory. Without $FEEDBENCH_WATCH_DIR it does nothing
// but forward the calls. Built without sanitizers: it runs inside programs that have none.
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

namespace {

constexpr int kMaxFd = 1 << 16;
constexpr std::size_t kBufferBytes = 1 << 16;

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
using DupFn = int (*)(int);
using FcntlFn = int (*)(int, int, ...);
using Dup2Fn = int (*)(int, int);
using Dup3Fn = int (*)(int, int, int);
using FopenFn = FILE* (*)(const char*, const char*);
using FreadFn = size_t (*)(void*, size_t, size_t, FILE*);
using FcloseFn = int (*)(FILE*);
using ExitFn = void (*)(int);

template <class F>
F next_fn(const char* name) {
  return reinterpret_cast<F>(dlsym(RTLD_NEXT, name));
}

// The real functions, found on first use (a call may come before the library's constructor).
struct Real {
  OpenFn open = next_fn<OpenFn>("open");
  OpenFn open64 = next_fn<OpenFn>("open64");
  OpenatFn openat = next_fn<OpenatFn>("openat");
  OpenatFn openat64 = next_fn<OpenatFn>("openat64");
  Open2Fn open_2 = next_fn<Open2Fn>("__open_2");
  Open2Fn open64_2 = next_fn<Open2Fn>("__open64_2");
  Openat2Fn openat_2 = next_fn<Openat2Fn>("__openat_2");
  Openat2Fn openat64_2 = next_fn<Openat2Fn>("__openat64_2");
  ReadFn read = next_fn<ReadFn>("read");
  PreadFn pread = next_fn<PreadFn>("pread");
  PreadFn pread64 = next_fn<PreadFn>("pread64");
  ReadvFn readv = next_fn<ReadvFn>("readv");
  PreadvFn preadv = next_fn<PreadvFn>("preadv");
  PreadvFn preadv64 = next_fn<PreadvFn>("preadv64");
  LseekFn lseek = next_fn<LseekFn>("lseek");
  LseekFn lseek64 = next_fn<LseekFn>("lseek64");
  CloseFn close = next_fn<CloseFn>("close");
  DupFn dup = next_fn<DupFn>("dup");
  FcntlFn fcntl = next_fn<FcntlFn>("fcntl");
  FcntlFn fcntl64 = next_fn<FcntlFn>("fcntl64");
  Dup2Fn dup2 = next_fn<Dup2Fn>("dup2");
  Dup3Fn dup3 = next_fn<Dup3Fn>("dup3");
  FopenFn fopen = next_fn<FopenFn>("fopen");
  FopenFn fopen64 = next_fn<FopenFn>("fopen64");
  FreadFn fread = next_fn<FreadFn>("fread");
  FcloseFn fclose = next_fn<FcloseFn>("fclose");
  ExitFn exit_ = next_fn<ExitFn>("_exit");
  ExitFn exit2 = next_fn<ExitFn>("_Exit");
};

Real& real() {
  static Real r;
  return r;
}

// One open regular file. The reading thread updates its counts; two threads reading one
// descriptor at once (rare) still add up, through atomics.
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
pthread_mutex_t g_out_mu = PTHREAD_MUTEX_INITIALIZER;
char g_buffer[kBufferBytes];
std::size_t g_used = 0;
int g_out = -1;
pid_t g_pid = 0;
bool g_on = false, g_trace = false;
const char* g_dir = nullptr;

std::int64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return std::int64_t(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// The calling thread's id, asked of the kernel once per thread (and again in a forked child,
// where the thread has a new one): a traced read must not cost a system call more.
std::atomic<unsigned> g_fork_generation{0};
thread_local pid_t t_tid = 0;
thread_local unsigned t_generation = 0;
pid_t this_tid() {
  const unsigned g = g_fork_generation.load(std::memory_order_relaxed);
  if (t_tid == 0 || t_generation != g) {
    t_tid = pid_t(syscall(SYS_gettid));
    t_generation = g;
  }
  return t_tid;
}

// Appends ' ' and `v` in decimal at `at`. RETURNS: past the last digit. (snprintf's cost per
// traced read was most of the recorder's.)
char* put(char* at, std::int64_t v) {
  *at++ = ' ';
  if (v < 0) {
    *at++ = '-';
    v = -v;
  }
  char digits[24];
  int n = 0;
  do {
    digits[n++] = char('0' + v % 10);
    v /= 10;
  } while (v > 0);
  while (n > 0) *at++ = digits[--n];
  return at;
}

// RETURNS: whether this process may touch the recorder's state: not a vfork child (posix_spawn,
// Python's subprocess), which shares the parent's memory until it execs or exits and runs no
// fork handler, so still carries the parent's g_pid. One getpid a call: only on open, close, dup.
bool ours() { return g_on && getpid() == g_pid; }

// REQUIRES: g_out_mu held.
void flush_locked() {
  if (g_used == 0) return;
  if (g_out < 0 || g_pid != getpid()) {
    g_pid = getpid();
    char name[4096];
    snprintf(name, sizeof name, "%s/reads-%d.txt", g_dir, int(g_pid));
    g_out = real().open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  }
  std::size_t done = 0;
  while (g_out >= 0 && done < g_used) {
    const ssize_t n = write(g_out, g_buffer + done, g_used - done);
    if (n <= 0) break;  // a full disk costs the records, never the job
    done += std::size_t(n);
  }
  g_used = 0;
}

void flush() {
  if (!g_on) return;
  pthread_mutex_lock(&g_out_mu);
  flush_locked();
  pthread_mutex_unlock(&g_out_mu);
}

// Appends one record: `head` (printf'd) then the path, %XX-encoded, then a newline.
void emit(const char* head, const char* path) {
  char line[8192];
  std::size_t used = strnlen(head, 512);
  memcpy(line, head, used);
  if (path != nullptr) {
    line[used++] = ' ';
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char* p = reinterpret_cast<const unsigned char*>(path); *p && used + 4 < sizeof line;
         ++p) {
      if (*p > ' ' && *p <= '~' && *p != '%') {
        line[used++] = char(*p);
      } else {
        line[used++] = '%';
        line[used++] = hex[*p >> 4];
        line[used++] = hex[*p & 15];
      }
    }
  }
  line[used++] = '\n';
  pthread_mutex_lock(&g_out_mu);
  if (g_used + used > kBufferBytes) flush_locked();
  memcpy(g_buffer + g_used, line, used);
  g_used += used;
  pthread_mutex_unlock(&g_out_mu);
}

// Starts tracking `fd`, a regular file at `path` (resolved) described by `st`.
void track(int fd, const char* path, const struct stat& st) {
  Slot& s = g_slots[fd];
  free(s.path);
  s.path = strdup(path);
  s.open_ns = now_ns();
  s.first_ns = 0;
  s.last_ns = 0;
  s.bytes = 0;
  s.reads = 0;
  s.pos = 0;
  s.size = std::uint64_t(st.st_size);
  s.dev = st.st_dev;
  s.ino = st.st_ino;
  s.tid = this_tid();
  const std::uint64_t serial = ++g_serial;
  if (g_trace) {
    char head[128];
    snprintf(head, sizeof head, "O %d %llu %lld %llu", int(getpid()), static_cast<unsigned long long>(serial),
             static_cast<long long>(s.open_ns), static_cast<unsigned long long>(s.size));
    emit(head, path);
  }
  s.serial.store(serial, std::memory_order_release);
}

// After a successful open of `fd` with `flags`: tracked when it is a regular file opened to read.
void opened(int fd, int flags) {
  if (fd < 0 || fd >= kMaxFd || (flags & O_ACCMODE) == O_WRONLY || (flags & O_PATH) != 0 || !ours()) return;
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  char link[64], path[4096];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return;
  path[n] = '\0';
  // The record files themselves are not the job's reads.
  if (strncmp(path, g_dir, strlen(g_dir)) == 0) return;
  track(fd, path, st);
}

void closed(int fd, bool release = true);

// After `to` became a copy of `from` (dup, dup2, dup3): its reads are recorded as another open of
// the same file, from its position (a program that opens, dup2s to 0 and reads stdin, as dd does).
void duplicated(int from, int to) {
  if (to < 0 || to >= kMaxFd || from == to || !ours()) return;
  closed(to);  // dup2 closed what `to` was
  if (from < 0 || from >= kMaxFd) return;
  Slot& f = g_slots[from];
  if (f.serial.load(std::memory_order_acquire) == 0 || f.path == nullptr) return;
  struct stat st {};
  st.st_size = off_t(f.size);
  st.st_dev = dev_t(f.dev);
  st.st_ino = ino_t(f.ino);
  char* path = strdup(f.path);
  if (path == nullptr) return;
  track(to, path, st);
  free(path);
  g_slots[to].pos = f.pos.load();
}

// After a read of `n` bytes at `offset` (-1: the file position) that began at `t0`.
void did_read(int fd, ssize_t n, std::int64_t offset, std::int64_t t0) {
  if (!g_on || fd < 0 || fd >= kMaxFd || n < 0) return;
  Slot& s = g_slots[fd];
  const std::uint64_t serial = s.serial.load(std::memory_order_acquire);
  if (serial == 0) return;
  const std::int64_t t1 = now_ns();
  std::int64_t zero = 0;
  s.first_ns.compare_exchange_strong(zero, t0);
  s.last_ns.store(t1);
  s.bytes += std::uint64_t(n);
  ++s.reads;
  const std::int64_t at = offset >= 0 ? offset : s.pos.fetch_add(n);
  if (g_trace) {
    char head[160];
    char* end = head;
    *end++ = 'R';
    for (const std::int64_t v :
         {std::int64_t(g_pid), std::int64_t(this_tid()), std::int64_t(serial), t0, t1, at, std::int64_t(n)})
      end = put(end, v);
    *end = '\0';
    emit(head, nullptr);
  }
}

// The file record of `fd`, written when it closes (or the process ends with it open);
// `release` false on the way out of the process, where freeing memory may not be safe.
void closed(int fd, bool release) {
  if (fd < 0 || fd >= kMaxFd) return;
  if (fd == g_out) g_out = -1;  // the job closed the record file: reopened at the next flush
  Slot& s = g_slots[fd];
  if (s.serial.exchange(0) == 0) return;
  char head[256];
  snprintf(head, sizeof head, "F %d %d %lld %lld %lld %llu %llu %llu %u %u %llu", int(getpid()), int(s.tid),
           static_cast<long long>(s.open_ns), static_cast<long long>(s.first_ns.load()),
           static_cast<long long>(s.last_ns.load()), static_cast<unsigned long long>(s.bytes.load()),
           static_cast<unsigned long long>(s.reads.load()), static_cast<unsigned long long>(s.size),
           major(dev_t(s.dev)), minor(dev_t(s.dev)), static_cast<unsigned long long>(s.ino));
  emit(head, s.path);
  if (release) {
    free(s.path);
    s.path = nullptr;
  }
}

// Files still open when the process ends are recorded as if closed then.
void close_all_and_flush() {
  if (!ours()) return;
  for (int fd = 0; fd < kMaxFd; ++fd)
    if (g_slots[fd].serial.load(std::memory_order_relaxed) != 0) closed(fd, false);
  flush();
}

// On _exit, which a signal handler may call (PyTorch's workers do on SIGTERM) while this thread
// is inside emit() holding the lock: the records are written only when the lock can be had
// within a moment, else given up, never waited for (a deadlock would hang the job's exit).
void flush_on_exit() {
  if (!ours()) return;
  for (int tries = 0; tries < 100; ++tries) {
    if (pthread_mutex_trylock(&g_out_mu) == 0) {
      pthread_mutex_unlock(&g_out_mu);
      close_all_and_flush();
      return;
    }
    const timespec pause{0, 100'000};
    nanosleep(&pause, nullptr);
  }
}

void before_fork() { pthread_mutex_lock(&g_out_mu); }
void after_fork_parent() { pthread_mutex_unlock(&g_out_mu); }
void after_fork_child() {
  // The parent writes what it buffered; the child starts empty, with a file of its own. The
  // descriptors it inherited stay tracked: its own reads of them are its records.
  g_used = 0;
  g_out = -1;
  g_pid = getpid();
  ++g_fork_generation;  // every thread id cached before the fork is the parent's
  pthread_mutex_unlock(&g_out_mu);
  // What the parent read of them is the parent's record, not this one's; with a trace, each is
  // opened again under this pid, so that this process's reads of it name an open of its own.
  for (Slot& s : g_slots) {
    if (s.serial.load(std::memory_order_relaxed) == 0) continue;
    s.first_ns = 0;
    s.last_ns = 0;
    s.bytes = 0;
    s.reads = 0;
    if (g_trace && s.path != nullptr) {
      char head[128];
      snprintf(head, sizeof head, "O %d %llu %lld %llu", int(g_pid),
               static_cast<unsigned long long>(s.serial.load()), static_cast<long long>(s.open_ns),
               static_cast<unsigned long long>(s.size));
      emit(head, s.path);
    }
  }
}

__attribute__((constructor)) void start_recording() {
  const char* dir = getenv("FEEDBENCH_WATCH_DIR");
  if (dir == nullptr || *dir == '\0') return;
  g_dir = strdup(dir);
  g_trace = getenv("FEEDBENCH_WATCH_TRACE") != nullptr;
  g_pid = getpid();
  pthread_atfork(before_fork, after_fork_parent, after_fork_child);
  atexit(close_all_and_flush);
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

}  // namespace

extern "C" {

// NOLINTBEGIN(readability-inconsistent-declaration-parameter-name,bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp):
// the C library's names, its reserved ones included.
__attribute__((visibility("default"))) int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real().open(path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real().open64(path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int openat(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real().openat(dir, path, flags, mode);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) int openat64(int dir, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const int mode = mode_of(flags, ap);
  va_end(ap);
  const int fd = real().openat64(dir, path, flags, mode);
  opened(fd, flags);
  return fd;
}

// The fortified entry points (_FORTIFY_SOURCE) a program compiled with it calls instead.
__attribute__((visibility("default"))) int __open_2(const char* path, int flags) {
  const int fd = real().open_2(path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __open64_2(const char* path, int flags) {
  const int fd = real().open64_2(path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __openat_2(int dir, const char* path, int flags) {
  const int fd = real().openat_2(dir, path, flags);
  opened(fd, flags);
  return fd;
}
__attribute__((visibility("default"))) int __openat64_2(int dir, const char* path, int flags) {
  const int fd = real().openat64_2(dir, path, flags);
  opened(fd, flags);
  return fd;
}

__attribute__((visibility("default"))) ssize_t read(int fd, void* buf, size_t count) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().read(fd, buf, count);
  did_read(fd, n, -1, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().pread(fd, buf, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t pread64(int fd, void* buf, size_t count, off_t offset) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().pread64(fd, buf, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t readv(int fd, const iovec* iov, int count) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().readv(fd, iov, count);
  did_read(fd, n, -1, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t preadv(int fd, const iovec* iov, int count, off_t offset) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().preadv(fd, iov, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

__attribute__((visibility("default"))) ssize_t preadv64(int fd, const iovec* iov, int count, off_t offset) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const ssize_t n = real().preadv64(fd, iov, count, offset);
  did_read(fd, n, offset, t0);
  return n;
}

// A seek moves the position reads are recorded at.
__attribute__((visibility("default"))) off_t lseek(int fd, off_t offset, int whence) {
  const off_t at = real().lseek(fd, offset, whence);
  if (g_on && at >= 0 && fd >= 0 && fd < kMaxFd) g_slots[fd].pos = at;
  return at;
}

__attribute__((visibility("default"))) off_t lseek64(int fd, off_t offset, int whence) {
  const off_t at = real().lseek64(fd, offset, whence);
  if (g_on && at >= 0 && fd >= 0 && fd < kMaxFd) g_slots[fd].pos = at;
  return at;
}

__attribute__((visibility("default"))) int close(int fd) {
  if (ours()) closed(fd);
  return real().close(fd);
}

// fcntl's third argument is read as the C library itself reads it (a pointer-sized word), and
// passed on; F_DUPFD and F_DUPFD_CLOEXEC make a copy as dup does (Python's os.dup).
__attribute__((visibility("default"))) int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return after_fcntl(fd, cmd, real().fcntl(fd, cmd, arg));
}

__attribute__((visibility("default"))) int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  void* arg = va_arg(ap, void*);
  va_end(ap);
  return after_fcntl(fd, cmd, (real().fcntl64 != nullptr ? real().fcntl64 : real().fcntl)(fd, cmd, arg));
}

__attribute__((visibility("default"))) int dup(int fd) {
  const int to = real().dup(fd);
  if (to >= 0) duplicated(fd, to);
  return to;
}

__attribute__((visibility("default"))) int dup2(int fd, int to) {
  const int r = real().dup2(fd, to);
  if (r >= 0) duplicated(fd, r);
  return r;
}

__attribute__((visibility("default"))) int dup3(int fd, int to, int flags) {
  const int r = real().dup3(fd, to, flags);
  if (r >= 0) duplicated(fd, r);
  return r;
}

__attribute__((visibility("default"))) FILE* fopen(const char* path, const char* mode) {
  FILE* f = real().fopen(path, mode);
  if (f != nullptr) opened(fileno(f), mode[0] == 'r' || strchr(mode, '+') != nullptr ? O_RDONLY : O_WRONLY);
  return f;
}

__attribute__((visibility("default"))) FILE* fopen64(const char* path, const char* mode) {
  FILE* f = real().fopen64(path, mode);
  if (f != nullptr) opened(fileno(f), mode[0] == 'r' || strchr(mode, '+') != nullptr ? O_RDONLY : O_WRONLY);
  return f;
}

// stdio reads through the C library's own read, which these wrappers do not see: counted here,
// as what fread returned (its buffering's reads ahead are not).
__attribute__((visibility("default"))) size_t fread(void* buf, size_t size, size_t count, FILE* f) {
  const std::int64_t t0 = g_on ? now_ns() : 0;
  const size_t n = real().fread(buf, size, count, f);
  if (f != nullptr) did_read(fileno(f), ssize_t(n * size), -1, t0);
  return n;
}

__attribute__((visibility("default"))) int fclose(FILE* f) {
  if (f != nullptr && ours()) closed(fileno(f));
  return real().fclose(f);
}

// A process that ends with _exit (Python's os._exit, as DataLoader workers end) runs no atexit
// handler: its records are written here first.
__attribute__((visibility("default"), noreturn)) void _exit(int status) {
  flush_on_exit();
  real().exit_(status);
  __builtin_unreachable();
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status) {
  flush_on_exit();
  real().exit2(status);
  __builtin_unreachable();
}
// NOLINTEND(readability-inconsistent-declaration-parameter-name,bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp)

}  // extern "C"
