# A cache's temporaries are written through no link: a symlink planted at a temporary name
# (feedbench-manifest.json.fbtmp, MANIFEST.sha256.fbtmp) must not carry stage's write to the
# file it names. Before O_NOFOLLOW, a second stage over the cache overwrote the link's target
# with the manifest and exited 0.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

expect_exit 0 "$FEEDBENCH" gen --out "$WORK/src" --files 20 --file-size 4KiB --layout classes --classes 2 --seed 1
echo precious >"$WORK/victim.txt"
expect_exit 0 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_000/**'
ln -s "$WORK/victim.txt" "$WORK/cache/feedbench-manifest.json.fbtmp"
ln -s "$WORK/victim.txt" "$WORK/cache/MANIFEST.sha256.fbtmp"
before=$(tree_digest "$WORK/src")
expect_exit 1 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache" --include 'class_00*/**'
expect_in "$WORK/err" "cannot create $WORK/cache/MANIFEST.sha256.fbtmp: Too many levels of symbolic links"
[ "$(cat "$WORK/victim.txt")" = precious ] || fail "stage wrote through a link at a temporary name"
[ "$(tree_digest "$WORK/src")" = "$before" ] || fail "the source changed"
echo ok
