# No console line of run's, watch's or replay's output exceeds 120 columns (characters, not
# bytes), and each verdict opens with one short line, its details indented after it: a loader
# config and a file_read config run cold and warm, a small real DataLoader job watched with a
# trace, and that trace replayed, on one small generated data set.
source "$(dirname "$0")/lib.bash"
export LC_ALL=C.UTF-8
"$FEEDBENCH" gen --out "$WORK/data" --files 240 --file-size 16KiB --layout flat --seed 3 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"

# wide NAME: fails naming each line of $WORK/out and $WORK/err wider than 120 characters.
wide() {
  python3 - "$1" "$WORK/out" "$WORK/err" <<'PY' || fail "$1: a console line is wider than 120 columns"
import sys
bad = 0
for path in sys.argv[2:]:
    for n, line in enumerate(open(path, encoding="utf-8", errors="replace").read().splitlines(), 1):
        if len(line) > 120:
            print("%s: %s line %d has %d columns: %s" % (sys.argv[1], path.rsplit("/", 1)[-1], n, len(line), line))
            bad += 1
sys.exit(1 if bad else 0)
PY
}

# A loader worker sweep, with and without a transform, cold and warm; file_read cold and warm.
cat >"$WORK/loader.json" <<JSON
{"name": "loader-width", "dataset": {"source": "$WORK/data"},
 "defaults": {"repetitions": 1, "seed": 7, "engine": "psync", "warmup_steps": 1, "path": "source"},
 "families": [
  {"family": "loader", "batch_size": 8, "workers": [1, 2, 4], "step_time": "2ms", "steps": 20,
   "cache_state": ["cold", "warm"], "transform": ["none", "1ms/sample"]}]}
JSON
cat >"$WORK/read.json" <<JSON
{"name": "read-width", "dataset": {"source": "$WORK/data"},
 "defaults": {"repetitions": 1, "seed": 7, "path": "source"},
 "families": [
  {"family": "file_read", "pattern": ["sequential", "random"], "block_size": "16KiB", "workers": [1, 2],
   "engine": "psync", "cache_state": ["cold", "warm"]}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/loader.json" --out "$WORK/loader-result.json"
wide "run (loader)"
cp "$WORK/out" "$WORK/loader.out"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/read.json" --out "$WORK/read-result.json"
wide "run (file_read)"

# The summary opens with its table; each loader case's verdict there is a first line of its own
# naming the case by what sets it apart and its AU, its details indented under it.
python3 - "$WORK/loader.out" <<'PY' || fail "the loader's verdicts in the summary"
import sys
text = open(sys.argv[1], encoding="utf-8").read()
summary = text[text.index("\nSummary\n"):].splitlines()[2:]
assert summary[0].split() == ["path", "state", "accelerators", "fed", "limit", "rate"], summary[:3]
start = [i for i, l in enumerate(summary) if l.startswith("  training loop")][0]
heads = [i for i in range(start + 1, len(summary)) if summary[i].startswith("    ") and summary[i][4] != " "]
assert len(heads) == 12, summary[start:]
for i in heads:
    assert "loader/" not in summary[i] and "state:" in summary[i] and ": AU " in summary[i], summary[i]
# Details under their verdict, 4 columns further in (a wrapped detail 4 more).
assert sum(summary[i + 1].startswith("        ") for i in heads) >= len(heads) // 2, summary[start:]
PY

PY=/usr/bin/python3
if ! $PY -c "import torch" 2>/dev/null; then
  echo "no python3-torch under /usr/bin/python3: watch and replay not checked"
  exit 0
fi
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"
# Workers asleep 3 ms a sample against a 2 ms step: a job that waits, whose verdict has details.
expect_exit 0 "$FEEDBENCH" watch --out "$WORK/job.json" --trace "$WORK/job.trace.json" --name widths \
  -- $PY "$JOB" "$WORK/data" --workers 2 --batch 8 --step-ms 2 --sleep-ms 3
wide "watch"
python3 - "$WORK/err" <<'PY' || fail "watch's verdict"
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
(at,) = [i for i, l in enumerate(lines) if l.startswith("feedbench watch: job/widths exited 0")]
head, detail = lines[at + 1], lines[at + 2]
assert head.startswith("  ") and not head.startswith("   ") and len(head) <= 120, head
assert detail.startswith("      "), (head, detail)
PY
expect_exit 0 "$FEEDBENCH" replay "$WORK/job.trace.json" --out "$WORK/replay.json"
wide "replay"
echo ok
