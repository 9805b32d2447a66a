#!/usr/bin/env bash
# The gate's blind spots, planted: a clean 25% drop that one wild baseline repetition hid
# ("unchanged", p 0.15), and a 25% drop in a page-cached case that the same high host load on
# both sides excused ("noisy"). Both must fail the diff, naming the regression and the
# repetition set aside; a load that differs between the runs may still excuse the warm case.
source "$(dirname "$0")/lib.bash"
source "$(dirname "$0")/result_fixture.bash"

COLD="file_read/pattern:sequential/bs:1048576/engine:psync/qd:1/workers:1/state:cold/path:source"
WARM="file_read/pattern:sequential/bs:65536/engine:psync/qd:1/workers:1/state:warm/path:source"
MIB=1048576

# mib V...: the values in MiB/s as bytes per second, comma-separated (fixture's explicit list).
mib() { awk -v s="$*" 'BEGIN { n = split(s, v, " "); for (i = 1; i <= n; i++) printf "%s%.0f", (i > 1 ? "," : ""), v[i] * 1048576 }'; }

# Both runs on a host at about 5 runnable tasks per core.
fixture base load="10.0,10.1,2" \
  cases="$COLD|bytes_per_second|$(mib 39.7 41.7 37.7 19.0 39.8)|-|-;$WARM|bytes_per_second|$((800*MIB))|9|0.01"
fixture new load="10.1,9.9,2" \
  cases="$COLD|bytes_per_second|$(mib 30.1 29.8 30.3 29.9 30.0)|-|-;$WARM|bytes_per_second|$((600*MIB))|9|0.01"

expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/new.json"
expect_in "$WORK/out" "warning: BASE has an outlier repetition (1 case; farther than 3.5 scaled MADs and 10% from the median of its case): judged without it, listed under its case; measure the baseline again before keeping it"
expect_in "$WORK/out" "host load per core: BASE 5.03 (10.00 -> 10.10 on 2 cores), NEW 5.00 (10.10 -> 9.90 on 2 cores)"
expect_in "$WORK/out" "  (set aside as outliers: BASE repetition 3 of bytes_per_second: 19 MiB/s, median 39.7 MiB/s)"
grep -A 2 -F "$COLD" "$WORK/out" | grep -qE "bytes_per_second .* -24\.[0-9]% +0\.016 +REGRESSION$" ||
  fail "the cold case's 25% drop is not a regression: $(cat "$WORK/out")"
grep -A 1 -F "$WARM" "$WORK/out" | grep -qE "bytes_per_second .* -25\.[0-9]% +<0\.001 +REGRESSION$" ||
  fail "the warm case's 25% drop under an equal load is not a regression: $(cat "$WORK/out")"
expect_in "$WORK/out" "2 regressions, 0 improvements, 0 noisy in 2 compared cases"
if grep -q "NEW has" "$WORK/out"; then fail "NEW has no outlier: $(cat "$WORK/out")"; fi

# Tools read the same: the set-aside repetition per metric, the loads judged equal.
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/new.json" --format json
python3 - "$WORK/out" "$COLD" <<'PY' || fail "JSON output"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["regressions"] == 2 and j["noisy"] == 0 and j["exit_code"] == 1, j
assert j["load"]["differ"] is False, j["load"]
assert any(n.startswith("BASE has an outlier repetition") for n in j["notes"]), j["notes"]
m = [c for c in j["cases"] if c["case"] == sys.argv[2]][0]["metrics"][0]
assert m["verdict"] == "regression" and len(m["base_values"]) == 4 and m["new_set_aside"] == [], m
aside = m["base_set_aside"]
assert len(aside) == 1 and aside[0]["repetition_index"] == 3, aside
assert round(aside[0]["value"] / 1048576, 1) == 19.0 and round(aside[0]["median"] / 1048576, 1) == 39.7, aside
PY
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/new.json" --format markdown
expect_in "$WORK/out" "**Set aside as outliers (judged without them)**"
expect_in "$WORK/out" "- \`$COLD\`: BASE repetition 3 of bytes_per_second: 19 MiB/s, median 39.7 MiB/s"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/new.json" --format junit
expect_in "$WORK/out" "set aside as outliers: BASE repetition 3 of bytes_per_second"

# A load that differs between the runs (5.03 and 1.05 per core) still excuses the warm case,
# as before; the cold case waits on the device and stays a regression.
fixture new_quiet load="2.0,2.2,2" \
  cases="$COLD|bytes_per_second|$(mib 30.1 29.8 30.3 29.9 30.0)|-|-;$WARM|bytes_per_second|$((600*MIB))|9|0.01"
expect_exit 1 "$FEEDBENCH" diff "$WORK/base.json" "$WORK/new_quiet.json"
expect_in "$WORK/out" "noisy (host load (load per core 5.03 BASE, 1.05 NEW) explains up to x"
expect_in "$WORK/out" "1 regression, 0 improvements, 1 noisy in 2 compared cases"
echo "ok"
