# Threads the system refuses (a container's pids limit; here RLIMIT_NPROC for an unprivileged
# user, which root ignores): no "terminate called". A run skips the case naming the worker it
# could not start and goes on; stage fails cleanly (exit 1, no manifest, no temporaries).
# FEEDBENCH_TEST_THREAD_LIMIT (a test hook) gives the exact message without privileges.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 12 --file-size 64KiB --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-threads",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1, "seed": 5, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "cache_state": "warm",
     "workers": [1, 8], "path": "source"},
    {"family": "loader", "batch_size": 2, "workers": 8, "step_time": "1ms", "steps": 3,
     "cache_state": "warm", "path": "source"}
  ]
}
JSON

# 0. The scan's helper threads are optional: with every thread refused it reads the folders on
# the calling thread and finds every file.
expect_exit 0 env FEEDBENCH_TEST_THREAD_LIMIT=0 "$FEEDBENCH" run --config "$WORK/c.json" --dry-run
expect_in "$WORK/out" "source: 12 files"

# 1. The hook: the 4th thread is refused. The 1-worker case runs; the others are skipped.
# One scan thread, so the hook's count is the workers' (the scan would take the first three).
expect_exit 0 env FEEDBENCH_TEST_THREAD_LIMIT=3 FEEDBENCH_SCAN_THREADS=1 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r1.json"
python3 - "$WORK/r1.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = {b["name"].split("/iterations")[0]: b for b in d["benchmarks"] if b["run_type"] == "iteration"}
one = [b for n, b in its.items() if "file_read" in n and "workers:1/" in n]
eight = [b for n, b in its.items() if "file_read" in n and "workers:8/" in n]
loader = [b for n, b in its.items() if n.startswith("loader")]
assert len(one) == 1 and not one[0].get("error_occurred"), one
assert len(eight) == 1 and eight[0]["error_occurred"], eight
m = eight[0]["error_message"]
assert m.startswith("cannot start worker ") and " of 8: Resource temporarily unavailable" in m, m
assert len(loader) == 1 and loader[0]["error_occurred"], loader
m = loader[0]["error_message"]
assert m.startswith("cannot start ") and "Resource temporarily unavailable" in m, m
PY

# 2. stage with the hook: exit 1, the worker named, nothing left behind.
C=$WORK/cache
expect_exit 1 env FEEDBENCH_TEST_THREAD_LIMIT=0 "$FEEDBENCH" stage --from "$WORK/src" --to "$C" --workers 4
expect_in "$WORK/err" "cannot start worker 1 of 4: Resource temporarily unavailable"
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after the refusal"
[ -z "$(find "$C" -name '*.bin*' 2>/dev/null)" ] || fail "files left after the refusal"

# 3. The real limit, as an unprivileged user: 6 processes and threads in all.
[ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && command -v prlimit >/dev/null ||
  skip "needs root, setpriv and prlimit to run as nobody under RLIMIT_NPROC"
[ -z "$(ps -u 65534 -o pid= 2>/dev/null)" ] || skip "processes of uid 65534 count against its limit"
chmod 755 "$WORK"
chmod -R a+rX "$WORK/src"
mkdir -m 777 "$WORK/out.d" "$WORK/cache2"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups prlimit --nproc=6 "$@"; }
sed 's/"workers": \[1, 8\]/"workers": [1, 16]/' "$WORK/c.json" >"$WORK/c16.json"
chmod 644 "$WORK/c16.json"
expect_exit 0 as_nobody "$FEEDBENCH" run --config "$WORK/c16.json" --out "$WORK/out.d/r2.json"
grep -q "terminate called" "$WORK/err" && fail "terminate called"
python3 - "$WORK/out.d/r2.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = [b for b in d["benchmarks"] if b["run_type"] == "iteration" and "workers:16/" in b["name"]]
assert len(its) == 1 and its[0]["error_occurred"], its
assert "of 16: Resource temporarily unavailable" in its[0]["error_message"], its[0]
PY
expect_exit 1 as_nobody "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache2" --workers 16
expect_in "$WORK/err" "cannot start worker "
expect_in "$WORK/err" ": Resource temporarily unavailable"
[ ! -e "$WORK/cache2/feedbench-manifest.json" ] || fail "a manifest after the refusal"
[ -z "$(find "$WORK/cache2" -name '*.bin.fbtmp')" ] || fail "temporaries left after the refusal"
echo "PASS"
