# A throttled source (dataset.throttle / --throttle): every read through the path, all workers
# of a case together, is held to the rate; the loader then waits for data. The rate is a floor
# on time, so the upper bounds checked here hold however loaded the machine is.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 64 --file-size 256KiB --layout flat --seed 4 >/dev/null
mkdir "$WORK/cache"
cat >"$WORK/c.json" <<JSON
{
  "name": "throttle-e2e",
  "dataset": {"source": "$WORK/src", "cache": "$WORK/cache", "throttle": {"source": "16MiB/s"}},
  "defaults": {"repetitions": 1, "seed": 1, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": ["64KiB", "1MiB"], "workers": [1, 4],
     "cache_state": "warm", "path": "source"},
    {"family": "loader", "batch_size": 4, "workers": 2, "step_time": "10ms", "steps": 16,
     "warmup_steps": 1, "cache_state": "warm", "path": "source"},
    {"family": "stage", "workers": 2, "cache_state": "warm", "verify": false}
  ]
}
JSON

expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
expect_in "$WORK/out" "source: throttled to 16 MiB/s"
python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["dataset"]["source"]["throttle_bytes_per_second"] == 16 << 20, doc["dataset"]["source"]
its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration" and not b.get("error_occurred")]
fr = [b for b in its if b["params"]["family"] == "file_read"]
assert len(fr) == 4, [b["case"] for b in its]
for b in fr:
    # Warm reads go at memory speed unthrottled (GiB/s); the first read of a round is free.
    # Charged by the bytes read: 1 MiB reads of 256 KiB files once went at a quarter of the rate.
    assert 8 * 2**20 <= b["bytes_per_second"] <= 16.8 * 2**20, (b["case"], b["bytes_per_second"])
loader = [b for b in its if b["params"]["family"] == "loader"]
assert loader, its
# 4 x 256 KiB per 10 ms step needs 100 MiB/s; at 16 MiB/s the accelerator mostly waits.
assert loader[0]["au"] < 0.5, loader[0]["au"]
stage = [b for b in its if b["params"]["family"] == "stage"]
# Paced by the bytes read (a whole chunk charged per read call, even the last empty one, gave 2 MiB/s).
assert stage and 4 * 2**20 <= stage[0]["bytes_per_second"] <= 16.8 * 2**20, stage
print("throttle ok:", [round(b["bytes_per_second"] / 2**20, 2) for b in fr], "MiB/s; loader AU",
      round(loader[0]["au"], 3))
PY

# The command-line override replaces the config's rate, and a bad one is refused by name.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" --throttle source=8MiB/s \
  --benchmark_filter='file_read/.*bs:65536/.*workers:1/'
expect_in "$WORK/out" "source: throttled to 8 MiB/s"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r3.json" --throttle source=fast
expect_in "$WORK/err" "/dataset/throttle/source"
expect_in "$WORK/err" "(from --throttle source)"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r3.json" --throttle disk=1MiB/s
expect_in "$WORK/err" "--throttle disk=1MiB/s: expected ROLE=RATE"
[ ! -e "$WORK/r3.json" ] || fail "a refused run wrote a result"
echo "throttle e2e ok"
