# --dry-run makes every refusal the run would make: a case the run would skip (a loader case
# whose data set is too small for its accelerators: loader_schedule's refusal) is listed as
# skipped, in the run's own words, and the run then skips exactly it; a throttle set for a path
# caps the estimate at its rate.
source "$(dirname "$0")/lib.bash"

"$FEEDBENCH" gen --out "$WORK/src" --files 6 --file-size 64KiB --layout flat --seed 2 >/dev/null
cat >"$WORK/c.json" <<JSON
{"name": "dry", "dataset": {"source": "$WORK/src"}, "defaults": {"repetitions": 1},
 "families": [{"family": "file_read", "block_size": "64KiB", "cache_state": "warm"},
              {"family": "loader", "batch_size": 2, "workers": 1, "step_time": "1ms", "steps": 1,
               "warmup_steps": 0, "cache_state": "warm", "path": "source", "accelerators": [1, 8]}]}
JSON
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --dry-run
expect_in "$WORK/out" "1 case of 3 would be skipped"
cp "$WORK/out" "$WORK/dry.txt"
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --out "$WORK/r.json" --quiet
python3 - "$WORK/dry.txt" "$WORK/r.json" <<'PY'
import json, re, sys
dry = "".join(open(sys.argv[1]).read().split())  # the console wraps long lines, at any '/' too
doc = json.load(open(sys.argv[2]))
its = [b for b in doc["benchmarks"] if b.get("run_type") == "iteration"]
skipped = {b["run_name"].split("/iterations:")[0]: b["error_message"] for b in its if b.get("error_occurred")}
assert len(skipped) == 1, skipped
(name, why), = skipped.items()
assert "acc:8" in name and "need 16 samples" in why, (name, why)
assert dry.count("skippedbytherun:") == 1, dry
assert "".join((name + " skipped by the run: " + why).split()) in dry, (name, why, dry)
measured = [b["name"] for b in its if not b.get("error_occurred")]
assert len(measured) == 2, measured
print("the dry run listed the run's refusal:", why)
PY

# A throttle caps the estimate at its rate, from the command line as from the config.
expect_exit 0 "$FEEDBENCH" run --config "$WORK/c.json" --dry-run --throttle source=2MiB/s
tr -s ' \n' ' ' <"$WORK/out" >"$WORK/flat"  # the console wraps long lines
expect_in "$WORK/flat" "capped by its throttle at 2 MiB/s"
# 384 KiB read cold by the file_read case at 2 MiB/s at most: at least 0.19 s for it alone.
python3 - "$WORK/flat" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
first = re.search(r"state:warm/path:source \(1 x ([0-9.]+)s\)", text)
assert first and float(first.group(1)) >= 0.18, text
PY
echo ok
