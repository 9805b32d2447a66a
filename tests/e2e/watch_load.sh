# feedbench watch records the host's load beside the job and the data roots it read:
# environment.host.load's other_programs_cores (the usable cores' busy time less the job tree's
# CPU time, over the wall time), said on the console; a CPU-bound job beside two busy loops
# records at least one core of other programs (the quiet run only within the cores: a CI host
# is rarely quiet). The job's data root is recorded under environment.paths (role "data") and listed with its class folders
# summarised; diff of two jobs that read the same set from two folders names both.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import torch" 2>/dev/null || skip "no python3-torch under /usr/bin/python3"
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"
REAL=$(realpath "$WORK")
"$FEEDBENCH" gen --out "$REAL/store/set" --files 12 --file-size 16KiB --layout classes --classes 3 \
  --seed 5 >/dev/null
rm -f "$REAL/store/set/feedbench-gen.json"
mkdir -p "$REAL/cache"
cp -a "$REAL/store/set" "$REAL/cache/set"

# The job: no workers, 100 ms of CPU a sample in the trainer: CPU-bound on one core.
burn() { expect_exit 0 "$FEEDBENCH" watch --out "$WORK/$1.json" --name burn -- \
  $PY "$JOB" "$2" --workers 0 --batch 4 --step-ms 1 --burn-ms 100; cp "$WORK/err" "$WORK/$1.err"; }

burn quiet "$REAL/store/set"
expect_in "$WORK/quiet.err" "other programs took "
expect_in "$WORK/quiet.err" "$REAL/store/set ("
expect_in "$WORK/quiet.err" "12 files in 3 folders, 192 KiB"

loops=()
stop_loops() { for p in "${loops[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap 'stop_loops; rm -rf "$WORK"' EXIT
for _ in 1 2; do
  ( while :; do :; done ) &
  loops+=($!)
done
burn busy "$REAL/cache/set"
stop_loops
expect_in "$WORK/busy.err" "other programs took "

$PY - "$WORK/quiet.json" "$WORK/busy.json" "$REAL" <<'PY' || fail "the host's load and the data path recorded"
import json, sys
quiet, busy = (json.load(open(f)) for f in sys.argv[1:3])
real = sys.argv[3]
for doc in (quiet, busy):
    load = doc["environment"]["host"]["load"]
    assert set(load) >= {"loadavg_1m_before", "loadavg_1m_after", "online_cores", "other_programs_cores"}, load
q, b = (d["environment"]["host"]["load"]["other_programs_cores"] for d in (quiet, busy))
print("other programs' cores: alone %.2f, beside two busy loops %.2f" % (q, b))
# Only the busy side is bounded: a quiet side on a shared CI host may itself be busy (ctest -j2).
assert b >= 1.0 and 0 <= q <= quiet["environment"]["host"]["load"]["online_cores"], (q, b)
assert quiet["environment"]["paths"]["data"]["resolved"] == real + "/store/set", quiet["environment"]["paths"]
assert busy["environment"]["paths"]["data"]["resolved"] == real + "/cache/set", busy["environment"]["paths"]
(root,) = quiet["benchmarks"][0]["extra"]["reads"]["roots"]
assert root["path"] == real + "/store/set" and root["folders"] == 3 and root["files"] == 12, root
PY

# diff of the two: the data path changed, both folders named (whatever it judges of the figures).
"$FEEDBENCH" diff "$WORK/quiet.json" "$WORK/busy.json" >"$WORK/out" 2>"$WORK/err" || true
expect_in "$WORK/out" "data path changed: $REAL/store/set BASE, $REAL/cache/set NEW"
