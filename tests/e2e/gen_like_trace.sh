# gen --like TRACE: a stand-in for data that cannot travel, from a real PyTorch job's trace
# (tests/e2e/watch_job.py under feedbench watch --trace). Every file the job read comes back at
# its path and exact size, JPEGs as real images at the originals' dimensions (read by watch from
# their headers after the job; PIL, the job's own decoder, and djpeg open them whole), other bytes
# never the originals'; the trace replays on the stand-in as on the data;
# refusals (--scale, --out onto the job's data, a hostile path) exit 2 and write nothing.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
$PY -c "import torch, PIL" 2>/dev/null || skip "no python3-torch and python3-pil under /usr/bin/python3"
JOB="$FEEDBENCH_SOURCE_DIR/tests/e2e/watch_job.py"

# A job over 48 JPEGs and 16 other files, watched with a trace. The JPEGs take 0.8 bytes a pixel,
# as photographs of an image folder do: more pixels than gen's own full-noise images of their size.
"$FEEDBENCH" gen --out "$WORK/data" --files 48 --format jpeg --file-size 8KiB..64KiB --layout flat --seed 5 \
  --bytes-per-pixel 0.8 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"
"$FEEDBENCH" gen --out "$WORK/bins" --files 16 --file-size 1000..9000 --layout flat --seed 6 >/dev/null
for f in "$WORK"/bins/*.bin; do mv "$f" "$WORK/data/extra_$(basename "$f")"; done
expect_exit 0 "$FEEDBENCH" watch --out "$WORK/job.json" --trace "$WORK/job.trace.json" --name jpegs \
  -- $PY "$JOB" "$WORK/data" --workers 2 --batch 8 --step-ms 2
before=$(tree_digest "$WORK/data")

expect_exit 0 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK/standin" --seed 9
expect_in "$WORK/out" "64 files"
expect_in "$WORK/out" "48 real JPEGs"
expect_in "$WORK/out" "48 at their original's dimensions"
expect_in "$WORK/out" "replay it: feedbench replay"
$PY - "$WORK/data" "$WORK/standin" <<'PY' || fail "the stand-in's files"
import hashlib, json, os, sys
from PIL import Image
data, standin = sys.argv[1], sys.argv[2]
names = sorted(n for n in os.listdir(data))
got = sorted(n for n in os.listdir(standin) if n != "feedbench-gen.json")
assert got == names, (got[:3], names[:3])
same = 0
for n in names:
    a, b = os.path.join(data, n), os.path.join(standin, n)
    assert os.path.getsize(a) == os.path.getsize(b), (n, os.path.getsize(a), os.path.getsize(b))
    ba, bb = open(a, "rb").read(), open(b, "rb").read()
    same += ba == bb
    if n.endswith(".jpg"):
        with Image.open(b) as im, Image.open(a) as orig:
            im.load()  # every pixel: a file cut short or padded wrongly raises here
            assert im.format == "JPEG" and im.size == orig.size, (n, im.format, im.size, orig.size)
assert same == 0, "%d files are the originals' bytes" % same
rec = json.load(open(os.path.join(standin, "feedbench-gen.json")))
assert rec["like"]["kind"] == "trace" and rec["like"]["job"] == "jpegs", rec["like"]
assert rec["generated"]["images"]["jpeg"] == 48, rec["generated"]
assert rec["generated"]["images"]["at_original_dimensions"] == 48, rec["generated"]
print("stand-in: %d files at their sizes, 48 JPEGs decoded by PIL at the originals' dimensions" % len(names))
PY
# The trace carries each JPEG's dimensions, on its opens, and none for the other files.
$PY - "$WORK/job.trace.json" "$WORK/data" <<'PY' || fail "the trace's dimensions"
import json, os, sys
from PIL import Image
t = json.load(open(sys.argv[1]))
opens = [e["args"] for e in t["traceEvents"] if e.get("cat") == "open" and "/data/" in e["args"]["path"]]
jpgs = [a for a in opens if a["path"].endswith(".jpg")]
assert len({a["path"] for a in jpgs}) == 48, len(jpgs)
for a in opens:
    if a["path"].endswith(".jpg"):
        with Image.open(a["path"]) as im:
            assert (a["width"], a["height"]) == im.size, (a, im.size)
    else:
        assert "width" not in a and "height" not in a, a
PY
if command -v djpeg >/dev/null; then
  for f in "$WORK"/standin/*.jpg; do
    djpeg -outfile /dev/null "$f" 2>"$WORK/djpeg.err" || fail "djpeg: $f: $(cat "$WORK/djpeg.err")"
    [ ! -s "$WORK/djpeg.err" ] || fail "djpeg warned on $f: $(cat "$WORK/djpeg.err")"
    want=$(djpeg -verbose -outfile /dev/null "$WORK/data/$(basename "$f")" 2>&1 | grep -o 'width=[0-9]*, height=[0-9]*')
    got=$(djpeg -verbose -outfile /dev/null "$f" 2>&1 | grep -o 'width=[0-9]*, height=[0-9]*')
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "djpeg: $f is $got, its original $want"
  done
fi
# The same seed writes the same bytes.
expect_exit 0 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK/again" --seed 9
diff <(cd "$WORK/standin" && find . -type f ! -name feedbench-gen.json -print0 | sort -z | xargs -0 sha256sum) \
  <(cd "$WORK/again" && find . -type f ! -name feedbench-gen.json -print0 | sort -z | xargs -0 sha256sum) \
  >/dev/null || fail "the same seed wrote other bytes"

# The trace replays on the stand-in, every recorded byte read again, no --allow-resized needed.
expect_exit 0 "$FEEDBENCH" replay "$WORK/job.trace.json" --source "$WORK/standin" --out "$WORK/replay.json" \
  --quiet
$PY - "$WORK/replay.json" <<'PY' || fail "the replay on the stand-in"
import json, sys
doc = json.load(open(sys.argv[1]))
(rep,) = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
x = rep["extra"]
assert x["measured_read_bytes"] + x["warmup_read_bytes"] == x["replay"]["recorded_bytes"], x
like = doc["dataset"]["source"]["generated_like"]
assert like["kind"] == "trace", like
print("replayed on the stand-in: %d bytes, AU %.3f" % (x["replay"]["recorded_bytes"], rep["au"]))
PY

# An original whose size no image of its dimensions fits (12 M pixels in a few KiB): made at
# dimensions from its size, counted in the summary; gen does not fail. A bad dimension in a trace
# is refused naming its field.
$PY - "$WORK/job.trace.json" "$WORK/huge.json" "$WORK/bad-dims.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
opens = [e for e in t["traceEvents"] if e.get("cat") == "open" and "width" in e["args"]]
path = opens[0]["args"]["path"]
for e in opens:
    if e["args"]["path"] == path:
        e["args"]["width"], e["args"]["height"] = 4000, 3000
json.dump(t, open(sys.argv[2], "w"))
opens[0]["args"]["width"] = -1
json.dump(t, open(sys.argv[3], "w"))
PY
expect_exit 0 "$FEEDBENCH" gen --like "$WORK/huge.json" --out "$WORK/huge" --seed 9
expect_in "$WORK/out" "47 at their original's dimensions"
expect_in "$WORK/out" "1 too small for an image of their original's dimensions even at quality 1"
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/bad-dims.json" --out "$WORK/bad-dims"
expect_in "$WORK/err" "/args/width: expected an integer of at least 1 and at most 65535, got -1"
[ ! -e "$WORK/bad-dims" ] || fail "a refused gen wrote"

# watch reads the headers after the job, never through a link the job left where it read a JPEG,
# and a JPEG the job removed simply has no dimensions: the watch and the job's status unchanged.
mkdir -p "$WORK/moved"
for i in 0 1 2 3 4 5; do cp "$WORK/data/file_00000$i.jpg" "$WORK/moved/"; done
cp "$WORK/data/file_000010.jpg" "$WORK/elsewhere.jpg"
expect_exit 0 "$FEEDBENCH" watch --trace "$WORK/moved.trace.json" -- sh -c \
  "$PY '$JOB' '$WORK/moved' --workers 0 --batch 2 --step-ms 1 && rm '$WORK/moved/file_000000.jpg' &&
   rm '$WORK/moved/file_000001.jpg' && ln -s '$WORK/elsewhere.jpg' '$WORK/moved/file_000001.jpg'"
$PY - "$WORK/moved.trace.json" <<'PY' || fail "the headers read after the job"
import json, sys
t = json.load(open(sys.argv[1]))
dims = {e["args"]["path"].rsplit("/", 1)[1]: "width" in e["args"] for e in t["traceEvents"] if e.get("cat") == "open"}
want = {"file_00000%d.jpg" % i: i >= 2 for i in range(6)}
assert {k: v for k, v in dims.items() if k in want} == want, dims
PY

# Refusals: one error, exit 2, nothing written.
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK/scaled" --scale 0.5
expect_in "$WORK/err" "--scale: not with --like TRACE"
[ ! -e "$WORK/scaled" ] || fail "a refused gen wrote"
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK/data" --force
expect_in "$WORK/err" "the traced job's data folder"
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK" --force
expect_in "$WORK/err" "holds the traced job's data folder"
[ "$(tree_digest "$WORK/data")" = "$before" ] || fail "gen wrote onto the job's data"
# A trace whose files share the folder /tmp/x but one climbs out of it.
$PY - "$WORK/job.trace.json" "$WORK/hostile.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for e in t["traceEvents"]:
    if e.get("cat") == "open":
        e["args"]["path"] = e["args"]["path"].replace("/data/", "/data/../../../../escape/", 1)
        break
json.dump(t, open(sys.argv[2], "w"))
PY
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/hostile.json" --out "$WORK/hostile"
[ ! -e "$WORK/hostile" ] || fail "a refused gen wrote"
cut=$(($(stat -c %s "$WORK/job.trace.json") / 2))
head -c "$cut" "$WORK/job.trace.json" >"$WORK/cut.json"
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/cut.json" --out "$WORK/cut"
expect_in "$WORK/err" "cut short at byte"
[ ! -e "$WORK/cut" ] || fail "a refused gen wrote"

# No output lands on an input (issue 43): a trace that lists a file of its own name, in the folder
# gen writes to with --force, is refused before anything is written; compared by inode, so a
# hard link of the trace under a listed name is refused too.
mkdir -p "$WORK/d2"
$PY - "$WORK/job.trace.json" "$WORK/d2/job.trace.json" "$WORK/data" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for e in t["traceEvents"]:
    if e.get("cat") == "open" and e["args"]["path"].startswith(sys.argv[3] + "/extra_"):
        e["args"]["path"] = sys.argv[3] + "/job.trace.json"
        break
json.dump(t, open(sys.argv[2], "w"))
PY
trace_digest=$(sha256sum <"$WORK/d2/job.trace.json")
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/d2/job.trace.json" --out "$WORK/d2/." --force
expect_in "$WORK/err" "over --like"
[ "$(sha256sum <"$WORK/d2/job.trace.json")" = "$trace_digest" ] || fail "gen wrote over the trace"
[ "$(ls "$WORK/d2")" = "job.trace.json" ] || fail "a refused gen wrote: $(ls "$WORK/d2")"

# Names that are no UTF-8 travel byte for byte: three files differing in one byte stay three, in
# the trace, the stand-in and the replay.
mkdir -p "$WORK/latin"
for b in e9 e8 ef; do head -c 3000 /dev/urandom >"$WORK/latin/lat$(printf "\\x$b")"; done
for i in 1 2 3 4 5; do head -c 2000 /dev/urandom >"$WORK/latin/f$i"; done
expect_exit 0 "$FEEDBENCH" watch --trace "$WORK/latin.trace.json" -- $PY "$JOB" "$WORK/latin" --workers 0 --batch 1 --step-ms 1
expect_exit 0 "$FEEDBENCH" gen --like "$WORK/latin.trace.json" --out "$WORK/latin-standin"
expect_in "$WORK/out" "wrote 8 files"
[ -e "$WORK/latin-standin/lat$(printf '\xe9')" ] && [ -e "$WORK/latin-standin/lat$(printf '\xef')" ] ||
  fail "the stand-in's names: $(ls "$WORK/latin-standin" | od -c | head -3)"
expect_exit 0 "$FEEDBENCH" replay "$WORK/latin.trace.json" --out "$WORK/latin-replay.json" --quiet

# One gen at a time in a folder, whatever the layout: a folder locked by another is refused.
# The lock is held until the test lets it go (a fixed sleep ran out on a loaded host).
mkdir -p "$WORK/locked"
flock "$WORK/locked" sh -c "touch '$WORK/held'; for i in \$(seq 600); do [ -e '$WORK/unlock' ] && break; sleep 0.1; done" &
for _ in $(seq 100); do [ -e "$WORK/held" ] && break; sleep 0.1; done
expect_exit 2 "$FEEDBENCH" gen --like "$WORK/job.trace.json" --out "$WORK/locked" --force
expect_in "$WORK/err" "another feedbench gen is writing into this folder now"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/locked" --files 4 --file-size 1KiB --layout flat --force
expect_in "$WORK/err" "another feedbench gen is writing into this folder now"
touch "$WORK/unlock"
wait
[ -z "$(ls "$WORK/locked")" ] || fail "a refused gen wrote into the locked folder"

# A folder of --force's --out that is a symbolic link: bad input, exit 2, naming the link.
mkdir -p "$WORK/linked/x" "$WORK/elsewhere"
ln -s "$WORK/elsewhere" "$WORK/linked/class_001"
expect_exit 2 "$FEEDBENCH" gen --out "$WORK/linked" --files 4 --file-size 1KiB --classes 2 --force
expect_in "$WORK/err" "'$WORK/linked/class_001' is a symbolic link (to $WORK/elsewhere)"
[ -z "$(ls "$WORK/elsewhere")" ] && [ ! -e "$WORK/linked/class_000" ] || fail "gen wrote through the link"
echo "PASS"
