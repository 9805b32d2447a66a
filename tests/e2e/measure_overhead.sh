# tools/measure-overhead and its helper: the in-process pairs run end to end on a small data set
# and print the cost with its confidence interval and a verdict; the confidence interval is the
# order-statistics one; the helper answers bad arguments with one line and exit 2.
source "$(dirname "$0")/lib.bash"
HELPER=$(dirname "$FEEDBENCH")/feedbench-latency-overhead
[ -x "$HELPER" ] || fail "no $HELPER next to $FEEDBENCH"
T=$FEEDBENCH_SOURCE_DIR/tools

expect_exit 0 "$T/measure-overhead" --feedbench "$FEEDBENCH" --dir "$WORK/o" --size-mib 4 --pairs 8 --round-mib 1
expect_in "$WORK/out" "8 pairs of rounds of 1 MiB (256 reads)"
expect_in "$WORK/out" "latency clock: "
grep -qE '^overhead of latency recording: -?[0-9.]+% \(95% confidence interval -?[0-9.]+% to -?[0-9.]+%\); (target met|target missed|cannot tell)' \
  "$WORK/out" || fail "no cost line with an interval and a verdict: $(cat "$WORK/out")"
# The same data set through whole feedbench runs.
expect_exit 0 "$T/measure-overhead" --feedbench "$FEEDBENCH" --dir "$WORK/o" --size-mib 4 --method runs \
  --rounds 6 --repetitions 1
expect_in "$WORK/out" "method: runs"
expect_in "$WORK/out" "overhead of latency recording: "

PYTHONPATH="$(dirname "$0"):$T" python3 - "$T" <<'PY' || fail "median_ci or verdict"
import sys
import paired_stats as ps
import tool_module
mo = tool_module.load(sys.argv[1], "measure-overhead")
# The interval is tools/paired_stats.py's, which watch-overhead shares; the verdict the tool's.
# n = 10: P(X <= 1) = 11/1024 is within 2.5%, P(X <= 2) = 56/1024 is not: the 2nd and 9th values.
assert ps.median_ci(list(range(10, 0, -1))) == (5.5, 2, 9), ps.median_ci(list(range(10, 0, -1)))
# Past 1,023 values 2^n overflows a float: checked against exact integers at 2,000.
from fractions import Fraction
import math
med, low, high = ps.median_ci(list(range(2000)))
below = sum(math.comb(2000, i) for i in range(low + 1))
assert Fraction(below, 2 ** 2000) <= Fraction(1, 40) < Fraction(below + math.comb(2000, low + 1), 2 ** 2000), low
assert high == 1999 - low, (low, high)
assert ps.median_ci([1.0, 2.0, 3.0])[1:] == (None, None)  # too few for 95%
assert mo.verdict(2.0, 2.9).startswith("target met")
assert mo.verdict(3.0, 4.0).startswith("target missed")
assert mo.verdict(2.5, 3.5).startswith("cannot tell")
PY

for bad in "0 4096" "2 4095" "x 4096"; do
  read -r pairs bytes <<<"$bad"
  expect_exit 2 "$HELPER" "$WORK/o/data" "$pairs" "$bytes"
  [ "$(wc -l <"$WORK/err")" = 1 ] || fail "helper $bad: not one line: $(cat "$WORK/err")"
  [ ! -s "$WORK/out" ] || fail "helper $bad: wrote to stdout"
done
expect_exit 2 "$HELPER" "$WORK/no-such-folder" 2 4096
expect_in "$WORK/err" "no-such-folder"
expect_exit 2 "$HELPER" "$WORK/o/data" 2
expect_in "$WORK/err" "expected DIR PAIRS ROUND_BYTES"
expect_exit 2 "$T/measure-overhead" --feedbench "$FEEDBENCH" --pairs 0
expect_in "$WORK/err" "measure-overhead: --pairs: expected a whole number from 1 to 100000, got 0"
# Refused before any data set is made.
expect_exit 2 "$T/measure-overhead" --feedbench "$FEEDBENCH" --dir "$WORK/none" --size-mib 4 --round-mib 8
expect_in "$WORK/err" "measure-overhead: --round-mib: expected a whole number from 1 to 4"
[ ! -e "$WORK/none" ] || fail "a refused command line made $WORK/none"
echo "measure-overhead: ok"
