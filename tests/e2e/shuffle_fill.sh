# A TFRecord shuffle buffer larger than the data set reads every record in the first batch of
# the epoch. That batch fell in the warm-up, so a source throttled to 300 KiB/s read "AU 99.9% —
# storage keeps up" (27.6% without the buffer): the measured steps had read nothing. The fill is
# counted now, and the bytes read for the measured steps and for the warm-up are recorded. A
# read ahead that ends in the warm-up (a shard smaller than one 1 MiB read, a worker per shard)
# plays the same trick without a buffer: that case is not judged. The throttle is a floor on
# time, so the upper bounds on AU hold however loaded the machine is.
source "$(dirname "$0")/lib.bash"

# 64 records of 4 KiB in 2 shards of 128 KiB: 256 KiB, at least 0.85 s at 300 KiB/s.
"$FEEDBENCH" gen --out "$WORK/tf" --files 64 --file-size 4080 --layout tfrecord --shards 2 --seed 3 >/dev/null

config() {  # config WORKERS SHUFFLE_BUFFER
  cat <<JSON
{"name": "shuffle-fill", "dataset": {"source": "$WORK/tf"}, "defaults": {"repetitions": 1, "engine": "psync"},
 "families": [{"family": "loader", "samples": "tfrecord", "batch_size": 4, "workers": $1, "prefetch": 2,
               "step_time": "10ms", "cache_state": "warm", "path": "source", "shuffle_buffer": $2}]}
JSON
}

# The buffer holds 1000 records, the data set 64: the epoch is one fill, then memory.
config 1 1000 >"$WORK/fill.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/fill.json" --out "$WORK/fill.r.json" --throttle source=300KiB/s
if grep -F "can storage feed the simulated trainers? warm: yes" "$WORK/out"; then
  fail "the summary answers yes from steps that read nothing"
fi
python3 - "$WORK/fill.r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = [b for b in d["benchmarks"] if b["run_type"] == "iteration" and not b.get("error_occurred")]
assert len(runs) == 1, [b.get("error_message") for b in d["benchmarks"]]
b, e = runs[0], runs[0]["extra"]
assert "storage keeps up" not in e["verdict"], e["verdict"]
# 16 steps of 10 ms against at least 0.85 s of reads: AU at most ~0.16 once the fill counts.
assert b["au"] < 0.5, (b["au"], e["verdict"])
assert e["judged"] and e["verdict"].startswith("AU ") and "training waits for data" in e["verdict"], e
assert e["warmup_steps_in_effect"] == 0 and e["steps_per_epoch"] == 16, e
# Every record was read for a measured step's batch; the warm-up read nothing.
assert e["measured_read_bytes"] >= e["bytes"] == 64 * 4096, e
assert e["warmup_read_bytes"] == 0, e
print("fill counted: AU", round(b["au"], 3), "-", e["verdict"])
PY

# No buffer, 2 workers: each reads its one shard whole in its first batch, inside the warm-up of
# prefetch 2 × workers 2 steps. The case is recorded, without a verdict.
config 2 0 >"$WORK/ahead.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/ahead.json" --out "$WORK/ahead.r.json" --throttle source=300KiB/s
if grep -F "can storage feed the simulated trainers? warm: yes" "$WORK/out"; then
  fail "the summary answers yes from steps that read nothing"
fi
python3 - "$WORK/ahead.r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = [b for b in d["benchmarks"] if b["run_type"] == "iteration" and not b.get("error_occurred")]
assert len(runs) == 1, [b.get("error_message") for b in d["benchmarks"]]
e = runs[0]["extra"]
assert "storage keeps up" not in e["verdict"], e["verdict"]
assert not e["judged"], e
assert e["measured_read_bytes"] == 0 and e["warmup_read_bytes"] == 64 * 4096, e
assert e["verdict"].startswith("not judged: the measured steps read 0 B"), e["verdict"]
assert "read ahead in the warm-up" in e["verdict"], e["verdict"]
print("read ahead not judged:", e["verdict"])
PY
echo "shuffle fill e2e ok"
