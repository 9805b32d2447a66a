# A cache's temporaries are created exclusively: a symlink planted at a temporary name
# (feedbench-manifest.json.fbtmp, MANIFEST.sha256.fbtmp) must not carry stage's write to the
# file it names, and a FIFO there must not block stage (issue 43: opened without O_EXCL, it
# did). Before O_NOFOLLOW, a second stage over the cache overwrote the link's target with the
# manifest and exited 0.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

expect_exit 0 "$FEEDBENCH" gen --out "$WORK/src" --files 20 --file-size 4KiB --layout classes --classes 2 --seed 1
echo precious >"$WORK/victim.txt"
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_000/**'
ln -s "$WORK/victim.txt" "$WORK/cache/feedbench-manifest.json.fbtmp"
ln -s "$WORK/victim.txt" "$WORK/cache/MANIFEST.sha256.fbtmp"
before=$(tree_digest "$WORK/src")
expect_exit 1 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_00*/**'
expect_in "$WORK/err" "$WORK/cache/MANIFEST.sha256.fbtmp: cannot create: the name is taken by a file, link or FIFO"
[ "$(cat "$WORK/victim.txt")" = precious ] || fail "stage wrote through a link at a temporary name"
[ "$(tree_digest "$WORK/src")" = "$before" ] || fail "the source changed"
rm "$WORK/cache/feedbench-manifest.json.fbtmp" "$WORK/cache/MANIFEST.sha256.fbtmp"
# A FIFO at the manifest's temporary name: refused at once, never opened (an open would block).
mkfifo "$WORK/cache/MANIFEST.sha256.fbtmp"
expect_exit 1 timeout 60 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_00*/**'
expect_in "$WORK/err" "$WORK/cache/MANIFEST.sha256.fbtmp: cannot create: the name is taken"
[ -p "$WORK/cache/MANIFEST.sha256.fbtmp" ] || fail "the FIFO was replaced"
rm "$WORK/cache/MANIFEST.sha256.fbtmp"
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_00*/**'
echo ok
