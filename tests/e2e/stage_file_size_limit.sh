# stage under a file-size limit (ulimit -f): the kernel's SIGXFSZ would kill the process with
# a temporary file half-written. feedbench ignores SIGXFSZ, so the write fails with EFBIG and
# stage ends like on a full disk: a clear error naming the file, no manifest, no temporaries,
# exit 1.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

"$FEEDBENCH" gen --out "$WORK/src" --files 4 --file-size 256KiB --layout flat --seed 4 >/dev/null
before=$(tree_digest "$WORK/src")
C=$WORK/cache
rc=0
bash -c 'ulimit -f 64; exec "$0" stage --from "$1" --to "$2" --workers 1' \
  "$FEEDBENCH" "$WORK/src" "$C" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/out" "$WORK/err"; fail "expected exit 1 under ulimit -f, got $rc"; }
expect_in "$WORK/err" "file size limit"
expect_in "$WORK/err" "while writing $C/"
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after EFBIG"
[ -z "$(find "$C" -name '*.bin.fbtmp' 2>/dev/null)" ] || fail "a temporary file left after EFBIG"
[ "$(tree_digest "$WORK/src")" = "$before" ] || fail "the source tree changed"
echo "PASS"
