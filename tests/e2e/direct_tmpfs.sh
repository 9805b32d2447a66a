# O_DIRECT on a file system without a device (tmpfs): newer kernels accept it, but the reads
# are served from memory. The case says so (label, extra.direct_reaches_device false) and the
# summary does not fold it into a figure as if a device had been measured.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

[ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] || skip "no tmpfs at /dev/shm"
SHM=$(mktemp -d /dev/shm/feedbench-e2e-XXXXXX)
trap 'rm -rf "$WORK" "$SHM"' EXIT
"$FEEDBENCH" gen --out "$SHM/src" --files 8 --file-size 64KiB --layout flat --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-direct-tmpfs",
  "dataset": {"source": "$SHM/src"},
  "defaults": {"repetitions": 2, "seed": 5, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "direct",
     "path": "source"}
  ]
}
JSON
rc=0
"$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" >"$WORK/out" 2>"$WORK/err" || rc=$?
if grep -q "O_DIRECT.*refused\|O_DIRECT not supported" "$WORK/out" "$WORK/err"; then
  skip "this kernel's tmpfs refuses O_DIRECT (before Linux 6.6): nothing to flag"
fi
expect_in "$WORK/out" "excluded (repetition 0: direct requested, served from memory"
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 2, [b["name"] for b in its]
for b in its:
    assert not b.get("error_occurred"), b
    assert b["extra"]["direct_reaches_device"] is False, b["extra"]
    assert "direct requested, served from memory (tmpfs)" in b["label"], b["label"]
PY
# The run's summary names the exclusion instead of quoting a device figure.
sed -n '/^Summary/,$p' "$WORK/out" >"$WORK/summary"
cat "$WORK/summary"
expect_in "$WORK/summary" "served from memory"
if grep -E "source +direct +[0-9.]+ [KMG]i?B/s" "$WORK/summary"; then fail "the summary quotes a tmpfs figure"; fi
echo "rc=$rc"
echo "PASS"
