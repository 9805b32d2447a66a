# Files that change between the scan and the read. A file replaced by a FIFO would block a
# plain open() forever (no writer ever comes, and Ctrl-C only sets a flag): run and stage must
# refuse it by name and end. A file deleted before cold/warm preparation skips that case with
# the reason; the other cases still run.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 12 --file-size 64KiB --layout classes --classes 2 --seed 4 >/dev/null
"$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" >/dev/null 2>&1 || fail "stage"
cp -a "$WORK/src" "$WORK/src.good"
restore_src() { rm -rf "$WORK/src"; cp -a "$WORK/src.good" "$WORK/src"; }
first=$(cd "$WORK/src" && find . -name '*.bin' | sort | head -1 | cut -c3-)
last=$(cd "$WORK/src" && find . -name '*.bin' | sort | tail -1 | cut -c3-)

cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-changed-files",
  "dataset": {"source": "$WORK/src", "cache": "$WORK/cache"},
  "defaults": {"repetitions": 1, "seed": 5, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB",
     "cache_state": ["cold", "warm"], "path": ["source", "cache"]}
  ]
}
JSON

# run_with_change CHANGE OUT: starts a run that pauses after the scan, applies CHANGE to the
# source, and waits at most 60 s for the run. Sets $rc.
run_with_change() {
  rc=0
  FEEDBENCH_RUN_TEST_DELAY_MS=2000 timeout 60 "$FEEDBENCH" run --config "$WORK/c.json" --out "$2" \
    >"$WORK/out" 2>"$WORK/err" &
  local pid=$!
  for _ in $(seq 1 100); do grep -q "^source" "$WORK/out" 2>/dev/null && break; sleep 0.1; done
  $1
  wait $pid || rc=$?
  [ "$rc" != 124 ] || { cat "$WORK/out" "$WORK/err"; fail "the run hung (killed by timeout)"; }
}

# 1. A source file replaced by a FIFO: the source cases are skipped naming it; cache cases run.
to_fifo() { rm "$WORK/src/$first"; mkfifo "$WORK/src/$first"; }
run_with_change to_fifo "$WORK/r1.json"
[ "$rc" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 0 (cache cases measured), got $rc"; }
python3 - "$WORK/r1.json" "$WORK/src/$first" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
src = [b for b in its if "path:source" in b["name"]]
cache = [b for b in its if "path:cache" in b["name"]]
assert len(src) == 2 and len(cache) == 2, [b["name"] for b in its]
for b in src:
    assert b["error_occurred"], b
    m = b["error_message"]
    assert sys.argv[2] in m and "a FIFO, not a regular file" in m, m
for b in cache:
    assert not b.get("error_occurred"), b
PY
restore_src

# 2. A source file deleted after the scan: cold and warm preparation skip their case naming it.
remove_one() { rm "$WORK/src/$first"; }
run_with_change remove_one "$WORK/r2.json"
[ "$rc" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 0 (cache cases measured), got $rc"; }
python3 - "$WORK/r2.json" "$first" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
src = [b for b in its if "path:source" in b["name"]]
assert len(src) == 2, [b["name"] for b in its]
for b in src:
    m = b["error_message"]
    assert b["error_occurred"] and "preparing the" in m and sys.argv[2] in m and "No such file" in m, m
PY
restore_src

# 3. stage: a source file replaced by a FIFO after the scan is refused by name; exit 1, no
#    manifest, no temporaries; it does not hang.
C=$WORK/cache2
FEEDBENCH_STAGE_TEST_DELAY_MS=200 timeout 60 "$FEEDBENCH" stage --from "$WORK/src" --to "$C" \
  --workers 1 >"$WORK/o" 2>"$WORK/e" &
pid=$!
for _ in $(seq 1 400); do [ -n "$(find "$C" -name '*.bin' 2>/dev/null)" ] && break; sleep 0.02; done
rm "$WORK/src/$last"; mkfifo "$WORK/src/$last"
rc=0
wait $pid || rc=$?
[ "$rc" != 124 ] || { cat "$WORK/o" "$WORK/e"; fail "stage hung on a FIFO (killed by timeout)"; }
[ "$rc" = 1 ] || { cat "$WORK/o" "$WORK/e"; fail "stage with a FIFO should exit 1, got $rc"; }
expect_in "$WORK/e" "$WORK/src/$last is a FIFO, not a regular file"
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after the refusal"
left=$(find "$C" -name '*.bin.fbtmp')
[ -z "$left" ] || { cat "$WORK/e"; fail "temporary files left behind: $left"; }
restore_src

echo "PASS"
