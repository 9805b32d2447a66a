# TFRecord end to end: gen --layout tfrecord writes TensorFlow's format (an independent reader,
# with its own CRC-32C, parses every record and checks both CRCs: TensorFlow itself where python3
# has it), the same bytes for the same seed; the loader's samples "tfrecord" reads every record;
# a corrupt shard skips the case naming the shard and the byte offset; bad options are refused.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/a" --files 40 --file-size 1KiB..24KiB --layout tfrecord --shards 4 --seed 3 >"$WORK/gen"
expect_in "$WORK/gen" "wrote 4 files"
"$FEEDBENCH" gen --out "$WORK/b" --files 40 --file-size 1KiB..24KiB --layout tfrecord --shards 4 --seed 3 >/dev/null
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "same seed, different shards"
[ -f "$WORK/a/shard_00000.tfrecord" ] || fail "no .tfrecord names"

# The witness: a reader written from TensorFlow's format description, nothing shared with ours.
python3 - "$WORK/a" <<'PY'
import glob, os, struct, sys

# CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), a byte at a time from a table.
TABLE = []
for n in range(256):
    c = n
    for _ in range(8):
        c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
    TABLE.append(c)

def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF

assert crc32c(b"123456789") == 0xE3069283
shards = sorted(glob.glob(os.path.join(sys.argv[1], "*.tfrecord")))
assert len(shards) == 4, shards
records, sizes = 0, []
for path in shards:
    data = open(path, "rb").read()
    at = 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert length_crc == masked(crc32c(header)), (path, at, "length crc")
        body = data[at + 12:at + 12 + length]
        assert len(body) == length, (path, at, "cut")
        (data_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert data_crc == masked(crc32c(body)), (path, at, "data crc")
        at += 16 + length
        records += 1
        sizes.append(length)
assert records == 40, records
assert min(sizes) >= 1024 and max(sizes) <= 24 * 1024 and len(set(sizes)) > 10, sizes
try:
    import tensorflow as tf  # the real reader, where it is installed
    n = sum(1 for _ in tf.data.TFRecordDataset(shards))
    assert n == 40, n
except ImportError:
    pass
PY

config() {  # config SOURCE [EXTRA]
  cat <<JSON
{"name": "tfrecord", "dataset": {"source": "$1"}, "defaults": {"repetitions": 1, "engine": "psync"},
 "families": [{"family": "loader", "samples": "tfrecord", "batch_size": 4, "workers": 2, "prefetch": 1,
               "step_time": "0ms", "warmup_steps": 0, "cache_state": "warm", "path": "source",
               "shuffle_buffer": 8 ${2:-}}]}
JSON
}
config "$WORK/a" >"$WORK/a.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/a.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = [b for b in d["benchmarks"] if "params" in b and not b.get("error_occurred")]
assert len(runs) == 1, [b.get("error_message") for b in d["benchmarks"]]
b = runs[0]
assert b["name"].startswith("loader/") and "/samples:tfrecord/" in b["name"] and "/shuffle:8" in b["name"], b["name"]
# 2 workers × 2 shards of 10 records: 5 batches of 4 each → 10 steps, 2 of them warm-up.
assert b["extra"]["steps_per_epoch"] == 10, b["extra"]["steps_per_epoch"]
assert b["extra"]["samples"] + 4 * b["extra"]["warmup_steps"] == 40, b["extra"]
assert b["samples_per_second"] > 0 and b["bytes_per_second"] > 0
PY

# Setting tfrecord's options for other samples is refused where the user wrote them.
cat >"$WORK/files.json" <<JSON
{"name": "t", "dataset": {"source": "$WORK/a"}, "defaults": {"repetitions": 1},
 "families": [{"family": "loader", "samples": "files", "shuffle_buffer": 8, "cache_state": "warm"}]}
JSON
expect_exit 2 "$FEEDBENCH" run --config "$WORK/files.json" --out "$WORK/rf.json" --quiet
expect_in "$WORK/err" 'shuffle_buffer and verify_crc apply to samples "tfrecord" only'

# One flipped bit in a record's data: the case is skipped naming the shard and the offset;
# with verify_crc false the record is read without a check.
cp -r "$WORK/a" "$WORK/c"
offset=$(python3 - "$WORK/c/shard_00001.tfrecord" <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
at = 0
for _ in range(3):  # the fourth record
    at += 16 + struct.unpack("<Q", data[at:at + 8])[0]
data[at + 12] ^= 1
open(path, "wb").write(data)
print(at)
PY
)
config "$WORK/c" >"$WORK/c.json"
expect_exit 1 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/rc.json" --quiet
expect_in "$WORK/out" "skipped: loader/"
python3 - "$WORK/rc.json" "$WORK/c/shard_00001.tfrecord" "$offset" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
msgs = [b.get("error_message", "") for b in doc["benchmarks"] if b.get("error_occurred")]
want = "%s: corrupt TFRecord shard: the data CRC of the record at byte offset %s does not match" % (sys.argv[2], sys.argv[3])
assert msgs and all(want in m for m in msgs), (want, msgs)
PY
config "$WORK/c" ', "verify_crc": false' >"$WORK/c2.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c2.json" --out "$WORK/rc2.json" --quiet

# A shard that is not TFRecord at all: skipped naming it, at offset 0.
cp -r "$WORK/a" "$WORK/d"
head -c 5000 /dev/zero >"$WORK/d/shard_00002.tfrecord"
config "$WORK/d" >"$WORK/d.json"
expect_exit 1 "$FEEDBENCH" run --config "$WORK/d.json" --out "$WORK/rd.json" --quiet
python3 - "$WORK/rd.json" "$WORK/d/shard_00002.tfrecord" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
msgs = [b.get("error_message", "") for b in doc["benchmarks"] if b.get("error_occurred")]
assert msgs and all(sys.argv[2] + ": not a TFRecord shard" in m and "byte offset 0 " in m for m in msgs), msgs
PY

expect_exit 2 "$FEEDBENCH" gen --out "$WORK/e" --files 4 --file-size 1KiB --layout tfrecord --shards 5
expect_in "$WORK/err" "--shards: 5 shards for 4 records would leave shards empty"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/e" --files 4 --file-size 1KiB --layout tfrecords
expect_in "$WORK/err" "--layout: expected classes, flat, shards or tfrecord, got 'tfrecords'"
echo ok
