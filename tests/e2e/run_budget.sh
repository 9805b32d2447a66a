# End to end: runs that fit a budget. Time-based rounds (runtime, ramp_time, steady_state),
# max_bytes, what limited each round in the result, run --budget choosing and refusing, and
# --dry-run's estimate. A sparse file stands for a data set that takes minutes to read.
# Timing checks are wide: the machine may be loaded.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 20 --file-size 64KiB --seed 4 >/dev/null
mkdir -p "$WORK/long"
truncate -s 64G "$WORK/long/big.bin"
before=$(tree_digest "$WORK/src")

config() {  # config NAME SOURCE FAMILY-JSON [DEFAULTS-JSON]
  local defaults='{"repetitions": 2}'
  [ $# -lt 4 ] || defaults=$4
  cat >"$WORK/$1.json" <<JSON
{"name": "$1", "dataset": {"source": "$2"}, "defaults": $defaults,
 "families": [$3]}
JSON
}

# ---- runtime and ramp_time: a cold time-based round is complete, honest and measured --------
config timed "$WORK/long" '{"family": "file_read", "block_size": "64KiB", "cache_state": "cold", "runtime": "1s", "ramp_time": "300ms"}'
expect_exit 0 "$FEEDBENCH" run --config "$WORK/timed.json" --out "$WORK/timed-r.json"
expect_in "$WORK/out" "state:cold/path:source/runtime:1s/ramp:300ms"
expect_in "$WORK/out" "best throughput"
python3 - "$WORK/timed-r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 2, len(its)
for b in its:
    x = b["extra"]
    assert not b.get("error_occurred"), b.get("error_message")
    assert x["limited_by"] == "runtime" and x["time_based"] and x["round_complete"], x
    assert x["runtime_s"] == 1 and x["runtime_from"] == "config" and x["ramp_time_s"] == 0.3, x
    assert 1000 <= b["real_time"] < 60000, b["real_time"]           # ms: at least the runtime
    assert 0 < x["bytes"] < x["selection_bytes"], x
    assert x["ramp_bytes"] > 0 and x["ramp_elapsed_s"] >= 0.3, x
    assert b["latency_hist"]["count"] == x["reads"], "the ramp's reads are not in the histogram"
    # bytes_per_second is the measured bytes over the measured time, ramp excluded
    assert abs(b["bytes_per_second"] - x["bytes"] / (b["real_time"] / 1e3)) <= 0.02 * b["bytes_per_second"], b
    c = b["cache"]
    assert c["requested"] == "cold" and c["achieved"] and c["residency_before"] <= 0.01, c
# Not excluded as a short round: the summary's figure is this case's.
assert doc["summary"], doc["summary"]
print("time-based rounds ok")
PY

# ---- max_bytes: a prefix, rounded up to a block; a runtime the selection ends before --------
config capped "$WORK/src" '{"family": "file_read", "block_size": "64KiB", "cache_state": "warm", "max_bytes": "300KiB"},
  {"family": "file_read", "block_size": "64KiB", "cache_state": "warm", "runtime": "10min"}'
start=$(date +%s)
expect_exit 0 "$FEEDBENCH" run --config "$WORK/capped.json" --out "$WORK/capped-r.json"
[ $(( $(date +%s) - start )) -lt 300 ] || fail "a 10min runtime over a small selection must end with the selection"
python3 - "$WORK/capped-r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for b in (b for b in doc["benchmarks"] if b["run_type"] == "iteration"):
    x = b["extra"]
    if "max_bytes" in b["case"]:
        assert x["limited_by"] == "max_bytes" and x["bytes"] == 5 * 65536 and x["max_bytes"] == 300 * 1024, x
    else:
        assert x["limited_by"] == "end_of_selection" and x["bytes"] == x["selection_bytes"], x
    assert x["round_complete"], x
print("max_bytes ok")
PY

# ---- steady_state: a criterion every window meets ends the round early ------------------------
config steady "$WORK/long" '{"family": "file_read", "cache_state": "cold", "runtime": "60s",
  "steady_state": {"metric": "bw", "mode": "spread", "limit": "1000%", "window": "500ms"}}' '{"repetitions": 1}'
expect_exit 0 "$FEEDBENCH" run --config "$WORK/steady.json" --out "$WORK/steady-r.json"
python3 - "$WORK/steady-r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
[b] = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
x = b["extra"]
assert x["steady_state"]["reached"] and x["steady_state"]["criterion"] == "bw_spread:1000%:500ms", x
assert x["limited_by"] == "steady_state", x
assert 0.5 <= x["steady_state"]["reached_after_s"] < 60 and x["steady_state"]["samples"] >= 10, x
assert b["real_time"] < 60000, b["real_time"]
print("steady state ok")
PY

# ---- ramp_time alone is refused where it is written ---------------------------------------------
config bad "$WORK/src" '{"family": "file_read", "ramp_time": "1s"}'
expect_exit 2 "$FEEDBENCH" run --config "$WORK/bad.json" --out "$WORK/bad-r.json"
expect_in "$WORK/err" "/families/0/ramp_time: expected runtime as well"
[ ! -e "$WORK/bad-r.json" ] || fail "a refused config wrote a result"

# ---- --dry-run: an estimate from a probe, nothing written -------------------------------------
config whole "$WORK/long" '{"family": "file_read", "cache_state": "cold"}' '{"repetitions": 5}'
expect_exit 0 "$FEEDBENCH" run --config "$WORK/whole.json" --dry-run --out "$WORK/whole-dry.json"
expect_in "$WORK/out" "estimated duration: "
expect_in "$WORK/out" "(probe: source: random 4 KiB reads took "
expect_in "$WORK/out" "  file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source  (5 x "
[ ! -e "$WORK/whole-dry.json" ] || fail "--dry-run wrote a result"

# ---- --budget refuses what cannot fit, in the run and in --dry-run alike ----------------------
expect_exit 2 "$FEEDBENCH" run --config "$WORK/whole.json" --budget 2s --out "$WORK/refused.json"
[ "$(wc -l <"$WORK/err")" = 1 ] || fail "one line expected: $(cat "$WORK/err")"
expect_in "$WORK/err" "feedbench run: --budget 2s: the plan cannot fit: it needs at least "
run_line=$(sed 's/needs at least .*//' "$WORK/err")
[ ! -e "$WORK/refused.json" ] || fail "a refused budget wrote a result"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/whole.json" --budget 2s --dry-run
[ "$(sed 's/needs at least .*//' "$WORK/err")" = "$run_line" ] || fail "--dry-run and run refuse differently"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/whole.json" --budget soon
expect_in "$WORK/err" "--budget: expected a duration such as 20m, 90s or 1.5h, got 'soon'"

# ---- a probe that cannot read: --dry-run says the estimate is unknown, --budget is a run error
mkdir -p "$WORK/empty-files" && touch "$WORK/empty-files/a" "$WORK/empty-files/b"
config hollow "$WORK/empty-files" '{"family": "file_read"}'
expect_exit 0 "$FEEDBENCH" run --config "$WORK/hollow.json" --dry-run
expect_in "$WORK/out" "estimated duration: unknown (probing the source path: the probe read nothing (empty files))"
expect_in "$WORK/out" "  file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source"
expect_exit 1 "$FEEDBENCH" run --config "$WORK/hollow.json" --budget 1m --out "$WORK/hollow-r.json"
expect_in "$WORK/err" "--budget 1m: cannot estimate the run: probing the source path: the probe read nothing"
[ ! -e "$WORK/hollow-r.json" ] || fail "a run that could not be estimated wrote a result"

# ---- --budget fits: fewer repetitions and a runtime, said before and recorded ------------------
start=$(date +%s)
expect_exit 0 "$FEEDBENCH" run --config "$WORK/whole.json" --budget 15s --out "$WORK/budget-r.json"
took=$(( $(date +%s) - start ))
expect_in "$WORK/out" "budget 15s: chose the repetitions and runtimes below; estimated "
expect_in "$WORK/out" "state:cold/path:source: 3 repetitions, runtime "
[ "$took" -lt 120 ] || fail "a 15s budget took ${took}s"
python3 - "$WORK/budget-r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 3, len(its)
for b in its:
    x = b["extra"]
    assert x["runtime_from"] == "--budget" and x["limited_by"] == "runtime" and x["round_complete"], x
    assert 1 <= x["runtime_s"] <= 15, x
assert doc["config"]["budget"]["budget_s"] == 15, doc["config"]["budget"]
print("budget ok")
PY

[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the source data set changed"
echo "ok"
