# End to end: the tools' scripts answer a bad command line as the verbs do: one line naming the
# tool and what was wrong, exit 2, and nothing run. argparse's own answer (the usage block, then
# the error) was four lines; aa-check and check-regression printed their usage after the error.
source "$(dirname "$0")/lib.bash"

T=$FEEDBENCH_SOURCE_DIR/tools
check() {  # check WANT-IN-ERROR TOOL ARGS...
  local want=$1; shift
  expect_exit 2 "$@"
  [ "$(wc -l <"$WORK/err")" = 1 ] || fail "$*: more than one line: $(cat "$WORK/err")"
  expect_in "$WORK/err" "$want"
  [ ! -s "$WORK/out" ] || fail "$*: wrote to stdout: $(cat "$WORK/out")"
}
for tool in compare-fio measure-overhead mpi-overhead tidy compare-replay replay-memory; do
  check "$tool: unrecognized arguments: --no-such-option" "$T/$tool" --no-such-option
done
for tool in compare-fio measure-overhead mpi-overhead; do
  check "$tool: argument --rounds: invalid int value: 'x'" "$T/$tool" --rounds x
done
check "aa-check: expected CONFIG and N (see --help)" "$T/aa-check"
check "check-regression: expected BASELINE and CONFIG (see --help)" "$T/check-regression" only-one
# A further run of the baseline that cannot be read is refused before anything runs.
echo '{}' >"$WORK/base.json"
echo '{}' >"$WORK/c.json"
check "check-regression: --baseline $WORK/nope.json: cannot read the result file" \
  "$T/check-regression" "$WORK/base.json" "$WORK/c.json" --baseline "$WORK/nope.json"
echo "tool arguments: ok"
