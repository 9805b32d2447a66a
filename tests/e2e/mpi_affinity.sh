# A rank held by the launcher's binding to fewer cores than its reading threads is warned about
# once, naming the ranks, the cores and the fix, and recorded in the result
# (environment.cpu_affinity); unbound ranks are not.
source "$(dirname "$0")/lib.bash"
require_mpirun
[ "$(nproc)" -ge 2 ] || skip "needs 2 cores to bind ranks to fewer than they may use"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 16KiB --layout flat --seed 4 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "mpi-affinity",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1, "seed": 7, "engine": "psync"},
  "families": [
    {"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "workers": 2,
     "cache_state": "warm", "path": "source"}
  ]
}
JSON
check() {  # check RESULT WANT_WARNING
  python3 - "$1" "$2" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["environment"]["cpu_affinity"]
assert a["reading_threads"] == 2 and len(a["cores_by_rank"]) == 2, a
if sys.argv[2] == "yes":
    assert [c["affinity"] for c in a["cores_by_rank"]] == [1, 1], a
    assert a["warning"].startswith("CPU affinity: rank 0 (host ") and "--bind-to none" in a["warning"], a
else:
    assert all(c["affinity"] >= 2 for c in a["cores_by_rank"]) and a["warning"] is None, a
PY
}

expect_exit 0 timeout 60 "${MPIRUN[@]}" --bind-to core -np 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/bound.json"
expect_in "$WORK/err" "warning: CPU affinity: rank 0 (host"
[ "$(grep -c 'CPU affinity' "$WORK/err")" = 1 ] || fail "expected one affinity warning: $(cat "$WORK/err")"
check "$WORK/bound.json" yes

expect_exit 0 timeout 60 "${MPIRUN[@]}" --bind-to none -np 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/free.json"
if grep -q 'CPU affinity' "$WORK/err"; then fail "warned although no rank is bound: $(cat "$WORK/err")"; fi
check "$WORK/free.json" no
echo PASS
