# tools/compare-pytorch on a small matrix: PyTorch's real DataLoader and the loader family on the
# same files of a throttled loop device (tools/slow-device), AU side by side. A storage-bound case
# is a fact of the device, not of either loader: both sides must agree on it closely, whatever
# the machine's load. Skipped where the machine cannot make a slow device or has no PyTorch.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH_SOURCE_DIR/tools/slow-device" check >/dev/null 2>"$WORK/why" || skip "$(cat "$WORK/why")"
/usr/bin/python3 -c "import torch, PIL" 2>/dev/null || skip "no python3-torch or python3-pil under /usr/bin/python3"

rc=0
"$FEEDBENCH_SOURCE_DIR/tools/compare-pytorch" --feedbench "$FEEDBENCH" --dir "$WORK/cp" --rounds 1 \
  --case storage-w4-b32 --case fed-w4-b8 --json "$WORK/cp.json" >"$WORK/out" 2>"$WORK/err" || rc=$?
[ "$rc" != 77 ] || skip "$(cat "$WORK/err")"
[ "$rc" = 0 ] || { cat "$WORK/out" "$WORK/err"; fail "compare-pytorch exited $rc"; }
expect_in "$WORK/out" "storage-w4-b32"
expect_in "$WORK/out" "largest difference"
[ ! -e "$WORK/cp/dev/env" ] || fail "compare-pytorch left its slow device up"
python3 - "$WORK/cp.json" <<'PY'
import json, statistics, sys
doc = json.load(open(sys.argv[1]))
au = {c["case"]: (statistics.median(next(iter(c["feedbench"].values()))), statistics.median(c["pytorch"])) for c in doc["cases"]}
fb, pt = au["storage-w4-b32"]
# 32 samples of 128 KiB per 20 ms step want 200 MiB/s of a 40 MiB/s device: AU about a fifth.
assert 0.1 < pt < 0.35 and abs(fb - pt) < 0.05, au
fb, pt = au["fed-w4-b8"]
assert pt > 0.85 and fb > 0.85, au  # 20 MiB/s wanted of 40 MiB/s: both fed
# The loader ran with its defaults (framework pytorch's calibrated costs): nothing measured per round.
for c in doc["cases"]:
    assert c["next_cost_ms"] == [], c
assert doc["framework"] == [None] and doc["next_cost"] == "default", doc
PY

# The matrix has a row collated to a list (variable-size files: one tensor a sample).
"$FEEDBENCH_SOURCE_DIR/tools/compare-pytorch" --list >"$WORK/list"
expect_in "$WORK/list" "list-w4-b8: 4 workers, batch 8 (collated: list)"
# The calibration measures next() at 1 and 8 tensors a batch, PyTorch's beside the loader's own
# (workers reading warm files), and splits the difference per batch and tensor.
"$FEEDBENCH_SOURCE_DIR/tools/compare-pytorch" --calibrate --rounds 1 --case tensors-1-b8 --case tensors-8-b8 \
  --feedbench "$FEEDBENCH" --dir "$WORK/cal-dir" --json "$WORK/cal.json" >"$WORK/cal" 2>&1 ||
  { cat "$WORK/cal"; fail "compare-pytorch --calibrate failed"; }
expect_in "$WORK/cal" "a tensor handed over"
python3 - "$WORK/cal.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
assert [c["tensors"] for c in doc["calibrate"]] == [1, 8], doc
assert doc["fit_ms"] is not None and doc["fit_ms"]["per_batch"] + doc["fit_ms"]["per_tensor"] > 0, doc
# The loader's own wait in each shape, measured beside PyTorch's, and the charge's line through both.
assert all(len(c["loader_own_ms"]) == 1 and c["loader_own_ms"][0] > 0 for c in doc["calibrate"]), doc
assert doc["charge_fit_ms"] is not None, doc
PY
expect_in "$WORK/cal" "the charge (PyTorch's less the loader's own)"
# Its data set is its own, removed after.
[ -z "$(ls -A "$WORK/cal-dir")" ] || fail "the calibration left files in its folder: $(ls -A "$WORK/cal-dir")"
