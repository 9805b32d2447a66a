# mpirun -npernode 1 feedbench stage: each node (here two ranks named as two hosts, each with its
# own cache folder) stages its own cache from the shared source, with its own verified manifest,
# and rank 0 prints one summary, a line per host. A host that fails is named and fails the run;
# two ranks on one host are refused.
source "$(dirname "$0")/lib.bash"
require_mpirun

"$FEEDBENCH" gen --out "$WORK/src" --files 12 --file-size 16KiB --layout flat --seed 4 >/dev/null
# Rank R stages into $WORK/cacheR (rank 1's may be moved by CACHE_OF_NODE1).
cat >"$WORK/rank.sh" <<SH
r=\$OMPI_COMM_WORLD_RANK
export FEEDBENCH_HOST_NAME=node\$r
to=$WORK/cache\$r
[ "\$r" = 1 ] && [ -n "\${CACHE_OF_NODE1:-}" ] && to=\$CACHE_OF_NODE1
exec "\$@" --to "\$to"
SH

expect_exit 0 timeout 60 "${MPIRUN[@]}" -np 2 bash "$WORK/rank.sh" "$FEEDBENCH" stage --from "$WORK/src"
expect_in "$WORK/out" "stage across 2 hosts (Open MPI"
[ "$(grep -c 'files (' "$WORK/out")" = 2 ] || fail "expected one line per host: $(cat "$WORK/out")"
grep -q "^  node0  12 files (192 KiB): copied 12, .*verified, label fp-.*, $WORK/cache0\$" "$WORK/out" || fail "node0's line: $(cat "$WORK/out")"
grep -q "^  node1  12 files (192 KiB): copied 12, .*verified, label fp-.*, $WORK/cache1\$" "$WORK/out" || fail "node1's line: $(cat "$WORK/out")"
expect_in "$WORK/out" "every host staged and verified its cache: 24 files"
for n in 0 1; do
  [ -f "$WORK/cache$n/feedbench-manifest.json" ] || fail "no manifest in cache$n"
  expect_exit 0 "$FEEDBENCH" verify --cache "$WORK/cache$n"
done

# node1's cache folder is a non-empty folder that is not a cache: node1 is refused (nothing
# changed there), node0 stages, and the run fails naming node1.
mkdir -p "$WORK/other" && echo keep >"$WORK/other/mine.txt"
expect_exit 2 timeout 60 env CACHE_OF_NODE1="$WORK/other" "${MPIRUN[@]}" -np 2 bash "$WORK/rank.sh" "$FEEDBENCH" stage \
  --from "$WORK/src"
grep -q "^  node0  .*verified" "$WORK/out" || fail "node0 should have staged: $(cat "$WORK/out")"
grep -q "^  node1  FAILED: .*not a feedbench cache" "$WORK/out" || fail "node1's refusal: $(cat "$WORK/out")"
expect_in "$WORK/err" "1 of 2 hosts failed: node1 (rank 1)"
[ "$(cat "$WORK/other/mine.txt")" = keep ] && [ "$(ls "$WORK/other")" = mine.txt ] || fail "node1's folder changed"

# Two ranks on one host would stage one folder at once: refused on every rank.
expect_exit 2 timeout 60 "${MPIRUN[@]}" -np 2 "$FEEDBENCH" stage --from "$WORK/src" --to "$WORK/cache0"
expect_in "$WORK/err" "one rank per node (mpirun -npernode 1)"
echo PASS
