# feedbench replay against hostile traces (written here, no job needed): a pass number beyond
# 32 bits is refused by its JSON pointer (it once replayed pass 1's reads again); bytes that are
# not JSON are said to be no trace; a trace naming a system file (/etc/shadow) is refused before
# anything is opened, with nothing of the file printed; a replay prints its estimate first and
# --budget refuses one estimated longer; epochs go over the recorded batches without copying
# them; a folder of the data swapped for a link to another mid-replay leads no read outside.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

# mktrace OUT ROOT FILES [PASS...]: a trace of a job without workers reading ROOT/keep/f_000.bin
# and ROOT/sub/f_<i>.bin
# (64 KiB, one a batch) in each PASS (default 1); options by environment: STEP_US (each step),
# BATCHES (batches a pass, default FILES).
cat >"$WORK/mktrace.py" <<'PY'
import json, os, sys
out, root, files = sys.argv[1], sys.argv[2], int(sys.argv[3])
passes = [int(p) for p in sys.argv[4:]] or [1]
step = float(os.environ.get("STEP_US", "1000"))
batches = int(os.environ.get("BATCHES", str(files)))
ev, ts = [], 0.0
for i in range(files):
    folder = "keep" if i == 0 else "sub"  # the root is ROOT, sub/ a folder beneath it
    ev.append({"args": {"file": i, "path": "%s/%s/f_%03d.bin" % (root, folder, i), "size": 65536},
               "cat": "open", "name": "open", "ph": "i", "pid": 10, "s": "t", "tid": 10, "ts": 1})
for p in passes:
    for b in range(batches):
        f = b % files
        ev.append({"args": {"batch": b, "pass": p}, "cat": "batch", "dur": 500, "name": "wait",
                   "ph": "X", "pid": 10, "tid": 10, "ts": ts})
        ev.append({"args": {"batch": b, "pass": p, "cpu_ms": 0.1, "samples": 1, "worker": -1},
                   "cat": "fetch", "dur": 400, "name": "fetch", "ph": "X", "pid": 10, "tid": 10, "ts": ts})
        ev.append({"args": {"bytes": 65536, "file": f, "offset": 0, "pass": p, "batch": b}, "cat": "read",
                   "dur": 100, "name": "read", "ph": "X", "pid": 10, "tid": 10, "ts": ts + 10})
        ev.append({"args": {"batch": b, "pass": p}, "cat": "batch", "dur": step, "name": "step",
                   "ph": "X", "pid": 10, "tid": 10, "ts": ts + 500})
        ts += 500 + step
header = {"format": "feedbench-watch-trace", "version": 1, "name": "hostile", "command": ["job"],
          "passes": [{"pass": p, "batch_size": 1, "num_workers": 0, "persistent_workers": False} for p in passes]}
with open(out, "w") as f:
    f.write('{"otherData": ' + json.dumps(header) + ', "traceEvents": [\n')
    f.write(",\n".join(json.dumps(e) for e in ev))
    f.write("\n]}\n")
PY
mkdir -p "$WORK/data/sub" "$WORK/data/keep" "$WORK/outside"
head -c 65536 /dev/urandom >"$WORK/data/keep/f_000.bin"
for i in $(seq -f %03g 0 39); do
  head -c 65536 /dev/urandom >"$WORK/data/sub/f_$i.bin"
  head -c 65536 /dev/urandom >"$WORK/outside/f_$i.bin"
done

# 15: pass 1 + 2^32 kept in 32 bits was pass 1 again (its reads replayed once per alias).
$PY "$WORK/mktrace.py" "$WORK/alias.json" "$WORK/data" 4 1 4294967297
expect_exit 2 "$FEEDBENCH" replay "$WORK/alias.json" --dry-run
expect_in "$WORK/err" "/otherData/passes/1/pass: expected an integer of at least 0 and at most 2147483647, got 4294967297"

# Bytes that are not JSON are no trace, not a truncated one.
head -c 4096 /dev/urandom | tr -d '{[ \t\n\r' >"$WORK/garbage.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/garbage.json"
expect_in "$WORK/err" "not JSON, so not a trace"
grep -q "cut short" "$WORK/err" && fail "binary garbage called a truncated trace"

# 19: a trace naming /etc/shadow: refused without --source, before anything is listed or opened,
# and nothing of the file (its size) is printed.
printf '%s' '{"otherData": {"format": "feedbench-watch-trace", "version": 1, "passes": []}, "traceEvents": [
{"args": {"file": 1, "path": "/etc/shadow", "size": 3}, "cat": "open", "name": "open", "ph": "i", "pid": 1, "tid": 1, "ts": 1},
{"args": {"batch": 0, "pass": 0}, "cat": "batch", "dur": 5, "name": "wait", "ph": "X", "pid": 1, "tid": 1, "ts": 2},
{"args": {"bytes": 3, "file": 1, "offset": 0, "pass": 0, "batch": 0}, "cat": "read", "dur": 1, "name": "read", "ph": "X", "pid": 1, "tid": 1, "ts": 3}
]}' >"$WORK/shadow.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/shadow.json" --dry-run
expect_in "$WORK/err" "is in the system's /etc, not a data set's"
if [ -e /etc/shadow ]; then
  size=$(stat -c %s /etc/shadow)
  grep -q "$size" "$WORK/err" "$WORK/out" && fail "the refusal printed /etc/shadow's size ($size)"
fi
# A path that climbs out of the folder the others share is refused too, before any scan.
$PY "$WORK/mktrace.py" "$WORK/climb.json" "$WORK/data" 4
sed -i "s#$WORK/data/sub/f_003.bin#$WORK/data/sub/../../outside/f_003.bin#" "$WORK/climb.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/climb.json" --dry-run
expect_in "$WORK/err" "has a '..' component"

# 17: the estimate first, and --budget: 40 steps of 40 minutes are a day's replay.
STEP_US=2.4e9 $PY "$WORK/mktrace.py" "$WORK/long.json" "$WORK/data" 40
expect_exit 2 "$FEEDBENCH" replay "$WORK/long.json" --budget 10m
expect_in "$WORK/out" "estimated duration: 26h40m"
expect_in "$WORK/err" "--budget 10m: the plan cannot fit: it needs at least 29h"
$PY "$WORK/mktrace.py" "$WORK/short.json" "$WORK/data" 40
expect_exit 0 "$FEEDBENCH" replay "$WORK/short.json" --budget 10m --out "$WORK/short.result.json" --quiet
expect_in "$WORK/out" "estimated duration: "
expect_in "$WORK/out" "budget 10m: fits as planned"

# wait_for_estimate FILE TRIES: until a replay in the background has printed its estimate into
# FILE (it has read its trace and is replaying), a quarter second a try.
wait_for_estimate() {
  for _ in $(seq 1 "$2"); do
    grep -q "estimated duration" "$1" 2>/dev/null && return
    sleep 0.25
  done
}

# 16: epochs over the recorded batches without a copy of each: 2,000 batches a pass, 10,000
# epochs held 1.3 GB; the replay's peak while it runs stays near the one pass's.
BATCHES=2000 STEP_US=0 $PY "$WORK/mktrace.py" "$WORK/many.json" "$WORK/data" 40
"$FEEDBENCH" replay "$WORK/many.json" --set epochs=10000 --quiet \
  --out "$WORK/many.result.json" >"$WORK/many.out" 2>&1 &
pid=$!
wait_for_estimate "$WORK/many.out" 40
sleep 3
peak=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || echo 0)
kill "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
echo "epochs=10000 over 2,000 batches: peak ${peak} KiB"
[ "$peak" -gt 0 ] || { cat "$WORK/many.out"; fail "the replay ended before its peak was read"; }
[ "$peak" -lt 600000 ] || fail "epochs=10000 held ${peak} KiB: the batches copied per epoch"

# 18: sub/ swapped for a link to ../outside while the replay reads (throttled to ~3 s): nothing
# outside is opened (its pages stay out of the cache), and the replay fails naming the link.
outside_cached() {
  fincore --bytes --noheadings --output RES "$WORK"/outside/*.bin | awk '{s += $1} END {print s + 0}'
}
sync
vmtouch -e "$WORK/outside" >/dev/null
evictable=1
[ "$(outside_cached)" = 0 ] || { evictable=0; echo "note: the outside files stay cached here: residency not checked"; }
$PY "$WORK/mktrace.py" "$WORK/swap.json" "$WORK/data" 40
"$FEEDBENCH" replay "$WORK/swap.json" --throttle source=800KiB/s --out "$WORK/swap.result.json" \
  >"$WORK/swap.out" 2>&1 &
pid=$!
wait_for_estimate "$WORK/swap.out" 80
sleep 1
mv "$WORK/data/sub" "$WORK/data/sub.real"
ln -s ../outside "$WORK/data/sub"
rc=0
wait "$pid" || rc=$?
cat "$WORK/swap.out"
resident=$(outside_cached)
echo "swap: exit $rc, outside bytes cached: $resident"
[ "$evictable" = 0 ] || [ "$resident" = 0 ] || fail "the replay read $resident bytes outside --source through the swapped link"
[ "$rc" != 0 ] || fail "a replay whose folder was swapped for a link exited 0"
grep -q "symbolic links" "$WORK/swap.out" || fail "the failure does not name the link"
echo "replay_bounds: ok"
