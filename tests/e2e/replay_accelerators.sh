# feedbench replay answers in accelerators as the loader does: how many accelerators the replay's
# supply feeds at the target AU, what one needs and a node of K needs, each at the step it was
# asked (--set step_scale=0.5 halves it), with arithmetic a reader redoes from the printed
# figures; --set cpu_scale=X divides the recorded CPU (2: cores twice as fast), is recorded in
# the result and said in --help; a cpu_scale that is not a number above 0 exits 2 naming it.
source "$(dirname "$0")/lib.bash"
PY=/usr/bin/python3
"$FEEDBENCH" gen --out "$WORK/data" --files 96 --file-size 32KiB --layout flat --seed 7 >/dev/null
rm -f "$WORK/data/feedbench-gen.json"
# 24 batches of 4 files on 2 workers, a 10 ms step, 12 ms of a worker's CPU a batch: CPU-bound.
$PY "$FEEDBENCH_SOURCE_DIR/tests/e2e/replay_trace.py" "$WORK/data" "$WORK/t.trace.json" \
  --batch 4 --step-ms 10 --cpu-ms 12

expect_exit 0 "$FEEDBENCH" replay "$WORK/t.trace.json" --set step_scale=0.5 --node-accelerators 8 \
  --out "$WORK/half.json" --quiet
cp "$WORK/out" "$WORK/half.out"
# The replay's answer, its lines as printed: fed, one's need at the step, a node's.
$PY - "$WORK/half.json" "$WORK/half.out" <<'PY' || fail "the replay's accelerators"
import json, re, sys
(rep,) = [b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"]
out = open(sys.argv[2]).read()
print(out[out.find("Summary"):])
for line in out.splitlines():
    assert len(line) <= 120, line
out = re.sub(r"\n {6,}", " ", out)  # the lines as said, before the console wrapped them
fed = re.search(r"^    accelerators fed at AU ≥ 90\.0%: (≥ )?([0-9.]+)$", out, re.M)
assert fed, "no accelerators fed"
# The replay's one accelerator: AU / target of one accelerator.
assert abs(float(fed.group(2)) - rep["au"] / 0.9) < 0.006, (fed.group(2), rep["au"])
one = re.search(r"^    at a mean step of ([0-9.]+) ms of ([0-9.]+) samples, one accelerator needs ([0-9.]+)k? samples/s",
                out, re.M)
assert one, "no step for one accelerator"
step_ms, batch, rate = float(one.group(1)), float(one.group(2)), float(one.group(3))
# The recorded 10 ms steps halved; 4 samples a step; the rate is what a reader computes.
assert 4.8 <= step_ms <= 5.6, step_ms
assert batch == 4, batch
assert abs(rate - batch / (step_ms / 1e3)) <= 0.01 * rate, (rate, batch, step_ms)
node = re.search(r"^    a node of 8 accelerators needs .* \(([0-9.]+)k samples/s\).*: 8 × 90\.0% of one accelerator's "
                 r"need at a mean step of ([0-9.]+) ms of 4 samples", out, re.M)
assert node, "no node line"
assert abs(float(node.group(1)) * 1e3 - 8 * 0.9 * rate) <= 0.01 * 8 * 0.9 * rate, (node.group(1), rate)
PY

# cpu_scale: recorded in the case and its parameters; cores twice as fast spend half the CPU.
expect_exit 0 "$FEEDBENCH" replay "$WORK/t.trace.json" --set cpu_scale=[1,2] --out "$WORK/cpu.json" --quiet
$PY - "$WORK/cpu.json" <<'PY' || fail "cpu_scale"
import json, sys
runs = {b["case"]: b for b in json.load(open(sys.argv[1]))["benchmarks"] if b.get("run_type") == "iteration"}
one = runs["replay/job:synthetic/state:cold/path:source/cpu_scale:1.0"]
two = runs["replay/job:synthetic/state:cold/path:source/cpu_scale:2.0"]
assert two["params"]["cpu_scale"] == 2.0, two["params"]
c1, c2 = one["extra"]["transform_cpu_s"], two["extra"]["transform_cpu_s"]
print("the workers' CPU in the recorded work: cpu_scale 1 %.3f s, 2 %.3f s" % (c1, c2))
# 24 batches of 12 ms: 0.29 s as recorded, 0.14 s on cores twice as fast.
assert c1 >= 0.25 and c2 <= 0.6 * c1, (c1, c2)
PY
for bad in 0 -1 fast; do
  expect_exit 2 "$FEEDBENCH" replay "$WORK/t.trace.json" --set "cpu_scale=$bad" --out "$WORK/bad.json"
  expect_in "$WORK/err" "cpu_scale"
done
[ ! -e "$WORK/bad.json" ] || fail "a refused replay wrote a result"
expect_exit 0 "$FEEDBENCH" replay --help
expect_in "$WORK/out" "cpu_scale=2"
awk 'length > 120 { print "too wide: " $0; bad = 1 } END { exit bad }' "$WORK/out" || fail "replay --help wider than 120"
