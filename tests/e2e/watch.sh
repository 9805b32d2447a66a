# feedbench watch on a real PyTorch job (tests/e2e/watch_job.py, which times itself the method's
# way): watched AU within 3 points of the job's own, for forked and spawned workers and two
# DataLoaders; the verdicts of a fed job, one whose workers wait off the CPU (a slow store) and one
# whose workers compute on two saturated cores; the job's own median wait around `batch = next(it)`
# against the trace's; a crash's exit code passed through with its
# result written and marked failed; a command without torch judged as nothing; bad usage exit 2.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import torch" 2>/dev/null || skip "no python3-torch under /usr/bin/python3"
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"
"$FEEDBENCH" gen --out "$WORK/data" --files 480 --file-size 16KiB --layout flat --seed 3 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"

source "$(dirname "$0")/watch_lib.bash"
# watch NAME JOB-ARGS...: the job on its data under watch (watch_lib.bash's watch_job).
watch() { local name=$1; shift; watch_job "$name" "$WORK/data" -- "$@"; }

# A 150 ms step against 8 small files read from the page cache: fed even on a loaded host (beside
# other tests under ctest -j2, taking a batch cost up to 4.1 ms and the workers' start 283 ms: at
# 50 and 80 ms steps that took AU to 89.2% and 89.6%, under the 90% target).
watch fed --workers 2 --batch 8 --step-ms 150
check fed fed
expect_in "$WORK/fed.err" "fed (target 90.0%)"
# "got" is when next() has returned to the job: after `batch = next(it)` freed the previous batch
# (32 MiB in shared memory from the workers) and the loader's threads had the GIL. The job's own
# median wait and the trace's (each batch's wait, exact) agree within 0.5 ms; stamped at
# __next__'s return they differed by milliseconds a batch (7 ms on a loaded host).
expect_exit 0 "$FEEDBENCH" watch --trace "$WORK/handover.trace.json" -- \
  $PY "$JOB" "$WORK/data" --workers 2 --batch 32 --step-ms 60 --sample-kib 1024
$PY - "$WORK/handover.trace.json" "$WORK/out" <<'PY' || { cat "$WORK/err"; fail "the wait as the job took it"; }
import json, sys
waits = sorted(e["dur"] / 1e3 for e in json.load(open(sys.argv[1]))["traceEvents"]
               if e.get("cat") == "batch" and e.get("name") == "wait")
own = json.loads(open(sys.argv[2]).read().splitlines()[-1])["wait_p50_ms"]
watched = waits[(len(waits) - 1) // 2]
print("wait p50: watched %.3f ms, the job's own %.3f ms (%d batches)" % (watched, own, len(waits)))
assert abs(watched - own) <= 0.5, (watched, own)
PY
# Spawned workers start in about half a second a pass: against 1.2 s of steps that is the wait.
watch spawned --workers 2 --batch 8 --step-ms 20 --start spawn --loaders 2
check spawned startup
$PY -c "import json,sys; e=json.load(open(sys.argv[1]))['benchmarks'][0]; p=e['extra']['passes']; assert len(p)==2 and {x['loader']['start_method'] for x in p}=={'spawn'}, p" "$WORK/spawned.json"
# 8 samples of 5 ms asleep per batch on 2 workers: 20 ms a batch against a 5 ms step.
watch slowstore --workers 2 --batch 8 --step-ms 5 --sleep-ms 5
check slowstore storage
# 4 workers burning 4 ms a sample on 2 cores: the cores are the limit.
watch cpubound --workers 4 --batch 8 --step-ms 5 --burn-ms 4
check cpubound cpu

# The processes over time: the workers' CPU apart from the trainer's, every interval; four
# workers burning on 2 cores used most of them, workers asleep in a slow store hardly any.
$PY - "$WORK/cpubound.json" "$WORK/slowstore.json" <<'PY' || fail "the processes' figures"
import json, sys
cpu, slow = (json.load(open(f))["benchmarks"][0]["extra"] for f in sys.argv[1:])
for e in (cpu, slow):
    p = e["processes"]
    assert len(p["t_s"]) >= 4 and len(p["worker_cores"]) == len(p["t_s"]) == len(p["read_mib_s"]), p
    assert e["read_bytes_per_second"] > 0, e["read_bytes_per_second"]
    t = e["timeline"]
    assert len(t["t_s"]) == sum(x["batches"] for x in e["passes"]) and t["batches_per_point"] == 1, t
    assert e["gpu"]["measured"] is False or "util_percent" in json.dumps(e["gpu"]), e["gpu"]
# Sampled from outside, the workers' CPU matches what the probe timed inside their fetches (less
# a worker's last interval, lost when it exits between samples); asleep, they used little.
assert cpu["worker_cpu_s"] >= 0.7 * cpu["fetch_cpu_s"], (cpu["worker_cpu_s"], cpu["fetch_cpu_s"])
assert slow["worker_cpu_s"] < 0.5 * cpu["worker_cpu_s"], (slow["worker_cpu_s"], cpu["worker_cpu_s"])
print("workers' CPU sampled: CPU-bound %.2f s (fetches %.2f s), slow store %.2f s" % (cpu["worker_cpu_s"], cpu["fetch_cpu_s"], slow["worker_cpu_s"]))
PY
expect_in "$WORK/cpubound.err" "processes: trainer"

# What the job read, from every process (the read recorder on LD_PRELOAD): the data folder, its
# 480 files of 16 KiB once each, the code and libraries apart.
$PY - "$WORK/slowstore.json" "$WORK/data" <<'PY' || fail "the reads recorded"
import json, os, sys
r = json.load(open(sys.argv[1]))["benchmarks"][0]["extra"]["reads"]
assert r["recorded"] and r["files"] == 480 and r["bytes"] == 480 * 16384, r
(f,) = r["folders"]
assert f["path"] == os.path.realpath(sys.argv[2]) and f["files"] == 480 and " on " in f["where"], f
assert r["code"]["files"] > 0, r["code"]
PY
expect_in "$WORK/slowstore.err" "reads: 7.5 MiB of data in 480 files"
# Any language: dd's reads, recorded in a job with no Python at all.
expect_exit 0 "$FEEDBENCH" watch --out "$WORK/dd.json" -- sh -c "dd if=$WORK/data/file_000007.bin of=/dev/null bs=4k 2>/dev/null"
$PY -c "import json,sys; r=json.load(open(sys.argv[1]))['benchmarks'][0]['extra']['reads']; assert r['bytes']==16384 and r['files']==1, r" "$WORK/dd.json"

# A staged cache: said so, with the cheap check run makes, made now; changed, not verified; the
# source read while the command names its cache, said too.
"$FEEDBENCH" stage --from "$WORK/data" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
expect_exit 0 "$FEEDBENCH" watch -- $PY "$JOB" "$WORK/cache" --workers 2 --batch 8 --step-ms 1
expect_in "$WORK/err" "a cache staged by feedbench stage from $WORK/data"
expect_in "$WORK/err" "verified now: it holds the 480 files its manifest lists"
touch -d 2001-01-01 "$WORK/cache/file_000003.bin"
expect_exit 0 "$FEEDBENCH" watch -- $PY "$JOB" "$WORK/cache" --workers 2 --batch 8 --step-ms 1
expect_in "$WORK/err" "not verified: the cache $WORK/cache does not hold what its manifest lists"
expect_exit 0 "$FEEDBENCH" watch -- sh -c "dd if=$WORK/data/file_000001.bin of=/dev/null 2>/dev/null" _ "$WORK/cache"
expect_in "$WORK/err" "read from the source $WORK/data though a cache of it is staged at $WORK/cache"

# What the job's processes do around their reads does not lose them: a failed exec from Python's
# subprocess (a vfork child calling _exit in the parent's memory) between two reads of one file,
# and os.dup (fcntl F_DUPFD_CLOEXEC) then a read of the copy.
expect_exit 0 "$FEEDBENCH" watch --out "$WORK/vfork.json" -- $PY -c "
import os, subprocess
fd = os.open('$WORK/data/file_000001.bin', os.O_RDONLY)
os.read(fd, 8192)
try:
    subprocess.run(['$WORK/no-such-program'])
except OSError:
    pass
os.read(fd, 8192)
copy = os.dup(os.open('$WORK/data/file_000002.bin', os.O_RDONLY))
os.read(copy, 1 << 20)
"
$PY -c "import json,sys; r=json.load(open(sys.argv[1]))['benchmarks'][0]['extra']['reads']; assert r['bytes'] == 2 * 16384 and r['reads'] == 3, r" "$WORK/vfork.json" ||
  fail "reads lost around a failed exec or a dup"
# A record the job garbled costs the figures, said so, never the job's exit code or the rest.
expect_exit 5 "$FEEDBENCH" watch --out "$WORK/garbled.json" -- sh -c 'echo "{not json" > "$FEEDBENCH_WATCH_DIR/x.jsonl"; exit 5'
expect_in "$WORK/err" "cannot read the probe's records"
[ -s "$WORK/garbled.json" ] || fail "no result for a job whose records were garbled"

# Without the recorder: said so, and why, never guessed.
FEEDBENCH_READ_RECORDER=/no/such.so expect_exit 0 "$FEEDBENCH" watch -- sh -c "cat $WORK/data/file_000001.bin >/dev/null"
expect_in "$WORK/err" "reads: not recorded: FEEDBENCH_READ_RECORDER=/no/such.so cannot be read"

# The trace: every data read placed in the batch whose fetch made it, each batch's reads the
# bytes of its 8 files, for spawned workers over two passes; Perfetto's JSON form.
expect_exit 0 "$FEEDBENCH" watch --trace "$WORK/trace.json" -- $PY "$JOB" "$WORK/data" --workers 2 --batch 8 --step-ms 2 --start spawn --epochs 2
grep -Eq "reads of data, ([0-9.k]+) of them in a batch's fetch" "$WORK/err" &&
  grep -Eq " ([0-9.k]+) reads of data, \1 of them in a batch's fetch" "$WORK/err" ||
  { cat "$WORK/err"; fail "a data read outside every batch's fetch"; }
$PY - "$WORK/trace.json" <<'PY' || fail "the trace"
import collections, json, sys
t = json.load(open(sys.argv[1]))
assert t["otherData"]["format"] == "feedbench-watch-trace" and t["otherData"]["version"] == 2, t["otherData"]
ev = t["traceEvents"]
reads = [e for e in ev if e.get("cat") == "read"]
assert reads and all(e["args"]["batch"] is not None for e in reads), [e for e in reads if e["args"]["batch"] is None][:3]
per = collections.Counter()
for e in reads:
    per[(e["args"]["pass"], e["args"]["batch"])] += e["args"]["bytes"]
assert len(per) == 120 and set(per.values()) == {8 * 16384}, collections.Counter(per.values())
waits = [e for e in ev if e.get("name") == "wait"]
assert len(waits) == 120 and {e["args"]["pass"] for e in waits} == {p for p, _ in per}, len(waits)
assert all(e["ph"] in ("X", "i", "M") and "ts" in e for e in ev if e["ph"] != "M")
print("trace: %d reads in %d batches, %d events" % (len(reads), len(per), len(ev)))
PY
expect_exit 2 "$FEEDBENCH" watch --trace "$WORK/data/t.json" -- $PY "$JOB" "$WORK/data"
expect_in "$WORK/err" "inside the command's argument"

# The two watched runs diff as any two results do.
"$FEEDBENCH" diff "$WORK/fed.json" "$WORK/fed.json" >"$WORK/diff.out" 2>&1 || { cat "$WORK/diff.out"; fail "diff of a watched result with itself"; }
# report draws each job: its batches in time, its wait's distribution, its processes.
expect_exit 0 "$FEEDBENCH" report "$WORK/fed.json" "$WORK/cpubound.json" --out "$WORK/jobs.html"
expect_in "$WORK/jobs.html" "job/cpubound: AU"
expect_in "$WORK/jobs.html" "Watched jobs"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking \
    --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$WORK/chrome" \
    --virtual-time-budget=5000 --dump-dom "file://$WORK/jobs.html" >"$WORK/jobs.dom" 2>"$WORK/chrome.log" ||
    fail "chromium could not load jobs.html"
  # 3 charts a job, and the ratio chart of the two files' AU.
  grep -q 'data-report-status="ok [0-9]* charts"' "$WORK/jobs.dom" ||
    { grep -o 'data-report-status="[^"]*"' "$WORK/jobs.dom"; fail "jobs.html: charts not all drawn"; }
  n=$(grep -o 'data-report-status="ok [0-9]*' "$WORK/jobs.dom" | grep -o '[0-9]*$')
  [ "$n" -ge 6 ] || fail "jobs.html: $n charts, expected at least 6 (3 a job)"
fi

# A crash: its exit code passed through, its result written and marked failed.
expect_exit 1 "$FEEDBENCH" watch --out "$WORK/crash.json" -- $PY "$JOB" "$WORK/data" --crash-after 15
$PY -c "import json,sys; e=json.load(open(sys.argv[1]))['benchmarks'][0]; assert e['extra']['failed'] and e['extra']['exit_code']==1 and e['name']=='job/watch_job', e" "$WORK/crash.json"
# No torch: nothing to judge, said so; the exit code is the command's.
expect_exit 3 "$FEEDBENCH" watch -- sh -c 'exit 3'
expect_in "$WORK/err" "no DataLoader batches recorded"
# Bad usage.
expect_exit 2 "$FEEDBENCH" watch --out "$WORK/x.json"
expect_in "$WORK/err" "expected a command after --"
expect_exit 2 "$FEEDBENCH" watch -- "$WORK/no-such-command"
expect_in "$WORK/err" "cannot run it"
expect_exit 2 "$FEEDBENCH" watch --target-au 2 -- true
# Outputs that cannot be: refused before the job runs (it would have run for nothing).
for opt in --out --trace; do
  expect_exit 2 "$FEEDBENCH" watch $opt "$WORK" -- touch "$WORK/ran"
  expect_in "$WORK/err" "$opt $WORK: is a folder, expected a file"
  expect_exit 2 "$FEEDBENCH" watch $opt "" -- touch "$WORK/ran"
  expect_in "$WORK/err" "$opt: expected a file name, got ''"
  expect_exit 2 "$FEEDBENCH" watch $opt /proc/no-such/x.json -- touch "$WORK/ran"
  expect_in "$WORK/err" "$opt /proc/no-such/x.json: cannot be written"
done
[ ! -e "$WORK/ran" ] || fail "watch ran the job though an output could not be written"
[ ! -e "$WORK/x.json" ] || fail "a refused watch wrote a result"
# The result never lands on what the job reads: its script, or inside its data folder.
cp "$JOB" "$WORK/job.py"
before=$(sha256sum "$WORK/job.py")
expect_exit 2 "$FEEDBENCH" watch --out "$WORK/job.py" -- $PY "$WORK/job.py" "$WORK/data"
expect_in "$WORK/err" "--out $WORK/job.py: the same file as the command's argument"
[ "$(sha256sum "$WORK/job.py")" = "$before" ] || fail "watch overwrote the job's script"
expect_exit 2 "$FEEDBENCH" watch --out "$WORK/data/r.json" -- $PY "$WORK/job.py" "$WORK/data"
expect_in "$WORK/err" "inside the command's argument"
[ ! -e "$WORK/data/r.json" ] || fail "watch wrote into the job's data folder"
