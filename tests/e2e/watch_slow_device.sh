# feedbench watch on a real PyTorch job (tests/e2e/watch_job.py) reading real slow storage
# (tools/slow-device: a loop device whose reads the blkio controller throttles), the job and
# watch inside the throttle's cgroup: a small step against cold throttled reads is storage-bound
# (and the device did serve the data set), four workers burning CPU on page-cached files on two
# cores are CPU-bound, a long step against the same cold device is fed. Each time the watched AU
# is within 3 points of the job's own.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
SLOW="$FEEDBENCH_SOURCE_DIR/tools/slow-device"
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"
reason=$("$SLOW" check 2>&1) || skip "$reason"
$PY -c "import torch" 2>/dev/null || skip "no python3-torch under /usr/bin/python3"

# The device comes down before lib.bash's trap would remove $WORK (and the mount in it).
trap '"$SLOW" down "$WORK/slow" || true; rm -rf "$WORK"' EXIT
FILES=240
FILE_SIZE=$((128 * 1024))
READ_BPS=16M # 128 files/s: 16 batches of 8 a second
"$SLOW" up "$WORK/slow" --size 256M --read-bps $READ_BPS >/dev/null
DATA="$WORK/slow/mnt/data"
"$FEEDBENCH" gen --out "$DATA" --files $FILES --file-size 128KiB --layout flat --seed 5 >/dev/null
rm -f "$DATA/feedbench-gen.json"
sync -f "$DATA" # written pages are dropped only once clean
DATA_BYTES=$((FILES * FILE_SIZE))

# resident: bytes of the data set in the page cache (fincore), or "unknown" without it.
resident() {
  command -v fincore >/dev/null || { echo unknown; return; }
  fincore --bytes --noheadings -o RES "$DATA"/* | awk '{ s += $1 } END { print s + 0 }'
}
# cold: evicts every file (posix_fadvise DONTNEED, as tools/compare-pytorch does), and checks.
cold() {
  $PY - "$DATA" <<'PY'
import os, sys
for n in os.listdir(sys.argv[1]):
    fd = os.open(os.path.join(sys.argv[1], n), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)
PY
  local r
  r=$(resident)
  [ "$r" = unknown ] || [ "$r" = 0 ] || fail "$r bytes of the data set still in the page cache after eviction"
}
# warm: reads every file outside the throttle's cgroup, and checks they are all cached.
warm() {
  cat "$DATA"/* >/dev/null
  local r
  r=$(resident)
  [ "$r" = unknown ] || [ "$r" = "$DATA_BYTES" ] || fail "only $r of $DATA_BYTES bytes cached after reading"
}

source "$(dirname "$0")/watch_lib.bash"
# watch NAME JOB-ARGS...: the job on its data under watch (watch_lib.bash's watch_job).
watch() { local name=$1; shift; watch_job "$name" "$DATA" "$SLOW" run "$WORK/slow" -- "$@"; }

# device_read NAME BEFORE: the bytes the device served since BEFORE, which must be about the data
# set's (metadata adds a little): the job's reads reached the device, not the page cache.
device_read() {
  local n=$(($("$SLOW" stat "$WORK/slow") - $2))
  echo "$1: read $n bytes from the device for a $DATA_BYTES-byte data set"
  if [ "$n" -lt $((DATA_BYTES * 9 / 10)) ] || [ "$n" -gt $((DATA_BYTES * 3 / 2)) ]; then
    fail "$1 read $n bytes from the device, expected about $DATA_BYTES"
  fi
}

# 2 workers against 128 files/s, a 5 ms step wanting 1,600: the workers wait on the device. The
# second pass finds the data set in the page cache: said so, per pass.
cold
before=$("$SLOW" stat "$WORK/slow")
watch storage --workers 2 --batch 8 --step-ms 5 --epochs 2
check storage storage
device_read storage "$before"
# Watch's own view of it: the recorder saw the data folder read from the loop device's ext4, and
# the sampled device count agrees with the device's (every reader of it: the job alone here).
$PY - "$WORK/storage.json" "$DATA" "$DATA_BYTES" <<'PY' || fail "watch's reads and device figures"
import json, os, sys
x = json.load(open(sys.argv[1]))["benchmarks"][0]["extra"]
data, size = os.path.realpath(sys.argv[2]), int(sys.argv[3])
r = x["reads"]
assert r["recorded"] and r["folders"][0]["path"] == data and r["bytes"] == 2 * size, r
p1, p2 = x["passes"]
assert p1["device_bytes"] >= 0.8 * p1["data_bytes"] and p2["device_bytes"] < 0.2 * p2["data_bytes"], x["passes"]
assert "pass 1 read its data from the device, pass 2 from the page cache" in x["verdict"], x["verdict"]
assert r["folders"][0]["where"].startswith("ext4 on 7:"), r["folders"][0]
dev = x["processes"]["device_read_bytes"]
assert dev is not None and 0.9 * size <= dev <= 1.5 * size, (dev, size, x["processes"]["device"])
print("storage: watch saw %d bytes read from %s (%s), the device %d" % (r["bytes"], data, r["folders"][0]["where"], dev))
# The verdict names the device's rate during the loop: the throttle's, 16 MiB/s.
import re
m = re.search(r"the data device 7:\d+ \(loop\d+\) read ([0-9.]+) MiB/s during the loop", x["verdict"])
assert m and 12 <= float(m.group(1)) <= 16.5, x["verdict"]
PY
# No faster than the throttle allows: the job ran inside its cgroup.
$PY -c "import json,sys; w=json.load(open(sys.argv[1]))['benchmarks'][0]['extra']['wall_s']; \
assert w >= 0.7 * int(sys.argv[2]) / int(sys.argv[3]), ('faster than the throttle', w)" \
  "$WORK/storage.json" "$DATA_BYTES" "$(numfmt --from=iec $READ_BPS)" || fail "the throttle did not hold"

# The same cold device, a 100 ms step on batches of 4 wanting 40 files/s: the device keeps up.
# (A trainer's next() on a ready batch costs 1-2 ms on a loaded 2-core host: a long step keeps
# that and the first batch's wait far under the 10% a fed verdict allows.)
cold
before=$("$SLOW" stat "$WORK/slow")
watch fed --workers 2 --batch 4 --step-ms 100
check fed fed
device_read fed "$before"

# Page-cached files, 4 workers burning 4 ms a sample on 2 cores: the cores are the limit.
warm
before=$("$SLOW" stat "$WORK/slow")
watch cpubound --workers 4 --batch 8 --step-ms 5 --burn-ms 4
check cpubound cpu
after=$("$SLOW" stat "$WORK/slow")
[ $((after - before)) -lt $((DATA_BYTES / 10)) ] || fail "the warm case read $((after - before)) bytes from the device"
