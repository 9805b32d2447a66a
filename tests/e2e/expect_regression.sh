# lib.bash's expect_regression, which every real-run regression check goes through: a metric
# judged noisy ("noisy (spread ...") gets the sides measured again and one more try; the summary
# line's "1 noisy" alone gets none; missed twice, or a clean miss, fails. Stand-in commands play
# feedbench diff, so this needs no run.
source "$(dirname "$0")/lib.bash"

remeasured=0
measure_again() { remeasured=$((remeasured + 1)); }
# noisy_then CODE: the first call prints a noisy metric and exits 0; later calls exit CODE.
calls=0
noisy_then() {
  calls=$((calls + 1))
  if [ "$calls" = 1 ]; then
    echo "  bytes_per_second  1.91 GiB/s  358 MiB/s  -81.7%  0.008  noisy (spread: CV 51.7% BASE)"
    echo "0 regressions, 0 improvements, 1 noisy in 1 compared case"
    return 0
  fi
  echo "1 regression, 0 improvements, 0 noisy in 1 compared case"
  return "$1"
}
summary_only() { echo "0 regressions, 0 improvements, 1 noisy in 1 compared case"; }

expect_regression measure_again noisy_then 1
[ "$remeasured" = 1 ] && [ "$calls" = 2 ] || fail "a noisy metric: expected one re-measure and a second try"
expect_in "$WORK/out" "1 regression"

# Each failure runs in a subshell: fail() exits.
calls=0
( expect_regression measure_again noisy_then 0 ) >/dev/null 2>&1 && fail "noisy, then no regression: passed"
( expect_regression measure_again summary_only ) >"$WORK/sub" 2>&1 && fail "no regression: passed"
grep -q "measuring again" "$WORK/sub" && fail "the summary line alone made it measure again"
calls=1  # noisy_then past its noisy call: a plain exit 0
( expect_regression measure_again noisy_then 0 ) >/dev/null 2>&1 && fail "a clean miss passed"
echo "expect_regression: ok"
