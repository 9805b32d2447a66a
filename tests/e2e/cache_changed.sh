#!/usr/bin/env bash
# Nothing measured is never a success, also mid-run. A cache changed while a run reads it (here
# `stage --prune` of a narrower selection removes most of it, after the run verified it and
# before its first case) is looked at again when the cases end: the run exits 1, saying what
# changed, and its result says `verified: false` with the problems. A run whose every case was
# skipped or excluded (files cut short: every round short) exits 1 as well, naming why.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 16 --file-size 32KiB --layout classes --classes 4 --seed 6 >/dev/null
stage_all() { "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --prune >/dev/null 2>&1 || fail "stage"; }
stage_all
cat >"$WORK/c.json" <<JSON
{"name": "e2e-cache-changed", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
 "defaults": {"repetitions": 1, "seed": 5, "engine": "psync"},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "warm",
               "path": ["source", "cache"]}]}
JSON

# run_while CHANGE OUT ARGS...: starts the run (it sleeps before its first case), runs CHANGE
# once it has said which cache it measures, then waits; its exit code in $rc.
run_while() {
  local change=$1 out=$2
  shift 2
  FEEDBENCH_RUN_TEST_DELAY_MS=3000 "$FEEDBENCH" run --config "$WORK/c.json" --out "$out" "$@" \
    >"$WORK/out" 2>"$WORK/err" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q "^cache: label" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
  grep -q "^cache: label" "$WORK/out" || { cat "$WORK/out" "$WORK/err"; fail "the run did not start"; }
  "$change"
  rc=0
  wait $pid || rc=$?
}
prune_most() {
  "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_000/**' --prune >/dev/null 2>&1 ||
    fail "stage --prune"
}

# 1. The cache pruned under a run of both paths: the source case still measures, the run fails.
run_while prune_most "$WORK/r1.json"
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 1 for a cache pruned during the run, got $rc"; }
expect_in "$WORK/err" "the cache $WORK/cache changed during the run (12 problems"
expect_in "$WORK/err" "removed during the run: class_001/"
python3 - "$WORK/r1.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["dataset"]["cache"]
assert c["verified"] is False, c
v = c["verification"]
assert v["ok"] is True and v["files_checked"] == 16, v  # as it was before the first case
after = c["verification_after_run"]
assert after["ok"] is False and after["method"] == "listing+sizes+mtimes", after
assert after["files_checked"] == 16, after
assert sum(p.startswith("removed during the run: ") for p in after["problems"]) == 12, after
PY

# 2. Only the cache measured: every case skipped or excluded is nothing measured, exit 1.
stage_all
run_while prune_most "$WORK/r2.json" --benchmark_filter=path:cache
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 1 when nothing was measured, got $rc"; }
expect_in "$WORK/err" "feedbench run: nothing measured:"
expect_in "$WORK/err" "changed during the run"
python3 -c "
import json
c = json.load(open('$WORK/r2.json'))['dataset']['cache']
assert c['verified'] is False, c
"

# 3. Every cache file cut short under the run: each round reads less than planned, so every
#    repetition is excluded: nothing measured, exit 1, and the cache changed.
stage_all
cut_short() { find "$WORK/cache" -name '*.bin' -exec truncate -s 1000 {} +; }
run_while cut_short "$WORK/r3.json" --benchmark_filter=path:cache
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 1 when every repetition was excluded, got $rc"; }
expect_in "$WORK/err" "nothing measured: every case was skipped or excluded (1 case; the result file records why): short round"
expect_in "$WORK/err" "size changed during the run: class_000/img_000000.bin (1000 bytes, 32768 before)"
rm -rf "$WORK/cache"

# 4. A cache left alone: verified before and after, exit 0.
stage_all
unchanged() { :; }
run_while unchanged "$WORK/r4.json"
[ "$rc" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 0 for a cache left alone, got $rc"; }
python3 -c "
import json
c = json.load(open('$WORK/r4.json'))['dataset']['cache']
assert c['verified'] is True and c['verification_after_run']['ok'] is True, c
"
echo ok
