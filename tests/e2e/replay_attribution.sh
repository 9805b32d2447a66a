# feedbench replay says where the bytes it read came from by asking the page cache about each
# file before reading it, not by the block device's count: a replay of two epochs from a cold
# cache, while another program reads another file of the same device with O_DIRECT (the device
# then counts far more than the replay read), attributes its warm second epoch to the page cache,
# its cold first one to the device, and says the device's count only as a bound.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
"$FEEDBENCH" gen --out "$WORK/data" --files 160 --file-size 32KiB --layout flat --seed 5 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"

# One pass of 40 batches of 4 files (5 MiB) on 2 workers, a 20 ms step after each batch but the
# last: an epoch of about 0.8 s, in which the other reader below reads far more than 5 MiB.
$PY "$FEEDBENCH_SOURCE_DIR/tests/e2e/replay_trace.py" "$WORK/data" "$WORK/t.trace.json" --batch 4 --step-ms 20

# Another program on the same device: O_DIRECT reads of a 64 MiB file of its own, over and over,
# so every one of them reaches the device while the replay runs.
dd if=/dev/urandom of="$WORK/other.bin" bs=1M count=64 status=none
sync "$WORK/other.bin"
dd if="$WORK/other.bin" of=/dev/null bs=1M iflag=direct status=none 2>/dev/null \
  || skip "O_DIRECT reads refused where the test works ($WORK)"
# It stops at the end of its current 16 MiB once the replay is done (no process left behind).
(while [ ! -e "$WORK/stop" ]; do
  dd if="$WORK/other.bin" of=/dev/null bs=1M count=16 iflag=direct status=none
done) &
reader=$!
trap 'touch "$WORK/stop"; wait $reader 2>/dev/null || true; rm -rf "$WORK"' EXIT
expect_exit 0 "$FEEDBENCH" replay "$WORK/t.trace.json" --set epochs=2 --out "$WORK/r.json"
touch "$WORK/stop"
wait $reader
cp "$WORK/out" "$WORK/console"
rc=0
$PY - "$WORK/r.json" <<'PY' || rc=$?
import json, sys
(rep,) = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
x = rep["extra"]
if x.get("devices") is None:
    sys.exit(77)
cold, warm = x["epochs"]
for e in (cold, warm):
    print("epoch %d: read %d bytes, %d found in the page cache, the device counted %d; %s"
          % (e["epoch"], e["read_bytes"], e["resident_read_bytes"], e["device_bytes"], e["limit"]["text"]))
    assert e["limit"]["memory_share_from"] == "residency", e["limit"]
# The other reader made the device count more than the replay read: by that count the warm
# epoch would have read nothing from memory.
assert warm["device_bytes"] > warm["read_bytes"], warm
assert warm["resident_read_bytes"] == warm["read_bytes"], warm
assert warm["limit"]["memory_share"] == 1.0 and warm["limit"]["by"] in ("page_cache", "storage"), warm["limit"]
assert "other programs' reads included" in warm["limit"]["text"], warm["limit"]["text"]
# The cold epoch (evicted before it) read its files from the device.
assert cold["resident_read_bytes"] <= cold["read_bytes"] * 0.05, cold
assert cold["limit"]["memory_share"] <= 0.05, cold["limit"]
assert x["resident_read_bytes"] == cold["resident_read_bytes"] + warm["resident_read_bytes"], x
PY
[ "$rc" = 77 ] && skip "no block device counted under the work folder ($WORK)"
[ "$rc" = 0 ] || fail "the replay's attribution"
expect_in "$WORK/console" "other programs' reads included"
