# feedbench stage / verify end to end: a staged cache passes `sha256sum -c`; verify catches a
# flipped byte, a deleted file and an extra file; resume, removal, overlap and symlink escape;
# the source tree never changes.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

SRC=$WORK/src
mkdir -p "$SRC/validation/cls_a" "$SRC/validation/cls_b" "$SRC/train"
for i in 1 2 3 4 5 6; do
  head -c $((i * 37000 + 11)) /dev/urandom >"$SRC/validation/cls_a/img_$i.bin"
  head -c $((i * 5000)) /dev/urandom >"$SRC/validation/cls_b/img_$i.bin"
  head -c 20000 /dev/urandom >"$SRC/train/t_$i.bin"
done
: >"$SRC/validation/empty.bin"
printf 'a name with spaces\n' >"$SRC/validation/with space.txt"
before=$(tree_digest "$SRC")
check_source() { [ "$(tree_digest "$SRC")" = "$before" ] || fail "the source tree changed ($1)"; }

# Stage the validation split; sha256sum -c accepts the manifest in the cache root.
C=$WORK/cache
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'validation/**' --label v1 --workers 2
expect_in "$WORK/out" "copied 14"
expect_in "$WORK/out" "label v1"
# What the stage left in the page cache is said (fincore, where present, agrees), and how to
# measure the disk instead: the next job would otherwise read the cache from memory unawares.
expect_in "$WORK/out" "resident in the page cache now: "
if grep -q "(100.0%" "$WORK/out"; then
  expect_in "$WORK/out" "a job run now reads it from memory; \`feedbench stage --evict --to $C\` first to measure the disk"
  if command -v fincore >/dev/null; then
    fincore --bytes --noheadings --raw -o RES,SIZE "$C/validation/cls_a/img_1.bin" |
      awk '$1 < $2 { exit 1 }' || fail "fincore: the staged copy is not all resident"
  fi
fi
(cd "$C" && sha256sum --quiet -c MANIFEST.sha256) || fail "sha256sum -c rejected the manifest"
[ "$(wc -l <"$C/MANIFEST.sha256")" = 14 ] || fail "manifest should list 14 files"
[ ! -e "$C/train" ] || fail "train/ was not selected"
python3 - "$C/feedbench-manifest.json" "$SRC" <<'PY' || fail "feedbench-manifest.json fields"
import json, os, sys
m = json.load(open(sys.argv[1]))
assert m["schema"] == "feedbench-manifest/1", m
assert m["label"] == "v1" and m["files"] == 14 and m["include"] == ["validation/**"], m
assert m["source_root"] == os.path.realpath(sys.argv[2]), m
assert len(m["source_fingerprint"]) == 64 and m["created_utc"].endswith("Z") and m["feedbench_version"], m
PY
[ "$(stat -c %Y "$C/validation/cls_a/img_3.bin")" = "$(stat -c %Y "$SRC/validation/cls_a/img_3.bin")" ] ||
  fail "mtime not kept"
find "$C" -name '*.fbtmp' | grep -q . && fail "temporary files left behind"
check_source "stage"

expect_exit 0 "$FEEDBENCH" verify --cache "$C" --source "$SRC"
expect_in "$WORK/out" "verified: 14 files"
expect_in "$WORK/out" "source matches"

# Re-run: everything already in place.
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'validation/**' --label v1
expect_in "$WORK/out" "copied 0, skipped 14"

# A flipped byte (size and mtime kept, as silent corruption would) is caught.
f="$C/validation/cls_a/img_2.bin"
m=$(stat -c %y "$f")
printf '\xff' | dd of="$f" bs=1 seek=100 conv=notrunc status=none
printf '\x00' | dd of="$f" bs=1 seek=101 conv=notrunc status=none
touch -d "$m" "$f"
expect_exit 1 "$FEEDBENCH" verify --cache "$C"
expect_in "$WORK/out" "changed validation/cls_a/img_2.bin"
expect_in "$WORK/out" "MISMATCH"
cp -p "$SRC/validation/cls_a/img_2.bin" "$f"
expect_exit 0 "$FEEDBENCH" verify --cache "$C"

# A deleted file, then an extra one.
mv "$C/validation/cls_b/img_1.bin" "$WORK/held"
expect_exit 1 "$FEEDBENCH" verify --cache "$C"
expect_in "$WORK/out" "missing validation/cls_b/img_1.bin"
mv "$WORK/held" "$C/validation/cls_b/img_1.bin"
echo extra >"$C/validation/stray.bin"
expect_exit 1 "$FEEDBENCH" verify --cache "$C"
expect_in "$WORK/out" "extra   validation/stray.bin"
rm "$C/validation/stray.bin"
expect_exit 0 "$FEEDBENCH" verify --cache "$C"

# The source moves on: verify --source names it; a re-stage copies the change, removes what
# left the selection and picks up what is new.
head -c 999 /dev/urandom >"$WORK/new_content"
cp "$WORK/new_content" "$SRC/validation/cls_a/img_1.bin"
rm "$SRC/validation/cls_b/img_6.bin"
echo new >"$SRC/validation/cls_b/new.bin"
expect_exit 1 "$FEEDBENCH" verify --cache "$C" --source "$SRC"
expect_in "$WORK/out" "changed in the source: validation/cls_a/img_1.bin"
expect_in "$WORK/out" "removed from the source: validation/cls_b/img_6.bin"
expect_in "$WORK/out" "added to the source: validation/cls_b/new.bin"
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'validation/**' --label v2
expect_in "$WORK/out" "copied 2, skipped 12"
expect_in "$WORK/out" "removed 1"
expect_in "$WORK/err" "removed validation/cls_b/img_6.bin"
(cd "$C" && sha256sum --quiet -c MANIFEST.sha256) || fail "sha256sum -c after the re-stage"
expect_exit 0 "$FEEDBENCH" verify --cache "$C" --source "$SRC"
before=$(tree_digest "$SRC")  # the test itself changed the source above

# No manifest: verify says to stage (exit 2).
mkdir "$WORK/nocache"
expect_exit 2 "$FEEDBENCH" verify --cache "$WORK/nocache"
expect_in "$WORK/err" "has no complete manifest"
expect_in "$WORK/err" "run feedbench stage"

# Refusals (exit 2, nothing written): overlap both ways, a symlink out of the source, a folder
# that is not a cache.
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$SRC/validation/cache"
expect_in "$WORK/err" "is inside the source"
[ ! -e "$SRC/validation/cache" ] || fail "a cache was created inside the source"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC/validation" --to "$SRC"
expect_in "$WORK/err" "is inside the cache"
mkdir -p "$WORK/outside"
echo secret >"$WORK/outside/secret.bin"
SRC2=$WORK/src2
mkdir -p "$SRC2/d"
echo ok >"$SRC2/d/ok.bin"
ln -s "$WORK/outside/secret.bin" "$SRC2/d/link.bin"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC2" --to "$WORK/cache2"
expect_in "$WORK/err" "outside the source root"
[ ! -e "$WORK/cache2/d" ] || fail "files staged despite the refusal"
mkdir -p "$WORK/home"
echo precious >"$WORK/home/notes.txt"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$WORK/home"
expect_in "$WORK/err" "is not a feedbench cache"
[ -f "$WORK/home/notes.txt" ] || fail "a file of a non-cache folder was removed"

# Bad options.
expect_exit 2 "$FEEDBENCH" stage --from "$SRC"
expect_exit 2 "$FEEDBENCH" stage --from "$WORK/missing" --to "$WORK/c3"
expect_exit 2 "$FEEDBENCH" stage --from "$SRC" --to "$WORK/c3" --workers 0

check_source "the end"
echo "PASS"
