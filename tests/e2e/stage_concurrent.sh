# Two runs sharing a cache must not trip over each other: the stage family's scratch stagings
# (folders named *.fbtmp inside the cache root) are never walked by another run's scan, never
# read by its path:cache cases, and never touched by a `stage` of the cache meanwhile.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 120 --file-size 8KiB --layout classes --classes 4 --seed 9 >/dev/null
C=$WORK/cache
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$C"
cache_before=$(tree_digest "$C")

cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-stage-concurrent",
  "dataset": {"source": "\${E2E_SOURCE}", "cache": "\${E2E_CACHE}"},
  "defaults": {"repetitions": 2, "seed": 5},
  "families": [
    {"family": "stage", "workers": 1, "cache_state": "warm", "verify": false},
    {"family": "file_read", "pattern": "shuffled_files", "block_size": "8KiB", "engine": "psync",
     "workers": 1, "cache_state": "warm", "path": "cache"}
  ]
}
JSON
export E2E_SOURCE=$WORK/src E2E_CACHE=$C

# Run A stages slowly (a pause after each file), so its scratch folder is there when B scans.
FEEDBENCH_STAGE_TEST_DELAY_MS=20 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/a.json" \
  >"$WORK/a.out" 2>&1 &
a=$!
trap 'kill "$a" 2>/dev/null || true; rm -rf "$WORK"' EXIT
for _ in $(seq 1 400); do
  ls -d "$C"/.feedbench-stage-bench-*.fbtmp >/dev/null 2>&1 && break
  sleep 0.05
done
ls -d "$C"/.feedbench-stage-bench-*.fbtmp >/dev/null 2>&1 || fail "run A made no scratch folder"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/b.json"
cp "$WORK/out" "$WORK/b.out"
# A stage of the same cache meanwhile keeps it as it is and leaves the scratch folders alone.
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$C"
expect_in "$WORK/out" "removed 0"
rc=0
wait "$a" || rc=$?
[ "$rc" = 0 ] || { cat "$WORK/a.out"; fail "run A failed (exit $rc)"; }

python3 - "$WORK/a.json" "$WORK/b.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    doc = json.load(open(path))
    its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
    assert its, path
    for b in its:
        assert not b.get("error_occurred"), (path, b["name"], b.get("error_message"))
PY
ls -d "$C"/*.fbtmp 2>/dev/null && fail "scratch folders left behind"
[ "$(tree_digest "$C")" = "$cache_before" ] || fail "the cache changed"
echo "PASS"
