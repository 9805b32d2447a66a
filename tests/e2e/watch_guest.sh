# watch's guests inside the job (the read recorder on LD_PRELOAD, the Python probe) never change
# what the job does, and their records are right. Each job runs unwatched and watched: the same
# stdout byte for byte, the same exit status, the same output files. The jobs are the ways real
# jobs are written: C and Python jobs that close every inherited descriptor then open their own
# output; a C job whose SIGALRM watchdog opens, reads and closes /proc/self/statm every ms while
# it reads files; a launcher that execs the job (same pid, a new image: every read of both in the
# trace, no open hiding another); threads reading at once; a job that switches user before it
# reads (its refused records said, with why); PATH_MAX-long non-ASCII names recorded whole; a
# TMPDIR too small for the records (the loss counted and said); spawn and forkserver DataLoaders.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
command -v cc >/dev/null || skip "no C compiler (cc) to build the test jobs"

# The data: 48 files of 6 KiB, readable by any user (the user-switching job reads it as nobody).
chmod 755 "$WORK"
mkdir "$WORK/data"
for i in $(seq -w 1 48); do head -c 6144 /dev/urandom >"$WORK/data/f$i.bin"; done

# The C jobs, built here.
cat >"$WORK/closerange.c" <<'C'
// Reads the data in 256-byte reads (records to flush), closes every descriptor from 3 up, opens
// its own outputs and writes into them what it reads next.
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static unsigned long read_all(const char* dir, int out) {
  unsigned long sum = 0;
  char name[4096], buf[256];
  for (int i = 1; i <= 48; ++i) {
    snprintf(name, sizeof name, "%s/f%02d.bin", dir, i);
    int fd = open(name, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
      for (ssize_t k = 0; k < n; ++k) sum = sum * 31 + (unsigned char)buf[k];
    close(fd);
    if (out >= 0) dprintf(out, "file %d sum %lu\n", i, sum);
    for (int k = 1; out >= 0 && k <= 4; ++k) dprintf(out + k, "%lu\n", sum);
  }
  return sum;
}
int main(int argc, char** argv) {
  unsigned long a = 0;
  for (int r = 0; r < 4; ++r) a += read_all(argv[1], -1);
  if (close_range(3, ~0U, 0) != 0) return 2;
  int out = open("out.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
  char sums[32];
  for (int k = 1; k <= 4; ++k) {  // the recorder's descriptor, whichever it was, reused
    snprintf(sums, sizeof sums, "sums%d.txt", k);
    if (open(sums, O_WRONLY | O_CREAT | O_TRUNC, 0644) != out + k) return 3;
  }
  unsigned long b = read_all(argv[1], out);
  b += read_all(argv[1], out);
  for (int k = 0; k <= 4; ++k) close(out + k);
  printf("closerange job: %lu %lu\n", a, b);
  return 0;
}
C
cat >"$WORK/watchdog.c" <<'C'
// A SIGALRM watchdog every ms that opens, reads and closes /proc/self/statm (async-signal-safe
// calls), while the main thread reads files for about a second.
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>
static volatile sig_atomic_t ticks;
static void on_alarm(int sig) {
  (void)sig;
  char buf[128];
  int fd = open("/proc/self/statm", O_RDONLY);
  if (fd >= 0) {
    if (read(fd, buf, sizeof buf) > 0) ++ticks;
    close(fd);
  }
}
int main(int argc, char** argv) {
  struct sigaction sa = {0};
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, 0);
  struct itimerval every_ms = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every_ms, 0);
  unsigned long sum = 0;
  char name[4096], buf[64];
  struct timeval t0, t;
  gettimeofday(&t0, 0);
  int rounds = 0;
  for (;; ++rounds) {
    gettimeofday(&t, 0);
    if (rounds >= 20 && (t.tv_sec - t0.tv_sec) * 1000000 + (t.tv_usec - t0.tv_usec) > 1000000) break;
    for (int i = 1; i <= 48; ++i) {
      snprintf(name, sizeof name, "%s/f%02d.bin", argv[1], i);
      int fd = open(name, O_RDONLY);
      ssize_t n;
      while ((n = read(fd, buf, sizeof buf)) > 0) sum += (unsigned char)buf[0];
      close(fd);
    }
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, 0);
  printf("watchdog job: %lu a round, ticked: %d\n", sum / rounds, ticks > 0);
  return 0;
}
C
cat >"$WORK/reader.c" <<'C'
// Reads every file of a folder in 1000-byte reads; prints its count of read calls (each EOF
// read included: the recorder records every call) and its bytes. With THREADS > 1, that many
// threads read the files at once, each its share.
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
static const char* dir;
static int threads = 1;
static unsigned long calls[64], bytes[64];
static void* run(void* arg) {
  long t = (long)arg;
  char name[4096], buf[1000];
  for (int i = 1 + (int)t; i <= 48; i += threads) {
    snprintf(name, sizeof name, "%s/f%02d.bin", dir, i);
    int fd = open(name, O_RDONLY);
    if (fd < 0) { perror(name); exit(3); }
    ssize_t n;
    do {
      n = read(fd, buf, sizeof buf);
      ++calls[t];
      if (n > 0) bytes[t] += (unsigned long)n;
    } while (n > 0);
    close(fd);
  }
  return 0;
}
int main(int argc, char** argv) {
  dir = argv[1];
  if (argc > 2) threads = atoi(argv[2]);
  pthread_t id[64];
  for (long t = 0; t < threads; ++t) pthread_create(&id[t], 0, run, (void*)t);
  unsigned long c = 0, b = 0;
  for (long t = 0; t < threads; ++t) {
    pthread_join(id[t], 0);
    c += calls[t];
    b += bytes[t];
  }
  printf("reads %lu bytes %lu\n", c, b);
  return 0;
}
C
for job in closerange watchdog reader; do
  cc -O1 -pthread -o "$WORK/$job" "$WORK/$job.c" || fail "cannot build $job.c"
done

# same NAME [WATCH-OPTIONS...] -- CMD...: CMD run unwatched in $WORK/u-NAME, then watched in
# $WORK/w-NAME (within 60 s each); stdout, exit status and the files it writes must be the same.
# Watch's words in $WORK/NAME.err, its result in $WORK/NAME.json, the job's stdout in $WORK/NAME.out.
same() {
  local name=$1 opts=()
  shift
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  mkdir -p "$WORK/u-$name" "$WORK/w-$name"
  chmod 777 "$WORK/u-$name" "$WORK/w-$name"
  local plain=0 watched=0
  (cd "$WORK/u-$name" && timeout 60 "$@") >"$WORK/$name.plain" 2>"$WORK/$name.plain-err" || plain=$?
  (cd "$WORK/w-$name" && timeout 60 "$FEEDBENCH" watch --out "$WORK/$name.json" "${opts[@]}" -- "$@") \
    >"$WORK/$name.out" 2>"$WORK/$name.err" || watched=$?
  if [ "$plain" != "$watched" ] || ! cmp -s "$WORK/$name.plain" "$WORK/$name.out" ||
     [ "$(tree_digest "$WORK/u-$name")" != "$(tree_digest "$WORK/w-$name")" ]; then
    echo "--- unwatched: exit $plain"; head -c 2000 "$WORK/$name.plain"; cat "$WORK/$name.plain-err"
    echo "--- watched: exit $watched"; head -c 2000 "$WORK/$name.out"; cat "$WORK/$name.err"
    diff <(tree_digest "$WORK/u-$name") <(tree_digest "$WORK/w-$name") || true
    fail "$name: watching changed the job"
  fi
  echo "$name: the same watched and not (exit $plain): $(head -c 100 "$WORK/$name.out" | tr -cd '[:print:]')"
}

# trace_reads TRACE: "READS OPENS" of the trace's reads and opens of the data folder's files,
# after checking that every read names an open of its process and no two opens of one process
# share a number (a launcher's and the job's it exec'd).
trace_reads() {
  $PY - "$1" "$WORK/data" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
opens, reads = {}, 0
for e in t["traceEvents"]:
    if e.get("cat") == "open":
        key = (e["pid"], e["args"]["file"])
        assert key not in opens, "two opens numbered %s" % (key,)
        opens[key] = e["args"]["path"]
for e in t["traceEvents"]:
    if e.get("cat") == "read":
        path = opens[(e["pid"], e["args"]["file"])]
        reads += path.startswith(sys.argv[2] + "/")
print(reads, sum(p.startswith(sys.argv[2] + "/") for p in opens.values()))
PY
}

# 1. Descriptor reuse: the job closes every descriptor and opens its own output; a trace makes
# the recorder flush records throughout.
same closerange --trace "$WORK/closerange.trace.json" -- "$WORK/closerange" "$WORK/data"
[ -s "$WORK/w-closerange/out.txt" ] || fail "closerange: no output"

# 2. A signal handler's open, read and close while the recorder is busy: no hang, no abort.
same watchdog -- "$WORK/watchdog" "$WORK/data"
expect_in "$WORK/watchdog.out" "ticked: 1"

# Threads reading at once: every read call in the trace.
same threads --trace "$WORK/threads.trace.json" -- "$WORK/reader" "$WORK/data" 4
read -r calls _ < <(sed 's/reads //' "$WORK/threads.out")
read -r reads opens < <(trace_reads "$WORK/threads.trace.json")
[ "$reads" = "$calls" ] && [ "$opens" = 48 ] || fail "threads: $reads reads and $opens opens traced, the job made $calls and 48"

# 12. A launcher (Python: its imports open files too) that reads some data, then execs the job
# under the same pid: both images' reads in the trace, each open its own.
cat >"$WORK/launcher.py" <<'PY'
import os, sys, json, pathlib  # imports: opens of the launcher's own
n = 0
for name in sorted(os.listdir(sys.argv[1]))[:10]:
    fd = os.open(os.path.join(sys.argv[1], name), os.O_RDONLY)
    while True:
        n += 1
        if not os.read(fd, 4096):
            break
    os.close(fd)
print("launcher reads %d" % n, flush=True)
os.execv(sys.argv[2], sys.argv[2:])
PY
same launcher --trace "$WORK/launcher.trace.json" -- $PY "$WORK/launcher.py" "$WORK/data" "$WORK/reader" "$WORK/data"
launched=$(sed -n 's/launcher reads //p' "$WORK/launcher.out")
calls=$(sed -n 's/reads \([0-9]*\) .*/\1/p' "$WORK/launcher.out")
read -r reads opens < <(trace_reads "$WORK/launcher.trace.json")
[ "$reads" = $((launched + calls)) ] && [ "$opens" = 58 ] ||
  fail "launcher: $reads reads and $opens opens traced; the launcher made $launched and 10, the job $calls and 48"

# 14. PATH_MAX-long names in any encoding: a 3.8 KB path of two-byte characters (three times as
# long %XX-encoded) recorded whole, two files apart.
long="$WORK/data-long"
mkdir "$long"
seg=$($PY -c "print('é' * 120)")
for k in $(seq 1 15); do long="$long/$seg"; done
mkdir -p "$long"
cp "$WORK/data/f01.bin" "$long/a"
cp "$WORK/data/f02.bin" "$long/b"
[ ${#long} -gt 1800 ] || fail "the long path is ${#long} characters"
same long --trace "$WORK/long.trace.json" -- cat "$long/a" "$long/b"
$PY - "$WORK/long.trace.json" "$long" <<'PY' || fail "the long names were not recorded whole"
import json, sys
t = json.load(open(sys.argv[1]))
paths = sorted(e["args"]["path"] for e in t["traceEvents"] if e.get("cat") == "open" and "data-long" in e["args"]["path"])
want = [sys.argv[2] + "/a", sys.argv[2] + "/b"]
assert paths == want, (len(want[0].encode()), [len(p.encode()) for p in paths])
print("long names: %d bytes each, whole" % len(want[0].encode()))
PY

# 11. A job that switches user before it reads: its records are refused by watch's folder;
# watch says so (how many, why, which user) rather than that the job read nothing.
same setuid -- setpriv --reuid=nobody --regid=nogroup --clear-groups "$WORK/reader" "$WORK/data"
expect_in "$WORK/setuid.err" "refused to a process of user 65534"
$PY -c "
import json, sys
x = json.load(open(sys.argv[1]))['benchmarks'][0]['extra']['lost_records']
assert x['refused'] >= 1 and x['refused_uid'] == 65534, x" "$WORK/setuid.json" || fail "setuid: lost_records"

# 6. A TMPDIR too small for the records: the job unchanged, the records lost counted and said.
mkdir "$WORK/tiny"
if mount -t tmpfs -o size=200k tmpfs "$WORK/tiny" 2>/dev/null; then
  trap 'umount "$WORK/tiny" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  TMPDIR="$WORK/tiny" same tinytmp --trace "$WORK/tinytmp.trace.json" -- "$WORK/closerange" "$WORK/data"
  expect_in "$WORK/tinytmp.err" "for want of space"
  $PY -c "
import json, sys
x = json.load(open(sys.argv[1]))['benchmarks'][0]['extra']['lost_records']
assert x['no_space'] > 0, x" "$WORK/tinytmp.json" || fail "tinytmp: lost_records"
  umount "$WORK/tiny"
else
  echo "the tiny TMPDIR not tried: cannot mount a tmpfs here"
fi

# The Python probe: a DataLoader job that closes every descriptor and opens its own output, and
# DataLoaders with spawned and forkserver workers; the batches all recorded.
if $PY -c "import torch" 2>/dev/null; then
  cat >"$WORK/dl_job.py" <<'PY'
import os, sys, zlib
import torch
from torch.utils.data import DataLoader, Dataset

class Files(Dataset):
    def __init__(self, root):
        self.paths = sorted(os.path.join(root, n) for n in os.listdir(root))
    def __len__(self):
        return len(self.paths)
    def __getitem__(self, i):
        with open(self.paths[i], "rb") as f:
            return torch.tensor(zlib.crc32(f.read()))

def run(workers, start, out=None):
    loader = DataLoader(Files(sys.argv[1]), batch_size=4, num_workers=workers,
                        multiprocessing_context=start if workers else None)
    total = 0
    for k, batch in enumerate(loader):
        total += int(batch.sum())
        if out is not None:
            out.write("batch %d %d\n" % (k, int(batch.sum())))
    return total

if __name__ == "__main__":
    # Spawned and forkserver workers, then every descriptor closed and an output of its own.
    a, b = run(2, "spawn"), run(2, "forkserver")
    os.closerange(3, 65536)
    with open("out.txt", "w") as out:
        c = run(0, None, out)
    print("spawn", a, "forkserver", b, "closerange", c)
PY
  same python -- $PY "$WORK/dl_job.py" "$WORK/data"
  [ -s "$WORK/w-python/out.txt" ] || fail "python: no output"
  $PY -c "
import json, sys
e = json.load(open(sys.argv[1]))['benchmarks'][0]
methods = [p['loader']['start_method'] for p in e['extra']['passes']]
assert e['steps'] + len(methods) == 36 and methods == ['spawn', 'forkserver', ''], (e['steps'], methods)" "$WORK/python.json" ||
    fail "python: not every batch recorded"
else
  echo "the Python probe's jobs not tried: no python3-torch under $PY"
fi
echo "PASS"
