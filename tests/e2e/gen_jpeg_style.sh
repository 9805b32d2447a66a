# gen --format jpeg with a photograph's pixels: --jpeg-quality, --bytes-per-pixel and
# --jpeg-pixels make images of the drawn sizes with the pixels asked for (djpeg agrees), the same
# bytes for the same seed, the style recorded in feedbench-gen.json and printed; a bad value is
# refused naming its option, exit 2, before anything is written.
source "$(dirname "$0")/lib.bash"

gen() { "$FEEDBENCH" gen --files 6 --format jpeg --file-size 64KiB..160KiB --classes 2 --seed 3 "$@"; }
expect_exit 0 gen --out "$WORK/a" --jpeg-quality 90 --bytes-per-pixel 0.8
expect_in "$WORK/out" "images: quality 90, 0.8"
expect_in "$WORK/out" "bytes a pixel"
gen --out "$WORK/b" --jpeg-quality 90 --bytes-per-pixel 0.8 >/dev/null
[ "$(tree_digest "$WORK/a")" = "$(tree_digest "$WORK/b")" ] || fail "same seed and style, different folders"
python3 - "$WORK/a/feedbench-gen.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jpeg"]
assert j["quality"] == 90 and j["bytes_per_pixel_asked"] == 0.8 and j["pixels_asked"] is None, j
assert 0.72 <= j["bytes_per_pixel"] <= 0.88, j
assert j["pixels_mean"] > 80000, j
PY
if command -v djpeg >/dev/null; then
  for f in "$WORK"/a/class_*/*.jpg; do
    djpeg -outfile "$WORK/x.ppm" "$f" || fail "djpeg cannot decode $f"
    dims=$(head -c 20 "$WORK/x.ppm" | sed -n 2p)
    python3 -c "import sys; w, h = map(int, '$dims'.split()); s = $(stat -c %s "$f"); \
assert 0.7 <= s / (w * h) <= 0.9, ('$f', w, h, s)" || fail "$f: not 0.8 bytes a pixel by djpeg"
  done
fi
# The default style is unchanged (full noise at quality 95) and recorded too.
expect_exit 0 gen --out "$WORK/d"
expect_in "$WORK/out" "images: quality 95, 2."
# Pixels an image, whatever its size.
expect_exit 0 "$FEEDBENCH" gen --out "$WORK/p" --files 6 --format jpeg --file-size 64KiB..96KiB --layout flat --jpeg-pixels 400x300
python3 - "$WORK/p/feedbench-gen.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["jpeg"]
assert j["pixels_asked"] == 120000 and abs(j["pixels_mean"] - 120000) < 1500, j
PY

refused() {  # refused OPTION-TEXT ARGS...: exit 2, the option named, nothing written
  local want=$1; shift
  expect_exit 2 "$FEEDBENCH" gen --out "$WORK/x" --files 4 "$@"
  expect_in "$WORK/err" "$want"
  [ ! -e "$WORK/x" ] || fail "a refused gen wrote $WORK/x"
}
refused "--jpeg-quality: expected a quality from 1 to 100, got '0'" --format jpeg --jpeg-quality 0
refused "--jpeg-quality: expected a whole number, got 'high'" --format jpeg --jpeg-quality high
refused "--bytes-per-pixel: expected a number of bytes above 0, such as 0.8, got '-1'" --format jpeg --bytes-per-pixel -1
refused "--bytes-per-pixel: at --jpeg-quality 50 these images take" --format jpeg --jpeg-quality 50 --bytes-per-pixel 2.5
refused "--bytes-per-pixel: not with --jpeg-pixels" --format jpeg --bytes-per-pixel 0.8 --jpeg-pixels 100000
refused "--jpeg-pixels: expected pixels an image (N, or W x H such as 500x375), got '400x'" --format jpeg --jpeg-pixels 400x
refused "--jpeg-pixels: 5000 pixels in images of" --format jpeg --jpeg-pixels 5000
refused "--jpeg-quality: only with --format jpeg" --file-size 4KiB --jpeg-quality 90
refused "--bytes-per-pixel: only with --format jpeg" --file-size 4KiB --bytes-per-pixel 0.8
echo ok
