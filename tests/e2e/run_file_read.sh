# End to end: gen a small data set, run a file_read config, read the console output and the
# result file; the source data set is byte-identical afterwards.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 24 --file-size 64KiB --layout classes --classes 3 --seed 3 >/dev/null
before=$(tree_digest "$WORK/src")

cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-file-read",
  "dataset": {"source": "\${E2E_SOURCE}"},
  "defaults": {"repetitions": 2, "seed": 5},
  "families": [
    {"family": "file_read", "pattern": ["sequential", "random", "shuffled_files"],
     "block_size": "16KiB", "engine": "psync", "workers": [1, 2], "cache_state": ["cold", "warm"]},
    {"family": "file_read", "pattern": "random", "block_size": "4KiB", "engine": ["libaio", "io_uring"],
     "queue_depth": 8, "cache_state": "direct"},
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "engine": "mmap", "cache_state": "warm"}
  ]
}
JSON

E2E_SOURCE=$WORK/src expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --csv "$WORK/r.csv"
# A line per case under its family's header; the result file keeps the full names (below).
expect_in "$WORK/out" "file_read /families/0: 16KiB psync qd1 source; 2 repetitions (12 cases)"
grep -Eq '^  rand +w2 cold +[0-9.]+ [KMG]?i?B/s ' "$WORK/out" || { cat "$WORK/out"; fail "no line for rand w2 cold"; }
expect_in "$WORK/out" "result: $WORK/r.json"
expect_in "$WORK/out" "source"

python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "feedbench-result/1", doc["schema"]
its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
names = {b["case"] for b in its}
assert len(names) == 12 + 2 + 1, sorted(names)
for b in its:
    if b.get("error_occurred"):
        # io_uring may be refused by a sandbox: then the reason is recorded, never a crash.
        assert b["error_message"], b
        continue
    for k in ["bytes_per_second", "items_per_second", "files_per_second", "lat_p50_us", "lat_p90_us",
              "lat_p99_us", "lat_p999_us", "lat_max_us", "residency_before", "cpu_util"]:
        assert isinstance(b[k], (int, float)), (b["case"], k)
    assert b["bytes_per_second"] > 0
    assert b["lat_p50_us"] <= b["lat_p99_us"] <= b["lat_max_us"] * 1.01 + 1e-9, b
    c = b["cache"]
    assert c["requested"] == b["params"]["cache_state"]
    if c["requested"] == "cold" and c["achieved"]:
        assert c["residency_before"] <= 0.01
    if c["requested"] == "warm" and c["achieved"]:
        assert c["residency_before"] >= 0.99
    assert b["latency_hist"]["count"] > 0
    assert b["params"]["family"] == "file_read"
# sequential/shuffled reads the whole selection once per round
seq = [b for b in its if b["params"]["pattern"] != "random" and not b.get("error_occurred")]
total = doc["dataset"]["source"]["bytes"]
for b in seq:
    assert b["extra"]["bytes"] == total, (b["case"], b["extra"]["bytes"], total)
print("result file ok:", len(its), "runs")
PY
head -1 "$WORK/r.csv" | grep -q '^case,' || fail "CSV header"

# Google Benchmark's own flags keep working.
E2E_SOURCE=$WORK/src expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" \
  --benchmark_filter='engine:mmap' --benchmark_repetitions=1 --benchmark_format=json \
  --benchmark_out="$WORK/gb-out.json"
python3 -c "
import json,sys
d=json.load(open('$WORK/r2.json'))
its=[b for b in d['benchmarks'] if b['run_type']=='iteration']
assert len(its)==1 and 'engine:mmap' in its[0]['case'], [b['case'] for b in its]
"
# stdout is that JSON alone (feedbench's own lines went to stderr); --benchmark_out wrote its file.
python3 -c "
import json
for f in ['$WORK/out', '$WORK/gb-out.json']:
    d = json.load(open(f))
    assert [b for b in d['benchmarks'] if 'engine:mmap' in b['name']], f
" || fail "--benchmark_format=json / --benchmark_out= did not give clean JSON"
expect_in "$WORK/err" "result: $WORK/r2.json"

[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"
echo "ok"
