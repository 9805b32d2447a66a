# The GPU component where there is no GPU (this machine, CI): in a build without CUDA, sink gpu
# and accelerator cuda are refused before anything runs, naming the JSON pointer (exit 2); in a
# build with CUDA but no device, those cases are skipped with "no CUDA device" and the run goes
# on. `env` says what it sees of CUDA and the NVIDIA driver either way.
source "$(dirname "$0")/lib.bash"

expect_exit 0 "$FEEDBENCH" env --json
cuda=$(python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['gpu']; print(g['built_with_cuda'], g['cuda_devices'], g['nvml']['driver'])" "$WORK/out")
read -r built devices driver <<<"$cuda"
[ "$devices" = 0 ] || skip "$devices CUDA device(s) here: tools/gpu-check measures them"

# env, text: the build, the missing device and the missing driver, and it goes on to the paths.
expect_exit 0 "$FEEDBENCH" env --path /var/tmp
if [ "$built" = True ]; then expect_in "$WORK/out" "cuda      built with CUDA, no CUDA device"
else expect_in "$WORK/out" "cuda      built without CUDA"; fi
[ "$driver" = True ] || expect_in "$WORK/out" "nvml      no NVIDIA driver (libnvidia-ml.so.1 not found)"
expect_in "$WORK/out" "path1 "

"$FEEDBENCH" gen --out "$WORK/src" --files 8 --file-size 32KiB --classes 2 --seed 3 >/dev/null
cat >"$WORK/c.json" <<JSON
{
  "name": "e2e-gpu",
  "dataset": {"source": "$WORK/src"},
  "defaults": {"repetitions": 1, "engine": "psync", "cache_state": "warm"},
  "families": [
    {"family": "file_read", "block_size": "16KiB"},
    {"family": "file_read", "block_size": "16KiB", "sink": "gpu"},
    {"family": "loader", "batch_size": 2, "step_time": "1ms", "steps": 2, "accelerator": "cuda", "overlap": true}
  ]
}
JSON
before=$(tree_digest "$WORK/src")

if [ "$built" != True ]; then
  expect_exit 2 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
  expect_in "$WORK/err" "c.json: /families/1/sink: sink gpu needs the GPU component, but this feedbench was built without CUDA"
  [ ! -e "$WORK/r.json" ] || fail "a refused run wrote a result"
  exit 0
fi

# Built with CUDA, no device: the host case is measured, the GPU cases are skipped with why.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
its = {b["run_name"]: b for b in d["benchmarks"] if b["run_type"] == "iteration"}
host = [n for n in its if n.startswith("file_read/") and "/sink:" not in n]
gpu = [n for n in its if "/sink:gpu" in n or "/accel:cuda" in n]
assert len(host) == 1 and not its[host[0]].get("error_occurred"), its
assert len(gpu) == 2, list(its)
for n in gpu:
    assert its[n].get("error_occurred"), n
    assert its[n]["error_message"].startswith("no CUDA device"), its[n]["error_message"]
PY
[ "$before" = "$(tree_digest "$WORK/src")" ] || fail "the run changed the source"

# A sweep of only GPU cases measures nothing: a failed run, as any run that measured nothing.
python3 - "$WORK/c.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1])); c["families"] = c["families"][1:]
json.dump(c, open(sys.argv[1], "w"))
PY
expect_exit 1 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r2.json" --quiet
expect_in "$WORK/out" "no CUDA device"
