# Real JPEGs end to end: gen --format jpeg writes the same bytes for the same seed, images that
# djpeg (libjpeg-turbo's own tool) decodes to the dimensions ours reports; the loader's
# transform "decode" (and "decode:N", "random_resized_crop:N") decodes every sample and records
# its cost per MiB; on files that are not JPEGs, or JPEGs cut short, the case is skipped naming
# the file.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/a" --files 6 --format jpeg --file-size 64KiB..128KiB --classes 2 --seed 9 >/dev/null
"$FEEDBENCH" gen --out "$WORK/b" --files 6 --format jpeg --file-size 64KiB..128KiB --classes 2 --seed 9 >/dev/null
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "same seed, different images"
[ -f "$WORK/a/class_000/img_000000.jpg" ] || fail "no .jpg names"
# The default size range is an image folder's: 64 KiB to 512 KiB (within the few percent
# that a JPEG's size strays from the drawn one).
"$FEEDBENCH" gen --out "$WORK/d" --files 4 --format jpeg --layout flat --seed 1 >/dev/null
for f in "$WORK"/d/*.jpg; do
  s=$(stat -c %s "$f")
  [ "$s" -ge $((60 * 1024)) ] && [ "$s" -le $((540 * 1024)) ] || fail "$f: $s bytes, outside 64KiB..512KiB"
done
if command -v djpeg >/dev/null; then
  for f in "$WORK"/a/class_*/*.jpg; do
    djpeg -outfile "$WORK/x.ppm" "$f" || fail "djpeg cannot decode $f"
    head -c 20 "$WORK/x.ppm" | sed -n 2p | grep -qE '^[0-9]+ [0-9]+$' || fail "djpeg wrote no dimensions for $f"
  done
fi
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/e" --files 4 --format jpeg --layout shards
expect_in "$WORK/err" "--format jpeg: writes one image per file"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/e" --files 4 --format png
expect_in "$WORK/err" "--format: expected bin or jpeg, got 'png'"

"$FEEDBENCH" gen --out "$WORK/bin" --files 4 --file-size 8KiB --classes 2 >/dev/null
config() {  # config SOURCE TRANSFORM
  cat <<JSON
{"name": "decode", "dataset": {"source": "$1"}, "defaults": {"repetitions": 1, "engine": "psync"},
 "families": [{"family": "loader", "batch_size": 2, "workers": 1, "step_time": "1ms", "transform": $2,
               "steps": 2, "warmup_steps": 0, "cache_state": "warm", "path": "source"}]}
JSON
}
config "$WORK/a" '["decode", "decode:64", "random_resized_crop:64"]' >"$WORK/a.json"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/a.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = {b["params"]["transform"]: b for b in d["benchmarks"] if "params" in b}
assert set(runs) == {"decode", "decode:64", "random_resized_crop:64"}, runs.keys()
for t, b in runs.items():
    assert b["extra"]["decode_ms_per_mib"] > 0, b["extra"]
for t in ("decode:64", "random_resized_crop:64"):
    assert runs[t]["extra"]["decoded_pixels"] == 4 * 64 * 64, runs[t]["extra"]
PY
config "$WORK/bin" '"decode"' >"$WORK/bin.json"
expect_exit 1 "$FEEDBENCH" run --config "$WORK/bin.json" --out "$WORK/rb.json" --quiet
expect_in "$WORK/out" "skipped: loader/"
# The console wraps long reasons; the result file keeps the reason whole.
WORK="$WORK" python3 - "$WORK/rb.json" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
msgs = [b.get("error_message", "") for b in doc["benchmarks"] if b.get("error_occurred")]
assert msgs, "no skipped case recorded"
want = os.environ["WORK"] + "/bin/class_0"
assert all(want in m and ".bin: not a JPEG" in m for m in msgs), msgs
PY
# A truncated JPEG (its data cut short) is corrupt, not a decoded sample: the case stops naming
# the file, as for a file that is not a JPEG, and counts no pixels for it (it used to decode
# "successfully" with its full pixel count, or crash the decoder at decode:N).
mkdir -p "$WORK/cut"
cp -r "$WORK/a/." "$WORK/cut/"
# Every file cut in half, so whichever sample the first batch reads is one.
for victim in "$WORK"/cut/*/*.jpg; do
  size=$(stat -c %s "$victim")
  head -c $((size / 2)) "$victim" >"$WORK/half" && mv "$WORK/half" "$victim"
done
for t in '"decode"' '"decode:64"' '"random_resized_crop:64"'; do
  config "$WORK/cut" "$t" >"$WORK/cut.json"
  expect_exit 1 "$FEEDBENCH" run --config "$WORK/cut.json" --out "$WORK/rc.json" --quiet
  WORK="$WORK" python3 - "$WORK/rc.json" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
msgs = [b.get("error_message", "") for b in doc["benchmarks"] if b.get("error_occurred")]
assert msgs and all(os.environ["WORK"] + "/cut/" in m and ".jpg: a corrupt JPEG" in m for m in msgs), msgs
PY
done
echo ok
