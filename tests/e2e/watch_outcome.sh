# watch keeps the job's ending and its own answer: a job killed by a signal kills watch by the
# same signal; a reader gone away (| true) costs watch's lines, never its result; a trace on a
# full disk costs the trace, never the result or the job's exit status; a result that would land
# on what the job read (found only by the recorder) is refused, exit 2, and kept elsewhere; a
# SIGKILLed watcher takes its job with it and its folder is removed by the next watch; a
# manifest planted above the data is not taken for a cache of it; blocked is not storage.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
export TMPDIR="$WORK/tmp"
mkdir -p "$TMPDIR"
leftovers() { find "$TMPDIR" -maxdepth 1 -name 'feedbench-watch-*' -type d | wc -l; }

# 1. Death by signal, as unwatched: Python's subprocess sees -15 and -2 (not 143 and 130); and a
# shell script given Ctrl-C (SIGINT to its whole process group) stops at a watched job as at the
# job itself, rather than going on to its next command.
$PY - "$FEEDBENCH" <<'PY' || fail "a job's death by signal"
import os, signal, subprocess, sys, time
for sig in ("TERM", "INT"):
    job = ["sh", "-c", "kill -%s $$" % sig]
    alone = subprocess.run(job).returncode
    watched = subprocess.run([sys.argv[1], "watch", "--"] + job, stderr=subprocess.DEVNULL).returncode
    print("SIG%s: unwatched %d, watched %d" % (sig, alone, watched))
    assert alone < 0 and watched == alone, (alone, watched)
for prefix in ("", "'%s' watch -- " % sys.argv[1]):
    script = subprocess.Popen(["bash", "-c", prefix + "sleep 5; echo went-on"], start_new_session=True,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    time.sleep(1.0)
    os.killpg(script.pid, signal.SIGINT)
    out = script.communicate()[0].decode()
    print("Ctrl-C %s: script %d, %r" % ("watched" if prefix else "unwatched", script.returncode, out))
    assert script.returncode == -2 and "went-on" not in out, (prefix, script.returncode, out)
PY

# 2. A reader gone away: the result is written, the exit status is the job's, nothing left.
set +e
"$FEEDBENCH" watch --out "$WORK/piped.json" -- sh -c 'sleep 0.3' 2>&1 | true
status=${PIPESTATUS[0]}
set -e
[ "$status" = 0 ] || fail "watch piped into a closed reader exited $status"
$PY -c "import json,sys; json.load(open(sys.argv[1]))" "$WORK/piped.json" || fail "no result behind a closed pipe"
[ "$(leftovers)" = 0 ] || fail "a watch folder left behind a closed pipe"

# 3. The trace onto a full file system: said, the result written, the job's exit status kept.
mkdir -p "$WORK/full"
if mount -t tmpfs -o size=256k tmpfs "$WORK/full" 2>/dev/null; then
  trap 'umount "$WORK/full" 2>/dev/null || true; rm -rf "$WORK"' EXIT
  dd if=/dev/zero of="$WORK/full/filler" bs=4k 2>/dev/null || true
  expect_exit 0 "$FEEDBENCH" watch --trace "$WORK/full/t.json" --out "$WORK/fullt.json" -- \
    sh -c "head -c 65536 /dev/urandom > $WORK/blob; cat $WORK/blob > /dev/null"
  expect_in "$WORK/err" "trace: not written"
  [ -s "$WORK/fullt.json" ] || fail "no result when the trace's disk was full"
  [ ! -e "$WORK/full/t.json" ] || fail "half a trace on the full disk"
else
  echo "skipped the full disk: cannot mount a tmpfs here"
fi

# 4. The result or the trace onto what the job read, seen only by the recorder: its script
# behind a shell, one of its data files. Refused after the job, exit 2, kept elsewhere and said where.
mkdir -p "$WORK/data"
printf 'print("trained")\n' >"$WORK/train.py"
head -c 8192 /dev/urandom >"$WORK/data/file_000.bin"
sums() { sha256sum "$WORK/train.py" "$WORK/data/file_000.bin"; }
before=$(sums)
expect_exit 2 "$FEEDBENCH" watch --out "$WORK/train.py" -- bash -c "$PY $WORK/train.py"
expect_in "$WORK/err" "--out $WORK/train.py: refused, it would overwrite what the job read"
expect_in "$WORK/out" "trained"
kept=$(unwrapped "$WORK/err" | grep -o 'written to [^ ]* instead' | cut -d' ' -f3)
[ -n "$kept" ] && $PY -c "import json,sys; json.load(open(sys.argv[1]))" "$kept" || fail "the refused result not kept"
expect_exit 2 "$FEEDBENCH" watch --trace "$WORK/data/file_000.bin" -- sh -c "cat $WORK/data/file_000.bin >/dev/null"
expect_in "$WORK/err" "--trace $WORK/data/file_000.bin: refused, it would overwrite what the job read"
[ "$(sums)" = "$before" ] || fail "watch overwrote what the job read"
# A job that failed keeps its own exit status.
expect_exit 3 "$FEEDBENCH" watch --out "$WORK/train.py" -- bash -c "$PY $WORK/train.py; exit 3"

# 5. A watcher killed outright: its job ends with it; the next watch removes its folder.
"$FEEDBENCH" watch -- sh -c "echo \$\$ > $WORK/job.pid; exec sleep 30" 2>/dev/null &
watcher=$!
for _ in $(seq 50); do [ -s "$WORK/job.pid" ] && break; sleep 0.1; done
job=$(cat "$WORK/job.pid")
kill -KILL "$watcher"
wait "$watcher" 2>/dev/null || true
for _ in $(seq 50); do kill -0 "$job" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$job" 2>/dev/null; then kill "$job"; fail "the job outlived its SIGKILLed watcher"; fi
[ "$(leftovers)" = 1 ] || fail "expected the killed watcher's folder left, found $(leftovers)"
expect_exit 0 "$FEEDBENCH" watch -- true
[ "$(leftovers)" = 0 ] || fail "a dead watcher's folder not removed by the next watch"

# 6. A manifest planted above the data is not a cache of it (nor is its source scanned).
mkdir -p "$WORK/above/d"
cp "$WORK/data/file_000.bin" "$WORK/above/d/"
cat >"$WORK/above/feedbench-manifest.json" <<JSON
{"schema": "feedbench-manifest/1", "label": "planted", "source_root": "/usr", "files": []}
JSON
expect_exit 0 "$FEEDBENCH" watch -- sh -c "cat $WORK/above/d/file_000.bin >/dev/null"
if grep -q "cache:" "$WORK/err"; then cat "$WORK/err"; fail "a planted manifest taken for a cache"; fi

# 7. Workers blocked off the CPU that read nothing: not storage.
if $PY -c "import torch" 2>/dev/null; then
  expect_exit 0 "$FEEDBENCH" watch --out "$WORK/sleep.json" -- $PY -c "
import time, torch
from torch.utils.data import DataLoader, Dataset
class Sleepy(Dataset):
    def __len__(self): return 256
    def __getitem__(self, i):
        time.sleep(0.01)
        return i
for _ in DataLoader(Sleepy(), batch_size=8, num_workers=2):
    time.sleep(0.002)
"
  expect_in "$WORK/err" "blocked off the CPU, not reading"
  if grep -q "storage-bound" "$WORK/err"; then fail "a job that read nothing called storage-bound"; fi
  $PY -c "import json,sys; x=json.load(open(sys.argv[1]))['benchmarks'][0]['extra']; assert x['limited_by']=='blocked', x['limited_by']" "$WORK/sleep.json"
fi
