# The loader family end to end: a small generated image folder, a worker sweep read cold, a
# calibration case from memory; the verdicts, the summary and the counters in the result file.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 48 --file-size 16KiB..64KiB --layout classes --classes 4 >/dev/null
cat >"$WORK/loader.json" <<JSON
{
  "name": "loader-e2e",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 2, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "loader", "batch_size": 8, "workers": [1, 2], "step_time": "5ms",
     "steps": 5, "warmup_steps": 1, "cache_state": "cold", "path": "source"},
    {"family": "loader", "batch_size": 8, "workers": 2, "step_time": "20ms", "samples": "memory",
     "steps": 5, "cache_state": "warm", "path": "source", "repetitions": 1}
  ]
}
JSON
before=$(tree_digest "$WORK/src")

expect_exit 0 "$FEEDBENCH" run --config "$WORK/loader.json" --out "$WORK/r.json"
expect_in "$WORK/out" "loader/batch:8/workers:1/"
expect_in "$WORK/out" "training loop"
expect_in "$WORK/out" "minimum workers:"
expect_in "$WORK/out" "calibration"
grep -qE "AU [0-9.]+% — (storage keeps up|training waits for data [0-9.]+% of the time)" "$WORK/out" \
  || { cat "$WORK/out"; fail "no verdict line in the run's output"; }
[ "$(tree_digest "$WORK/src")" = "$before" ] || fail "the run changed the source data set"

python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
runs = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
loader = [b for b in runs if b.get("case", "").startswith("loader/")]
assert len(loader) == 5, f"expected 5 loader repetitions, got {len(loader)}"
for b in loader:
    assert not b.get("error_occurred"), b.get("error_message")
    for k in ("samples_per_second", "bytes_per_second", "steps", "epoch_s", "wait_p50_ms",
              "wait_p90_ms", "wait_p99_ms", "wait_max_ms", "stall_fraction", "au", "cpu_util",
              "residency_before"):
        assert k in b, f"{b['case']}: counter {k} missing"
    assert b["steps"] == 4, f"{b['case']}: 5 steps, 1 warm-up: 4 measured, got {b['steps']}"
    assert 0 <= b["au"] <= 1 and abs(b["au"] + b["stall_fraction"] - 1) < 0.01
    extra = b["extra"]
    assert extra["verdict"].startswith("AU "), extra
    assert len(extra["au_per_accelerator"]) == 1
    assert b["cache"]["requested"] in ("cold", "warm")
    assert b["latency_hist"]["count"] == 4, b["latency_hist"]
    if "samples:memory" in b["case"]:
        assert extra["calibration"] is True
        assert b["bytes_per_second"] > 0
    else:
        assert b["bytes_per_second"] > 0 and b["samples_per_second"] > 0
summary = doc["summary"]["loader"]
assert len(summary["verdicts"]) == 3, summary
assert len(summary["min_workers"]) == 1 and summary["min_workers"][0]["sweep"].count("workers:*") == 1
assert len(summary["calibration"]) == 1
PY
echo "ok"
