#!/usr/bin/env bash
# feedbench qualify against real slow storage (tools/slow-device: a loop device whose reads the
# kernel's blkio controller throttles), qualify inside the throttle's cgroup: the tokens workload
# at 20 times the profile's speed asks 640 KiB/s of the store per accelerator, so the first
# epoch (cold, every file evicted) is the store's to limit: the card names the store, and the K
# it finds scales with the throttle's rate (three times the rate, about three times the accelerators); the
# steady state, served from the page cache, is not the store's.
source "$(dirname "$0")/lib.bash"
SLOW="$FEEDBENCH_SOURCE_DIR/tools/slow-device"
reason=$("$SLOW" check 2>&1) || skip "$reason"
trap '"$SLOW" down "$WORK/slow" || true; rm -rf "$WORK"' EXIT
"$SLOW" up "$WORK/slow" --size 256M --read-bps 2M >/dev/null
source "$WORK/slow/env" # CGROUP, DEVICE (MAJ:MIN)
mkdir "$WORK/slow/mnt/store"

# qualify_at RATE CARD: sets the cgroup's read throttle to RATE bytes/s, then qualifies (the
# data set kept, so the second rate reads the same files).
qualify_at() {
  echo "$DEVICE $1" >"$CGROUP/blkio.throttle.read_bps_device"
  expect_exit 0 "$SLOW" run "$WORK/slow" -- "$FEEDBENCH" qualify --store "$WORK/slow/mnt/store" --workload tokens \
    --speedup 20 --max-accelerators 16 --keep --budget 10min --checkpoint-scale 0 --out "$2"
}
# cold_fed CARD: the store's cold cell, "FED|LIMIT".
cold_fed() {
  /usr/bin/python3 -c '
import json, sys
(w,) = json.load(open(sys.argv[1]))["workloads"]
cells = {(c["path"], c["state"]): c for c in w["paths"]}
cold, steady = cells[("store", "cold")], cells[("store", "steady")]
assert not steady["limit"].startswith("the store"), steady["limit"]
print("%s|%s" % (cold["accelerators_fed"], cold["limit"]))' "$1"
}

qualify_at $((2 * 1024 * 1024)) "$WORK/slow.json"
IFS='|' read -r fed_slow limit_slow <<<"$(cold_fed "$WORK/slow.json")"
qualify_at $((6 * 1024 * 1024)) "$WORK/fast.json"
IFS='|' read -r fed_fast limit_fast <<<"$(cold_fed "$WORK/fast.json")"
echo "cold: $fed_slow accelerators at 2 MiB/s ($limit_slow), $fed_fast at 6 MiB/s ($limit_fast)"
[[ "$limit_slow" == "the store's reads: "* ]] || fail "the slow store's cold limit: $limit_slow"
/usr/bin/python3 -c '
import sys
slow, fast = float(sys.argv[1]), float(sys.argv[2])
# 2 MiB/s at 640 KiB/s each: about 3; three times the rate, about three times as many (each K a
# whole number, with the warm-up reads and the throttle bursts besides: 1.8 to 4.5 times).
assert 1 <= slow <= 4, slow
assert 1.8 <= fast / slow <= 4.5, (slow, fast)' "$fed_slow" "$fed_fast" ||
  fail "K does not scale with the store's rate: $fed_slow at 2 MiB/s, $fed_fast at 6 MiB/s"
echo "qualify on a slow device: ok"
