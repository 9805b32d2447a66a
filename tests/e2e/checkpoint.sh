# The checkpoint family end to end: a small checkpoint (64 MiB, 2 ranks, 2 files a rank) written
# and restored cold on the local disk, its figures sane and its scratch empty after; then, on a
# small tmpfs the test mounts (skipped where mounting is not allowed), the free-space refusal
# (exit 2, nothing written), a restore that eviction cannot make cold (tmpfs: never reported
# cold) and a disk that fills up during the write (the case fails, nothing left behind); and
# Ctrl-C during the write (the run ends on SIGINT, the scratch empty). io_uring and libaio write
# and restore it too, several writes in flight (io_uring passed over where the kernel refuses it).
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

mkdir -p "$WORK/src" "$WORK/scratch"
head -c 65536 /dev/urandom >"$WORK/src/a.bin"
config() {  # config FILE SCRATCH SIZE [EXTRA]: a checkpoint of SIZE over 2 ranks, 2 files each
  cat >"$1" <<JSON
{"name": "e2e-checkpoint", "dataset": {"source": "$WORK/src", "scratch": "$2"},
 "families": [{"family": "checkpoint", "size": "$3", "ranks": 2, "files_per_rank": 2,
               "block_size": "1MiB", "repetitions": 1${4:-}}]}
JSON
}
empty() { [ -z "$(ls -A "$1")" ] || { ls -la "$1"; fail "$1 is not empty: $2"; }; }

# 1. Written, fsync'd, restored cold; the figures add up and the scratch is as it was.
config "$WORK/c.json" "$WORK/scratch" 64MiB
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
expect_in "$WORK/out" "data made at"
# The run's answers say it in training terms: one line, its details indented under it.
expect_in "$WORK/out" "  a 64 MiB checkpoint over 2 ranks takes "
expect_in "$WORK/out" " to restore cold"
expect_in "$WORK/out" "    at one an hour, a blocking checkpoint costs "
grep -q "^  a 64 MiB checkpoint over 2 ranks takes .* to write, .* to restore cold$" "$WORK/out" ||
  { cat "$WORK/out"; fail "the checkpoint's answer is not one line"; }
empty "$WORK/scratch" "after a case"
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
[b] = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert not b.get("error_occurred"), b
x = b["extra"]
mib64 = 64 << 20
assert x["bytes"] == mib64 and x["file_bytes"] == 16 << 20 and x["writer_ranks"] == 2, x
assert x["restore"]["bytes"] == mib64 and x["bytes_read"] == mib64, x
assert x["writes"] == 64, x
assert x["restore"]["resident_after_write"] >= 0, x
assert b["cache"]["achieved"] is True and b["residency_before"] <= 0.01, b["cache"]
for k in ("bytes_per_second", "write_slowest_rank_bytes_per_second", "restore_bytes_per_second",
          "restore_slowest_rank_bytes_per_second", "generation_bytes_per_second", "checkpoint_s",
          "restore_s", "lat_p50_us", "lat_max_us", "blocking_share", "async_bytes_per_second"):
    assert b[k] > 0, (k, b[k])
# The node is at least as fast as its slowest rank; the restore's time is what its rate says.
assert b["bytes_per_second"] >= b["write_slowest_rank_bytes_per_second"] * 0.99, b
assert abs(b["restore_s"] * b["restore_bytes_per_second"] - mib64) < mib64 * 0.01, b
assert 0 <= b["fsync_share"] <= 1, b["fsync_share"]
assert abs(b["async_bytes_per_second"] - mib64 / 3600) < 1, b["async_bytes_per_second"]
a = d["summary"]["answers"]["checkpoint"]
assert a["bytes"] == mib64 and a["ranks"] == 2 and a["interval_s"] == 3600, a
assert abs(a["blocking_share"] - b["checkpoint_s"] / 3600) < 1e-9, (a, b["checkpoint_s"])
PY
# --scratch overrides dataset.scratch: the checkpoint goes there, the config's scratch untouched;
# a missing one is refused before anything is written.
mkdir -p "$WORK/scratch2"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --scratch "$WORK/scratch2" --out "$WORK/rs.json"
python3 -c "import json,sys; [b] = [b for b in json.load(open(sys.argv[1]))['benchmarks'] if b['run_type'] == 'iteration']
assert b['extra']['scratch_folder'].startswith(sys.argv[2] + '/feedbench-checkpoint-'), b['extra']['scratch_folder']" \
  "$WORK/rs.json" "$WORK/scratch2" || fail "--scratch was not where the checkpoint was written"
empty "$WORK/scratch2" "after a case under --scratch"
expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --scratch "$WORK/nowhere" --out "$WORK/rn.json"
expect_in "$WORK/err" "--scratch $WORK/nowhere: does not exist (the checkpoint family writes beneath it)"
[ ! -e "$WORK/rn.json" ] || fail "a refused run wrote its result"
# diff gates it as any other family's: the same result against itself passes.
expect_exit 0 "$FEEDBENCH" diff "$WORK/r.json" "$WORK/r.json"
expect_in "$WORK/out" "restore_bytes_per_second"

# The report draws its chart: write and restore, the node's and the slowest rank's.
expect_exit 0 "$FEEDBENCH" report "$WORK/r.json" --out "$WORK/r.html"
expect_in "$WORK/r.html" "Checkpoint write and restore"
if CHROMIUM=$(command -v chromium || command -v chromium-browser); then
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --no-first-run --disable-dev-shm-usage \
    --user-data-dir="$WORK/chrome" --virtual-time-budget=5000 --dump-dom "file://$WORK/r.html" \
    >"$WORK/r.dom" 2>/dev/null || fail "chromium could not load the report"
  grep -q 'data-report-status="ok 1 charts"' "$WORK/r.dom" || fail "the report did not draw its checkpoint chart"
  grep -q 'data-series="write, node | write, slowest rank | restore, node | restore, slowest rank"' "$WORK/r.dom" ||
    fail "the checkpoint chart lacks its series"
fi

# 1b. io_uring and libaio, 4 writes in flight per rank, O_DIRECT: the same bytes written and
# restored, the case named with its depth. io_uring refused by the kernel is passed over.
for engine in io_uring libaio; do
  config "$WORK/e.json" "$WORK/scratch" 16MiB ", \"engine\": \"$engine\", \"queue_depth\": 4, \"direct\": true"
  rc=0
  "$FEEDBENCH" run --config "$WORK/e.json" --out "$WORK/re.json" >"$WORK/oe" 2>"$WORK/ee" || rc=$?
  empty "$WORK/scratch" "after the $engine case"
  if [ "$engine" = io_uring ] && grep -q "io_uring refused" "$WORK/oe" "$WORK/ee"; then
    echo "io_uring refused here: its case passed over"
    continue
  fi
  [ "$rc" = 0 ] || { cat "$WORK/oe" "$WORK/ee"; fail "the $engine checkpoint should pass, got exit $rc"; }
  python3 - "$WORK/re.json" "$engine" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
[b] = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert not b.get("error_occurred"), b
assert "/engine:%s/qd:4/direct:true/" % sys.argv[2] in b["name"], b["name"]
x = b["extra"]
mib16 = 16 << 20
assert x["bytes"] == mib16 and x["writes"] == 16 and x["restore"]["bytes"] == mib16, x
assert b["cache"]["achieved"] is True, b["cache"]
assert b["bytes_per_second"] > 0 and b["restore_bytes_per_second"] > 0 and b["lat_p50_us"] > 0, b
PY
done

# 2. Ctrl-C during the write: the run ends on SIGINT, and the checkpoint's files are gone.
FEEDBENCH_CHECKPOINT_TEST_DELAY_MS=200 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" \
  >"$WORK/o2" 2>"$WORK/e2" &
pid=$!
for _ in $(seq 1 500); do
  [ -n "$(find "$WORK/scratch" -name '*.bin' 2>/dev/null)" ] && break
  sleep 0.02
done
[ -n "$(find "$WORK/scratch" -name '*.bin')" ] || fail "no checkpoint file appeared"
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/o2" "$WORK/e2"; fail "SIGINT should end the run with 130, got $rc"; }
empty "$WORK/scratch" "after SIGINT"
[ ! -e "$WORK/r2.json" ] || fail "a result written after SIGINT"

# 3. A small file system: the refusal before anything is written, and a disk full mid-write.
MNT=$WORK/mnt
mkdir -p "$MNT"
mount -t tmpfs -o size=40m tmpfs "$MNT" 2>"$WORK/mount.err" ||
  skip "cannot mount a 40 MiB tmpfs for the scratch ($(head -c 200 "$WORK/mount.err")); needs root"
trap 'umount "$MNT" 2>/dev/null; rm -rf "$WORK"' EXIT
config "$WORK/big.json" "$MNT" 64MiB
expect_exit 2 "$FEEDBENCH" run --config "$WORK/big.json" --out "$WORK/r3.json"
expect_in "$WORK/err" "the largest checkpoint of the plan needs 67108864 bytes (64 MiB), the file system has"
expect_in "$WORK/err" "nothing was written"
empty "$MNT" "after the free-space refusal"

# tmpfs cannot evict: the restore would read memory, so it is never reported cold.
config "$WORK/small.json" "$MNT" 8MiB
expect_exit 1 "$FEEDBENCH" run --config "$WORK/small.json" --out "$WORK/r5.json"
expect_in "$WORK/out" "cold not achieved: 100.0% resident before the round"
if grep -q "to restore cold" "$WORK/out"; then cat "$WORK/out"; fail "a restore from memory reported cold"; fi
empty "$MNT" "after a restore that was not cold"

config "$WORK/fits.json" "$MNT" 32MiB
FEEDBENCH_CHECKPOINT_TEST_DELAY_MS=150 "$FEEDBENCH" run --config "$WORK/fits.json" --out "$WORK/r4.json" \
  >"$WORK/o4" 2>"$WORK/e4" &
pid=$!
for _ in $(seq 1 500); do
  [ -n "$(find "$MNT" -name '*.bin' 2>/dev/null)" ] && break
  sleep 0.02
done
dd if=/dev/zero of="$MNT/filler" bs=64k status=none 2>/dev/null || true  # until ENOSPC
rc=0
wait "$pid" || rc=$?
rm -f "$MNT/filler"
[ "$rc" != 0 ] || { cat "$WORK/o4"; fail "a case that could not write its checkpoint should not pass"; }
expect_in "$WORK/o4" "No space left on device"
empty "$MNT" "after the disk filled up"
python3 - "$WORK/r4.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
[b] = [b for b in d["benchmarks"] if b["run_type"] == "iteration"]
assert b.get("error_occurred") and "No space left on device" in b["error_message"], b
PY
echo "ok"
