# The method's answers in a real run: the sizing rule (a selection smaller than memory is said,
# once, and kept in the summary), the knee of a worker sweep, the cache label in run's header,
# report and diff, and diff naming a changed shuffle seed and label instead of only a hash.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 12 --file-size 64KiB --layout flat --seed 4 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label data-v1 >/dev/null 2>&1 || fail "stage"
cat > "$WORK/m.json" <<JSON
{"name": "m", "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
 "defaults": {"repetitions": 3, "seed": 42},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "64KiB",
               "workers": [1, 2], "cache_state": ["cold", "warm"], "path": ["source", "cache"]}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/m.json" --out "$WORK/a.json" --markdown "$WORK/a.md" --quiet
expect_in "$WORK/out" "cache: label data-v1, every file, staged "
expect_in "$WORK/out" "sizing: the selection (768 KiB) is smaller than this machine's memory"
expect_in "$WORK/out" "cold rounds rely on per-file eviction"
expect_in "$WORK/out" "more workers, deeper queues (knee: the smallest count within 5% of the best):"
expect_in "$WORK/out" "cold vs warm, sequential 64 KiB psync 1 worker source: warm was"
expect_in "$WORK/out" "source vs cache, sequential 64 KiB psync 1 worker cold: cache path was"
[ "$(grep -c '^sizing: ' "$WORK/out")" = 1 ] || fail "the sizing line is printed once before the cases"
python3 - "$WORK/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert s["sizing"]["smaller_than_memory"] is True and "eviction" in s["sizing"]["note"], s["sizing"]
assert any(x["parameter"] == "workers" for x in s["file_read"]["scaling"]), s["file_read"].keys()
assert d["config"]["seed"] == 42 and d["config"]["selection"] == {"include": [], "from": "config"}
assert d["dataset"]["source"]["file_size"]["p50"] == 65536
PY

# Another seed and another data version: named, one line each, with the label shown.
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --label data-v2 >/dev/null 2>&1 || fail "restage"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/m.json" --out "$WORK/b.json" --quiet --set seed=43
"$FEEDBENCH" diff "$WORK/a.json" "$WORK/b.json" --threshold 1000 >"$WORK/diff" 2>&1 || true
expect_in "$WORK/diff" "cache label: BASE \"data-v1\", NEW \"data-v2\""
expect_in "$WORK/diff" "warning: shuffle seed differs: 42 → 43: access order changed"
expect_in "$WORK/diff" "warning: manifest label differs: \"data-v1\" → \"data-v2\": the cache holds another data version"
expect_in "$WORK/a.md" "manifest label \`data-v1\`"
"$FEEDBENCH" report "$WORK/a.json" --out "$WORK/a.html" >/dev/null 2>&1 || fail "report html"
expect_in "$WORK/a.html" "cache label data-v1"
echo ok
