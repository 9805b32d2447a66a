# --dry-run on real slow storage (tools/slow-device: an ext4 image on a loop device read with
# O_DIRECT, reads throttled by the kernel's blkio controller to 40 MiB/s): the probe reads past
# the throttle's burst and prices the run at the steady rate, so the estimate is not a fraction
# of the run it stands for. Skipped (77) where the machine cannot make such a device.
source "$(dirname "$0")/lib.bash"
slow=$FEEDBENCH_SOURCE_DIR/tools/slow-device
"$slow" check >/dev/null 2>&1 || skip "$("$slow" check 2>&1 | tail -1)"
trap '"$slow" down "$WORK/slow" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
"$slow" up "$WORK/slow" --size 1G --read-bps 40M >/dev/null
src=$WORK/slow/mnt/src
"$FEEDBENCH" gen --out "$src" --files 600 --file-size 256KiB --layout flat --seed 5 >/dev/null
sync
cat >"$WORK/c.json" <<JSON
{"name": "slow", "dataset": {"source": "$src"}, "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "block_size": "1MiB", "cache_state": "cold"}]}
JSON
expect_exit 0 "$slow" run "$WORK/slow" -- "$FEEDBENCH" run --config "$WORK/c.json" --dry-run
cp "$WORK/out" "$WORK/dry.txt"
expect_exit 0 "$slow" run "$WORK/slow" -- "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/dry.txt" "$WORK/r.json" <<'PY'
import json, re, sys
dry = " ".join(open(sys.argv[1]).read().split())
m = re.search(r"after evicting them \(([0-9.]+) (KiB|MiB|GiB)/s", dry)
assert m, dry
rate = float(m.group(1)) * {"KiB": 1 / 1024, "MiB": 1, "GiB": 1024}[m.group(2)]
# The steady rate of a 40 MiB/s throttle, not its burst.
assert 20 <= rate <= 48, (rate, dry)
est = re.search(r"\(1 x ([0-9.]+)s\)", dry)
assert est, dry
doc = json.load(open(sys.argv[2]))
b = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"][0]
assert not b.get("error_occurred"), b.get("error_message")
actual = b["real_time"] / 1e3
estimated = float(est.group(1))
# 150 MiB at 40 MiB/s: about 3.8 s; the estimate within a third of the round.
assert 0.66 * actual <= estimated <= 1.5 * actual, (estimated, actual, dry)
print(f"probe {rate:.1f} MiB/s; estimated {estimated:.1f} s for a round of {actual:.1f} s")
PY
echo ok
