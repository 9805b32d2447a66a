# feedbench replay on a real PyTorch job's trace (tests/e2e/watch_job.py under feedbench watch
# --trace): the replay takes every recorded batch and read (the same bytes, the same files), its
# AU near the job's for a slow store (workers asleep) and a CPU-heavy transform; its result
# diffs against the watched job and against another replay; what-ifs (step_scale, workers,
# batch_size, epochs) change what they say; the run's options (--dry-run, --repetitions,
# --throttle, --cache with path=cache, job, target_au) act; bad traces (truncated, a newer version, another
# format, files gone or resized) get one error, exit 2, and no result.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import torch" 2>/dev/null || skip "no python3-torch under /usr/bin/python3"
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"
"$FEEDBENCH" gen --out "$WORK/data" --files 240 --file-size 16KiB --layout flat --seed 3 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"

# record NAME JOB-ARGS...: the job watched with a trace, $WORK/NAME.json and NAME.trace.json.
record() {
  local name=$1
  shift
  expect_exit 0 "$FEEDBENCH" watch --out "$WORK/$name.json" --trace "$WORK/$name.trace.json" --name "$name" \
    -- $PY "$JOB" "$WORK/data" "$@"
}
# same NAME REPLAY.json POINTS: the replay's AU within POINTS of the watched job's, every
# recorded byte read again.
same() {
  $PY - "$WORK/$1.json" "$2" "$3" <<'PY' || fail "replay of $1"
import json, sys
job = json.load(open(sys.argv[1]))["benchmarks"][0]
rep = [b for b in json.load(open(sys.argv[2]))["benchmarks"] if b.get("run_type") == "iteration"][0]
x = rep["extra"]
print("%s: watched AU %.3f, replayed %.3f (recorded %.3f), %d steps, %d of %d bytes; %s"
      % (rep["case"], job["au"], rep["au"], x["replay"]["recorded_au"], rep["steps"], x["measured_read_bytes"] + x["warmup_read_bytes"],
         x["replay"]["recorded_bytes"], x["verdict"]))
assert rep["case"] == "replay/job:%s/state:cold/path:source" % job["name"][4:], rep["case"]
assert abs(rep["au"] - job["au"]) <= float(sys.argv[3]), (rep["au"], job["au"])
assert x["measured_read_bytes"] + x["warmup_read_bytes"] == x["replay"]["recorded_bytes"], x
assert rep["steps"] == job["steps"], (rep["steps"], job["steps"])
PY
}

# A slow store: 8 samples of 4 ms asleep per batch on 2 workers, against a 5 ms step.
record slow --workers 2 --batch 8 --step-ms 5 --sleep-ms 4 --epochs 2
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --out "$WORK/slow.replay.json"
expect_in "$WORK/out" "replay /families/0: job:slow cold source"
expect_in "$WORK/out" "estimated duration: "  # first, before anything is read
# What else ran on its cores, said and recorded (a replay slower on a busy host may be the host).
expect_in "$WORK/out" "other programs took "
$PY -c "import json,sys; l=json.load(open(sys.argv[1]))['environment']['host']['load']; assert l['other_programs_cores'] >= 0, l" "$WORK/slow.replay.json"
same slow "$WORK/slow.replay.json" 0.08
# The result records the command that runs the replay again, as it was typed.
$PY - "$WORK/slow.replay.json" "$WORK/slow.trace.json" <<'PY' || fail "the replay's command line"
import json, sys
line = json.load(open(sys.argv[1]))["command_line"]
assert line[:3] == ["feedbench", "replay", sys.argv[2]] and line[-2:] == ["--out", sys.argv[1]], line
PY
# A CPU-heavy transform: 2 workers burning 3 ms a sample.
record cpu --workers 2 --batch 8 --step-ms 5 --burn-ms 3
expect_exit 0 "$FEEDBENCH" replay "$WORK/cpu.trace.json" --out "$WORK/cpu.replay.json" --quiet
# How close a CPU-bound replay comes depends on the host's load at each moment (tests run beside
# this one): tools/compare-replay measures it. Here: every recorded CPU second burned again, so
# the replay stays CPU-bound (without it, page-cached reads would feed it).
same cpu "$WORK/cpu.replay.json" 1
$PY - "$WORK/cpu.replay.json" <<'PY' || fail "the CPU-bound replay"
import json, sys
rep = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"][0]
x = rep["extra"]
print("cpu: replayed AU %.3f, the workers' CPU in the recorded work %.2f s" % (rep["au"], x["transform_cpu_s"]))
# 240 samples of 3 ms burned by the job's workers, less what the replay's own reads took.
assert x["transform_cpu_s"] >= 0.6 and rep["au"] < 0.7, (x["transform_cpu_s"], rep["au"])
PY

# diff: the replay against its watched job (matched by name), and against another replay (the
# figures are compared by same(); a loaded host moves wait p99 a lot, so no change fails here).
expect_exit 0 "$FEEDBENCH" diff "$WORK/slow.json" "$WORK/slow.replay.json" --threshold 1000
expect_in "$WORK/out" "(BASE job/slow, NEW replay/job:slow/state:cold/path:source)"
expect_in "$WORK/out" "in 1 compared case"
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --out "$WORK/slow.replay2.json" --quiet
expect_in "$WORK/out" "replay replay/job:slow/state:cold/path:source: AU"
expect_exit 0 "$FEEDBENCH" diff "$WORK/slow.replay.json" "$WORK/slow.replay2.json" --threshold 1000
expect_in "$WORK/out" "in 1 compared case"

# What-ifs: a step twice as long feeds better; one worker waits longer; batches of 16 halve the
# steps; 3 epochs replay the 2 recorded passes and the first again.
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --set step_scale=[1,2] --set workers=1 \
  --out "$WORK/whatif.json" --quiet
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --set batch_size=16 --set epochs=3 \
  --out "$WORK/regroup.json" --quiet
$PY - "$WORK/whatif.json" "$WORK/regroup.json" "$WORK/slow.replay.json" <<'PY' || fail "what-ifs"
import json, sys
def cases(f):
    return {b["case"]: b for b in json.load(open(f))["benchmarks"] if b.get("run_type") == "iteration"}
w, g, base = cases(sys.argv[1]), cases(sys.argv[2]), cases(sys.argv[3])
(b,) = base.values()
one = w["replay/job:slow/step_scale:1.0/workers:1/state:cold/path:source"]
two = w["replay/job:slow/step_scale:2.0/workers:1/state:cold/path:source"]
print("AU: recorded workers %.3f, 1 worker %.3f, 1 worker step x2 %.3f" % (b["au"], one["au"], two["au"]))
assert one["au"] < b["au"] - 0.05 and two["au"] > one["au"] + 0.05, (b["au"], one["au"], two["au"])
(r,) = g.values()
assert r["case"] == "replay/job:slow/batch:16/epochs:3/state:cold/path:source", r["case"]
assert len(r["extra"]["epochs"]) == 3, r["extra"]["epochs"]
# 240 samples a pass in batches of 16: 15 batches, 14 with a step after them.
assert [e["steps"] for e in r["extra"]["epochs"]] == [14, 14, 14], r["extra"]["epochs"]
PY

# The run's own options through replay: --dry-run prices it and writes nothing; --repetitions,
# --throttle (4 MiB/s for the source's reads: the store slower than the job's), the job's name
# and target_au carried into the case; --cache with path=cache reads the staged copy.
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --dry-run --out "$WORK/dry.json"
expect_in "$WORK/out" "replay/job:slow/state:cold/path:source"
[ ! -e "$WORK/dry.json" ] || fail "a dry run wrote a result"
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --repetitions 2 --throttle source=4MiB/s \
  --set job=renamed --set target_au=0.2 --out "$WORK/options.json" --quiet
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/data" --to "$WORK/cache"
expect_exit 0 "$FEEDBENCH" replay "$WORK/slow.trace.json" --cache "$WORK/cache" --set path=cache \
  --out "$WORK/cached.json" --quiet
$PY - "$WORK/options.json" "$WORK/cached.json" "$WORK/slow.replay.json" <<'PY' || fail "the run's options"
import json, sys
def runs(f):
    return [b for b in json.load(open(f))["benchmarks"] if b.get("run_type") == "iteration"]
opts, cached, (base,) = runs(sys.argv[1]), runs(sys.argv[2]), runs(sys.argv[3])
print("throttled to 4 MiB/s: AU %s (unthrottled %.3f); from the cache: %.3f, %s"
      % (["%.3f" % r["au"] for r in opts], base["au"], cached[0]["au"], cached[0]["case"]))
assert len(opts) == 2, len(opts)  # two repetitions
for r in opts:
    assert r["case"] == "replay/job:renamed/state:cold/path:source/target:0.2", r["case"]
    assert r["extra"]["target_au"] == 0.2, r["extra"]["target_au"]
    # 7.5 MiB over two passes at 4 MiB/s: the reads alone take ~1.9 s against 60 steps of 5 ms,
    # an AU of 0.14-0.15 on an idle host; with another test beside it (ctest -j2) one repetition
    # came to 0.18. Either way well below the unthrottled replay's, which is what is asserted.
    assert r["au"] < min(0.2, base["au"] - 0.05), (r["au"], base["au"])
(c,) = cached
assert c["case"] == "replay/job:slow/state:cold/path:cache", c["case"]
x = c["extra"]
assert x["measured_read_bytes"] + x["warmup_read_bytes"] == x["replay"]["recorded_bytes"], x
PY

# Bad traces: one error naming what is wrong, exit 2, nothing written.
T="$WORK/slow.trace.json"
head -c 3000 "$T" >"$WORK/cut.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/cut.json" --out "$WORK/bad.json"
expect_in "$WORK/err" "cut short at byte"
sed 's/"version": *[0-9][0-9]*/"version": 99/' "$T" >"$WORK/newer.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/newer.json" --out "$WORK/bad.json"
expect_in "$WORK/err" "version 99 is newer than this feedbench reads (2)"
sed 's/feedbench-watch-trace/other-trace/' "$T" >"$WORK/other.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/other.json" --out "$WORK/bad.json"
expect_in "$WORK/err" "not a feedbench-watch-trace"
sed -E '0,/"bytes": ?[0-9]+/s//"bytes": "many"/' "$T" >"$WORK/field.json"
expect_exit 2 "$FEEDBENCH" replay "$WORK/field.json" --out "$WORK/bad.json"
expect_in "$WORK/err" "/args/bytes: expected an integer"
cp -r "$WORK/data" "$WORK/copy"
rm "$WORK/copy/file_000007.bin" "$WORK/copy/file_000100.bin"
expect_exit 2 "$FEEDBENCH" replay "$T" --source "$WORK/copy" --out "$WORK/bad.json"
expect_in "$WORK/err" "2 of the 240 files the job read are missing under"
expect_in "$WORK/err" "file_000007.bin"
cp -r "$WORK/data" "$WORK/resized"
head -c 8192 "$WORK/data/file_000003.bin" >"$WORK/resized/file_000003.bin"
expect_exit 2 "$FEEDBENCH" replay "$T" --source "$WORK/resized" --out "$WORK/bad.json"
expect_in "$WORK/err" "1 of the 240 files the job read differ in size"
expect_in "$WORK/err" "--allow-resized"
# Nothing of a refused file is said: the recorded size only, never the one found.
grep -q "8192" "$WORK/err" && fail "the refusal printed the size of the file it refused"
[ ! -e "$WORK/bad.json" ] || fail "a refused replay wrote a result"
expect_exit 0 "$FEEDBENCH" replay "$T" --source "$WORK/resized" --allow-resized --out "$WORK/resized.json" --quiet
# An output onto the trace itself is refused, the trace intact.
sum=$(sha256sum <"$T")
expect_exit 2 "$FEEDBENCH" replay "$T" --out "$T"
[ "$(sha256sum <"$T")" = "$sum" ] || fail "the trace was overwritten"
