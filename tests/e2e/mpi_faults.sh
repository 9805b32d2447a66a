# A rank that fails ends the run for every rank with that rank's reason, never a hang: a
# missing path on one host before any case (bad input, exit 2), a read error on one host
# (the case skipped with its reason on every rank, exit 1); a rank killed
# mid-run makes mpirun fail and no result file is written.
source "$(dirname "$0")/lib.bash"
require_mpirun

"$FEEDBENCH" gen --out "$WORK/src" --files 16 --file-size 64KiB --layout flat --seed 4 >/dev/null
cp -r "$WORK/src" "$WORK/node1"
cat >"$WORK/c.json" <<JSON
{
  "name": "mpi-faults",
  "dataset": {"source": "\${NODE_SOURCE:-$WORK/src}", "share": "per_node"},
  "defaults": {"repetitions": 1, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": 1,
     "cache_state": "warm", "path": "source"}
  ]
}
JSON
# Rank 1 is host "node1" with its own copy (NODE1 names it).
cat >"$WORK/rank.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then export FEEDBENCH_HOST_NAME=node1 NODE_SOURCE=\$NODE1; else export FEEDBENCH_HOST_NAME=node0; fi
exec "\$@"
SH

# 1. The path is missing on one host: every rank stops before any case, rank 0 says which.
expect_exit 2 timeout 60 env NODE1="$WORK/missing" "${MPIRUN[@]}" -np 2 bash "$WORK/rank.sh" "$FEEDBENCH" run \
  --config "$WORK/c.json" --out "$WORK/r1.json"
expect_in "$WORK/err" "rank 1 (host node1): $WORK/c.json: /dataset/source"
[ ! -e "$WORK/r1.json" ] || fail "a result was written after a failed start"

# 1b. Ranks that would run different cases (here another --set on rank 1) are refused before
# any case: they would wait for each other in different places.
cat >"$WORK/other.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "\$@" --set workers=2; else exec "\$@"; fi
SH
expect_exit 2 timeout 60 "${MPIRUN[@]}" -np 2 bash "$WORK/other.sh" "$FEEDBENCH" run --config "$WORK/c.json" \
  --out "$WORK/r1.json"
expect_in "$WORK/err" "rank 1 (host "
expect_in "$WORK/err" "would run other cases than rank 0"
[ ! -e "$WORK/r1.json" ] || fail "a result was written after a refused start"

# 1c. A partial cache is read by one process only: refused before any case, naming the key.
sed 's|"share": "per_node"}|"share": "per_node", "cache": "'"$WORK"'/cache", "partial_cache": true}|; s|"path": "source"|"path": "cache"|' \
  "$WORK/c.json" >"$WORK/partial.json"
mkdir -p "$WORK/cache"
expect_exit 2 timeout 60 "${MPIRUN[@]}" -np 2 "$FEEDBENCH" run --config "$WORK/partial.json" --out "$WORK/r1.json"
expect_in "$WORK/err" "/dataset/partial_cache: a partial cache is read by one process only, not across ranks"
[ ! -e "$WORK/r1.json" ] || fail "a result was written after a refused start"

# 2. A read error on one host: a file of node1's copy turns into a folder after the scan (the
# run waits 2 s before its first case), so node1's warm pass fails. Every rank skips the case
# with rank 1's reason; nothing measured, so exit 1; the result records why.
(FEEDBENCH_RUN_TEST_DELAY_MS=2000 NODE1="$WORK/node1" timeout 60 "${MPIRUN[@]}" -np 2 -x FEEDBENCH_RUN_TEST_DELAY_MS \
   bash "$WORK/rank.sh" "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" >"$WORK/out2" 2>"$WORK/err2" \
   && echo 0 >"$WORK/rc2" || echo $? >"$WORK/rc2") &
# Rank 0 prints the paths after its scan; rank 1 scans beside it.
for _ in $(seq 100); do grep -q '^source ' "$WORK/out2" 2>/dev/null && break; sleep 0.1; done
sleep 0.3
rm "$WORK/node1/$(ls "$WORK/node1" | head -1)" && mkdir "$WORK/node1/$(ls "$WORK/src" | head -1)"
wait
[ "$(cat "$WORK/rc2")" = 1 ] || { cat "$WORK/out2" "$WORK/err2"; fail "expected exit 1, got $(cat "$WORK/rc2")"; }
expect_in "$WORK/err2" "every case was skipped"
expect_in "$WORK/err2" "rank 1 (host node1): "
python3 - "$WORK/r2.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
b = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"][0]
assert b["error_occurred"] and b["error_message"].startswith("rank 1 (host node1): "), b
PY

# 2b. A read error inside the round on one host: node1's rank reads its copy at 256 KiB/s (24
# files, about 6 s) and its last file turns into a folder about 2 s into the round, after the
# warm pass. The other rank finishes its share first and waits; then every rank ends the case
# with rank 1's reason, no hang.
"$FEEDBENCH" gen --out "$WORK/src24" --files 24 --file-size 64KiB --layout flat --seed 5 >/dev/null
rm -rf "$WORK/node1" && cp -r "$WORK/src24" "$WORK/node1"
cat >"$WORK/slow.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "\$@" --throttle source=256KiB/s; else exec "\$@"; fi
SH
last=$(ls "$WORK/node1" | tail -1)
start=$(date +%s)
(FEEDBENCH_RUN_TEST_DELAY_MS=1500 NODE_SOURCE="$WORK/src24" NODE1="$WORK/node1" timeout 60 "${MPIRUN[@]}" -np 2 -x FEEDBENCH_RUN_TEST_DELAY_MS \
   bash "$WORK/rank.sh" bash "$WORK/slow.sh" "$FEEDBENCH" run --config "$WORK/c.json" \
   --out "$WORK/r2b.json" >"$WORK/out2b" 2>"$WORK/err2b" && echo 0 >"$WORK/rc2b" || echo $? >"$WORK/rc2b") &
for _ in $(seq 100); do grep -q '^source ' "$WORK/out2b" 2>/dev/null && break; sleep 0.1; done
sleep 3.5  # the 1.5 s delay, the warm pass, then 2 s into rank 1's round
rm "$WORK/node1/$last" && mkdir "$WORK/node1/$last"
wait
[ "$(cat "$WORK/rc2b")" = 1 ] || { cat "$WORK/out2b" "$WORK/err2b"; fail "expected exit 1, got $(cat "$WORK/rc2b")"; }
[ $(( $(date +%s) - start )) -lt 40 ] || fail "the failed round took too long to end"
python3 - "$WORK/r2b.json" "$last" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
b = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"][0]
msg = b.get("error_message", "")
assert b["error_occurred"] and msg.startswith("rank 1 (host node1): "), b
assert sys.argv[2] in msg and "warm" not in msg, msg  # the round's read, not the preparation
PY

# 3. A rank killed mid-run: mpirun fails, well before the timeout, and no result is written.
cat >"$WORK/kill.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then (sleep 1.5; kill -9 \$\$) & fi
exec "\$@"
SH
got=0
timeout 60 "${MPIRUN[@]}" -np 2 bash "$WORK/kill.sh" "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r3.json" \
  --throttle source=256KiB/s --set repetitions=3 >"$WORK/out3" 2>"$WORK/err3" || got=$?
[ "$got" != 0 ] && [ "$got" != 124 ] || { cat "$WORK/err3"; fail "expected mpirun to fail (not time out), got $got"; }
[ ! -e "$WORK/r3.json" ] || fail "a result was written although a rank was killed"
echo PASS
