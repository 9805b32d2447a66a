# The loader across ranks: each rank a trainer node of its own simulated accelerators. AU per
# accelerator of every rank, the lowest of all (a slow rank lowers it) and "accelerators
# supported" counted over every host, as MLPerf Storage's headline is.
source "$(dirname "$0")/lib.bash"
require_mpirun

"$FEEDBENCH" gen --out "$WORK/src" --files 128 --file-size 16KiB --layout flat --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "mpi-loader",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "loader", "batch_size": 2, "workers": 1, "step_time": "10ms", "steps": 14, "warmup_steps": 2,
     "accelerators": 2, "cache_state": "warm", "path": "source"}
  ]
}
JSON
# Rank 1 reads at 1 MiB/s: 2 accelerators x 2 x 16 KiB per 10 ms step need 6.4 MiB/s.
cat >"$WORK/rank.sh" <<SH
if [ "\$OMPI_COMM_WORLD_RANK" = 1 ]; then exec "\$@" --throttle source=1MiB/s; else exec "\$@"; fi
SH
expect_exit 0 timeout 120 "${MPIRUN[@]}" -np 2 bash "$WORK/rank.sh" "$FEEDBENCH" run --config "$WORK/c.json" \
  --out "$WORK/r.json"
expect_in "$WORK/out" "across 2 ranks on 1 host"
python3 - "$WORK/r.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
b = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"][0]
assert not b.get("error_occurred"), b
x = b["extra"]
assert x["accelerators_total"] == 4 and len(x["au_per_accelerator"]) == 4, x
assert [len(r["au_per_accelerator"]) for r in x["ranks"]] == [2, 2], x["ranks"]
# The slow rank holds the lowest AU, and so the headline: not every accelerator is fed.
assert x["min_au_rank"] == 1, x
assert x["ranks"][1]["min_au"] < 0.5 and x["ranks"][1]["min_au"] < x["ranks"][0]["min_au"], x["ranks"]
assert abs(x["min_au"] - x["ranks"][1]["min_au"]) < 1e-9, x
assert x["accelerators_supported"] == 0 and x["accelerators_meeting_target"] <= 2, x
# Samples of every rank, summed.
assert b["samples_per_second"] > 0 and x["samples"] == sum(r["samples"] for r in x["ranks"]), x
PY
echo PASS
