# mpirun -np N feedbench run: ranks read disjoint shares that together are the selection, the
# aggregate is IOR's, rank 0 alone prints and writes one result that diff reads; with
# share per_node each (simulated) host reads the whole selection and prepares it once.
source "$(dirname "$0")/lib.bash"
require_mpirun

"$FEEDBENCH" gen --out "$WORK/src" --files 48 --file-size 32KiB --layout flat --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "mpi-e2e",
  "dataset": {"source": "\${NODE_SOURCE:-$WORK/src}", "share": "\${SHARE:-per_rank}"},
  "defaults": {"repetitions": 2, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "64KiB", "workers": 1,
     "cache_state": ["cold", "warm"], "path": "source"}
  ]
}
JSON

expect_exit 0 timeout 120 "${MPIRUN[@]}" -np 3 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json"
expect_in "$WORK/out" "ranks: 3 on 1 host (Open MPI"
[ "$(grep -c '^feedbench run: mpi-e2e' "$WORK/out")" = 1 ] || fail "more than one rank printed: $(cat "$WORK/out")"
python3 - "$WORK/r.json" "$WORK/src" <<'PY'
import json, os, sys
doc = json.load(open(sys.argv[1]))
names = sorted(os.listdir(sys.argv[2]))
def fnv(s):
    h = 0xcbf29ce484222325
    for ch in s.encode():
        h = ((h ^ ch) * 0x100000001b3) % 2**64
    return h
want_sum = sum(fnv(n) for n in names) % 2**64
sel = doc["dataset"]["source"]["bytes"]
cl = doc["environment"]["cluster"]
assert cl["ranks"] == 3 and cl["implementation"].startswith("Open MPI"), cl
assert cl["hosts"] == [{"name": cl["hosts"][0]["name"], "ranks": [0, 1, 2]}], cl
its = [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]
assert len(its) == 4, [b["name"] for b in its]
sums = set()
for b in its:
    assert not b.get("error_occurred"), b
    x = b["extra"]
    # Aggregate bytes are the selection's: the shares are complete...
    assert x["bytes"] == sel == x["selection_bytes"], (x["bytes"], sel)
    ranks = x["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1, 2]
    assert sum(r["bytes"] for r in ranks) == sel
    assert sum(r["files"] for r in ranks) == len(names)
    # ...and disjoint: counts and path checksums add up to the selection's.
    assert sum(r["share_checksum"] for r in ranks) % 2**64 == want_sum
    assert all(r["files"] in (16,) for r in ranks), [r["files"] for r in ranks]
    sums.add(tuple(r["share_checksum"] for r in ranks))
    # IOR's aggregate: total bytes over latest end - earliest start.
    span = max(r["end_s"] for r in ranks) - min(r["start_s"] for r in ranks)
    assert abs(x["cluster"]["seconds"] - span) < 1e-6, (x["cluster"], span)
    # The rate divides by the round's time in whole nanoseconds: the same span to within 1 ns
    # (a relative bound failed on a sub-millisecond round).
    assert abs(sel / b["bytes_per_second"] - span) <= 1e-9 + 1e-12 * span, (b["bytes_per_second"], sel / span)
    assert abs(b["real_time"] / 1e3 - span) < 1e-3 * span + 1e-6, (b["real_time"], span)  # ms
    assert b["cache"]["achieved"] and len(b["cache"]["hosts"]) == 1, b["cache"]
# Each repetition is its own epoch: reshuffled shares.
assert len(sums) >= 2, sums
PY
# diff and report read a result of many ranks as any other.
expect_exit 0 "$FEEDBENCH" diff "$WORK/r.json" "$WORK/r.json"
expect_exit 0 "$FEEDBENCH" report "$WORK/r.json" --out "$WORK/r.html"

# share per_node, two simulated hosts (two ranks each), each with its own copy: each host
# reads its whole copy, its two ranks splitting it; eviction and warming once per host.
cp -r "$WORK/src" "$WORK/node1"
cat >"$WORK/rank.sh" <<SH
r=\$OMPI_COMM_WORLD_RANK
export FEEDBENCH_HOST_NAME=node\$((r / 2))
[ \$((r / 2)) = 1 ] && export NODE_SOURCE=$WORK/node1
exec "\$@"
SH
expect_exit 0 timeout 120 env SHARE=per_node "${MPIRUN[@]}" -np 4 bash "$WORK/rank.sh" "$FEEDBENCH" run \
  --config "$WORK/c.json" --out "$WORK/n.json" --benchmark_filter=state:cold
expect_in "$WORK/out" "ranks: 4 on 2 hosts"
expect_in "$WORK/out" "share per_node"
python3 - "$WORK/n.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
sel = doc["dataset"]["source"]["bytes"]
assert [h["name"] for h in doc["environment"]["cluster"]["hosts"]] == ["node0", "node1"]
for b in [b for b in doc["benchmarks"] if b["run_type"] == "iteration"]:
    x = b["extra"]
    assert x["bytes"] == 2 * sel == x["selection_bytes"], (x["bytes"], sel)
    assert [h["ranks"] for h in x["hosts"]] == [[0, 1], [2, 3]], x["hosts"]
    assert [h["bytes"] for h in x["hosts"]] == [sel, sel], x["hosts"]
    assert [h["host"] for h in b["cache"]["hosts"]] == ["node0", "node1"], b["cache"]
    assert all(h["bytes"] == sel for h in b["cache"]["hosts"]), b["cache"]
PY
echo PASS
