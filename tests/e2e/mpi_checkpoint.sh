# mpirun -np 2 with the checkpoint family: the writer ranks split over the two processes (2 ranks:
# one each; 3 ranks: one and two), each writing and restoring its part in its own folder of the
# scratch, started together; one result whose figures are the whole checkpoint's (its bytes, its
# writes, the device's reads counted once for the host), the scratch empty after. A checkpoint of
# fewer writer ranks than processes is skipped on every process with the reason.
source "$(dirname "$0")/lib.bash"
require_mpirun

mkdir -p "$WORK/src" "$WORK/scratch"
head -c 65536 /dev/urandom >"$WORK/src/a.bin"
cat >"$WORK/c.json" <<JSON
{"name": "e2e-mpi-checkpoint", "dataset": {"source": "$WORK/src", "scratch": "$WORK/scratch"},
 "families": [{"family": "checkpoint", "size": "48MiB", "ranks": [1, 2, 3], "files_per_rank": 2,
               "repetitions": 1}]}
JSON
expect_exit 0 timeout 120 "${MPIRUN[@]}" --bind-to none -np 2 "$FEEDBENCH" run --config "$WORK/c.json" \
  --out "$WORK/r.json"
[ -z "$(ls -A "$WORK/scratch")" ] || { ls -laR "$WORK/scratch"; fail "the scratch is not empty after the run"; }
expect_in "$WORK/out" "ranks: 2 on 1 host"
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
runs = {b["params"]["ranks"]: b for b in d["benchmarks"] if b["run_type"] == "iteration"}
one = runs[1]
assert one["error_occurred"] and "1 writer ranks cannot be split over 2 MPI ranks" in one["error_message"], one
for ranks in (2, 3):
    b = runs[ranks]
    assert not b.get("error_occurred"), b
    x = b["extra"]
    per_file = (48 << 20) // (ranks * 2) // 4096 * 4096
    whole = per_file * ranks * 2
    # The whole checkpoint's, not one process's: every writer rank's files, every write.
    assert x["writer_ranks"] == ranks and x["writer_processes"] == 2, x
    assert x["bytes"] == whole and x["writes"] == ranks * 2 * -(-per_file // (1 << 20)), x
    assert x["restore"]["bytes"] == whole and x["bytes_read"] == whole, x
    # Both processes watch the host's device during the restore: its reads counted once.
    dev = x["restore"]["device_bytes"]
    assert dev is None or whole <= dev < 1.5 * whole, x["restore"]
    assert b["cache"]["achieved"] and x["restore"]["residency_before"] <= 0.01, b["cache"]
    assert b["bytes_per_second"] > 0 and b["restore_bytes_per_second"] > 0, b
    # The node took at least as long as its slowest rank.
    assert b["bytes_per_second"] <= ranks * b["write_slowest_rank_bytes_per_second"] * 1.0001, b
print("ok")
PY
echo PASS
