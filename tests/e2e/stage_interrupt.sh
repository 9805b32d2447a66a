# An interrupted stage (kill -9 and SIGINT half way) leaves no partial file under a real name and
# no manifest; the next run completes it into a verified cache. Uses the stager's test hook
# FEEDBENCH_STAGE_TEST_DELAY_MS (a pause after each file) so the kill lands mid-copy.
source "$(dirname "$0")/lib.bash"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=0}"

SRC=$WORK/src
mkdir -p "$SRC/d1" "$SRC/d2"
for i in $(seq 1 40); do head -c $((4096 + i * 997)) /dev/urandom >"$SRC/d$((i % 2 + 1))/f_$i.bin"; done
before=$(tree_digest "$SRC")
C=$WORK/cache

# wait_for_files N: until at least N staged files have their real names (at most ~20 s).
wait_for_files() {
  for _ in $(seq 1 400); do
    [ "$(find "$C" -name 'f_*.bin' 2>/dev/null | wc -l)" -ge "$1" ] && return 0
    sleep 0.05
  done
  fail "staging did not start"
}

# No partial file under a real name: every real-named file equals its source.
check_no_partial() {
  (cd "$C" && find . -name 'f_*.bin' | while read -r f; do
    cmp -s "$f" "$SRC/$f" || { echo "partial or wrong: $f"; exit 1; }
  done) || fail "a partial file under a real name"
}

# 1. kill -9 mid-copy.
FEEDBENCH_STAGE_TEST_DELAY_MS=50 "$FEEDBENCH" stage --from "$SRC" --to "$C" --workers 1 >"$WORK/o1" 2>&1 &
pid=$!
wait_for_files 5
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
n=$(find "$C" -name 'f_*.bin' | wc -l)
[ "$n" -lt 40 ] || fail "the kill came too late to test anything ($n files)"
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest after kill -9"
[ ! -e "$C/MANIFEST.sha256" ] || fail "MANIFEST.sha256 after kill -9"
check_no_partial
expect_exit 2 "$FEEDBENCH" verify --cache "$C"
expect_in "$WORK/err" "no complete manifest"

# Resume: files already in place are skipped, the rest copied, the result verified.
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C"
grep -q "skipped [1-9]" "$WORK/out" || { cat "$WORK/out"; fail "resume re-copied everything"; }
expect_in "$WORK/out" "40 files selected"
expect_exit 0 "$FEEDBENCH" verify --cache "$C" --source "$SRC"
(cd "$C" && sha256sum --quiet -c MANIFEST.sha256) || fail "sha256sum -c after resume"
find "$C" -name '*.fbtmp' | grep -q . && fail "temporaries left after resume"

# 2. SIGINT on a cache that had a manifest: a change starts, the manifest goes first, exit 130.
touch "$SRC"/d1/*.bin "$SRC"/d2/*.bin  # new mtimes: every file must be copied again
before=$(tree_digest "$SRC")
FEEDBENCH_STAGE_TEST_DELAY_MS=50 "$FEEDBENCH" stage --from "$SRC" --to "$C" --workers 1 >"$WORK/o2" 2>&1 &
pid=$!
for _ in $(seq 1 400); do [ -e "$C/feedbench-manifest.json" ] || break; sleep 0.05; done
sleep 0.3
kill -INT "$pid"
rc=0
wait "$pid" || rc=$?
[ "$rc" = 130 ] || { cat "$WORK/o2"; fail "SIGINT should exit 130, got $rc"; }
grep -q "interrupted by SIGINT" "$WORK/o2" || { cat "$WORK/o2"; fail "no interruption message"; }
[ ! -e "$C/feedbench-manifest.json" ] || fail "a manifest that lies after SIGINT"
find "$C" -name '*.bin.fbtmp' | grep -q . && fail "SIGINT left temporary files"
check_no_partial
expect_exit 0 "$FEEDBENCH" stage --from "$SRC" --to "$C"
expect_exit 0 "$FEEDBENCH" verify --cache "$C" --source "$SRC"

[ "$(tree_digest "$SRC")" = "$before" ] || fail "the source tree changed"
echo "PASS"
