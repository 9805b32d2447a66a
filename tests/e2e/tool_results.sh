# End to end: the Python tools read a result file's measured rounds through one helper
# (tools/feedbench_result.py), which refuses the rounds `feedbench run` leaves out of a case's
# figures - skipped, incomplete, or not in the cache state asked for - so compare-fio,
# measure-overhead and mpi-overhead never make a figure of them. A real run's result passes.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 16KiB --layout flat --seed 2 >/dev/null
cat >"$WORK/c.json" <<JSON
{"name": "e2e-tool-results", "dataset": {"source": "$WORK/src"}, "defaults": {"repetitions": 2, "seed": 1},
 "families": [{"family": "file_read", "pattern": "sequential", "block_size": "16KiB", "engine": "psync",
               "cache_state": "cold"}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet

python3 - "$FEEDBENCH_SOURCE_DIR/tools" "$WORK/r.json" <<'PY'
import copy, json, sys
sys.path.insert(0, sys.argv[1])
from feedbench_result import measured_rounds

doc = json.load(open(sys.argv[2]))
assert len(measured_rounds(doc)) == 2, "a real run's two rounds"

def refused(change, want):
    bad = copy.deepcopy(doc)
    change([b for b in bad["benchmarks"] if b.get("run_type", "iteration") == "iteration"][1])
    try:
        measured_rounds(bad)
    except ValueError as e:
        assert want in str(e), (want, str(e))
        return
    raise AssertionError("not refused: " + want)

refused(lambda b: b.update(error_occurred=True, error_message="no O_DIRECT"), "skipped: no O_DIRECT")
refused(lambda b: b["extra"].update(round_complete=False, bytes_read=100, bytes_planned=131072),
        "incomplete round: read 100 of 131072 bytes")
refused(lambda b: b["cache"].update(achieved=False, residency_before=0.5), "cold NOT achieved: 50.0% resident")
try:
    measured_rounds({"benchmarks": []})
    raise AssertionError("an empty result was accepted")
except ValueError as e:
    assert "no measured repetition" in str(e)
PY
echo "tool results: ok"
