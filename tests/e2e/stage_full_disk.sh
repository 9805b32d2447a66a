# A cache on a small full file system (a tmpfs mounted by the test; skipped where mounting is
# not allowed): the free-space check refuses naming the shortfall, and a disk that fills up
# mid-copy gives a clear error naming the file, no manifest, no temporaries, exit 1; after
# space is freed a re-run completes.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

MNT=$WORK/mnt
mkdir -p "$MNT"
mount -t tmpfs -o size=4m tmpfs "$MNT" 2>"$WORK/mount.err" ||
  skip "cannot mount a 4 MiB tmpfs for the cache ($(head -c 200 "$WORK/mount.err")); needs root"
trap 'umount "$MNT" 2>/dev/null; rm -rf "$WORK"' EXIT

SRC=$WORK/src
mkdir -p "$SRC/big" "$SRC/small"
for i in $(seq 1 16); do head -c $((512 * 1024)) /dev/urandom >"$SRC/big/b_$i.bin"; done  # 8 MiB
for i in $(seq 1 8); do head -c $((256 * 1024)) /dev/urandom >"$SRC/small/s_$i.bin"; done  # 2 MiB
before=$(tree_digest "$SRC")
C=$MNT/cache

# 1. 8 MiB into 4 MiB: refused before copying, naming the shortfall.
expect_exit 1 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'big/**'
expect_in "$WORK/err" "not enough space"
expect_in "$WORK/err" "short by"
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after the refusal"
[ -z "$(find "$C" -type f 2>/dev/null)" ] || fail "files written despite the refusal"

# 2. The disk fills up mid-copy: 2 MiB fits when staging starts; a filler takes the rest.
FEEDBENCH_STAGE_TEST_DELAY_MS=150 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'small/**' \
  --workers 1 >"$WORK/o" 2>"$WORK/e" &
pid=$!
for _ in $(seq 1 400); do
  [ -e "$C/small/s_1.bin" ] && break
  sleep 0.02
done
dd if=/dev/zero of="$MNT/filler" bs=64k status=none 2>/dev/null || true  # until ENOSPC
rc=0
wait "$pid" || rc=$?
[ "$rc" = 1 ] || { cat "$WORK/o" "$WORK/e"; fail "a full disk should exit 1, got $rc"; }
grep -q "no space left on the cache file system while writing $C/small/s_" "$WORK/e" ||
  { cat "$WORK/e"; fail "the error does not name the file"; }
grep -q "still to copy" "$WORK/e" || { cat "$WORK/e"; fail "the error does not say the space needed"; }
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after ENOSPC"
[ ! -e "$C/MANIFEST.sha256" ] || fail "MANIFEST.sha256 after ENOSPC"
find "$C" -name '*.bin.fbtmp' | grep -q . && fail "a temporary file left after ENOSPC"

# 3. Free the space: a re-run completes and verifies.
rm -f "$MNT/filler"
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C" --include 'small/**'
grep -q "skipped [1-9]" "$WORK/out" || { cat "$WORK/out"; fail "the re-run did not resume"; }
expect_exit 0 "$FEEDBENCH" verify --cache "$C" --source "$SRC"

[ "$(tree_digest "$SRC")" = "$before" ] || fail "the source tree changed"
echo "PASS"
